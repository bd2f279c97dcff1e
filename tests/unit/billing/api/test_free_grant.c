/* Tests for billing/free_grant's pure rule: which bound refuses a free grant and the
 * Retry-After the client is told. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/free_grant.h"

static const struct {
    struct free_grant_waits w;
    enum free_grant_verdict v;
    int64_t retry;
} cases[] = {
    {{-1, -1, -1}, FREE_GRANT_OK, -7},
    {{120, -1, -1}, FREE_GRANT_NETWORK_HOUR, 120},
    {{-1, 5000, -1}, FREE_GRANT_NETWORK_DAY, 5000},
    {{-1, -1, 30}, FREE_GRANT_GLOBAL_HOUR, 30},
    /* every bound must have room: the longest wait; the global one is named first */
    {{120, 5000, -1}, FREE_GRANT_NETWORK_DAY, 5000},
    {{3000, -1, 30}, FREE_GRANT_GLOBAL_HOUR, 3000},
    {{10, 20, 30}, FREE_GRANT_GLOBAL_HOUR, 30},
    /* a grant leaving its window this very second: still at least 1 s */
    {{0, -1, -1}, FREE_GRANT_NETWORK_HOUR, 1},
};

static void test_judge(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t retry = -7;
        enum free_grant_verdict v = free_grant_judge(&cases[i].w, &retry);
        if (v != cases[i].v || retry != cases[i].retry)
            fail_msg("case %zu: got %d retry %lld, want %d retry %lld", i, (int)v, (long long)retry,
                     (int)cases[i].v, (long long)cases[i].retry);
    }
}

static void test_messages(void **state)
{
    (void)state;
    assert_non_null(strstr(free_grant_message(FREE_GRANT_NETWORK_HOUR), "your network"));
    assert_non_null(strstr(free_grant_message(FREE_GRANT_NETWORK_DAY), "24 hours"));
    assert_non_null(strstr(free_grant_message(FREE_GRANT_GLOBAL_HOUR), "this hour"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_judge),
        cmocka_unit_test(test_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
