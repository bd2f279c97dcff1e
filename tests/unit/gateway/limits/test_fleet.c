/* Table test for gateway/limits/fleet: the count of replicas a tenant's burst is shared by
 * after each heartbeat. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>

#include "limits/fleet.h"

struct next_case {
    uint32_t previous;
    bool answered;
    int64_t counted;
    uint32_t want;
};

static void test_next(void **state)
{
    (void)state;
    static const struct next_case cases[] = {
        {1, true, 1, 1},            /* alone */
        {1, true, 8, 8},            /* seven more replicas beat */
        {8, true, 7, 7},            /* one stopped or died past the TTL */
        {8, false, 0, 8},           /* PostgreSQL away: the last count holds */
        {3, false, 99, 3},          /* an unanswered beat's number means nothing */
        {5, true, 0, 1},            /* never below this replica itself */
        {5, true, -4, 1},           /* nor a nonsense answer */
        {2, true, 5000, FLEET_MAX}, /* capped */
        {0, false, 0, 1},           /* no previous count: this replica */
        {FLEET_MAX, true, FLEET_MAX, FLEET_MAX},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct next_case *c = &cases[i];
        assert_int_equal(fleet_next(c->previous, c->answered, c->counted), c->want);
    }
}

static void test_no_fleet_is_one(void **state)
{
    (void)state;
    assert_int_equal(fleet_replicas(NULL), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_next),
        cmocka_unit_test(test_no_fleet_is_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
