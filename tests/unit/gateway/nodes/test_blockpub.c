/* Table tests for gateway/nodes/blockpub: the json-minimal-chain_main publication as monerod
 * sends it (and what is not one), the addresses --zmq-pub takes, and the [nodes] zmq
 * setting's name=address pairs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "nodes/blockpub.h"

#define H1 "418015bb9ae982a1975da7d79277c2705727a56894ba0fb246adaabb1f4632e3"
#define H2 "c5a1a9c4e3a1ac1ac5b7a4f93f9f3aa7f9e6e0b7f1d2a3b4c5d6e7f8a9b0c1d2"
#define H3 "0000000000000000000000000000000000000000000000000000000000000001"

static void test_parse(void **state)
{
    (void)state;
    const struct {
        const char *msg;
        enum blockpub_kind kind;
        int64_t first, length;
        const char *top;
    } rows[] = {
        /* One block, as monerod 0.18 publishes it. */
        {"json-minimal-chain_main:{\"first_height\":91,\"first_prev_id\":\"" H1 "\",\"ids\":[\"" H2
         "\"]}",
         BLOCKPUB_CHAIN_MAIN, 91, 92, H2},
        /* Several blocks at once (a reorg or a batch): the last is the top. */
        {"json-minimal-chain_main:{\"first_height\":5,\"first_prev_id\":\"" H1 "\",\"ids\":[\"" H2
         "\",\"" H3 "\"]}",
         BLOCKPUB_CHAIN_MAIN, 5, 7, H3},
        {"json-minimal-chain_main:{\"ids\":[\"" H2 "\"],\"first_height\":0,\"first_prev_id\":\"" H3
         "\"}",
         BLOCKPUB_CHAIN_MAIN, 0, 1, H2},
        /* Other topics. */
        {"json-minimal-txpool_add:[{\"id\":\"" H1 "\",\"blob_size\":1,\"weight\":1,\"fee\":1}]",
         BLOCKPUB_OTHER, 0, 0, NULL},
        {"json-full-chain_main:[{}]", BLOCKPUB_OTHER, 0, 0, NULL},
        {"json-minimal-chain_mainly:{}", BLOCKPUB_OTHER, 0, 0, NULL},
        {"", BLOCKPUB_OTHER, 0, 0, NULL},
        /* Ours, but not what monerod sends. */
        {"json-minimal-chain_main", BLOCKPUB_MALFORMED, 0, 0, NULL},
        {"json-minimal-chain_main:", BLOCKPUB_MALFORMED, 0, 0, NULL},
        {"json-minimal-chain_main:{", BLOCKPUB_MALFORMED, 0, 0, NULL},
        {"json-minimal-chain_main:[]", BLOCKPUB_MALFORMED, 0, 0, NULL},
        {"json-minimal-chain_main:{\"first_height\":1,\"first_prev_id\":\"" H1 "\",\"ids\":[]}",
         BLOCKPUB_MALFORMED, 0, 0, NULL},
        {"json-minimal-chain_main:{\"first_height\":-1,\"first_prev_id\":\"" H1 "\",\"ids\":[\"" H2
         "\"]}",
         BLOCKPUB_MALFORMED, 0, 0, NULL},
        {"json-minimal-chain_main:{\"first_height\":\"1\",\"first_prev_id\":\"" H1
         "\",\"ids\":[\"" H2 "\"]}",
         BLOCKPUB_MALFORMED, 0, 0, NULL},
        {"json-minimal-chain_main:{\"first_height\":9223372036854775807,\"first_prev_id\":\"" H1
         "\",\"ids\":[\"" H2 "\"]}",
         BLOCKPUB_MALFORMED, 0, 0, NULL},
        {"json-minimal-chain_main:{\"first_height\":1,\"ids\":[\"" H2 "\"]}", BLOCKPUB_MALFORMED, 0,
         0, NULL},
        {"json-minimal-chain_main:{\"first_height\":1,\"first_prev_id\":\"" H1
         "\",\"ids\":[\"abc\"]}",
         BLOCKPUB_MALFORMED, 0, 0, NULL},
        {"json-minimal-chain_main:{\"first_height\":1,\"first_prev_id\":\"" H1 "\",\"ids\":[\"" H2
         "\",7]}",
         BLOCKPUB_MALFORMED, 0, 0, NULL},
        /* A hash with a non-hex character. */
        {"json-minimal-chain_main:{\"first_height\":1,\"first_prev_id\":\"" H1
         "\",\"ids\":[\"g5a1a9c4e3a1ac1ac5b7a4f93f9f3aa7f9e6e0b7f1d2a3b4c5d6e7f8a9b0c1d2\"]}",
         BLOCKPUB_MALFORMED, 0, 0, NULL},
        /* A duplicate key is not monerod's. */
        {"json-minimal-chain_main:{\"first_height\":1,\"first_height\":2,\"first_prev_id\":\"" H1
         "\",\"ids\":[\"" H2 "\"]}",
         BLOCKPUB_MALFORMED, 0, 0, NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct blockpub_chain c;
        memset(&c, 0, sizeof c);
        enum blockpub_kind kind = blockpub_parse(rows[i].msg, strlen(rows[i].msg), &c);
        if (kind != rows[i].kind)
            fail_msg("row %zu: kind %d, expected %d", i, kind, rows[i].kind);
        if (kind != BLOCKPUB_CHAIN_MAIN)
            continue;
        assert_int_equal(c.first_height, rows[i].first);
        assert_int_equal(c.length, rows[i].length);
        assert_int_equal(c.blocks, (size_t)(rows[i].length - rows[i].first));
        assert_string_equal(c.top_hash, rows[i].top);
    }
}

/* The message is a frame, not a C string: nothing past len is read. */
static void test_parse_reads_len_bytes_only(void **state)
{
    (void)state;
    char buf[256];
    int n = snprintf(buf, sizeof buf,
                     "json-minimal-chain_main:{\"first_height\":3,\"first_prev_id\":\"" H1
                     "\",\"ids\":[\"" H2 "\"]}");
    struct blockpub_chain c;
    assert_int_equal(blockpub_parse(buf, (size_t)n, &c), BLOCKPUB_CHAIN_MAIN);
    assert_int_equal(blockpub_parse(buf, (size_t)n - 1, &c), BLOCKPUB_MALFORMED);
    assert_int_equal(blockpub_parse(buf, 10, &c), BLOCKPUB_OTHER);
}

static void test_addr_valid(void **state)
{
    (void)state;
    const struct {
        const char *addr;
        bool valid;
    } rows[] = {
        {"tcp://127.0.0.1:18083", true},
        {"tcp://localhost:1", true},
        {"tcp://[::1]:18083", true},
        {"ipc:///run/monerod/pub.sock", true},
        {"tcp://127.0.0.1:0", false},
        {"tcp://127.0.0.1:65536", false},
        {"tcp://127.0.0.1:", false},
        {"tcp://127.0.0.1", false},
        {"tcp://:18083", false},
        {"tcp://127.0.0.1:18x", false},
        {"tcp://127.0.0.1:+5", false},
        {"tcp://[::1:5", false},
        {"tcp://a b:5", false},
        {"http://127.0.0.1:18083", false},
        {"ipc://", false},
        {"", false},
        {NULL, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (blockpub_addr_valid(rows[i].addr) != rows[i].valid)
            fail_msg("%s: expected %d", rows[i].addr ? rows[i].addr : "(null)", rows[i].valid);
}

static void test_map(void **state)
{
    (void)state;
    const char *map = " a=tcp://127.0.0.1:26112 ,b = tcp://127.0.0.1:26122,node-c=ipc:///tmp/c ";
    char err[160], addr[BLOCKPUB_ADDR_MAX + 1];
    assert_true(blockpub_map_check(map, err, sizeof err));
    assert_true(blockpub_map_find(map, "a", addr));
    assert_string_equal(addr, "tcp://127.0.0.1:26112");
    assert_true(blockpub_map_find(map, "b", addr));
    assert_string_equal(addr, "tcp://127.0.0.1:26122");
    assert_true(blockpub_map_find(map, "node-c", addr));
    assert_string_equal(addr, "ipc:///tmp/c");
    assert_false(blockpub_map_find(map, "c", addr));
    assert_false(blockpub_map_find(map, "node", addr));
    assert_false(blockpub_map_find("", "a", addr));

    const struct {
        const char *map;
        bool ok;
        const char *why;
    } rows[] = {
        {"", true, NULL},
        {" , ", true, NULL},
        {"a=tcp://h:1,", true, NULL},
        {"ab=tcp://h:1,b=tcp://h:2", true, NULL}, /* b is not ab's tail */
        {"a", false, "not name=address"},
        {"=tcp://h:1", false, "not name=address"},
        {"a=", false, "not name=address"},
        {"a=http://h:1", false, "not tcp://host:port"},
        {"a=tcp://h:1,a=tcp://h:2", false, "node named twice"},
        {"a=tcp://h:1, a =tcp://h:2", false, "node named twice"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        err[0] = '\0';
        bool ok = blockpub_map_check(rows[i].map, err, sizeof err);
        if (ok != rows[i].ok)
            fail_msg("\"%s\": expected %d (%s)", rows[i].map, rows[i].ok, err);
        if (!ok && !strstr(err, rows[i].why))
            fail_msg("\"%s\": reason \"%s\"", rows[i].map, err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_reads_len_bytes_only),
        cmocka_unit_test(test_addr_valid),
        cmocka_unit_test(test_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
