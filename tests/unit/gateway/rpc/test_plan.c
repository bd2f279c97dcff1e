/* Table tests for gateway/rpc/plan: the plan of every method table row by its class, the
 * request facts that change it (params naming a hash, a height or a range, "prune", a .bin
 * body's heights, a .bin body asking for the pool), what may be stored at a given quorum
 * tip, whether and how an answer that came is stored (plan_keep), and get_blocks.bin's pool
 * rule. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/methods.h"
#include "rpc/plan.h"

#define EPEE_HEADER "\x01\x11\x01\x01\x01\x01\x02\x01\x01"
#define U64(b)      b "\x00\x00\x00\x00\x00\x00\x00"
#define BYTES(s)    s, sizeof(s) - 1

static const struct method_info *rpc(const char *name)
{
    const struct method_info *m = methods_find_jsonrpc(name, strlen(name));
    assert_non_null(m);
    return m;
}

static const struct method_info *path(const char *name)
{
    const struct method_info *m = methods_find_path(name, strlen(name));
    assert_non_null(m);
    return m;
}

/* Every row, with no request facts: the class decides the route, writes rule out hedging,
 * the key column decides the cache. */
static void test_every_row_by_its_class(void **state)
{
    (void)state;
    size_t seen[METHOD_DENIED + 1] = {0};
    for (size_t i = 0; i < methods_count(); i++) {
        const struct method_info *m = methods_at(i);
        struct plan p;
        plan_for(m, NULL, &p);
        print_message("# %s\n", m->name);
        seen[m->cls]++;
        assert_ptr_equal(p.info, m);
        assert_false(p.pool);
        assert_int_equal(p.prunable, m->needs_full_node != METHOD_FULL_NO);
        /* Without a body saying "prune": true, an unless-prune row wants a full node. */
        assert_int_equal(p.full_node, m->needs_full_node != METHOD_FULL_NO);
        switch (m->cls) {
        case METHOD_TIP:
            assert_int_equal(p.route, PLAN_ROUTE_TIP);
            assert_true(p.hedgeable);
            assert_int_equal(p.cache, PLAN_CACHE_TIP);
            assert_int_equal(p.key, PLAN_KEY_TIP);
            assert_int_equal(p.depth, PLAN_DEPTH_NONE);
            break;
        case METHOD_IMMUTABLE:
            assert_int_equal(p.route, PLAN_ROUTE_HISTORICAL);
            assert_true(p.hedgeable);
            /* Keyed by hash or index: cached; by height: only once the request names one. */
            if (m->key == METHOD_KEY_HASH || m->key == METHOD_KEY_INDEX) {
                assert_int_equal(p.cache, PLAN_CACHE_SETTLED);
                assert_int_equal(p.depth, PLAN_DEPTH_ANSWER);
            } else {
                assert_int_equal(p.cache, PLAN_CACHE_NONE);
            }
            break;
        case METHOD_PASSTHROUGH:
            assert_int_equal(p.route, PLAN_ROUTE_TIP);
            assert_true(p.hedgeable);
            assert_int_equal(p.cache, PLAN_CACHE_NONE);
            break;
        case METHOD_BROADCAST:
            assert_int_equal(p.route, PLAN_ROUTE_BROADCAST);
            assert_false(p.hedgeable);
            assert_int_equal(p.cache, PLAN_CACHE_NONE);
            break;
        case METHOD_DENIED:
            assert_int_equal(p.route, PLAN_ROUTE_REFUSED);
            assert_false(p.hedgeable);
            assert_int_equal(p.cache, PLAN_CACHE_NONE);
            break;
        }
        if (p.cache == PLAN_CACHE_NONE) {
            assert_int_equal(p.key, PLAN_KEY_NONE);
            assert_int_equal(p.depth, PLAN_DEPTH_NONE);
        }
        if (p.key != PLAN_KEY_HEIGHT && p.key != PLAN_KEY_RANGE)
            assert_int_equal(p.height, -1);
        if (m->writes)
            assert_false(p.hedgeable);
    }
    for (int c = METHOD_IMMUTABLE; c <= METHOD_DENIED; c++)
        assert_true(seen[c] > 0);
}

/* The key column agrees with the class: tip rows exactly are keyed at the tip, only
 * immutable rows name another key, and every immutable row but get_o_indexes.bin (its
 * depth cannot be told) names one. */
static void test_key_column_follows_the_class(void **state)
{
    (void)state;
    for (size_t i = 0; i < methods_count(); i++) {
        const struct method_info *m = methods_at(i);
        print_message("# %s\n", m->name);
        assert_int_equal(m->cls == METHOD_TIP, m->key == METHOD_KEY_TIP);
        if (m->cls != METHOD_IMMUTABLE && m->cls != METHOD_TIP)
            assert_int_equal(m->key, METHOD_KEY_NONE);
        if (m->cls == METHOD_IMMUTABLE && strcmp(m->name, "/get_o_indexes.bin") != 0)
            assert_int_not_equal(m->key, METHOD_KEY_NONE);
        /* A binary body is read for its heights only; params only from a JSON body. */
        bool from_params = m->key == METHOD_KEY_HEIGHT || m->key == METHOD_KEY_HASH_OR_HEIGHT ||
                           m->key == METHOD_KEY_RANGE || m->key == METHOD_KEY_HEIGHT_ARG;
        if (m->key == METHOD_KEY_HEIGHTS)
            assert_int_equal(m->kind, METHOD_BIN_PATH);
        if (from_params)
            assert_int_not_equal(m->kind, METHOD_BIN_PATH);
    }
    assert_int_equal(path("/get_o_indexes.bin")->key, METHOD_KEY_NONE);
    assert_int_equal(rpc("get_block")->key, METHOD_KEY_HASH_OR_HEIGHT);
    assert_int_equal(rpc("on_get_block_hash")->key, METHOD_KEY_HEIGHT_ARG);
    assert_int_equal(path("/get_blocks_by_height.bin")->key, METHOD_KEY_HEIGHTS);
    assert_int_equal(path("/get_outs.bin")->key, METHOD_KEY_INDEX);
    assert_int_equal(path("/get_transactions")->key, METHOD_KEY_HASH);
}

#define HEIGHTS(b) EPEE_HEADER "\x04\x07heights\x85\x08" U64("\x05") U64(b)

/* The request facts that change a plan. */
static void test_request_facts_table(void **state)
{
    (void)state;
    struct {
        const char *name;
        const struct method_info *info;
        const char *params; /* JSON, NULL: none */
        const char *bin;    /* a .bin body, NULL: none */
        size_t bin_len;
        bool asks_pool;
        enum plan_route route;
        bool full_node, hedgeable, pool;
        enum plan_cache cache;
        enum plan_key key;
        enum plan_depth depth;
        int64_t height;
    } rows[] = {
        {"get_block by hash", rpc("get_block"), "{\"hash\":\"ab\"}", NULL, 0, false,
         PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_SETTLED, PLAN_KEY_HASH,
         PLAN_DEPTH_ANSWER, -1},
        {"get_block by hash wins over a height", rpc("get_block"), "{\"hash\":\"ab\",\"height\":5}",
         NULL, 0, false, PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_SETTLED,
         PLAN_KEY_HASH, PLAN_DEPTH_ANSWER, -1},
        {"get_block by height", rpc("get_block"), "{\"height\":5}", NULL, 0, false,
         PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_SETTLED, PLAN_KEY_HEIGHT,
         PLAN_DEPTH_ANSWER, 5},
        {"get_block naming neither", rpc("get_block"), "{}", NULL, 0, false, PLAN_ROUTE_HISTORICAL,
         false, true, false, PLAN_CACHE_NONE, PLAN_KEY_NONE, PLAN_DEPTH_NONE, -1},
        {"get_block with a height that is a string", rpc("get_block"), "{\"height\":\"5\"}", NULL,
         0, false, PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_NONE, PLAN_KEY_NONE,
         PLAN_DEPTH_NONE, -1},
        {"a header by hash, whatever the params", rpc("get_block_header_by_hash"), NULL, NULL, 0,
         false, PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_SETTLED, PLAN_KEY_HASH,
         PLAN_DEPTH_ANSWER, -1},
        {"a header by height", rpc("get_block_header_by_height"), "{\"height\":7}", NULL, 0, false,
         PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_SETTLED, PLAN_KEY_HEIGHT,
         PLAN_DEPTH_ANSWER, 7},
        {"a header by height, none given", rpc("get_block_header_by_height"), "{}", NULL, 0, false,
         PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_NONE, PLAN_KEY_NONE, PLAN_DEPTH_NONE,
         -1},
        {"a negative height is planned (the node refuses it; an error is never stored)",
         rpc("get_block_header_by_height"), "{\"height\":-5}", NULL, 0, false,
         PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_SETTLED, PLAN_KEY_HEIGHT,
         PLAN_DEPTH_ANSWER, -5},
        {"a range", rpc("get_block_headers_range"), "{\"start_height\":3,\"end_height\":9}", NULL,
         0, false, PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_SETTLED, PLAN_KEY_RANGE,
         PLAN_DEPTH_ANSWER, 9},
        {"a range of one", rpc("get_block_headers_range"), "{\"start_height\":4,\"end_height\":4}",
         NULL, 0, false, PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_SETTLED,
         PLAN_KEY_RANGE, PLAN_DEPTH_ANSWER, 4},
        {"a range backwards", rpc("get_block_headers_range"),
         "{\"start_height\":9,\"end_height\":3}", NULL, 0, false, PLAN_ROUTE_HISTORICAL, false,
         true, false, PLAN_CACHE_NONE, PLAN_KEY_NONE, PLAN_DEPTH_NONE, -1},
        {"a range without its end", rpc("get_block_headers_range"), "{\"start_height\":3}", NULL, 0,
         false, PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_NONE, PLAN_KEY_NONE,
         PLAN_DEPTH_NONE, -1},
        {"a block hash by height: the answer names none", rpc("on_get_block_hash"), "[12]", NULL, 0,
         false, PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_SETTLED, PLAN_KEY_HEIGHT,
         PLAN_DEPTH_REQUEST, 12},
        {"a block hash, two heights", rpc("on_get_block_hash"), "[1,2]", NULL, 0, false,
         PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_NONE, PLAN_KEY_NONE, PLAN_DEPTH_NONE,
         -1},
        {"a block hash, a height as an object", rpc("on_get_block_hash"), "{\"height\":1}", NULL, 0,
         false, PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_NONE, PLAN_KEY_NONE,
         PLAN_DEPTH_NONE, -1},
        {"a block hash, a height as a string", rpc("on_get_block_hash"), "[\"1\"]", NULL, 0, false,
         PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_NONE, PLAN_KEY_NONE, PLAN_DEPTH_NONE,
         -1},
        {"transactions, unpruned: a full node", path("/get_transactions"),
         "{\"txs_hashes\":[\"ab\"]}", NULL, 0, false, PLAN_ROUTE_HISTORICAL, true, true, false,
         PLAN_CACHE_SETTLED, PLAN_KEY_HASH, PLAN_DEPTH_ANSWER, -1},
        {"transactions with prune: any node", path("/get_transactions"),
         "{\"txs_hashes\":[\"ab\"],\"prune\":true}", NULL, 0, false, PLAN_ROUTE_HISTORICAL, false,
         true, false, PLAN_CACHE_SETTLED, PLAN_KEY_HASH, PLAN_DEPTH_ANSWER, -1},
        {"transactions with prune false", path("/get_transactions"), "{\"prune\":false}", NULL, 0,
         false, PLAN_ROUTE_HISTORICAL, true, true, false, PLAN_CACHE_SETTLED, PLAN_KEY_HASH,
         PLAN_DEPTH_ANSWER, -1},
        {"transactions with prune as a string", path("/get_transactions"), "{\"prune\":\"true\"}",
         NULL, 0, false, PLAN_ROUTE_HISTORICAL, true, true, false, PLAN_CACHE_SETTLED,
         PLAN_KEY_HASH, PLAN_DEPTH_ANSWER, -1},
        {"outputs by index", path("/get_outs"), "{\"outputs\":[]}", NULL, 0, false,
         PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_SETTLED, PLAN_KEY_INDEX,
         PLAN_DEPTH_ANSWER, -1},
        {"outputs by index, binary", path("/get_outs.bin"), NULL, BYTES(EPEE_HEADER "\x00"), false,
         PLAN_ROUTE_HISTORICAL, false, true, false, PLAN_CACHE_SETTLED, PLAN_KEY_INDEX,
         PLAN_DEPTH_ANSWER, -1},
        {"output indices: depth unknown, not stored", path("/get_o_indexes.bin"), NULL,
         BYTES(EPEE_HEADER "\x00"), false, PLAN_ROUTE_HISTORICAL, false, true, false,
         PLAN_CACHE_NONE, PLAN_KEY_NONE, PLAN_DEPTH_NONE, -1},
        {"blocks by height: the answer is not read for heights", path("/get_blocks_by_height.bin"),
         NULL, BYTES(HEIGHTS("\x09")), false, PLAN_ROUTE_HISTORICAL, true, true, false,
         PLAN_CACHE_SETTLED, PLAN_KEY_HEIGHT, PLAN_DEPTH_REQUEST, 9},
        {"blocks by height, no body", path("/get_blocks_by_height.bin"), NULL, NULL, 0, false,
         PLAN_ROUTE_HISTORICAL, true, true, false, PLAN_CACHE_NONE, PLAN_KEY_NONE, PLAN_DEPTH_NONE,
         -1},
        {"blocks by height, a height past int64", path("/get_blocks_by_height.bin"), NULL,
         BYTES(EPEE_HEADER "\x04\x07heights\x85\x04\xff\xff\xff\xff\xff\xff\xff\xff"), false,
         PLAN_ROUTE_HISTORICAL, true, true, false, PLAN_CACHE_NONE, PLAN_KEY_NONE, PLAN_DEPTH_NONE,
         -1},
        {"wallet sync: a full node, a binary body is not read for prune", path("/get_blocks.bin"),
         NULL, BYTES(EPEE_HEADER "\x04\x05prune\x0b\x01"), false, PLAN_ROUTE_TIP, true, true, false,
         PLAN_CACHE_TIP, PLAN_KEY_TIP, PLAN_DEPTH_NONE, -1},
        {"wallet sync asking for the pool: never cached", path("/get_blocks.bin"), NULL,
         BYTES(EPEE_HEADER "\x00"), true, PLAN_ROUTE_TIP, true, true, true, PLAN_CACHE_NONE,
         PLAN_KEY_NONE, PLAN_DEPTH_NONE, -1},
        {"a pool question for a row without pool information is no pool", path("/get_info"), NULL,
         NULL, 0, true, PLAN_ROUTE_TIP, false, true, false, PLAN_CACHE_TIP, PLAN_KEY_TIP,
         PLAN_DEPTH_NONE, -1},
        {"node state", rpc("get_info"), "{}", NULL, 0, false, PLAN_ROUTE_TIP, false, true, false,
         PLAN_CACHE_TIP, PLAN_KEY_TIP, PLAN_DEPTH_NONE, -1},
        {"spent checks: any node on the tip, never cached", path("/is_key_image_spent"),
         "{\"key_images\":[]}", NULL, 0, false, PLAN_ROUTE_TIP, false, true, false, PLAN_CACHE_NONE,
         PLAN_KEY_NONE, PLAN_DEPTH_NONE, -1},
        {"a broadcast: never hedged", path("/send_raw_transaction"), "{\"tx_as_hex\":\"ab\"}", NULL,
         0, false, PLAN_ROUTE_BROADCAST, false, false, false, PLAN_CACHE_NONE, PLAN_KEY_NONE,
         PLAN_DEPTH_NONE, -1},
        {"a denied write", rpc("generateblocks"), "{}", NULL, 0, false, PLAN_ROUTE_REFUSED, false,
         false, false, PLAN_CACHE_NONE, PLAN_KEY_NONE, PLAN_DEPTH_NONE, -1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        print_message("# %s\n", rows[i].name);
        json_t *params = rows[i].params ? json_loads(rows[i].params, 0, NULL) : NULL;
        assert_true(!rows[i].params || params);
        struct plan_request r = {.params = params,
                                 .bin = rows[i].bin,
                                 .bin_len = rows[i].bin_len,
                                 .asks_pool = rows[i].asks_pool};
        struct plan p;
        plan_for(rows[i].info, &r, &p);
        assert_int_equal(p.route, rows[i].route);
        assert_int_equal(p.full_node, rows[i].full_node);
        assert_int_equal(p.hedgeable, rows[i].hedgeable);
        assert_int_equal(p.pool, rows[i].pool);
        assert_int_equal(p.cache, rows[i].cache);
        assert_int_equal(p.key, rows[i].key);
        assert_int_equal(p.depth, rows[i].depth);
        assert_int_equal(p.height, rows[i].height);
        json_decref(params);
    }
}

/* The body as the gateway forwards it: a whole JSON-RPC request (its params are read), a
 * JSON endpoint's object, a .bin body; what does not parse names nothing. */
static void test_plan_for_body_table(void **state)
{
    (void)state;
    static const char rpc_by_height[] =
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"get_block\",\"params\":{\"height\":8}}";
    static const char rpc_no_params[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"get_block\"}";
    static const char pruned[] = "{\"txs_hashes\":[],\"prune\":true}";
    static const char heights[] = HEIGHTS("\x0b");
    struct {
        const char *name;
        const struct method_info *info;
        const char *body;
        size_t len;
        bool asks_pool;
        bool full_node, pool;
        enum plan_cache cache;
        enum plan_key key;
        int64_t height;
    } rows[] = {
        {"a JSON-RPC request: its params", rpc("get_block"), BYTES(rpc_by_height), false, false,
         false, PLAN_CACHE_SETTLED, PLAN_KEY_HEIGHT, 8},
        {"a JSON-RPC request without params", rpc("get_block"), BYTES(rpc_no_params), false, false,
         false, PLAN_CACHE_NONE, PLAN_KEY_NONE, -1},
        {"params alone are not a JSON-RPC request", rpc("get_block"), BYTES("{\"height\":8}"),
         false, false, false, PLAN_CACHE_NONE, PLAN_KEY_NONE, -1},
        {"a JSON endpoint's body", path("/get_transactions"), BYTES(pruned), false, false, false,
         PLAN_CACHE_SETTLED, PLAN_KEY_HASH, -1},
        {"a JSON body that does not parse", path("/get_transactions"), BYTES("{\"prune\":tr"),
         false, true, false, PLAN_CACHE_SETTLED, PLAN_KEY_HASH, -1},
        {"no body", path("/get_transactions"), NULL, 0, false, true, false, PLAN_CACHE_SETTLED,
         PLAN_KEY_HASH, -1},
        {"a .bin body", path("/get_blocks_by_height.bin"), BYTES(heights), false, true, false,
         PLAN_CACHE_SETTLED, PLAN_KEY_HEIGHT, 11},
        {"a .bin body asking for the pool", path("/get_blocks.bin"), BYTES(EPEE_HEADER "\x00"),
         true, true, true, PLAN_CACHE_NONE, PLAN_KEY_NONE, -1},
        {"node state, body unread", rpc("get_info"), BYTES("not json"), false, false, false,
         PLAN_CACHE_TIP, PLAN_KEY_TIP, -1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        print_message("# %s\n", rows[i].name);
        struct plan p;
        plan_for_body(rows[i].info, rows[i].body, rows[i].len, rows[i].asks_pool, &p);
        assert_int_equal(p.full_node, rows[i].full_node);
        assert_int_equal(p.pool, rows[i].pool);
        assert_int_equal(p.cache, rows[i].cache);
        assert_int_equal(p.key, rows[i].key);
        assert_int_equal(p.height, rows[i].height);
    }
}

/* What may be stored at a quorum tip: tip answers while a tip is known, settled ones only
 * while it is agreed on and the request's heights are deep. */
static void test_store_table(void **state)
{
    (void)state;
    struct {
        const char *name;
        const struct method_info *info;
        const char *params;
        const char *bin;
        size_t bin_len;
        struct plan_chain chain;
        enum plan_cache store;
        int64_t deep;
    } rows[] = {
        {"tip: a known tip",
         rpc("get_info"),
         NULL,
         NULL,
         0,
         {true, false, 100, 10},
         PLAN_CACHE_TIP,
         89},
        {"tip: no tip known",
         rpc("get_info"),
         NULL,
         NULL,
         0,
         {false, false, 0, 10},
         PLAN_CACHE_NONE,
         -11},
        {"tip: degraded still serves briefly",
         rpc("get_info"),
         NULL,
         NULL,
         0,
         {true, true, 100, 10},
         PLAN_CACHE_TIP,
         89},
        {"by hash: the answer decides",
         rpc("get_block_header_by_hash"),
         NULL,
         NULL,
         0,
         {true, false, 100, 10},
         PLAN_CACHE_SETTLED,
         89},
        {"by hash: never while degraded",
         rpc("get_block_header_by_hash"),
         NULL,
         NULL,
         0,
         {true, true, 100, 10},
         PLAN_CACHE_NONE,
         89},
        {"by hash: no tip known",
         rpc("get_block_header_by_hash"),
         NULL,
         NULL,
         0,
         {false, false, 100, 10},
         PLAN_CACHE_NONE,
         89},
        {"by hash on a chain with no settled block: planned, refused when stored",
         path("/get_transactions"),
         NULL,
         NULL,
         0,
         {true, false, 5, 10},
         PLAN_CACHE_SETTLED,
         -6},
        {"by index, .bin, on a chain with no settled block",
         path("/get_outs.bin"),
         NULL,
         BYTES(EPEE_HEADER "\x00"),
         {true, false, 5, 10},
         PLAN_CACHE_NONE,
         -6},
        {"by index, .bin, the first settled block",
         path("/get_outs.bin"),
         NULL,
         BYTES(EPEE_HEADER "\x00"),
         {true, false, 11, 10},
         PLAN_CACHE_SETTLED,
         0},
        {"by height, deep",
         rpc("get_block_header_by_height"),
         "{\"height\":89}",
         NULL,
         0,
         {true, false, 100, 10},
         PLAN_CACHE_SETTLED,
         89},
        {"by height, one block short of deep",
         rpc("get_block_header_by_height"),
         "{\"height\":90}",
         NULL,
         0,
         {true, false, 100, 10},
         PLAN_CACHE_NONE,
         89},
        {"by height, degraded",
         rpc("get_block_header_by_height"),
         "{\"height\":1}",
         NULL,
         0,
         {true, true, 100, 10},
         PLAN_CACHE_NONE,
         89},
        {"a range ending deep",
         rpc("get_block_headers_range"),
         "{\"start_height\":1,\"end_height\":89}",
         NULL,
         0,
         {true, false, 100, 10},
         PLAN_CACHE_SETTLED,
         89},
        {"a range ending near the tip",
         rpc("get_block_headers_range"),
         "{\"start_height\":1,\"end_height\":95}",
         NULL,
         0,
         {true, false, 100, 10},
         PLAN_CACHE_NONE,
         89},
        {"a block hash by height, deep",
         rpc("on_get_block_hash"),
         "[50]",
         NULL,
         0,
         {true, false, 100, 10},
         PLAN_CACHE_SETTLED,
         89},
        {"a block hash above the tip",
         rpc("on_get_block_hash"),
         "[500]",
         NULL,
         0,
         {true, false, 100, 10},
         PLAN_CACHE_NONE,
         89},
        {"blocks by height, all deep",
         path("/get_blocks_by_height.bin"),
         NULL,
         BYTES(HEIGHTS("\x09")),
         {true, false, 20, 10},
         PLAN_CACHE_SETTLED,
         9},
        {"blocks by height, one not deep",
         path("/get_blocks_by_height.bin"),
         NULL,
         BYTES(HEIGHTS("\x0a")),
         {true, false, 20, 10},
         PLAN_CACHE_NONE,
         9},
        {"a height-keyed request naming none",
         rpc("get_block"),
         "{}",
         NULL,
         0,
         {true, false, 100, 10},
         PLAN_CACHE_NONE,
         89},
        {"passthrough",
         path("/is_key_image_spent"),
         NULL,
         NULL,
         0,
         {true, false, 100, 10},
         PLAN_CACHE_NONE,
         89},
        {"broadcast",
         path("/send_raw_transaction"),
         NULL,
         NULL,
         0,
         {true, false, 100, 10},
         PLAN_CACHE_NONE,
         89},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        print_message("# %s\n", rows[i].name);
        json_t *params = rows[i].params ? json_loads(rows[i].params, 0, NULL) : NULL;
        struct plan p;
        plan_for(rows[i].info,
                 &(struct plan_request){
                     .params = params, .bin = rows[i].bin, .bin_len = rows[i].bin_len},
                 &p);
        int64_t deep = 12345;
        assert_int_equal(plan_store(&p, &rows[i].chain, &deep), rows[i].store);
        assert_int_equal(deep, rows[i].deep);
        json_decref(params);
    }
}

#define PRUNE   "\x05prune\x0b\x01"
#define INFO(v) "\x0erequested_info\x08" v
#define SINCE   "\x0fpool_info_since\x05" U64("\x07")

/* plan_keep: whether and how a node's answer is stored. GOOD is an OK answer of an own node
 * to a request plan_store allowed as settled (deep 89: the highest settled height). */
#define GOOD .http = 200, .ok = true, .own_node = true
/* A row sets GOOD and then overrides what it tests. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#define SETTLED_AT(h) .store = PLAN_CACHE_SETTLED, .deep = 89, .height = (h)
static void test_keep_table(void **state)
{
    (void)state;
    const struct plan_chain chain = {true, false, 100, 10}; /* settled: heights <= 89 */
    const struct plan_chain degraded = {true, true, 100, 10};
    const struct plan by_answer = {.depth = PLAN_DEPTH_ANSWER, .height = -1};
    const struct plan by_request = {.depth = PLAN_DEPTH_REQUEST, .height = 60};
    const struct plan prunable = {.depth = PLAN_DEPTH_ANSWER, .height = -1, .prunable = true};
    const struct plan tip = {.cache = PLAN_CACHE_TIP, .height = -1};
    const struct plan supplement = {.cache = PLAN_CACHE_TIP, .height = -1, .settles = true};
    /* checked rows (methods.h agree): kept only once two own nodes agreed */
    const struct plan checked_tip = {.cache = PLAN_CACHE_TIP,
                                     .height = -1,
                                     .info = methods_find_jsonrpc("get_fee_estimate", 16)};
    const struct plan checked_outs = {
        .depth = PLAN_DEPTH_ANSWER, .height = -1, .info = methods_find_path("/get_outs.bin", 13)};
    assert_true(checked_tip.info && checked_tip.info->agree);
    assert_true(checked_outs.info && checked_outs.info->agree);
    /* get_blocks.bin's answer: blocks 10..14 of a node chain of 100, more follow them */
    const struct plan_supplement blocks = {10, 5, 100};
    const struct plan_supplement at_node_tip = {95, 5, 100};
    struct {
        const char *name;
        const struct plan *plan;
        struct plan_answer a;
        const struct plan_chain *now;
        enum plan_keep keep;
        int64_t height;
    } rows[] = {
        {"settled, deep enough", &by_answer, {GOOD, SETTLED_AT(50)}, NULL, PLAN_KEEP_SETTLED, 50},
        {"settled at the deepest settled height",
         &by_answer,
         {GOOD, SETTLED_AT(89)},
         NULL,
         PLAN_KEEP_SETTLED,
         89},
        {"one block above settled: a short reorg could change it",
         &by_answer,
         {GOOD, SETTLED_AT(90)},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"plan_store allowed nothing",
         &by_answer,
         {GOOD, .store = PLAN_CACHE_NONE, .deep = 89, .height = 50},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"HTTP 500", &by_answer, {GOOD, SETTLED_AT(50), .http = 500}, NULL, PLAN_KEEP_NONE, 0},
        {"HTTP 404", &by_answer, {GOOD, SETTLED_AT(50), .http = 404}, NULL, PLAN_KEEP_NONE, 0},
        {"an error answer",
         &by_answer,
         {GOOD, SETTLED_AT(50), .ok = false},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"BUSY", &by_answer, {GOOD, SETTLED_AT(50), .busy = true}, NULL, PLAN_KEEP_NONE, 0},
        {"untrusted (a bootstrap daemon's)",
         &by_answer,
         {GOOD, SETTLED_AT(50), .untrusted = true},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"a transaction missing: not found is never stored",
         &by_answer,
         {GOOD, SETTLED_AT(50), .negatives = 1},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"a public node's answer is never shared",
         &by_answer,
         {GOOD, SETTLED_AT(50), .own_node = false},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"a pool transaction or a locked output",
         &by_answer,
         {GOOD, SETTLED_AT(PLAN_HEIGHT_UNSETTLED)},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"no height named", &by_answer, {GOOD, SETTLED_AT(-1)}, NULL, PLAN_KEEP_NONE, 0},
        {"by request height: the request's height stands",
         &by_request,
         {GOOD, SETTLED_AT(-1)},
         NULL,
         PLAN_KEEP_SETTLED,
         60},
        {"by request height: a higher answer height wins",
         &by_request,
         {GOOD, SETTLED_AT(70)},
         NULL,
         PLAN_KEEP_SETTLED,
         70},
        {"by request height, JSON-RPC naming no block (all-zero hash)",
         &by_request,
         {GOOD, SETTLED_AT(-1), .jsonrpc = true},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"by request height, JSON-RPC naming a block",
         &by_request,
         {GOOD, SETTLED_AT(-1), .jsonrpc = true, .names_block = true},
         NULL,
         PLAN_KEEP_SETTLED,
         60},
        {"by answer height, JSON-RPC: names_block is not read",
         &by_answer,
         {GOOD, SETTLED_AT(50), .jsonrpc = true},
         NULL,
         PLAN_KEEP_SETTLED,
         50},
        {"prunable row, a pruned answer",
         &prunable,
         {GOOD, SETTLED_AT(50), .pruned = true},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"prunable row, .bin from a pruned node (epee not read for pruned parts)",
         &prunable,
         {GOOD, SETTLED_AT(50), .bin = true, .node_pruned = true},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"prunable row, JSON from a pruned node, complete",
         &prunable,
         {GOOD, SETTLED_AT(50), .node_pruned = true},
         NULL,
         PLAN_KEEP_SETTLED,
         50},
        {"row without prunable data, .bin from a pruned node",
         &by_answer,
         {GOOD, SETTLED_AT(50), .bin = true, .node_pruned = true},
         NULL,
         PLAN_KEEP_SETTLED,
         50},
        {"tip",
         &tip,
         {GOOD, .store = PLAN_CACHE_TIP, .deep = 89, .height = -1},
         NULL,
         PLAN_KEEP_TIP,
         0},
        {"tip, heights above settled do not matter",
         &tip,
         {GOOD, .store = PLAN_CACHE_TIP, .deep = 89, .height = 99},
         NULL,
         PLAN_KEEP_TIP,
         0},
        {"tip, a public node's",
         &tip,
         {GOOD, .store = PLAN_CACHE_TIP, .height = -1, .own_node = false},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"tip, BUSY",
         &tip,
         {GOOD, .store = PLAN_CACHE_TIP, .height = -1, .busy = true},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"tip, negatives",
         &tip,
         {GOOD, .store = PLAN_CACHE_TIP, .height = -1, .negatives = 2},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"a settled chain supplement",
         &supplement,
         {GOOD, .store = PLAN_CACHE_TIP, .deep = 89, .height = -1, .settles = true, .bin = true,
          .supplement = true, .blocks = blocks},
         &chain,
         PLAN_KEEP_SUPPLEMENT,
         14},
        {"a chain supplement from a pruned node: a tip entry only",
         &supplement,
         {GOOD, .store = PLAN_CACHE_TIP, .deep = 89, .height = -1, .settles = true, .bin = true,
          .node_pruned = true, .supplement = true, .blocks = blocks},
         &chain,
         PLAN_KEEP_TIP,
         0},
        {"a chain supplement reaching the node's tip: a tip entry only",
         &supplement,
         {GOOD, .store = PLAN_CACHE_TIP, .deep = 89, .height = -1, .settles = true, .bin = true,
          .supplement = true, .blocks = at_node_tip},
         &chain,
         PLAN_KEEP_TIP,
         0},
        {"a chain supplement while degraded: a tip entry only",
         &supplement,
         {GOOD, .store = PLAN_CACHE_TIP, .deep = 89, .height = -1, .settles = true, .bin = true,
          .supplement = true, .blocks = blocks},
         &degraded,
         PLAN_KEEP_TIP,
         0},
        {"a chain supplement, the chain not read",
         &supplement,
         {GOOD, .store = PLAN_CACHE_TIP, .deep = 89, .height = -1, .settles = true, .bin = true,
          .supplement = true, .blocks = blocks},
         NULL,
         PLAN_KEEP_TIP,
         0},
        {"a chain supplement without its settled key",
         &supplement,
         {GOOD, .store = PLAN_CACHE_TIP, .deep = 89, .height = -1, .bin = true, .supplement = true,
          .blocks = blocks},
         &chain,
         PLAN_KEEP_TIP,
         0},
        {"a fee estimate one node alone gave",
         &checked_tip,
         {GOOD, .store = PLAN_CACHE_TIP, .deep = 89, .height = -1},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"a fee estimate two nodes agreed on",
         &checked_tip,
         {GOOD, .store = PLAN_CACHE_TIP, .deep = 89, .height = -1, .agreed = true},
         NULL,
         PLAN_KEEP_TIP,
         0},
        {"outputs one node alone gave",
         &checked_outs,
         {GOOD, SETTLED_AT(50)},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"outputs two nodes agreed on",
         &checked_outs,
         {GOOD, SETTLED_AT(50), .agreed = true},
         NULL,
         PLAN_KEEP_SETTLED,
         50},
        {"outputs two nodes agreed on, not deep yet",
         &checked_outs,
         {GOOD, SETTLED_AT(90), .agreed = true},
         NULL,
         PLAN_KEEP_NONE,
         0},
        {"a chain supplement from a public node",
         &supplement,
         {GOOD, .store = PLAN_CACHE_TIP, .deep = 89, .height = -1, .settles = true, .bin = true,
          .own_node = false, .supplement = true, .blocks = blocks},
         &chain,
         PLAN_KEEP_NONE,
         0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t height = 0;
        enum plan_keep keep = plan_keep(rows[i].plan, &rows[i].a, rows[i].now, &height);
        if (keep != rows[i].keep || height != rows[i].height)
            fail_msg("%s: keep %d at %lld, expected %d at %lld", rows[i].name, (int)keep,
                     (long long)height, (int)rows[i].keep, (long long)rows[i].height);
    }
}
#pragma GCC diagnostic pop
#undef GOOD
#undef SETTLED_AT

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
        assert_int_equal(plan_pool_rule(body, &len, &asks), rows[i].ok);
        assert_int_equal(asks, rows[i].asks_pool);
        assert_int_equal(len, rows[i].out_len);
        assert_memory_equal(body, rows[i].out, len);
    }
}

/* Which get_blocks.bin plans settle, and when a supplement answer is settled: it holds a
 * block, more follow it on the node's chain, its last block is deep below the quorum, and
 * the quorum is known and agreed. */
static void test_supplement_settled_table(void **state)
{
    (void)state;
    const struct method_info *blocks = path("/get_blocks.bin");
    struct plan p, pool, other;
    plan_for(blocks, &(struct plan_request){0}, &p);
    plan_for(blocks, &(struct plan_request){.asks_pool = true}, &pool);
    plan_for(path("/get_hashes.bin"), NULL, &other);
    assert_true(p.settles);
    assert_int_equal(p.cache, PLAN_CACHE_TIP);
    assert_false(pool.settles); /* the pool rule: never cached at all */
    assert_int_equal(pool.cache, PLAN_CACHE_NONE);
    assert_false(other.settles);
    const struct plan_chain chain = {.known = true, .height = 2100, .min_depth = 10};
    /* settled: heights up to 2100 - 1 - 10 = 2089 */
    struct {
        const char *name;
        const struct plan *plan;
        struct plan_chain chain;
        struct plan_supplement s;
        bool settled;
        int64_t top;
    } rows[] = {
        {"a full batch from genesis, more follow", &p, chain, {0, 1000, 2100}, true, 999},
        {"the second batch", &p, chain, {1000, 1000, 2100}, true, 1999},
        {"its last block exactly at the settled height", &p, chain, {1090, 1000, 2100}, true, 2089},
        {"one block above the settled height", &p, chain, {1091, 1000, 2100}, false, 0},
        {"it reaches the node's tip", &p, chain, {2000, 100, 2100}, false, 0},
        {"a node ahead of the quorum: more follow on it, but not deep",
         &p,
         chain,
         {2000, 100, 2200},
         false,
         0},
        {"a limit ended it below a short node's tip", &p, chain, {0, 3, 4}, true, 2},
        {"no blocks (the client is at the tip)", &p, chain, {0, 0, 2100}, false, 0},
        {"a negative start", &p, chain, {-1, 10, 2100}, false, 0},
        {"a start that overflows", &p, chain, {INT64_MAX, 2, 2100}, false, 0},
        {"no quorum known", &p, {.height = 2100, .min_depth = 10}, {0, 1000, 2100}, false, 0},
        {"degraded",
         &p,
         {.known = true, .degraded = true, .height = 2100, .min_depth = 10},
         {0, 1000, 2100},
         false,
         0},
        {"a request asking for the pool", &pool, chain, {0, 1000, 2100}, false, 0},
        {"another row", &other, chain, {0, 1000, 2100}, false, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t top = 0;
        print_message("# %s\n", rows[i].name);
        assert_int_equal(plan_supplement_settled(rows[i].plan, &rows[i].chain, &rows[i].s, &top),
                         rows[i].settled);
        assert_int_equal(top, rows[i].top);
    }
}

/* How long a tip entry is served: the probe interval, or for a chain supplement long
 * enough for wallets reaching the tip apart to share its last batch. */
static void test_tip_ttl_table(void **state)
{
    (void)state;
    struct plan blocks, pool, info;
    plan_for(path("/get_blocks.bin"), &(struct plan_request){0}, &blocks);
    plan_for(path("/get_blocks.bin"), &(struct plan_request){.asks_pool = true}, &pool);
    plan_for(path("/get_info"), NULL, &info);
    const struct plan_supplement at = {2000, 11, 2011}, ahead = {2000, 12, 2012};
    struct {
        const char *name;
        const struct plan *plan;
        const struct plan_supplement *s;
        int64_t tip_ttl, want;
    } rows[] = {
        {"get_info: the probe interval", &info, NULL, 2000, 2000},
        {"a chain supplement from a node at the quorum: until the tip moves, bounded", &blocks, &at,
         2000, PLAN_SUPPLEMENT_TIP_TTL_MS},
        {"a supplement from a node ahead of the quorum: the probe interval", &blocks, &ahead, 2000,
         2000},
        {"a supplement whose answer was not read", &blocks, NULL, 2000, 2000},
        {"a probe interval longer than the bound", &blocks, &at, PLAN_SUPPLEMENT_TIP_TTL_MS + 1,
         PLAN_SUPPLEMENT_TIP_TTL_MS + 1},
        {"get_blocks.bin asking for the pool (never cached)", &pool, &at, 2000, 2000},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        print_message("# %s\n", rows[i].name);
        assert_int_equal(plan_tip_ttl(rows[i].plan, rows[i].tip_ttl, rows[i].s, 2011),
                         rows[i].want);
    }
}

/* Which .bin requests may be stored as settled, and the height the request names. */
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
        print_message("# %s\n", rows[i].name);
        struct plan p;
        plan_for(path(rows[i].path),
                 &(struct plan_request){.bin = rows[i].body, .bin_len = rows[i].len}, &p);
        /* A chain whose highest settled block is rows[i].deep. */
        struct plan_chain chain = {.known = true, .height = rows[i].deep + 1};
        int64_t deep;
        bool immutable = plan_store(&p, &chain, &deep) == PLAN_CACHE_SETTLED;
        assert_int_equal(deep, rows[i].deep);
        assert_int_equal(immutable, rows[i].immutable);
        if (immutable)
            assert_int_equal(p.height, rows[i].height);
    }
}

static void test_names_and_json(void **state)
{
    (void)state;
    assert_string_equal(plan_route_name(PLAN_ROUTE_REFUSED), "refused");
    assert_string_equal(plan_route_name(PLAN_ROUTE_TIP), "tip");
    assert_string_equal(plan_route_name(PLAN_ROUTE_HISTORICAL), "historical");
    assert_string_equal(plan_route_name(PLAN_ROUTE_BROADCAST), "broadcast");
    assert_string_equal(plan_route_name((enum plan_route)42), "?");
    assert_string_equal(plan_cache_name(PLAN_CACHE_NONE), "none");
    assert_string_equal(plan_cache_name(PLAN_CACHE_TIP), "tip");
    assert_string_equal(plan_cache_name(PLAN_CACHE_SETTLED), "settled");
    assert_string_equal(plan_cache_name((enum plan_cache)42), "?");
    assert_string_equal(plan_key_name(PLAN_KEY_NONE), "none");
    assert_string_equal(plan_key_name(PLAN_KEY_TIP), "tip");
    assert_string_equal(plan_key_name(PLAN_KEY_HASH), "hash");
    assert_string_equal(plan_key_name(PLAN_KEY_INDEX), "index");
    assert_string_equal(plan_key_name(PLAN_KEY_HEIGHT), "height");
    assert_string_equal(plan_key_name(PLAN_KEY_RANGE), "range");
    assert_string_equal(plan_key_name((enum plan_key)42), "?");
    assert_string_equal(plan_depth_name(PLAN_DEPTH_NONE), "none");
    assert_string_equal(plan_depth_name(PLAN_DEPTH_ANSWER), "answer");
    assert_string_equal(plan_depth_name(PLAN_DEPTH_REQUEST), "request");
    assert_string_equal(plan_depth_name((enum plan_depth)42), "?");
    assert_string_equal(methods_key_name(METHOD_KEY_HASH_OR_HEIGHT), "hash or height");
    assert_string_equal(methods_key_name(METHOD_KEY_HEIGHT_ARG), "[height]");
    assert_string_equal(methods_key_name((enum method_key)42), "?");

    json_t *params = json_loads("{\"height\":7}", 0, NULL);
    struct plan p;
    plan_for(rpc("getblockheaderbyheight"), &(struct plan_request){.params = params}, &p);
    json_t *j = plan_json(&p);
    char *text = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(text, "{\"cache\":\"settled\",\"depth\":\"answer\",\"full_node\":false,"
                              "\"hedgeable\":true,\"height\":7,\"key\":\"height\",\"pool\":false,"
                              "\"prunable\":false,\"route\":\"historical\"}");
    free(text);
    json_decref(j);
    json_decref(params);
    plan_for(path("/sendrawtransaction"), NULL, &p);
    j = plan_json(&p);
    assert_true(json_is_null(json_object_get(j, "height")));
    assert_string_equal(json_string_value(json_object_get(j, "route")), "broadcast");
    assert_true(json_is_false(json_object_get(j, "hedgeable")));
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row_by_its_class),
        cmocka_unit_test(test_key_column_follows_the_class),
        cmocka_unit_test(test_request_facts_table),
        cmocka_unit_test(test_plan_for_body_table),
        cmocka_unit_test(test_store_table),
        cmocka_unit_test(test_keep_table),
        cmocka_unit_test(test_bin_pool_rule_table),
        cmocka_unit_test(test_supplement_settled_table),
        cmocka_unit_test(test_tip_ttl_table),
        cmocka_unit_test(test_bin_request_immutable_table),
        cmocka_unit_test(test_names_and_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
