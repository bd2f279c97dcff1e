/* Tests for the reader-to-writer feed of the full tenant load: every pushed row is
 * published exactly once, in any batch shape, and a slot not pushed publishes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "state/tenant_feed.h"
#include "state/tenants.h"

/* Row n: id n, a token hash and a handle that encode n, tier "t" + n % 3. */
static void fill_row(struct tenant_row *row, int64_t n)
{
    memset(row, 0, sizeof *row);
    row->id = n;
    memcpy(row->token_hash, &n, sizeof n);
    snprintf(row->handle, sizeof row->handle, "t_%012lld", (long long)n);
    snprintf(row->tier_id, sizeof row->tier_id, "t%lld", (long long)(n % 3));
    row->burst_rps = (int32_t)(n % 3 + 1);
    row->burst_size = 10;
    row->daily_quota = 1000;
    row->valid_until = 2000000000 + n;
}

/* Pushes ids 1..n (every seventh parsed into its slot but not pushed, as a malformed
 * row is), then checks the store holds exactly the pushed ones with their fields. */
static void feed_and_check(size_t n)
{
    struct tenant_store *store = tenants_new();
    assert_non_null(store);
    struct tenant_feed *feed = tenant_feed_start(store, 5);
    assert_non_null(feed);
    size_t pushed = 0;
    for (int64_t id = 1; id <= (int64_t)n; id++) {
        struct tenant_row *slot = tenant_feed_slot(feed);
        fill_row(slot, id);
        if (id % 7 == 0)
            continue; /* the next row overwrites this slot */
        tenant_feed_push(feed);
        pushed++;
    }
    assert_true(tenant_feed_finish(feed));
    assert_int_equal(tenants_count(store), pushed);
    for (int64_t id = 1; id <= (int64_t)n; id++) {
        struct tenant_row want, got;
        fill_row(&want, id);
        bool found = tenants_find_id(store, id, &got);
        if (found != (id % 7 != 0))
            fail_msg("id %lld: found %d", (long long)id, found);
        if (!found)
            continue;
        assert_string_equal(got.handle, want.handle);
        assert_string_equal(got.tier_id, want.tier_id);
        assert_int_equal(got.burst_rps, want.burst_rps);
        assert_int_equal(got.valid_until, want.valid_until);
        assert_true(tenants_find_token(store, want.token_hash, &got));
        assert_int_equal(got.id, id);
        assert_true(tenants_find_handle(store, want.handle, &got));
        assert_int_equal(got.id, id);
    }
    /* Every row carries the feed's generation: a sweep under it removes nothing. */
    assert_int_equal(tenants_sweep(store, 5), 0);
    assert_int_equal(tenants_tier_count(store), n >= 3 ? 3 : n);
    tenants_free(store);
}

static void test_feed_publishes_every_row(void **state)
{
    (void)state;
    /* Nothing; less than a batch; batch edges; more than the whole ring, several times. */
    static const size_t sizes[] = {0, 1, 6, 511, 512, 513, 597, 2047, 2048, 2049, 20000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        feed_and_check(sizes[i]);
}

/* A second load through the feed replaces every snapshot and publishes the new fields. */
static void test_feed_replaces(void **state)
{
    (void)state;
    struct tenant_store *store = tenants_new();
    assert_non_null(store);
    for (uint64_t gen = 1; gen <= 2; gen++) {
        struct tenant_feed *feed = tenant_feed_start(store, gen);
        assert_non_null(feed);
        for (int64_t id = 1; id <= 3000; id++) {
            struct tenant_row *slot = tenant_feed_slot(feed);
            fill_row(slot, id);
            slot->valid_until += (int64_t)gen * 1000000;
            tenant_feed_push(feed);
        }
        assert_true(tenant_feed_finish(feed));
        assert_int_equal(tenants_count(store), 3000);
        assert_int_equal(tenants_sweep(store, gen), 0);
    }
    struct tenant_row got;
    assert_true(tenants_find_id(store, 1234, &got));
    assert_int_equal(got.valid_until, 2000000000 + 1234 + 2000000);
    tenants_free(store);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_feed_publishes_every_row),
        cmocka_unit_test(test_feed_replaces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
