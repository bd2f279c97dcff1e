/* Table tests for gateway/rpc/consistency: which reads a tenant's served tip holds, the
 * height every names_tip answer carries (JSON-RPC, plain JSON, epee), when an answer is
 * below the floor, and when read-your-writes sends a read to the nodes that accepted the
 * tenant's transaction; and the method table's per-tenant columns. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "rpc/consistency.h"
#include "rpc/methods.h"
#include "rpc/plan.h"

#define EPEE_HEADER "\x01\x11\x01\x01\x01\x01\x02\x01\x01"
#define U64(b)      b "\x00\x00\x00\x00\x00\x00\x00"
#define BYTES(s)    s, sizeof(s) - 1

static const struct method_info *row(const char *name)
{
    const struct method_info *m = name[0] == '/' ? methods_find_path(name, strlen(name))
                                                 : methods_find_jsonrpc(name, strlen(name));
    assert_non_null(m);
    return m;
}

static struct plan plan_of(const char *name, bool asks_pool)
{
    struct plan p;
    plan_for_body(row(name), NULL, 0, asks_pool, &p);
    return p;
}

static void test_floor(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int64_t served, floor;
    } rows[] = {
        {"get_block_count", 100, 100},
        {"get_info", 100, 100},
        {"get_last_block_header", 100, 100},
        {"/get_height", 100, 100},
        {"/get_info", 7, 7},
        {"get_fee_estimate", 100, 100},         /* a tip read that does not name it */
        {"/get_blocks.bin", 100, 100},          /* names it (current_height) */
        {"/get_transaction_pool", 100, 100},    /* passthrough: routed to the tip */
        {"/is_key_image_spent", 100, 100},      /* passthrough */
        {"get_block_count", 0, 0},              /* nothing served yet */
        {"/get_transactions", 100, 0},          /* historical: any node */
        {"get_block_header_by_height", 100, 0}, /* historical */
        {"/send_raw_transaction", 100, 0},      /* a broadcast */
        {"generateblocks", 100, 0},             /* refused */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct plan p = plan_of(rows[i].name, false);
        assert_int_equal(consistency_floor(&p, rows[i].served), rows[i].floor);
    }
}

static void test_answer_height(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *body;
        int64_t height;
    } rows[] = {
        {"get_block_count",
         "{\"id\":0,\"jsonrpc\":\"2.0\",\"result\":{\"count\":1234,"
         "\"status\":\"OK\"}}",
         1234},
        {"get_info", "{\"result\":{\"height\":77,\"status\":\"OK\"}}", 77},
        /* a header names the top block's height: the chain is one longer */
        {"get_last_block_header",
         "{\"result\":{\"block_header\":{\"height\":76},\"status\":\"OK\"}}", 77},
        {"/get_height", "{\"hash\":\"ab\",\"height\":55,\"status\":\"OK\"}", 55},
        {"/get_info", "{\"height\":56,\"status\":\"OK\",\"synchronized\":true}", 56},
        /* not OK, or no number: it says nothing */
        {"get_info", "{\"result\":{\"height\":77,\"status\":\"BUSY\"}}", -1},
        {"get_block_count", "{\"error\":{\"code\":-32603,\"message\":\"x\"}}", -1},
        {"/get_height", "{\"height\":\"55\",\"status\":\"OK\"}", -1},
        {"/get_height", "{\"height\":-3,\"status\":\"OK\"}", -1},
        {"/get_height", "not json", -1},
        {"get_info", "", -1},
        /* rows that do not name the tip are never read for it */
        {"get_fee_estimate", "{\"result\":{\"height\":77,\"status\":\"OK\"}}", -1},
        {"/get_transactions", "{\"height\":77,\"status\":\"OK\"}", -1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(
            consistency_answer_height(row(rows[i].name), rows[i].body, strlen(rows[i].body), false),
            rows[i].height);
    assert_int_equal(consistency_answer_height(NULL, "{}", 2, false), -1);
}

static void test_bin_height(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        size_t len;
        int64_t height;
    } rows[] = {
        {BYTES(EPEE_HEADER "\x08\x0e"
                           "current_height\x05" U64("\x2a") "\x06status\x0a\x08OK"),
         42},
        {BYTES(EPEE_HEADER "\x08\x0e"
                           "current_height\x05" U64("\x2a") "\x06status\x0a\x10"
                                                            "BUSY"),
         -1},
        /* a pool-only answer (requested_info 2): monerod 0.18.4 states current_height 0 */
        {BYTES(EPEE_HEADER "\x08\x0e"
                           "current_height\x05" U64("\x00") "\x06status\x0a\x08OK"),
         -1},
        {BYTES(EPEE_HEADER "\x04\x06status\x0a\x08OK"), -1}, /* no height */
        {BYTES("\x01\x02\x03"), -1},                         /* not portable storage */
    };
    const struct method_info *blocks = row("/get_blocks.bin");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(consistency_answer_height(blocks, rows[i].body, rows[i].len, true),
                         rows[i].height);
}

static void test_below(void **state)
{
    (void)state;
    static const struct {
        int64_t floor, height;
        bool below;
    } rows[] = {
        {100, 99, true}, {100, 100, false}, {100, 101, false}, {100, -1, false},
        {0, 50, false},  {1, 0, true},      {0, -1, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(consistency_below(rows[i].floor, rows[i].height), rows[i].below);
}

static void test_writes_nodes(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        bool asks_pool;
        uint64_t accepted;
        int64_t until_ms, now_ms;
        uint64_t nodes;
    } rows[] = {
        {"/get_transaction_pool", false, 0x6, 1000, 999, 0x6},
        {"/get_transaction_pool_hashes", false, 0x6, 1000, 0, 0x6},
        {"/get_transaction_pool_hashes.bin", false, 0x6, 1000, 0, 0x6},
        {"/get_transaction_pool_stats", false, 0x6, 1000, 0, 0x6},
        {"/get_transactions", false, 0x6, 1000, 0, 0x6},
        {"/is_key_image_spent", false, 0x6, 1000, 0, 0x6},
        {"get_txpool_backlog", false, 0x6, 1000, 0, 0x6},
        {"/get_blocks.bin", true, 0x6, 1000, 0, 0x6},         /* asking for the pool */
        {"/get_blocks.bin", false, 0x6, 1000, 0, 0},          /* blocks only */
        {"/get_transaction_pool", false, 0x6, 1000, 1000, 0}, /* the time is up */
        {"/get_transaction_pool", false, 0, 1000, 0, 0},      /* nothing accepted */
        {"get_info", false, 0x6, 1000, 0, 0},                 /* not a pool query */
        {"/get_outs", false, 0x6, 1000, 0, 0},
        {"/send_raw_transaction", false, 0x6, 1000, 0, 0}, /* a write goes everywhere */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct plan p = plan_of(rows[i].name, rows[i].asks_pool);
        assert_int_equal(
            consistency_writes_nodes(&p, rows[i].accepted, rows[i].until_ms, rows[i].now_ms),
            rows[i].nodes);
    }
}

/* The table's columns: exactly these rows name the tip, exactly these follow writes. */
static void test_table_columns(void **state)
{
    (void)state;
    static const char *const names_tip[] = {"get_block_count", "get_info",  "get_last_block_header",
                                            "/get_height",     "/get_info", "/get_blocks.bin"};
    static const char *const own_writes[] = {
        "get_txpool_backlog",           "/get_transaction_pool",
        "/get_transaction_pool_hashes", "/get_transaction_pool_hashes.bin",
        "/get_transaction_pool_stats",  "/get_transactions",
        "/is_key_image_spent"};
    size_t tips = 0, writes = 0;
    for (size_t i = 0; i < methods_count(); i++) {
        const struct method_info *m = methods_at(i);
        tips += m->names_tip;
        writes += m->own_writes;
        if (m->names_tip || m->own_writes)
            assert_false(m->writes || m->cls == METHOD_DENIED);
        if (m->names_tip)
            assert_int_equal(m->cls, METHOD_TIP);
    }
    assert_int_equal(tips, sizeof names_tip / sizeof names_tip[0]);
    assert_int_equal(writes, sizeof own_writes / sizeof own_writes[0]);
    for (size_t i = 0; i < tips; i++)
        assert_true(row(names_tip[i])->names_tip);
    for (size_t i = 0; i < writes; i++)
        assert_true(row(own_writes[i])->own_writes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floor),        cmocka_unit_test(test_answer_height),
        cmocka_unit_test(test_bin_height),   cmocka_unit_test(test_below),
        cmocka_unit_test(test_writes_nodes), cmocka_unit_test(test_table_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
