/* Tests for gateway/state/sessions: a tenant's served tip only ever rises, accepted nodes
 * replace the earlier ones, tenants are kept apart, and concurrent raises from several
 * threads keep the highest. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>

#include "state/sessions.h"

static void test_served_tip_only_rises(void **state)
{
    (void)state;
    struct sessions *s = sessions_new();
    assert_non_null(s);
    static const struct {
        int64_t raise, tip;
    } steps[] = {{0, 0}, {100, 100}, {99, 100}, {-5, 100}, {100, 100}, {101, 101}, {1, 101}};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        sessions_served_tip(s, 7, steps[i].raise);
        assert_int_equal(sessions_get(s, 7).served_tip, steps[i].tip);
    }
    struct session_view other = sessions_get(s, 8);
    assert_int_equal(other.served_tip, 0);
    assert_int_equal(other.accepted, 0);
    assert_int_equal(sessions_count(s), 1); /* a lookup creates nothing */
    sessions_free(s);
}

static void test_accepted_replaces(void **state)
{
    (void)state;
    struct sessions *s = sessions_new();
    assert_non_null(s);
    sessions_accepted(s, 3, 0x5, 1000);
    struct session_view v = sessions_get(s, 3);
    assert_int_equal(v.accepted, 0x5);
    assert_int_equal(v.accepted_until_ms, 1000);
    assert_int_equal(v.served_tip, 0);
    sessions_accepted(s, 3, 0x2, 2000);
    v = sessions_get(s, 3);
    assert_int_equal(v.accepted, 0x2);
    assert_int_equal(v.accepted_until_ms, 2000);
    sessions_served_tip(s, 3, 50);
    assert_int_equal(sessions_get(s, 3).accepted, 0x2); /* the tip leaves them */
    assert_int_equal(sessions_get(NULL, 3).served_tip, 0);
    sessions_free(s);
}

struct raiser {
    struct sessions *s;
    int64_t base;
};

static void *raise_run(void *arg)
{
    struct raiser *r = arg;
    for (int64_t h = 1; h <= 20000; h++) {
        sessions_served_tip(r->s, 1 + h % 4, r->base + h);
        (void)sessions_get(r->s, 1 + (h + 1) % 4);
    }
    return NULL;
}

static void test_concurrent_raises_keep_the_highest(void **state)
{
    (void)state;
    struct sessions *s = sessions_new();
    assert_non_null(s);
    pthread_t th[4];
    struct raiser r[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (struct raiser){s, i * 1000};
        assert_int_equal(pthread_create(&th[i], NULL, raise_run, &r[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    /* tenant 1 + k was last raised by the thread with the largest base, at its h ≡ k */
    assert_int_equal(sessions_count(s), 4);
    assert_int_equal(sessions_get(s, 1).served_tip, 3000 + 20000);
    assert_int_equal(sessions_get(s, 2).served_tip, 3000 + 19997);
    assert_int_equal(sessions_get(s, 3).served_tip, 3000 + 19998);
    assert_int_equal(sessions_get(s, 4).served_tip, 3000 + 19999);
    sessions_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_served_tip_only_rises),
        cmocka_unit_test(test_accepted_replaces),
        cmocka_unit_test(test_concurrent_raises_keep_the_highest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
