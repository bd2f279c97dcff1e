/* Tests for billing/sweep's pure part: how long an unpaid XMR402 challenge is kept. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_keep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
