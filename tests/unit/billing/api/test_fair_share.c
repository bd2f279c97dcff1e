/* Tests for billing/api/fair_share: one network's share of a global cap (floored, at least
 * one, at most the cap) and who may take one more (the network's share before the cap). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "api/fair_share.h"

static void test_share_of(void **state)
{
    (void)state;
    static const struct {
        int64_t cap, percent, want;
    } rows[] = {
        {2000, 5, 100}, /* the defaults: 20 networks fill the open challenges */
        {10, 10, 1},    /* 10 verifies a second, 10 %: one a second per network */
        {10, 25, 2},    /* floored */
        {10, 1, 1},     /* at least one */
        {1, 5, 1},      /* a cap of one is everyone's */
        {2000, 100, 2000},
        {2000, 150, 2000}, /* never more than the cap */
        {199, 50, 99},
        {INT64_C(72057594037927935), 100, INT64_C(72057594037927935)}, /* no overflow */
        {0, 5, 1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        print_message("row %zu\n", i);
        assert_int_equal(fair_share_of(rows[i].cap, rows[i].percent), rows[i].want);
    }
}

static void test_admit(void **state)
{
    (void)state;
    static const struct {
        int64_t used, by_network, cap, percent;
        enum fair_share_admission want;
    } rows[] = {
        {0, 0, 2000, 5, FAIR_SHARE_ADMIT},
        {1999, 99, 2000, 5, FAIR_SHARE_ADMIT},         /* the last one, within the share */
        {100, 100, 2000, 5, FAIR_SHARE_NETWORK_FULL},  /* a flooding network, room elsewhere */
        {2000, 100, 2000, 5, FAIR_SHARE_NETWORK_FULL}, /* it is told it is the one */
        {2000, 0, 2000, 5, FAIR_SHARE_FULL},           /* a quiet network, a full cap */
        {2500, 3, 2000, 5, FAIR_SHARE_FULL},           /* over (a cap lowered by a restart) */
        {1900, 0, 2000, 5, FAIR_SHARE_ADMIT},          /* 19 full networks leave room */
        {0, 0, 1, 5, FAIR_SHARE_ADMIT},
        {1, 1, 1, 5, FAIR_SHARE_NETWORK_FULL},
        {1, 0, 1, 5, FAIR_SHARE_FULL},
        {9, 9, 10, 100, FAIR_SHARE_ADMIT}, /* share 100: only the cap counts */
        {10, 10, 10, 100, FAIR_SHARE_NETWORK_FULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        print_message("row %zu\n", i);
        assert_int_equal(
            fair_share_admit(rows[i].used, rows[i].by_network, rows[i].cap, rows[i].percent),
            rows[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_share_of),
        cmocka_unit_test(test_admit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
