/* Table tests for gateway/ratelimit: the token bucket's refill, capacity, retry hint and
 * time going backwards, and the per-tenant table. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "ratelimit.h"

/* One step of a scenario: at t_us, take one request; expect allowed (and, when refused, the
 * retry hint in ms) and the whole requests left afterwards. */
struct step {
    int64_t t_us;
    bool allowed;
    int64_t retry_ms; /* checked when !allowed */
    int64_t left;
};

struct scenario {
    const char *name;
    int32_t rps;
    size_t nsteps;
    struct step steps[12];
};

static const struct scenario SCENARIOS[] = {
    {"a new bucket is full: 2 x rps at once, then refused",
     2,
     6,
     {{0, true, 0, 3},
      {0, true, 0, 2},
      {0, true, 0, 1},
      {0, true, 0, 0},
      {0, false, 500, 0},
      {1, false, 500, 0}}},
    {"capacity is 2 x rps: 8 at 4 rps, whatever the microseconds between them",
     4,
     8,
     {{0, true, 0, 7},
      {1, true, 0, 6},
      {2, true, 0, 5},
      {3, true, 0, 4},
      {4, true, 0, 3},
      {5, true, 0, 2},
      {6, true, 0, 1},
      {7, true, 0, 0}}},
    {"empty, then exactly one request per 1/rps",
     1,
     8,
     {{0, true, 0, 1},
      {0, true, 0, 0},
      {0, false, 1000, 0},
      {999999, false, 1, 0},
      {1000000, true, 0, 0},
      {1000000, false, 1000, 0},
      {3000000, true, 0, 1},
      {3000000, true, 0, 0}}},
    {"refill never exceeds the capacity, however long the idle time",
     1,
     5,
     {{0, true, 0, 1},
      {0, true, 0, 0},
      {3600000000LL, true, 0, 1},
      {3600000000LL, true, 0, 0},
      {3600000000LL, false, 1000, 0}}},
    {"partial refill: half a token is not a request; the hint says the rest",
     1,
     4,
     {{0, true, 0, 1}, {0, true, 0, 0}, {500000, false, 500, 0}, {1000000, true, 0, 0}}},
    {"time going backwards refills nothing and does not block later refills",
     1,
     6,
     {{10000000, true, 0, 1},
      {10000000, true, 0, 0},
      {5000000, false, 1000, 0},
      {5500000, false, 500, 0},
      {6000000, true, 0, 0},
      {6000000, false, 1000, 0}}},
};

static void test_scenarios(void **state)
{
    (void)state;
    for (size_t s = 0; s < sizeof SCENARIOS / sizeof SCENARIOS[0]; s++) {
        const struct scenario *sc = &SCENARIOS[s];
        struct rl_bucket b = RL_BUCKET_INIT;
        for (size_t i = 0; i < sc->nsteps; i++) {
            const struct step *st = &sc->steps[i];
            int64_t retry = -1;
            bool allowed = rl_bucket_take(&b, sc->rps, st->t_us, 1, &retry);
            if (allowed != st->allowed || (!allowed && retry != st->retry_ms) ||
                rl_bucket_available(&b, sc->rps, st->t_us) != st->left) {
                print_error("%s, step %zu: allowed %d retry %lld left %lld\n", sc->name, i, allowed,
                            (long long)retry,
                            (long long)rl_bucket_available(&b, sc->rps, st->t_us));
                fail();
            }
        }
    }
}

static void test_steady_rate_over_ten_seconds(void **state)
{
    (void)state;
    /* A client hammering every millisecond gets the initial burst plus rps per second. */
    const int32_t rates[] = {1, 3, 20, 500};
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        struct rl_bucket b = RL_BUCKET_INIT;
        int64_t allowed = 0;
        for (int64_t t = 0; t < 10000000; t += 1000)
            allowed += rl_bucket_take(&b, rates[r], t, 1, NULL);
        /* 2*rps at t=0, then rps per second for 9.999 s (the last partial token is lost). */
        int64_t expect = 2 * rates[r] + (9999 * (int64_t)rates[r]) / 1000;
        assert_int_equal(allowed, expect);
    }
}

static void test_lowered_rate_lowers_what_is_held(void **state)
{
    (void)state;
    struct rl_bucket b = RL_BUCKET_INIT;
    assert_true(rl_bucket_take(&b, 100, 0, 1, NULL));   /* 199 left at 100 rps */
    assert_int_equal(rl_bucket_available(&b, 2, 0), 4); /* tier lowered to 2 rps: cap 4 */
    for (int i = 0; i < 4; i++)
        assert_true(rl_bucket_take(&b, 2, 0, 1, NULL));
    assert_false(rl_bucket_take(&b, 2, 0, 1, NULL));
    /* Raised again: refills at the new rate from here on. */
    assert_true(rl_bucket_take(&b, 100, 10000, 1, NULL)); /* 10 ms at 100 rps = 1 */
    assert_false(rl_bucket_take(&b, 100, 10000, 1, NULL));
}

static void test_cost_larger_than_one(void **state)
{
    (void)state;
    struct rl_bucket b = RL_BUCKET_INIT;
    int64_t retry = 0;
    assert_true(rl_bucket_take(&b, 5, 0, 10, NULL)); /* the whole capacity */
    assert_false(rl_bucket_take(&b, 5, 0, 10, &retry));
    assert_int_equal(retry, 2000);
    assert_false(rl_bucket_take(&b, 5, 0, 11, &retry)); /* more than capacity: never */
}

static void test_table_per_tenant(void **state)
{
    (void)state;
    struct rl_table *t = rl_table_new();
    assert_non_null(t);
    int64_t retry = 0;
    for (int i = 0; i < 4; i++)
        assert_true(rl_take(t, 7, 2, 0, &retry));
    assert_false(rl_take(t, 7, 2, 0, &retry));
    assert_int_equal(retry, 500);
    /* Another tenant has its own bucket. */
    assert_true(rl_take(t, 8, 2, 0, &retry));
    assert_int_equal(rl_count(t), 2);
    /* The bucket survives a rate change (a new tier) for the same id. */
    assert_false(rl_take(t, 7, 50, 0, &retry));
    assert_true(rl_take(t, 7, 50, 20000, &retry));
    /* Sweeping drops only idle buckets. */
    assert_int_equal(rl_sweep(t, 2000000, 2000000), 1); /* tenant 8, last at 0 */
    assert_int_equal(rl_count(t), 1);
    rl_table_free(t);
}

struct hammer {
    struct rl_table *t;
    int64_t allowed;
};

static void *hammer_run(void *arg)
{
    struct hammer *h = arg;
    for (int i = 0; i < 100000; i++)
        h->allowed += rl_take(h->t, 1, 1000, 0, NULL);
    return NULL;
}

static void test_table_concurrent_takes_are_exact(void **state)
{
    (void)state;
    struct rl_table *t = rl_table_new();
    struct hammer h[4] = {{t, 0}, {t, 0}, {t, 0}, {t, 0}};
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, hammer_run, &h[i]), 0);
    int64_t total = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        total += h[i].allowed;
    }
    assert_int_equal(total, 2000); /* the capacity, no more, no less */
    rl_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenarios),
        cmocka_unit_test(test_steady_rate_over_ten_seconds),
        cmocka_unit_test(test_lowered_rate_lowers_what_is_held),
        cmocka_unit_test(test_cost_larger_than_one),
        cmocka_unit_test(test_table_per_tenant),
        cmocka_unit_test(test_table_concurrent_takes_are_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
