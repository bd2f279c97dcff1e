/* Tests for billing/sweep's pure parts: how long an unpaid XMR402 challenge is kept, and
 * how many days of usage counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "payments/sweep.h"

static void test_sweep_keep(void **state)
{
    (void)state;
    static const struct {
        int64_t retention, grace, want;
    } rows[] = {
        {604800, 86400, 604800}, /* the defaults: a week */
        {3600, 86400, 86400},    /* never inside the late grace period */
        {3600, 0, 3600},         {0, 0, 0}, {-5, 60, 60}, {60, -5, 60},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(sweep_keep_s(rows[i].retention, rows[i].grace), rows[i].want);
}

static void test_usage_keep_days(void **state)
{
    (void)state;
    static const struct {
        int64_t retention_s, want;
    } rows[] = {
        {400 * 86400, 400}, /* the default */
        {86400, 1},         /* a day */
        {86401, 2},         /* a part of a day keeps that day */
        {1, 1},             /* a second: today's and yesterday's rows stay */
        {0, 0},             /* for ever */
        {-86400, 0},        /* never negative */
        {36500LL * 86400, 36500},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(sweep_usage_keep_days(rows[i].retention_s), rows[i].want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_keep),
        cmocka_unit_test(test_usage_keep_days),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
