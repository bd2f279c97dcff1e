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
    struct client_limit_table *t = client_limit_table_new(2, 1, 1);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_then_refuse),
        cmocka_unit_test(test_refill),
        cmocka_unit_test(test_clock_going_back_gives_nothing),
        cmocka_unit_test(test_table_keys_are_separate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
