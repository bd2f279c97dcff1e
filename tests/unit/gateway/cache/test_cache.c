/* Tests for gateway/cache: canonical keys, id rewriting, tip-relative fields, the LRU
 * memory bound, tip TTL and refresh hand-out, and reorg epochs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"

static void key_of(const char *scope, const char *name, const char *body, const char *tip,
                   uint8_t out[CACHE_KEY_LEN])
{
    assert_true(cache_key(scope, name, body, strlen(body), true, tip, out));
}

static void test_keys(void **state)
{
    (void)state;
    uint8_t a[CACHE_KEY_LEN], b[CACHE_KEY_LEN];
    /* The id, the member order and the wallet's client signature do not count. */
    key_of("rpc", "get_block",
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get_block\",\"params\":{\"height\":5,"
           "\"fill_pow_hash\":false,\"client\":\"sig-1\"}}",
           NULL, a);
    key_of("rpc", "get_block",
           "{\"params\":{\"fill_pow_hash\":false,\"height\":5,\"client\":\"sig-2\"},"
           "\"method\":\"get_block\",\"id\":\"other\",\"jsonrpc\":\"2.0\"}",
           NULL, b);
    assert_memory_equal(a, b, CACHE_KEY_LEN);
    /* Parameters do. */
    key_of("rpc", "get_block", "{\"method\":\"get_block\",\"params\":{\"height\":6}}", NULL, b);
    assert_memory_not_equal(a, b, CACHE_KEY_LEN);
    /* So do the method, the scope and the tip hash. */
    uint8_t c[CACHE_KEY_LEN], d[CACHE_KEY_LEN], e[CACHE_KEY_LEN], f[CACHE_KEY_LEN];
    key_of("rpc", "get_info", "{\"method\":\"get_info\"}", "aa", c);
    key_of("rpc", "get_info", "{\"method\":\"get_info\"}", "bb", d);
    key_of("rpc", "get_info", "{\"method\":\"get_info\"}", NULL, e);
    key_of("path", "get_info", "{\"method\":\"get_info\"}", "aa", f);
    assert_memory_not_equal(c, d, CACHE_KEY_LEN);
    assert_memory_not_equal(c, e, CACHE_KEY_LEN);
    assert_memory_not_equal(c, f, CACHE_KEY_LEN);
    /* Plain endpoints: the whole body counts, minus "client". */
    key_of("path", "/get_transactions", "{\"txs_hashes\":[\"ab\"],\"client\":\"x\"}", NULL, a);
    key_of("path", "/get_transactions", "{\"txs_hashes\":[\"ab\"]}", NULL, b);
    assert_memory_equal(a, b, CACHE_KEY_LEN);
    /* A body that is not JSON has no key. */
    assert_false(cache_key("path", "/x", "{nope", 5, true, NULL, a));
    /* Binary bodies are hashed as bytes. */
    assert_true(cache_key("path", "/get_outs.bin", "\x01\x00\x02", 3, false, NULL, a));
    assert_true(cache_key("path", "/get_outs.bin", "\x01\x00\x03", 3, false, NULL, b));
    assert_memory_not_equal(a, b, CACHE_KEY_LEN);
}

static void test_id_rewrite(void **state)
{
    (void)state;
    const char *answer = "{\n  \"id\": \"first\",\n  \"jsonrpc\": \"2.0\",\n  \"result\": "
                         "{\"status\": \"OK\", \"height\": 7}\n}";
    size_t len = 0;
    char *stored = cache_strip_id(answer, strlen(answer), &len);
    assert_non_null(stored);
    assert_null(strstr(stored, "first"));
    json_t *id = json_pack("{s:i}", "n", 9); /* any JSON type is an id */
    size_t out_len = 0;
    char *out = cache_render_jsonrpc(stored, len, id, &out_len);
    assert_int_equal(out_len, strlen(out));
    json_t *parsed = json_loads(out, 0, NULL);
    assert_non_null(parsed);
    assert_true(json_equal(json_object_get(parsed, "id"), id));
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(parsed, "result"), "height")), 7);
    json_decref(parsed);
    free(out);
    out = cache_render_jsonrpc(stored, len, NULL, &out_len); /* no id: 0 */
    assert_non_null(strstr(out, "{\"id\":0,"));
    free(out);
    json_decref(id);
    free(stored);
    assert_null(cache_strip_id("[1]", 3, &len));
}

static void test_patch_tip_fields(void **state)
{
    (void)state;
    json_t *rpc = json_loads("{\"result\":{\"block_header\":{\"height\":90,\"depth\":3},"
                             "\"headers\":[{\"height\":80,\"depth\":1}]}}",
                             0, NULL);
    cache_patch_tip_fields(rpc, 101); /* top block 100 */
    json_t *r = json_object_get(rpc, "result");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(r, "block_header"), "depth")), 10);
    assert_int_equal(json_integer_value(json_object_get(
                         json_array_get(json_object_get(r, "headers"), 0), "depth")),
                     20);
    json_decref(rpc);
    json_t *txs = json_loads("{\"status\":\"OK\",\"txs\":[{\"block_height\":95,"
                             "\"confirmations\":1},{\"block_height\":100,\"confirmations\":0}]}",
                             0, NULL);
    cache_patch_tip_fields(txs, 101);
    json_t *list = json_object_get(txs, "txs");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 0), "confirmations")),
                     6);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 1), "confirmations")),
                     1);
    json_decref(txs);
}

static void fake_key(int n, uint8_t key[CACHE_KEY_LEN])
{
    memset(key, 0, CACHE_KEY_LEN);
    memcpy(key, &n, sizeof n);
    key[CACHE_KEY_LEN - 1] = (uint8_t)n;
}

static const uint8_t *fake_key_of(int n)
{
    static uint8_t key[CACHE_KEY_LEN];
    fake_key(n, key);
    return key;
}

static enum cache_lookup lookup(struct cache *c, int n, int64_t now, char *copy, size_t len)
{
    uint8_t key[CACHE_KEY_LEN];
    fake_key(n, key);
    char *body;
    size_t got;
    enum cache_lookup rc = cache_get(c, key, now, &body, &got, NULL);
    if (copy && body)
        snprintf(copy, len, "%s", body);
    free(body);
    return rc;
}

static bool put(struct cache *c, int n, const char *body, int64_t ttl, int64_t height,
                uint64_t generation, int64_t now)
{
    uint8_t key[CACHE_KEY_LEN];
    fake_key(n, key);
    return cache_put(c, key, body, strlen(body), ttl, height, generation, now);
}

static void test_tip_entry_size_bound(void **state)
{
    (void)state;
    struct cache *c = cache_new(8 * CACHE_TIP_MAX_BYTES);
    char *body = malloc(CACHE_TIP_MAX_BYTES + 2);
    assert_non_null(body);
    memset(body, 'b', CACHE_TIP_MAX_BYTES + 1);
    body[CACHE_TIP_MAX_BYTES + 1] = '\0';
    assert_false(put(c, 1, body, 2000, 0, 0, 0)); /* a tip entry one byte too large */
    assert_true(put(c, 2, body, 0, 10, 0, 0));    /* the same body, settled: kept */
    body[CACHE_TIP_MAX_BYTES] = '\0';
    assert_true(put(c, 3, body, 2000, 0, 0, 0)); /* a tip entry of exactly the bound */
    assert_int_equal(lookup(c, 1, 0, NULL, 0), CACHE_MISS);
    assert_int_equal(lookup(c, 2, 0, NULL, 0), CACHE_HIT);
    assert_int_equal(lookup(c, 3, 0, NULL, 0), CACHE_HIT);
    free(body);
    cache_free(c);
}

static void test_lru_bound(void **state)
{
    (void)state;
    /* Entries cost their body plus an overhead: room for about four 1000-byte bodies. */
    struct cache *c = cache_new(4600);
    char body[1001];
    memset(body, 'x', 1000);
    body[1000] = '\0';
    for (int i = 0; i < 4; i++)
        assert_true(put(c, i, body, 0, 10, 0, 0));
    assert_int_equal(lookup(c, 0, 0, NULL, 0), CACHE_HIT); /* 0 is now most recent */
    assert_true(put(c, 4, body, 0, 10, 0, 0));             /* evicts 1, the least recent */
    struct cache_stats s = cache_stats(c);
    assert_true(s.bytes <= 4600);
    assert_int_equal(s.evictions, 1);
    assert_int_equal(lookup(c, 1, 0, NULL, 0), CACHE_MISS);
    assert_int_equal(lookup(c, 0, 0, NULL, 0), CACHE_HIT);
    assert_int_equal(lookup(c, 4, 0, NULL, 0), CACHE_HIT);
    /* Larger than the whole bound: refused. */
    char big[6000];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_false(put(c, 9, big, 0, 10, 0, 0));
    /* Replacing a key keeps one entry. */
    size_t before = cache_stats(c).entries;
    assert_true(put(c, 4, "short", 0, 10, 0, 0));
    assert_int_equal(cache_stats(c).entries, before);
    char copy[16];
    assert_int_equal(lookup(c, 4, 0, copy, sizeof copy), CACHE_HIT);
    assert_string_equal(copy, "short");
    s = cache_stats(c);
    assert_int_equal(s.hits, 4);
    assert_int_equal(s.misses, 1);
    cache_free(c);
}

static void test_tip_ttl_and_refresh(void **state)
{
    (void)state;
    struct cache *c = cache_new(1 << 20);
    assert_true(put(c, 1, "{\"status\":\"OK\"}", 2000, 0, 0, 1000));
    assert_int_equal(lookup(c, 1, 1500, NULL, 0), CACHE_HIT);
    /* Past half the TTL: one caller is told to refresh, the others are not. */
    assert_int_equal(lookup(c, 1, 2100, NULL, 0), CACHE_HIT_REFRESH);
    assert_int_equal(lookup(c, 1, 2200, NULL, 0), CACHE_HIT);
    /* A failed refresh lets the next caller try again. */
    uint8_t key[CACHE_KEY_LEN];
    fake_key(1, key);
    cache_refresh_failed(c, key);
    assert_int_equal(lookup(c, 1, 2300, NULL, 0), CACHE_HIT_REFRESH);
    /* Never served at or past the TTL. */
    assert_int_equal(lookup(c, 1, 3000, NULL, 0), CACHE_MISS);
    assert_int_equal(cache_stats(c).entries, 0);
    /* A refreshed entry starts a new TTL. */
    assert_true(put(c, 1, "{\"status\":\"OK\"}", 2000, 0, 0, 3000));
    assert_int_equal(lookup(c, 1, 3500, NULL, 0), CACHE_HIT);
    /* The height given with a tip entry comes back with each hit (-1 and a reorg alike:
     * a tip entry's validity is its TTL alone). */
    const int64_t heights[] = {1234, -1, 0};
    for (size_t i = 0; i < sizeof heights / sizeof heights[0]; i++) {
        assert_true(put(c, 2, "{}", 2000, heights[i], 0, 4000));
        cache_reorg(c, 10);
        char *body;
        size_t got;
        int64_t named = 99;
        assert_int_equal(cache_get(c, fake_key_of(2), 4100, &body, &got, &named), CACHE_HIT);
        assert_int_equal(named, heights[i]);
        free(body);
    }
    cache_free(c);
}

/* Hits of settled (immutable) entries are counted apart from tip hits. */
static void test_settled_hits(void **state)
{
    (void)state;
    struct cache *c = cache_new(1 << 20);
    assert_true(put(c, 1, "{\"status\":\"OK\"}", 2000, 0, 0, 1000)); /* tip */
    assert_true(put(c, 2, "{\"status\":\"OK\"}", 0, 5, 0, 1000));    /* settled, height 5 */
    assert_int_equal(lookup(c, 1, 1100, NULL, 0), CACHE_HIT);
    assert_int_equal(lookup(c, 2, 1100, NULL, 0), CACHE_HIT);
    assert_int_equal(lookup(c, 2, 1200, NULL, 0), CACHE_HIT);
    assert_int_equal(lookup(c, 3, 1200, NULL, 0), CACHE_MISS);
    struct cache_stats st = cache_stats(c);
    assert_int_equal(st.hits, 3);
    assert_int_equal(st.settled_hits, 2);
    assert_int_equal(st.misses, 1);
    cache_free(c);
}

static void test_reorg_epochs(void **state)
{
    (void)state;
    struct cache *c = cache_new(1 << 20);
    uint64_t gen = cache_generation(c);
    assert_true(put(c, 100, "h100", 0, 100, gen, 0));
    assert_true(put(c, 110, "h110", 0, 110, gen, 0));
    assert_true(put(c, 120, "h120", 0, 120, gen, 0));
    /* A reorg above 105: 110 and 120 are gone, 100 stays. */
    cache_reorg(c, 105);
    assert_int_equal(lookup(c, 100, 0, NULL, 0), CACHE_HIT);
    assert_int_equal(lookup(c, 110, 0, NULL, 0), CACHE_MISS);
    assert_int_equal(lookup(c, 120, 0, NULL, 0), CACHE_MISS);
    assert_int_equal(cache_stats(c).purged, 2);
    assert_int_equal(cache_epoch_for(c, 105), 0);
    assert_int_equal(cache_epoch_for(c, 106), 1);
    /* An answer fetched before the reorg is refused; one fetched after is kept. */
    assert_false(put(c, 111, "old", 0, 111, gen, 0));
    gen = cache_generation(c);
    assert_true(put(c, 111, "new", 0, 111, gen, 0));
    assert_int_equal(lookup(c, 111, 0, NULL, 0), CACHE_HIT);
    /* A deep reorg (fork unknown) purges everything. */
    cache_reorg(c, -1);
    assert_int_equal(lookup(c, 100, 0, NULL, 0), CACHE_MISS);
    assert_int_equal(lookup(c, 111, 0, NULL, 0), CACHE_MISS);
    /* Tip entries do not depend on epochs (their key holds the tip hash). */
    assert_true(put(c, 7, "tip", 2000, 0, 0, 0));
    cache_reorg(c, 0);
    assert_int_equal(lookup(c, 7, 1, NULL, 0), CACHE_HIT);
    assert_int_equal(cache_stats(c).epoch, 3);
    cache_free(c);
}

/* Many reorgs overflow the bounded event list; no stale entry may become reachable. */
static void test_epoch_list_overflow(void **state)
{
    (void)state;
    struct cache *c = cache_new(1 << 20);
    assert_true(put(c, 500, "stale-after-first", 0, 500, cache_generation(c), 0));
    cache_reorg(c, 400); /* invalidates 500 */
    for (int i = 0; i < 100; i++)
        cache_reorg(c, 1000 + i); /* far above: the first event gets folded away */
    assert_int_equal(lookup(c, 500, 0, NULL, 0), CACHE_MISS);
    /* Entries stored after all that live on. */
    assert_true(put(c, 501, "fresh", 0, 501, cache_generation(c), 0));
    assert_int_equal(lookup(c, 501, 0, NULL, 0), CACHE_HIT);
    cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_id_rewrite),
        cmocka_unit_test(test_patch_tip_fields),
        cmocka_unit_test(test_lru_bound),
        cmocka_unit_test(test_tip_entry_size_bound),
        cmocka_unit_test(test_tip_ttl_and_refresh),
        cmocka_unit_test(test_settled_hits),
        cmocka_unit_test(test_reorg_epochs),
        cmocka_unit_test(test_epoch_list_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
