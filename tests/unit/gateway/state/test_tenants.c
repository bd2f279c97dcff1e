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
    struct tenant_row out;
    assert_true(tenants_find_token(store, a.token_hash, &out));
    assert_int_equal(out.id, 1);
    assert_true(tenants_find_handle(store, "t_bbbbbbbbbbbb", &out));
    assert_int_equal(out.id, 2);
    assert_true(tenants_find_id(store, 2, &out));
    assert_int_equal(out.id, 2);
    uint8_t unknown[32];
    memset(unknown, 0xcc, sizeof unknown);
    assert_false(tenants_find_token(store, unknown, &out));
    assert_false(tenants_find_handle(store, "t_cccccccccccc", &out));
    assert_false(tenants_find_id(store, 3, &out));
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
    struct tenant_row now, by_handle;
    memset(&now, 0, sizeof now);
    memset(&by_handle, 0, sizeof by_handle);
    assert_false(tenants_find_token(store, a.token_hash, &now));      /* old token gone */
    assert_false(tenants_find_handle(store, "t_aaaaaaaaaaaa", &now)); /* old handle gone */
    assert_true(tenants_find_token(store, changed.token_hash, &now));
    assert_int_equal(now.daily_quota, 5000);
    assert_true(now.suspended);
    assert_true(tenants_find_handle(store, "t_dddddddddddd", &by_handle));
    assert_memory_equal(&by_handle, &now, sizeof now);
    /* Two versions of tier "free": the quota edit made a second one. */
    assert_int_equal(tenants_tier_count(store), 2);
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
    struct tenant_row out;
    assert_false(tenants_find_id(store, 1, &out));
    assert_true(tenants_find_id(store, 41, &out));
    tenants_free(store);
}

/* A lookup gives back exactly the row that was stored, though the snapshot keeps only a
 * pointer to its tier and the handle as long as it is; tenants of one tier share it. */
static void test_compact_snapshot_round_trip(void **state)
{
    (void)state;
    struct tenant_store *store = tenants_new();
    struct tenant_row full = make_row(9, 0x42, "t_abcdefghijkl");
    for (size_t i = 0; i < sizeof full.digest_ha1; i++)
        full.digest_ha1[i] = (uint8_t)(i + 1);
    snprintf(full.tier_id, sizeof full.tier_id, "%s", "a-tier-id-of-thirty-two-chars-xx");
    full.burst_rps = 7;
    full.burst_size = 70;
    full.daily_quota = 123456789012LL;
    full.valid_until = -5; /* long expired: kept as it is */
    full.suspended = true;
    assert_true(tenants_upsert(store, &full, 1));
    struct tenant_row longest = make_row(10, 0x43, "");
    memset(longest.handle, 'h', TENANT_HANDLE_MAX);
    longest.handle[TENANT_HANDLE_MAX] = '\0';
    assert_true(tenants_upsert(store, &longest, 1));
    for (int i = 11; i < 111; i++) {
        struct tenant_row row = make_row(i, (uint8_t)i, "t_x");
        snprintf(row.handle, sizeof row.handle, "t_%012d", i);
        assert_true(tenants_upsert(store, &row, 1));
    }
    assert_int_equal(tenants_tier_count(store), 2); /* "free" and the long one */

    struct tenant_row out;
    memset(&out, 0xee, sizeof out);
    assert_true(tenants_find_id(store, 9, &out));
    const struct tenant_row expect = full;
    assert_int_equal(out.id, expect.id);
    assert_memory_equal(out.token_hash, expect.token_hash, sizeof out.token_hash);
    assert_memory_equal(out.digest_ha1, expect.digest_ha1, sizeof out.digest_ha1);
    assert_string_equal(out.handle, expect.handle);
    assert_string_equal(out.tier_id, expect.tier_id);
    assert_int_equal(out.burst_rps, 7);
    assert_int_equal(out.burst_size, 70);
    assert_int_equal(out.daily_quota, 123456789012LL);
    assert_int_equal(out.valid_until, -5);
    assert_true(out.suspended);
    assert_true(tenants_find_handle(store, longest.handle, &out));
    assert_int_equal(out.id, 10);
    assert_int_equal(strlen(out.handle), TENANT_HANDLE_MAX);

    /* The accounting: 102 snapshots of at most 160 bytes each, plus two tier versions. */
    size_t bytes = tenants_bytes(store);
    assert_true(bytes > 102 * 128);
    assert_true(bytes <= 102 * 160 + 2 * 96);
    tenants_remove(store, 9);
    assert_true(tenants_bytes(store) < bytes);
    assert_int_equal(tenants_sweep(store, 2), 101);
    assert_int_equal(tenants_count(store), 0);
    /* Only the two tier versions are left. */
    assert_true(tenants_bytes(store) > 0 && tenants_bytes(store) <= 2 * 96);
    tenants_free(store);
}

/* The tables grow as tenants arrive one by one (NOTIFY) and after a bulk load's reserve;
 * every tenant stays findable by each key across the resizes. */
static void test_growth_keeps_every_key(void **state)
{
    (void)state;
    struct tenant_store *store = tenants_new();
    tenants_reserve(store, 5000);
    for (int i = 1; i <= 30000; i++) {
        struct tenant_row row = make_row(i, 0, "");
        memcpy(row.token_hash, &i, sizeof i);
        snprintf(row.handle, sizeof row.handle, "t_%012d", i);
        assert_true(tenants_upsert(store, &row, 1));
    }
    assert_int_equal(tenants_count(store), 30000);
    struct tenant_row out;
    for (int i = 1; i <= 30000; i += 7) {
        uint8_t hash[32] = {0};
        memcpy(hash, &i, sizeof i);
        char handle[TENANT_HANDLE_MAX + 1];
        snprintf(handle, sizeof handle, "t_%012d", i);
        assert_true(tenants_find_token(store, hash, &out));
        assert_int_equal(out.id, i);
        assert_true(tenants_find_handle(store, handle, &out));
        assert_int_equal(out.id, i);
        assert_true(tenants_find_id(store, i, &out));
    }
    tenants_free(store);
}

/* The generation is compared for equality: a reload after it wrapped sweeps correctly. */
static void test_sweep_across_generation_wrap(void **state)
{
    (void)state;
    struct tenant_store *store = tenants_new();
    struct tenant_row a = make_row(1, 0xa1, "t_aaaaaaaaaaaa");
    struct tenant_row b = make_row(2, 0xb2, "t_bbbbbbbbbbbb");
    assert_true(tenants_upsert(store, &a, UINT32_MAX));
    assert_true(tenants_upsert(store, &b, (uint64_t)UINT32_MAX + 1)); /* wraps to 0 */
    assert_int_equal(tenants_sweep(store, (uint64_t)UINT32_MAX + 1), 1);
    struct tenant_row out;
    assert_false(tenants_find_id(store, 1, &out));
    assert_true(tenants_find_id(store, 2, &out));
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
    struct token_ha1_unwrapper *unwrap_key = token_ha1_unwrapper_new(key);
    assert_non_null(unwrap_key);
    const struct token_ha1_keys unwrap_s = {unwrap_key, NULL}, *unwrap = &unwrap_s;
    assert_true(pgsync_parse_tenant(cols, unwrap, &row));
    assert_int_equal(row.id, 42);
    assert_memory_equal(row.digest_ha1, ha1, sizeof ha1);
    assert_int_equal(row.burst_rps, 20);
    assert_int_equal(row.burst_size, 100);
    assert_false(row.suspended);

    /* Another key: the row loads, Digest is disabled (zero HA1). */
    uint8_t other[TOKEN_HA1_KEY_LEN], zero[TOKEN_HA1_LEN] = {0};
    memset(other, 8, sizeof other);
    struct token_ha1_unwrapper *unwrap_other = token_ha1_unwrapper_new(other);
    assert_non_null(unwrap_other);
    assert_true(pgsync_parse_tenant(cols, &(struct token_ha1_keys){unwrap_other, NULL}, &row));
    assert_memory_equal(row.digest_ha1, zero, sizeof zero);

    /* A key rotation: the row was wrapped under the previous key, which still unwraps it;
     * under a current key alone it would not (above). */
    assert_true(
        pgsync_parse_tenant(cols, &(struct token_ha1_keys){unwrap_other, unwrap_key}, &row));
    assert_memory_equal(row.digest_ha1, ha1, sizeof ha1);
    /* Wrapped under the current key, with some other previous key: the current one. */
    assert_true(
        pgsync_parse_tenant(cols, &(struct token_ha1_keys){unwrap_key, unwrap_other}, &row));
    assert_memory_equal(row.digest_ha1, ha1, sizeof ha1);
    token_ha1_unwrapper_free(unwrap_other);

    const char *bad_id[PGSYNC_TENANT_COLUMNS] = {"x",      hash_hex, wrapped_hex, "t_aaaaaaaaaaaa",
                                                 "wallet", "20",     "100000",    "1900000000",
                                                 "f",      "100"};
    assert_false(pgsync_parse_tenant(bad_id, unwrap, &row));
    const char *bad_hash[PGSYNC_TENANT_COLUMNS] = {"1",      "abc", wrapped_hex, "t_aaaaaaaaaaaa",
                                                   "wallet", "20",  "100000",    "1900000000",
                                                   "f",      "100"};
    assert_false(pgsync_parse_tenant(bad_hash, unwrap, &row));
    const char *bad_burst[PGSYNC_TENANT_COLUMNS] = {
        "1",          hash_hex, wrapped_hex, "t_aaaaaaaaaaaa", "wallet", "0", "100000",
        "1900000000", "t",      "100"};
    assert_false(pgsync_parse_tenant(bad_burst, unwrap, &row));
    const char *bad_size[PGSYNC_TENANT_COLUMNS] = {
        "1",          hash_hex, wrapped_hex, "t_aaaaaaaaaaaa", "wallet", "20", "100000",
        "1900000000", "f",      "0"};
    assert_false(pgsync_parse_tenant(bad_size, unwrap, &row));
    const char *huge_size[PGSYNC_TENANT_COLUMNS] = {
        "1",      hash_hex,     wrapped_hex, "t_aaaaaaaaaaaa", "wallet", "20",
        "100000", "1900000000", "f",         "2147483648"};
    assert_false(pgsync_parse_tenant(huge_size, unwrap, &row));
    token_ha1_unwrapper_free(unwrap_key);
}

/* ---- COPY (FORMAT binary) -------------------------------------------------------------- */

struct tuple {
    uint8_t buf[512];
    size_t len;
};

static void put_be(struct tuple *t, uint64_t v, size_t width)
{
    for (size_t i = 0; i < width; i++)
        t->buf[t->len++] = (uint8_t)(v >> (8 * (width - 1 - i)));
}

static void put_field(struct tuple *t, const void *data, int32_t len)
{
    put_be(t, (uint32_t)len, 4);
    if (len > 0) {
        memcpy(t->buf + t->len, data, (size_t)len);
        t->len += (size_t)len;
    }
}

static void put_int8(struct tuple *t, int64_t v)
{
    put_be(t, 8, 4);
    put_be(t, (uint64_t)v, 8);
}

/* The tuple COPY sends for the same row as test_parse_tenant_row's text columns. */
static struct tuple copy_tuple(const uint8_t wrapped[TOKEN_HA1_WRAPPED_LEN], const char *handle,
                               int64_t burst_size)
{
    struct tuple t = {.len = 0};
    uint8_t hash[32];
    memset(hash, 0xaa, sizeof hash);
    put_be(&t, PGSYNC_TENANT_COLUMNS, 2);
    put_int8(&t, 42);
    put_field(&t, hash, 32);
    put_field(&t, wrapped, TOKEN_HA1_WRAPPED_LEN);
    put_field(&t, handle, (int32_t)strlen(handle));
    put_field(&t, "wallet", 6);
    put_int8(&t, 20);
    put_int8(&t, 100000);
    put_int8(&t, (1900000000LL - 946684800LL) * 1000000LL); /* timestamptz */
    put_field(&t, "\1", 1);
    put_int8(&t, burst_size);
    return t;
}

static void test_parse_copy_rows(void **state)
{
    (void)state;
    uint8_t raw_key[TOKEN_HA1_KEY_LEN];
    memset(raw_key, 7, sizeof raw_key);
    uint8_t ha1[TOKEN_HA1_LEN], wrapped[TOKEN_HA1_WRAPPED_LEN];
    assert_true(token_digest_ha1("t_aaaaaaaaaaaa", "xmrgate", "xg_token", ha1));
    assert_true(token_ha1_wrap(raw_key, "t_aaaaaaaaaaaa", ha1, wrapped));

    struct tuple t = copy_tuple(wrapped, "t_aaaaaaaaaaaa", 100);
    struct tenant_row row;
    struct token_ha1_unwrapper *key_unwrapper = token_ha1_unwrapper_new(raw_key);
    assert_non_null(key_unwrapper);
    const struct token_ha1_keys key_s = {key_unwrapper, NULL}, *key = &key_s;
    assert_int_equal(pgsync_parse_copy_row((char *)t.buf, t.len, key, &row), PGSYNC_COPY_ROW);
    assert_int_equal(row.id, 42);
    assert_string_equal(row.handle, "t_aaaaaaaaaaaa");
    assert_string_equal(row.tier_id, "wallet");
    assert_memory_equal(row.digest_ha1, ha1, sizeof ha1);
    assert_int_equal(row.burst_rps, 20);
    assert_int_equal(row.daily_quota, 100000);
    assert_int_equal(row.valid_until, 1900000000);
    assert_int_equal(row.burst_size, 100);
    assert_true(row.suspended);
    for (size_t i = 0; i < sizeof row.token_hash; i++)
        assert_int_equal(row.token_hash[i], 0xaa);

    /* Every cut short of the whole tuple, and one byte more, is malformed. */
    for (size_t cut = 0; cut < t.len; cut++)
        assert_int_equal(pgsync_parse_copy_row((char *)t.buf, cut, key, &row), PGSYNC_COPY_BAD);
    t.buf[t.len] = 0;
    assert_int_equal(pgsync_parse_copy_row((char *)t.buf, t.len + 1, key, &row), PGSYNC_COPY_BAD);

    /* The same bounds as the text rows: a zero burst size, a handle past the limit. */
    struct tuple zero = copy_tuple(wrapped, "t_aaaaaaaaaaaa", 0);
    assert_int_equal(pgsync_parse_copy_row((char *)zero.buf, zero.len, key, &row), PGSYNC_COPY_BAD);
    struct tuple huge = copy_tuple(wrapped, "t_aaaaaaaaaaaa", 2147483648LL);
    assert_int_equal(pgsync_parse_copy_row((char *)huge.buf, huge.len, key, &row), PGSYNC_COPY_BAD);
    char long_handle[TENANT_HANDLE_MAX + 2];
    memset(long_handle, 'h', sizeof long_handle - 1);
    long_handle[sizeof long_handle - 1] = '\0';
    struct tuple lh = copy_tuple(wrapped, long_handle, 100);
    assert_int_equal(pgsync_parse_copy_row((char *)lh.buf, lh.len, key, &row), PGSYNC_COPY_BAD);

    /* A NULL field (-1), a field count other than the query's, and the trailer. */
    struct tuple null = {.len = 0};
    put_be(&null, PGSYNC_TENANT_COLUMNS, 2);
    put_be(&null, UINT32_MAX, 4);
    assert_int_equal(pgsync_parse_copy_row((char *)null.buf, null.len, key, &row), PGSYNC_COPY_BAD);
    struct tuple nine = t;
    nine.buf[1] = PGSYNC_TENANT_COLUMNS - 1;
    assert_int_equal(pgsync_parse_copy_row((char *)nine.buf, nine.len, key, &row), PGSYNC_COPY_BAD);
    const char trailer[] = {'\xff', '\xff', 0};
    assert_int_equal(pgsync_parse_copy_row(trailer, 2, key, &row), PGSYNC_COPY_END);
    assert_int_equal(pgsync_parse_copy_row(trailer, 3, key, &row), PGSYNC_COPY_BAD);
    token_ha1_unwrapper_free(key_unwrapper);
}

/* valid_until arrives as a timestamptz; the gateway must land on the second that
 * gw_tenant_by_id's extract(epoch FROM valid_until)::bigint gives (the NOTIFY path), which
 * rounds half away from zero. The pairs are PostgreSQL 15's own answers. */
static void test_copy_timestamptz(void **state)
{
    (void)state;
    static const struct {
        int64_t pg_usecs, unix_s;
    } rows[] = {
        {0, 946684800},                                 /* 2000-01-01 00:00:00 */
        {953315200500000, 1900000001},                  /* 2030-03-17 17:46:40.5 */
        {953315200499999, 1900000000},                  /* …40.499999 */
        {953315200999999, 1900000001},                  /* …40.999999 */
        {-500000, 946684800},                           /* 1999-12-31 23:59:59.5 */
        {-946684800500000, -1},                         /* 1969-12-31 23:59:59.5: -0.5 */
        {-946684800499999, 0},                          /* …59.500001: -0.499999 */
        {-946684800500001, -1},                         /* …59.499999: -0.500001 */
        {-946684801500000, -2},                         /* …58.5 */
        {-946684799500000, 1},                          /* 1970-01-01 00:00:00.5 */
        {-1249127999750000, -302443200},                /* 1960-06-01 12:00:00.25 */
        {-211810204800000000, -210863520000},           /* 4713-01-01 BC, the oldest */
        {INT64_MAX, INT64_MAX},                         /* infinity */
        {INT64_MIN, INT64_MIN},                         /* -infinity */
        {INT64_MAX - 1, 9223372036854 + 946684800 + 1}, /* .775806: up, no overflow */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (pgsync_unix_seconds(rows[i].pg_usecs) != rows[i].unix_s)
            fail_msg("row %zu: %lld us gave %lld s, want %lld", i, (long long)rows[i].pg_usecs,
                     (long long)pgsync_unix_seconds(rows[i].pg_usecs), (long long)rows[i].unix_s);
}

static void test_copy_header(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t len, want;
    } rows[] = {
        /* signature, flags 0, no extension, then a tuple follows */
        {"PGCOPY\n\377\r\n\0"
         "\0\0\0\0"
         "\0\0\0\0"
         "\0\x0a",
         21, 19},
        /* an extension of 3 bytes is skipped */
        {"PGCOPY\n\377\r\n\0"
         "\0\0\0\0"
         "\0\0\0\3"
         "abc",
         22, 22},
        /* flag bits 17-31 may be ignored */
        {"PGCOPY\n\377\r\n\0"
         "\x80\0\0\0"
         "\0\0\0\0",
         19, 19},
        /* OIDs included (bit 16): another row layout, refused */
        {"PGCOPY\n\377\r\n\0"
         "\0\1\0\0"
         "\0\0\0\0",
         19, 0},
        /* a reserved low bit */
        {"PGCOPY\n\377\r\n\0"
         "\0\0\0\1"
         "\0\0\0\0",
         19, 0},
        /* an extension longer than the buffer */
        {"PGCOPY\n\377\r\n\0"
         "\0\0\0\0"
         "\0\0\0\x09"
         "abc",
         22, 0},
        /* not the signature; cut short */
        {"PGCOPX\n\377\r\n\0"
         "\0\0\0\0"
         "\0\0\0\0",
         19, 0},
        {"PGCOPY\n\377\r\n\0"
         "\0\0\0\0"
         "\0\0\0",
         18, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(pgsync_copy_header_len(rows[i].bytes, rows[i].len), rows[i].want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookups_by_every_key),
        cmocka_unit_test(test_update_replaces_and_moves_keys),
        cmocka_unit_test(test_remove_and_sweep),
        cmocka_unit_test(test_compact_snapshot_round_trip),
        cmocka_unit_test(test_sweep_across_generation_wrap),
        cmocka_unit_test(test_growth_keeps_every_key),
        cmocka_unit_test(test_parse_tenant_row),
        cmocka_unit_test(test_parse_copy_rows),
        cmocka_unit_test(test_copy_header),
        cmocka_unit_test(test_copy_timestamptz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
