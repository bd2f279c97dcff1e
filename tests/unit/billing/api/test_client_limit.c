/* Tests for billing/client_limit: the token bucket's refill and refusal, and the table's
 * per-key isolation and recycling. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "api/client_limit.h"

#define HOUR_MS 3600000LL

static void test_burst_then_refuse(void **state)
{
    (void)state;
    struct client_limit_bucket b = {0};
    int64_t retry = 0;
    for (int i = 0; i < 3; i++)
        assert_true(client_limit_bucket_take(&b, 1000, 60, 3, &retry));
    assert_false(client_limit_bucket_take(&b, 1000, 60, 3, &retry));
    assert_int_equal(retry, 60); /* 60 an hour: one a minute */
}

static void test_refill(void **state)
{
    (void)state;
    struct client_limit_bucket b = {0};
    int64_t retry = 0;
    assert_true(client_limit_bucket_take(&b, 1000, 60, 1, &retry));
    assert_false(client_limit_bucket_take(&b, 1000 + 59000, 60, 1, &retry));
    assert_true(retry >= 1 && retry <= 2); /* one second left, rounded up */
    assert_true(client_limit_bucket_take(&b, 1000 + 60000, 60, 1, &retry));
    /* a long pause refills to the burst, never beyond */
    assert_true(client_limit_bucket_take(&b, 10 * HOUR_MS, 60, 2, &retry));
    assert_true(client_limit_bucket_take(&b, 10 * HOUR_MS, 60, 2, &retry));
    assert_false(client_limit_bucket_take(&b, 10 * HOUR_MS, 60, 2, &retry));
}

static void test_clock_going_back_gives_nothing(void **state)
{
    (void)state;
    struct client_limit_bucket b = {0};
    int64_t retry = 0;
    assert_true(client_limit_bucket_take(&b, 5000, 3600, 1, &retry));
    assert_false(client_limit_bucket_take(&b, 1000, 3600, 1, &retry));
    assert_true(retry >= 1);
}

static void test_table_keys_are_separate(void **state)
{
    (void)state;
    struct client_limit_table *t = client_limit_table_new(2, 1, 1, NULL, 1);
    int64_t retry = 0;
    assert_non_null(t);
    assert_true(client_limit_table_take(t, "10.0.0.1", 1000, &retry));
    assert_false(client_limit_table_take(t, "10.0.0.1", 1000, &retry));
    assert_true(client_limit_table_take(t, "10.0.0.2", 1000, &retry));
    assert_false(client_limit_table_take(t, "10.0.0.2", 2000, &retry));
    /* a third address recycles the entry refilled longest ago (10.0.0.1) */
    assert_true(client_limit_table_take(t, "10.0.0.3", 3000, &retry));
    assert_false(client_limit_table_take(t, "10.0.0.2", 3000, &retry));
    client_limit_table_free(t);
}

/* With the default policy: one client is its /32 or /64, and its /24 or /48 shares
 * network_factor times a client's allowance. */
static void test_table_counts_networks(void **state)
{
    (void)state;
    struct client_prefix_policy p = CLIENT_PREFIX_POLICY_DEFAULT;
    struct client_limit_table *t = client_limit_table_new(64, 1, 1, &p, 3);
    int64_t retry = 0;
    assert_non_null(t);
    /* two addresses of one /64 are one client */
    assert_true(client_limit_table_take(t, "2001:db8:1:2::1", 1000, &retry));
    assert_false(client_limit_table_take(t, "2001:db8:1:2::99", 1000, &retry));
    /* a mapped address is the IPv4 client */
    assert_true(client_limit_table_take(t, "198.51.100.1", 1000, &retry));
    assert_false(client_limit_table_take(t, "::ffff:198.51.100.1", 1000, &retry));
    /* the /24 holds 3 (factor 3, burst 1): two more addresses, then the network refuses */
    assert_true(client_limit_table_take(t, "198.51.100.2", 1000, &retry));
    assert_true(client_limit_table_take(t, "198.51.100.3", 1000, &retry));
    retry = 0;
    assert_false(client_limit_table_take(t, "198.51.100.4", 1000, &retry));
    assert_true(retry >= 1);
    /* refused by its network, the client's own token was not spent: once the network
     * refills one (20 min at 3 an hour), .4 gets it */
    assert_true(client_limit_table_take(t, "198.51.100.4", 1000 + HOUR_MS / 3, &retry));
    /* another /24 is untouched */
    assert_true(client_limit_table_take(t, "198.51.101.4", 1000, &retry));
    /* text that is no address counts as itself */
    assert_true(client_limit_table_take(t, "unknown", 1000, &retry));
    assert_false(client_limit_table_take(t, "unknown", 1000, &retry));
    client_limit_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_then_refuse),
        cmocka_unit_test(test_refill),
        cmocka_unit_test(test_clock_going_back_gives_nothing),
        cmocka_unit_test(test_table_keys_are_separate),
        cmocka_unit_test(test_table_counts_networks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
