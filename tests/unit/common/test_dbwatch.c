/* Table test for common/xg_dbwatch's readiness rule: what each database state means for a
 * daemon that serves through an outage (the gateway) and one that cannot (billing). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>

#include "xg_dbwatch.h"

struct readiness_case {
    enum xg_db_state state;
    bool serves_without_db;
    enum xg_readiness want;
};

static void test_readiness(void **state)
{
    (void)state;
    static const struct readiness_case cases[] = {
        {XG_DB_OK, true, XG_READINESS_READY},
        {XG_DB_OK, false, XG_READINESS_READY},
        /* a newer schema through expand migrations only: this build still fits */
        {XG_DB_AHEAD, true, XG_READINESS_READY},
        {XG_DB_AHEAD, false, XG_READINESS_READY},
        /* an outage: every replica shares it; the gateway serves its known tenants */
        {XG_DB_UNREACHABLE, true, XG_READINESS_DEGRADED},
        {XG_DB_UNREACHABLE, false, XG_READINESS_NOT},
        {XG_DB_UNCHECKED, true, XG_READINESS_DEGRADED},
        {XG_DB_UNCHECKED, false, XG_READINESS_NOT},
        /* the database answers at another schema: this build is the wrong one */
        {XG_DB_SCHEMA, true, XG_READINESS_NOT},
        {XG_DB_SCHEMA, false, XG_READINESS_NOT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct readiness_case *c = &cases[i];
        assert_int_equal(xg_dbwatch_readiness(c->state, c->serves_without_db), c->want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readiness),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
