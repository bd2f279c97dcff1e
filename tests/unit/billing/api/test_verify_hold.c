/* Tests for billing/api/verify_hold: who may wait for an unseen transaction (the client's
 * bound before the global one), and a set with nothing held starting and stopping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "api/verify_hold.h"

static void test_admit(void **state)
{
    (void)state;
    static const struct {
        size_t held, by_client, max_held, max_per_client;
        enum verify_hold_admission want;
    } rows[] = {
        {0, 0, 64, 4, VERIFY_HOLD_ADMIT},
        {63, 3, 64, 4, VERIFY_HOLD_ADMIT},
        {10, 4, 64, 4, VERIFY_HOLD_CLIENT_FULL}, /* the flooding client is told it is the one */
        {64, 4, 64, 4, VERIFY_HOLD_CLIENT_FULL},
        {64, 0, 64, 4, VERIFY_HOLD_FULL}, /* a quiet client, a full hold */
        {65, 1, 64, 4, VERIFY_HOLD_FULL}, /* over (a bound lowered by a restart) */
        {0, 0, 1, 1, VERIFY_HOLD_ADMIT},
        {1, 1, 1, 1, VERIFY_HOLD_CLIENT_FULL},
        {1, 0, 1, 1, VERIFY_HOLD_FULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        print_message("row %zu\n", i);
        assert_int_equal(verify_hold_admit(rows[i].held, rows[i].by_client, rows[i].max_held,
                                           rows[i].max_per_client),
                         rows[i].want);
    }
}

static void test_empty_set_stops(void **state)
{
    (void)state;
    struct verify_hold *h = verify_hold_new(4, 1);
    assert_non_null(h);
    assert_int_equal(verify_hold_count(h), 0);
    verify_hold_stop(h);
    verify_hold_stop(h); /* idempotent */
    struct verify_hold_entry e = {.client = "127.0.0.1", .poll_ms = 10, .until_ms = 0};
    assert_int_equal(verify_hold_add(h, NULL, &e), VERIFY_HOLD_STOPPING); /* nothing suspended */
    verify_hold_free(h);
    verify_hold_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admit),
        cmocka_unit_test(test_empty_set_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
