/* Table tests for gateway/proxy's pure rules: what a node answer says (OK, BUSY, errors,
 * pruned transactions, negatives to confirm, the heights it names) and which outcomes a
 * read may retry on the next node. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "proxy.h"
#include "upstream.h"

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
        int64_t min_height;
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
        {"a header range: the lowest",
         "{\"result\":{\"status\":\"OK\",\"headers\":[{\"height\":9},{\"height\":7}]}}", true, true,
         false, false, 0, 7},
        {"complete mined transactions",
         "{\"status\":\"OK\",\"txs\":[{\"as_hex\":\"0a\",\"block_height\":30," PRUNABLE
         "},{\"as_hex\":\"0b\",\"block_height\":20}]}",
         true, true, false, false, 0, 20},
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
         true, true, false, false, 0, -2},
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
        assert_int_equal(f.min_height, rows[i].min_height);
    }
    struct proxy_answer_facts f;
    proxy_read_facts(NULL, 0, &f);
    assert_false(f.json);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_facts_table),
        cmocka_unit_test(test_retryable_table),
        cmocka_unit_test(test_answer_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
