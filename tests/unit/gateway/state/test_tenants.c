/* Tests for the in-memory tenant table and the parsing of tenant rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "state/pgsync.h"
#include "state/tenants.h"
#include "token.h"

static struct tenant_row make_row(int64_t id, uint8_t token_byte, const char *handle)
{
    struct tenant_row row;
    memset(&row, 0, sizeof row);
    row.id = id;
    memset(row.token_hash, token_byte, sizeof row.token_hash);
    snprintf(row.handle, sizeof row.handle, "%s", handle);
    snprintf(row.tier_id, sizeof row.tier_id, "free");
    row.burst_rps = 2;
    row.burst_size = 40;
    row.daily_quota = 100;
    row.valid_until = 2000000000;
    return row;
}

static void test_lookups_by_every_key(void **state)
{
    (void)state;
    struct tenant_store *store = tenants_new();
    struct tenant_row a = make_row(1, 0xaa, "t_aaaaaaaaaaaa");
    struct tenant_row b = make_row(2, 0xbb, "t_bbbbbbbbbbbb");
    assert_true(tenants_upsert(store, &a, 1));
    assert_true(tenants_upsert(store, &b, 1));
    assert_int_equal(tenants_count(store), 2);
    tenants_read_lock();
    assert_int_equal(tenants_find_token(store, a.token_hash)->id, 1);
    assert_int_equal(tenants_find_handle(store, "t_bbbbbbbbbbbb")->id, 2);
    assert_int_equal(tenants_find_id(store, 2)->id, 2);
    uint8_t unknown[32];
    memset(unknown, 0xcc, sizeof unknown);
    assert_null(tenants_find_token(store, unknown));
    assert_null(tenants_find_handle(store, "t_cccccccccccc"));
    assert_null(tenants_find_id(store, 3));
    tenants_read_unlock();
    tenants_free(store);
}

static void test_update_replaces_and_moves_keys(void **state)
{
    (void)state;
    struct tenant_store *store = tenants_new();
    struct tenant_row a = make_row(1, 0xaa, "t_aaaaaaaaaaaa");
    assert_true(tenants_upsert(store, &a, 1));
    struct tenant_row changed = make_row(1, 0xdd, "t_dddddddddddd");
    changed.daily_quota = 5000;
    changed.suspended = true;
    assert_true(tenants_upsert(store, &changed, 1));
    assert_int_equal(tenants_count(store), 1);
    tenants_read_lock();
    assert_null(tenants_find_token(store, a.token_hash));      /* old token gone */
    assert_null(tenants_find_handle(store, "t_aaaaaaaaaaaa")); /* old handle gone */
    const struct tenant_row *now = tenants_find_token(store, changed.token_hash);
    assert_non_null(now);
    assert_int_equal(now->daily_quota, 5000);
    assert_true(now->suspended);
    assert_ptr_equal(tenants_find_handle(store, "t_dddddddddddd"), now);
    tenants_read_unlock();
    tenants_free(store);
}

static void test_remove_and_sweep(void **state)
{
    (void)state;
    struct tenant_store *store = tenants_new();
    for (int i = 1; i <= 50; i++) {
        char handle[TENANT_HANDLE_MAX + 1];
        snprintf(handle, sizeof handle, "t_%012d", i);
        struct tenant_row row = make_row(i, (uint8_t)i, handle);
        assert_true(tenants_upsert(store, &row, i <= 40 ? 1 : 2));
    }
    tenants_remove(store, 7);
    tenants_remove(store, 7); /* twice is harmless */
    assert_int_equal(tenants_count(store), 49);
    /* A full reload saw only the tenants of generation 2. */
    assert_int_equal(tenants_sweep(store, 2), 39);
    assert_int_equal(tenants_count(store), 10);
    tenants_read_lock();
    assert_null(tenants_find_id(store, 1));
    assert_non_null(tenants_find_id(store, 41));
    tenants_read_unlock();
    tenants_free(store);
}

static void test_parse_tenant_row(void **state)
{
    (void)state;
    uint8_t key[TOKEN_HA1_KEY_LEN];
    memset(key, 7, sizeof key);
    uint8_t ha1[TOKEN_HA1_LEN], wrapped[TOKEN_HA1_WRAPPED_LEN];
    assert_true(token_digest_ha1("t_aaaaaaaaaaaa", "xmrgate", "xg_token", ha1));
    assert_true(token_ha1_wrap(key, "t_aaaaaaaaaaaa", ha1, wrapped));
    char wrapped_hex[2 * TOKEN_HA1_WRAPPED_LEN + 1];
    for (size_t i = 0; i < sizeof wrapped; i++)
        sprintf(wrapped_hex + 2 * i, "%02x", wrapped[i]);
    char hash_hex[65];
    memset(hash_hex, 'a', 64);
    hash_hex[64] = '\0';
    const char *cols[PGSYNC_TENANT_COLUMNS] = {"42",     hash_hex, wrapped_hex, "t_aaaaaaaaaaaa",
                                               "wallet", "20",     "100000",    "1900000000",
                                               "f",      "100"};
    struct tenant_row row;
    assert_true(pgsync_parse_tenant(cols, key, &row));
    assert_int_equal(row.id, 42);
    assert_memory_equal(row.digest_ha1, ha1, sizeof ha1);
    assert_int_equal(row.burst_rps, 20);
    assert_int_equal(row.burst_size, 100);
    assert_false(row.suspended);

    /* Another key: the row loads, Digest is disabled (zero HA1). */
    uint8_t other[TOKEN_HA1_KEY_LEN], zero[TOKEN_HA1_LEN] = {0};
    memset(other, 8, sizeof other);
    assert_true(pgsync_parse_tenant(cols, other, &row));
    assert_memory_equal(row.digest_ha1, zero, sizeof zero);

    const char *bad_id[PGSYNC_TENANT_COLUMNS] = {"x",      hash_hex, wrapped_hex, "t_aaaaaaaaaaaa",
                                                 "wallet", "20",     "100000",    "1900000000",
                                                 "f",      "100"};
    assert_false(pgsync_parse_tenant(bad_id, key, &row));
    const char *bad_hash[PGSYNC_TENANT_COLUMNS] = {"1",      "abc", wrapped_hex, "t_aaaaaaaaaaaa",
                                                   "wallet", "20",  "100000",    "1900000000",
                                                   "f",      "100"};
    assert_false(pgsync_parse_tenant(bad_hash, key, &row));
    const char *bad_burst[PGSYNC_TENANT_COLUMNS] = {
        "1",          hash_hex, wrapped_hex, "t_aaaaaaaaaaaa", "wallet", "0", "100000",
        "1900000000", "t",      "100"};
    assert_false(pgsync_parse_tenant(bad_burst, key, &row));
    const char *bad_size[PGSYNC_TENANT_COLUMNS] = {
        "1",          hash_hex, wrapped_hex, "t_aaaaaaaaaaaa", "wallet", "20", "100000",
        "1900000000", "f",      "0"};
    assert_false(pgsync_parse_tenant(bad_size, key, &row));
    const char *huge_size[PGSYNC_TENANT_COLUMNS] = {
        "1",      hash_hex,     wrapped_hex, "t_aaaaaaaaaaaa", "wallet", "20",
        "100000", "1900000000", "f",         "2147483648"};
    assert_false(pgsync_parse_tenant(huge_size, key, &row));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookups_by_every_key),
        cmocka_unit_test(test_update_replaces_and_moves_keys),
        cmocka_unit_test(test_remove_and_sweep),
        cmocka_unit_test(test_parse_tenant_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
