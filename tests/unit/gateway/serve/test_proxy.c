/* Table tests for the pure rules of proxy's node side: what a node answer says
 * (gateway/rpc/proxy_facts: OK, BUSY, errors, pruned transactions, negatives to confirm,
 * the heights it names), in JSON and in epee (.bin), which outcomes a read may retry on the
 * next node, and what a read does with a usable answer (gateway/rpc/proxy_confirm). Which
 * answers may be stored is the plan's (test_plan.c: plan_store, plan_keep). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "serve/proxy.h"
#include "serve/proxy_confirm.h"
#include "serve/proxy_facts.h"
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
        {"a node's rate limit (-32005): ask another",
         "{\"id\":0,\"error\":{\"code\":-32005,\"message\":\"too many requests\"}}", true, false,
         true, false, 0, -1},
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

/* get_blocks.bin: where the blocks start, how many, and the node's chain height. */
#define START(h) "\x0cstart_height\x05" U64(h)
#define CURRENT(h)                                                                                 \
    "\x0e"                                                                                         \
    "current_height\x05" U64(h)
#define TWO_BLOCKS                                                                                 \
    "\x06"                                                                                         \
    "blocks\x8c\x08\x00\x00"

static void test_read_supplement_table(void **state)
{
    (void)state;
    struct {
        const char *name, *body;
        size_t len;
        bool supplement;
        int64_t start, blocks, chain;
    } rows[] = {
        {"two blocks from height 5 of 100",
         BYTES(EPEE_HEADER "\x10" STATUS_OK START("\x05") CURRENT("\x64") TWO_BLOCKS), true, 5, 2,
         100},
        {"no blocks field (the client is at the tip)",
         BYTES(EPEE_HEADER "\x0c" STATUS_OK START("\x00") CURRENT("\x64")), true, 0, 0, 100},
        {"blocks that are not an array",
         BYTES(EPEE_HEADER "\x10" STATUS_OK START("\x05") CURRENT("\x64") "\x06"
                                                                          "blocks\x08\x01"),
         false, 0, 0, 0},
        {"no current_height (another .bin answer)",
         BYTES(EPEE_HEADER "\x0c" STATUS_OK START("\x05") TWO_BLOCKS), false, 0, 0, 0},
        {"no start_height", BYTES(EPEE_HEADER "\x0c" STATUS_OK CURRENT("\x64") TWO_BLOCKS), false,
         0, 0, 0},
        {"a height that is not an integer",
         BYTES(EPEE_HEADER "\x10" STATUS_OK START("\x05") "\x0e"
                                                          "current_height\x0a\x04x" TWO_BLOCKS),
         false, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct proxy_answer_facts f;
        print_message("# %s\n", rows[i].name);
        proxy_read_bin_facts(rows[i].body, rows[i].len, &f);
        assert_true(f.ok);
        assert_int_equal(f.supplement, rows[i].supplement);
        if (!rows[i].supplement)
            continue;
        assert_int_equal(f.blocks.start_height, rows[i].start);
        assert_int_equal(f.blocks.blocks, rows[i].blocks);
        assert_int_equal(f.blocks.chain_height, rows[i].chain);
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
        {UP_OK, 429, true}, /* the node's own rate limit: the next node */
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

/* proxy_confirm_step: what a read does with a usable answer. */
static void test_confirm_step_table(void **state)
{
    (void)state;
    const struct proxy_answer_facts ok = {.json = true, .ok = true, .height = -1};
    const struct proxy_answer_facts missing = {
        .json = true, .ok = true, .negatives = 1, .height = -1};
    const struct proxy_answer_facts two_missing = {
        .json = true, .ok = true, .negatives = 2, .height = -1};
    const struct proxy_answer_facts pruned = {
        .json = true, .ok = true, .pruned = true, .height = -1};
    const struct proxy_answer_facts error = {.json = true, .height = -1};
    struct {
        const char *name;
        struct proxy_read_state s;
        const struct proxy_answer_facts *f;
        enum proxy_step step;
    } rows[] = {
        {"a plain answer", {PHASE_READ, false, true, NULL}, &ok, PROXY_STEP_ANSWER},
        {"an error on the tip: passed on",
         {PHASE_READ, false, true, NULL},
         &error,
         PROXY_STEP_ANSWER},
        {"a pruned answer, full node needed",
         {PHASE_READ, true, true, NULL},
         &pruned,
         PROXY_STEP_FULL_NODE},
        {"a pruned answer, no full node needed",
         {PHASE_READ, false, true, NULL},
         &pruned,
         PROXY_STEP_ANSWER},
        {"a transaction missing: confirmed on a second node",
         {PHASE_READ, false, true, NULL},
         &missing,
         PROXY_STEP_CONFIRM},
        {"an error to a historical read (a lagging node's): confirmed",
         {PHASE_READ, false, false, NULL},
         &error,
         PROXY_STEP_CONFIRM},
        {"the second node found it: its answer",
         {PHASE_CONFIRM, false, true, &missing},
         &ok,
         PROXY_STEP_ANSWER},
        {"the second node found fewer missing: its answer",
         {PHASE_CONFIRM, false, true, &two_missing},
         &missing,
         PROXY_STEP_ANSWER},
        {"the second node found no more: the first stands",
         {PHASE_CONFIRM, false, true, &missing},
         &missing,
         PROXY_STEP_HELD},
        {"the second node erred: the first stands",
         {PHASE_CONFIRM, false, true, &missing},
         &error,
         PROXY_STEP_HELD},
        {"the second node answers a held error: its answer",
         {PHASE_CONFIRM, false, false, &error},
         &missing,
         PROXY_STEP_ANSWER},
        {"a confirmation is never confirmed again",
         {PHASE_CONFIRM, false, true, NULL},
         &missing,
         PROXY_STEP_ANSWER},
        {"the full node's answer, even pruned",
         {PHASE_FULL_NODE, true, true, &pruned},
         &pruned,
         PROXY_STEP_ANSWER},
        {"the full node's answer with a transaction missing",
         {PHASE_FULL_NODE, true, true, &pruned},
         &missing,
         PROXY_STEP_ANSWER},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        enum proxy_step step = proxy_confirm_step(&rows[i].s, rows[i].f);
        if (step != rows[i].step)
            fail_msg("%s: %s, expected %s", rows[i].name, proxy_step_name(step),
                     proxy_step_name(rows[i].step));
    }
    assert_string_equal(proxy_step_name((enum proxy_step)99), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_facts_table),      cmocka_unit_test(test_read_bin_facts_table),
        cmocka_unit_test(test_read_supplement_table), cmocka_unit_test(test_retryable_table),
        cmocka_unit_test(test_answer_status),         cmocka_unit_test(test_node_ref),
        cmocka_unit_test(test_confirm_step_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
