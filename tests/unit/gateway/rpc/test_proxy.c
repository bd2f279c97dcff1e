/* Table tests for gateway/proxy's pure rules: what a node answer says (OK, BUSY, errors,
 * pruned transactions, negatives to confirm, the heights it names), in JSON and in epee
 * (.bin), which .bin requests may be stored as immutable, and which outcomes a read may
 * retry on the next node. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "rpc/proxy.h"
#include "nodes/upstream.h"

#define PRUNABLE                                                                                   \
    "\"prunable_hash\":\"531d08378be3c6e0d7a2c702a72afc7835259eeba35a291a21526b3cea2d85bc\""
#define ZERO_HASH                                                                                  \
    "\"prunable_hash\":\"0000000000000000000000000000000000000000000000000000000000000000\""

static void test_read_facts_table(void **state)
{
    (void)state;
    struct {
        const char *name, *body;
        bool json, ok, busy, pruned;
        size_t negatives;
        int64_t height;
    } rows[] = {
        {"get_info result", "{\"id\":0,\"result\":{\"status\":\"OK\",\"height\":5}}", true, true,
         false, false, 0, -1},
        {"BUSY", "{\"id\":0,\"result\":{\"status\":\"BUSY\"}}", true, false, true, false, 0, -1},
        {"JSON-RPC error", "{\"id\":0,\"error\":{\"code\":-5,\"message\":\"too big\"}}", true,
         false, false, false, 0, -1},
        {"a bare result (on_get_block_hash)", "{\"id\":0,\"result\":\"abcd\"}", true, true, false,
         false, 0, -1},
        {"plain endpoint Failed", "{\"status\":\"Failed\"}", true, false, false, false, 0, -1},
        {"not JSON", "<html>", false, false, false, false, 0, -1},
        {"a header names its height",
         "{\"result\":{\"status\":\"OK\",\"block_header\":{\"height\":42}}}", true, true, false,
         false, 0, 42},
        {"a header range: the highest (a reorg above 7 changes it)",
         "{\"result\":{\"status\":\"OK\",\"headers\":[{\"height\":7},{\"height\":9}]}}", true, true,
         false, false, 0, 9},
        {"complete mined transactions",
         "{\"status\":\"OK\",\"txs\":[{\"as_hex\":\"0a\",\"block_height\":30," PRUNABLE
         "},{\"as_hex\":\"0b\",\"block_height\":20}]}",
         true, true, false, false, 0, 30},
        {"a pruned answer: as_hex empty, prunable_hash set",
         "{\"status\":\"OK\",\"txs\":[{\"as_hex\":\"\",\"block_height\":30," PRUNABLE "}]}", true,
         true, false, true, 0, 30},
        {"as_hex empty with a zero prunable hash (pre-RingCT): not pruned",
         "{\"status\":\"OK\",\"txs\":[{\"as_hex\":\"\",\"block_height\":3," ZERO_HASH "}]}", true,
         true, false, false, 0, 3},
        {"an all-zero block hash: no block there (yet)",
         "{\"id\":0,\"result\":"
         "\"0000000000000000000000000000000000000000000000000000000000000000\"}",
         true, true, false, false, 1, -1},
        {"a missing transaction", "{\"status\":\"OK\",\"missed_tx\":[\"aa\",\"bb\"],\"txs\":[]}",
         true, true, false, false, 2, -1},
        {"a pool transaction is never immutable",
         "{\"status\":\"OK\",\"txs\":[{\"as_hex\":\"0a\",\"in_pool\":true,\"block_height\":0},"
         "{\"as_hex\":\"0b\",\"block_height\":9}]}",
         true, true, false, false, 0, PROXY_HEIGHT_UNSETTLED},
        {"outputs, all unlocked: the highest height",
         "{\"status\":\"OK\",\"outs\":[{\"height\":6,\"unlocked\":true},{\"height\":9,"
         "\"unlocked\":true}]}",
         true, true, false, false, 0, 9},
        {"an output still locked: unsettled",
         "{\"status\":\"OK\",\"outs\":[{\"height\":6,\"unlocked\":true},{\"height\":9,"
         "\"unlocked\":false}]}",
         true, true, false, false, 0, PROXY_HEIGHT_UNSETTLED},
        {"key images: unspent ones are negatives", "{\"status\":\"OK\",\"spent_status\":[0,1,2,0]}",
         true, true, false, false, 2, -1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct proxy_answer_facts f;
        proxy_read_facts(rows[i].body, strlen(rows[i].body), &f);
        print_message("# %s\n", rows[i].name);
        assert_int_equal(f.json, rows[i].json);
        assert_int_equal(f.ok, rows[i].ok);
        assert_int_equal(f.busy, rows[i].busy);
        assert_int_equal(f.pruned, rows[i].pruned);
        assert_int_equal(f.negatives, rows[i].negatives);
        assert_int_equal(f.height, rows[i].height);
    }
    struct proxy_answer_facts f;
    proxy_read_facts(NULL, 0, &f);
    assert_false(f.json);
}

/* Portable storage, spelled out: the header, then the root section. */
#define EPEE_HEADER "\x01\x11\x01\x01\x01\x01\x02\x01\x01"
#define STATUS_OK   "\x06status\x0a\x08OK"
#define U64(b)      b "\x00\x00\x00\x00\x00\x00\x00"
#define OUT(h, u)   "\x08\x06height\x05" U64(h) "\x08unlocked\x0b" u
#define BYTES(s)    s, sizeof(s) - 1

static void test_read_bin_facts_table(void **state)
{
    (void)state;
    struct {
        const char *name, *body;
        size_t len;
        bool ok, busy, untrusted;
        int64_t height;
    } rows[] = {
        {"OK", BYTES(EPEE_HEADER "\x04" STATUS_OK), true, false, false, -1},
        {"BUSY",
         BYTES(EPEE_HEADER "\x04\x06status\x0a\x10"
                           "BUSY"),
         false, true, false, -1},
        {"Failed",
         BYTES(EPEE_HEADER "\x04\x06status\x0a\x18"
                           "Failed"),
         false, false, false, -1},
        {"untrusted", BYTES(EPEE_HEADER "\x08" STATUS_OK "\x09untrusted\x0b\x01"), true, false,
         true, -1},
        {"trusted", BYTES(EPEE_HEADER "\x08" STATUS_OK "\x09untrusted\x0b\x00"), true, false, false,
         -1},
        {"outputs, all unlocked: the highest height",
         BYTES(EPEE_HEADER "\x08" STATUS_OK "\x04outs\x8c\x08" OUT("\x06", "\x01")
                   OUT("\x09", "\x01")),
         true, false, false, 9},
        {"an output still locked: unsettled",
         BYTES(EPEE_HEADER "\x08" STATUS_OK "\x04outs\x8c\x08" OUT("\x06", "\x01")
                   OUT("\x09", "\x00")),
         true, false, false, PROXY_HEIGHT_UNSETTLED},
        {"an output without its height: unsettled",
         BYTES(EPEE_HEADER "\x08" STATUS_OK "\x04outs\x8c\x04\x04\x08unlocked\x0b\x01"), true,
         false, false, PROXY_HEIGHT_UNSETTLED},
        {"no status", BYTES(EPEE_HEADER "\x00"), false, false, false, -1},
        {"a status that is not a string", BYTES(EPEE_HEADER "\x04\x06status\x08\x01"), false, false,
         false, -1},
        {"not portable storage", BYTES("{\"status\":\"OK\"}"), false, false, false, -1},
        {"cut short", BYTES(EPEE_HEADER "\x04\x06status\x0a\x08O"), false, false, false, -1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct proxy_answer_facts f;
        print_message("# %s\n", rows[i].name);
        proxy_read_bin_facts(rows[i].body, rows[i].len, &f);
        assert_false(f.json);
        assert_int_equal(f.ok, rows[i].ok);
        assert_int_equal(f.busy, rows[i].busy);
        assert_int_equal(f.untrusted, rows[i].untrusted);
        assert_int_equal(f.height, rows[i].height);
    }
}

#define PRUNE   "\x05prune\x0b\x01"
#define INFO(v) "\x0erequested_info\x08" v
#define SINCE   "\x0fpool_info_since\x05" U64("\x07")

/* get_blocks.bin's pool rule: pool_info_since is always dropped; requested_info 1 or 2
 * (or anything but a plain 0) marks the request as asking for the pool. */
static void test_bin_pool_rule_table(void **state)
{
    (void)state;
    struct {
        const char *name, *body;
        size_t len;
        bool ok, asks_pool;
        const char *out;
        size_t out_len;
    } rows[] = {
        {"blocks only, as 0.18.0 wallets send", BYTES(EPEE_HEADER "\x04" PRUNE), true, false,
         BYTES(EPEE_HEADER "\x04" PRUNE)},
        {"requested_info 0", BYTES(EPEE_HEADER "\x08" PRUNE INFO("\x00")), true, false,
         BYTES(EPEE_HEADER "\x08" PRUNE INFO("\x00"))},
        {"blocks and pool since a time: the time goes",
         BYTES(EPEE_HEADER "\x0c" PRUNE INFO("\x01") SINCE), true, true,
         BYTES(EPEE_HEADER "\x08" PRUNE INFO("\x01"))},
        {"pool only", BYTES(EPEE_HEADER "\x0c" SINCE PRUNE INFO("\x02")), true, true,
         BYTES(EPEE_HEADER "\x08" PRUNE INFO("\x02"))},
        {"a time without requested_info goes too", BYTES(EPEE_HEADER "\x08" PRUNE SINCE), true,
         false, BYTES(EPEE_HEADER "\x04" PRUNE)},
        {"requested_info that is not an integer",
         BYTES(EPEE_HEADER "\x04\x0erequested_info\x0a\x04x"), true, true,
         BYTES(EPEE_HEADER "\x04\x0erequested_info\x0a\x04x")},
        {"not portable storage", BYTES("{\"requested_info\":1}"), false, false,
         BYTES("{\"requested_info\":1}")},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char body[256];
        memcpy(body, rows[i].body, rows[i].len);
        size_t len = rows[i].len;
        bool asks = false;
        print_message("# %s\n", rows[i].name);
        assert_int_equal(proxy_bin_pool_rule(body, &len, &asks), rows[i].ok);
        assert_int_equal(asks, rows[i].asks_pool);
        assert_int_equal(len, rows[i].out_len);
        assert_memory_equal(body, rows[i].out, len);
    }
}

static void test_bin_request_immutable_table(void **state)
{
    (void)state;
    struct {
        const char *name, *path, *body;
        size_t len;
        int64_t deep;
        bool immutable;
        int64_t height;
    } rows[] = {
        {"heights all deep", "/get_blocks_by_height.bin",
         BYTES(EPEE_HEADER "\x04\x07heights\x85\x08" U64("\x05") U64("\x09")), 9, true, 9},
        {"one height above deep", "/get_blocks_by_height.bin",
         BYTES(EPEE_HEADER "\x04\x07heights\x85\x08" U64("\x05") U64("\x0a")), 9, false, -1},
        {"heights as uint32", "/get_blocks_by_height.bin",
         BYTES(EPEE_HEADER "\x04\x07heights\x86\x04\x07\x00\x00\x00"), 9, true, 7},
        {"no height asked", "/get_blocks_by_height.bin",
         BYTES(EPEE_HEADER "\x04\x07heights\x85\x00"), 9, false, -1},
        {"no heights field", "/get_blocks_by_height.bin", BYTES(EPEE_HEADER "\x00"), 9, false, -1},
        {"heights that are strings", "/get_blocks_by_height.bin",
         BYTES(EPEE_HEADER "\x04\x07heights\x8a\x04\x04x"), 9, false, -1},
        {"not portable storage", "/get_blocks_by_height.bin", BYTES("{}"), 9, false, -1},
        {"a chain too short to have deep blocks", "/get_blocks_by_height.bin",
         BYTES(EPEE_HEADER "\x04\x07heights\x85\x04" U64("\x00")), -1, false, -1},
        {"get_outs.bin: its answer decides", "/get_outs.bin", BYTES(EPEE_HEADER "\x00"), 9, true,
         -1},
        {"get_blocks.bin: relative to the client's chain", "/get_blocks.bin",
         BYTES(EPEE_HEADER "\x00"), 9, false, -1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t height = -5;
        print_message("# %s\n", rows[i].name);
        bool immutable = proxy_bin_request_immutable(rows[i].path, rows[i].body, rows[i].len,
                                                     rows[i].deep, &height);
        assert_int_equal(immutable, rows[i].immutable);
        if (immutable)
            assert_int_equal(height, rows[i].height);
    }
}

static void test_retryable_table(void **state)
{
    (void)state;
    struct {
        enum up_outcome outcome;
        long http;
        bool retry;
    } rows[] = {
        {UP_CONNECT_ERROR, 0, true},  {UP_TIMEOUT, 0, true},
        {UP_PROTOCOL_ERROR, 0, true}, {UP_OK, 500, true},
        {UP_OK, 503, true},           {UP_OK, 200, false},
        {UP_OK, 404, false},          {UP_TOO_LARGE, 0, false},
        {UP_CANCELLED, 0, false},     {UP_INTERNAL_ERROR, 0, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(proxy_retryable(rows[i].outcome, rows[i].http), rows[i].retry);
}

static void test_answer_status(void **state)
{
    (void)state;
    char status[16];
    const char *rpc = "{\"result\":{\"status\":\"BUSY\"}}";
    assert_true(proxy_answer_status(rpc, strlen(rpc), status, sizeof status));
    assert_string_equal(status, "BUSY");
    const char *plain = "{\"status\":\"OK\",\"height\":3}";
    assert_true(proxy_answer_status(plain, strlen(plain), status, sizeof status));
    assert_string_equal(status, "OK");
    assert_false(proxy_answer_status("{\"result\":\"x\"}", 14, status, sizeof status));
    assert_false(proxy_answer_status("nope", 4, status, sizeof status));
}

/* What a tenant sees of a node: "n" and its database id, nothing of its name or URL. */
static void test_node_ref(void **state)
{
    (void)state;
    static const struct {
        int32_t id;
        const char *ref;
    } rows[] = {{1, "n1"}, {42, "n42"}, {INT32_MAX, "n2147483647"}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char ref[PROXY_NODE_REF_SIZE];
        proxy_node_ref(rows[i].id, ref);
        assert_string_equal(ref, rows[i].ref);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_facts_table),
        cmocka_unit_test(test_read_bin_facts_table),
        cmocka_unit_test(test_bin_pool_rule_table),
        cmocka_unit_test(test_bin_request_immutable_table),
        cmocka_unit_test(test_retryable_table),
        cmocka_unit_test(test_answer_status),
        cmocka_unit_test(test_node_ref),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
