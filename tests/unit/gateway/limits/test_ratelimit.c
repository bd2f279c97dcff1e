/* Table tests for gateway/ratelimit: the shaping token bucket (refill, burst size, debt
 * down to rate × max_delay, the delay of each request, the bound exactly and just past
 * it, the retry hint, time going backwards, a rate change while in debt, many small
 * requests), and the per-tenant table (sweep, concurrency). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "limits/ratelimit.h"

#define S 1000000LL /* one second in µs */

/* One step of a scenario: at t_us, take one request under the scenario's limit (or the
 * step's own rate, when set); expect allowed with delay_us, or refused with retry_ms. */
struct step {
    int64_t t_us;
    bool allowed;
    int64_t delay_us; /* checked when allowed */
    int64_t retry_ms; /* checked when refused */
    int32_t rate;     /* 0: the scenario's */
};

struct scenario {
    const char *name;
    struct rl_limit lim;
    size_t nsteps;
    struct step steps[24];
};

#define NOW(t)                                                                                     \
    {                                                                                              \
        t, true, 0, 0, 0                                                                           \
    }
#define HELD(t, d)                                                                                 \
    {                                                                                              \
        t, true, d, 0, 0                                                                           \
    }
#define REFUSED(t, r)                                                                              \
    {                                                                                              \
        t, false, 0, r, 0                                                                          \
    }

static const struct scenario SCENARIOS[] = {
    {"a new bucket is full: burst_size at once, then one every 1/rate, up to the bound",
     {.rate = 2, .size = 4, .max_delay_us = 2 * S},
     9,
     {NOW(0), NOW(0), NOW(0), NOW(0), HELD(0, 500000), HELD(0, 1000000), HELD(0, 1500000),
      HELD(0, 2000000), /* exactly at the bound: held, not refused */
      REFUSED(0, 500)}},
    {"just past the bound: refused, and told the 1 ms until it fits",
     {.rate = 2, .size = 4, .max_delay_us = 2 * S - 1},
     8,
     {NOW(0), NOW(0), NOW(0), NOW(0), HELD(0, 500000), HELD(0, 1000000), HELD(0, 1500000),
      REFUSED(0, 1)}},
    {"a refusal takes nothing: at its retry hint the same request is held at the bound",
     {.rate = 2, .size = 1, .max_delay_us = S},
     5,
     {NOW(0), HELD(0, 500000), HELD(0, 1000000), REFUSED(0, 500), HELD(500000, 1000000)}},
    {"max_delay 0: refused at once, as a plain token bucket",
     {.rate = 1, .size = 2, .max_delay_us = 0},
     6,
     {NOW(0), NOW(0), REFUSED(0, 1000), REFUSED(999999, 1), NOW(1000000), REFUSED(1000000, 1000)}},
    {"debt is repaid at the rate: after the delay the bucket is back at zero",
     {.rate = 4, .size = 2, .max_delay_us = S},
     6,
     {NOW(0), NOW(0), HELD(0, 250000), HELD(250000, 250000), HELD(500000, 250000), NOW(3 * S)}},
    {"refill never exceeds burst_size, however long the idle time",
     {.rate = 1, .size = 2, .max_delay_us = S},
     5,
     {NOW(0), NOW(0), NOW(3600 * S), NOW(3600 * S), HELD(3600 * S, 1000000)}},
    {"partial refill: half a token is half the delay",
     {.rate = 1, .size = 1, .max_delay_us = 2 * S},
     3,
     {NOW(0), HELD(500000, 500000), HELD(500000, 1500000)}},
    {"time going backwards refills nothing and does not block later refills",
     {.rate = 1, .size = 2, .max_delay_us = S},
     6,
     {NOW(10 * S), NOW(10 * S), HELD(10 * S, 1000000), REFUSED(5 * S, 1000), REFUSED(5500000, 500),
      HELD(6 * S, 1000000)}},
    {"a lower rate while in debt: the debt outlasts the new bound, refused until repaid",
     {.rate = 10, .size = 10, .max_delay_us = S},
     8,
     {NOW(0), NOW(0), NOW(0), NOW(0), NOW(0), NOW(0), NOW(0), NOW(0)}},
};

/* The rate change scenario goes on from there, each step at its own rate:
 * {t_us, allowed, delay_us, retry_ms, rate}. */
static const struct step RATE_CHANGE[] = {
    {0, true, 0, 0, 10},            /* 9th: still in the bucket */
    {0, true, 0, 0, 10},            /* 10th: empty now */
    {0, true, 100000, 0, 10},       /* 1 token owed at 10/s */
    {0, true, 200000, 0, 10},       /* … */
    {0, true, 300000, 0, 10},       /* … */
    {0, true, 400000, 0, 10},       /* … */
    {0, true, 500000, 0, 10},       /* 5 owed */
    {0, false, 0, 2000, 2},         /* at 2/s the bound is 2 tokens: 4 too many */
    {0, true, 60000, 0, 100},       /* at 100/s: 6 tokens are 60 ms */
    {2000000, false, 0, 500, 2},    /* 2 s at 2/s repaid 4 of 6: 3 owed with this one */
    {2500000, true, 1000000, 0, 2}, /* 1 more repaid: exactly at the bound */
};

static void check_step(const char *name, size_t i, struct rl_bucket *b, const struct rl_limit *base,
                       const struct step *st)
{
    struct rl_limit lim = *base;
    if (st->rate)
        lim.rate = st->rate;
    struct rl_verdict v = rl_bucket_take(b, &lim, st->t_us, 1);
    if (v.allowed != st->allowed || (v.allowed && v.delay_us != st->delay_us) ||
        (!v.allowed && v.retry_after_ms != st->retry_ms)) {
        print_error("%s, step %zu: allowed %d delay %lld retry %lld\n", name, i, v.allowed,
                    (long long)v.delay_us, (long long)v.retry_after_ms);
        fail();
    }
}

static void test_scenarios(void **state)
{
    (void)state;
    for (size_t s = 0; s < sizeof SCENARIOS / sizeof SCENARIOS[0]; s++) {
        const struct scenario *sc = &SCENARIOS[s];
        struct rl_bucket b = RL_BUCKET_INIT;
        for (size_t i = 0; i < sc->nsteps; i++)
            check_step(sc->name, i, &b, &sc->lim, &sc->steps[i]);
        if (s == sizeof SCENARIOS / sizeof SCENARIOS[0] - 1)
            for (size_t i = 0; i < sizeof RATE_CHANGE / sizeof RATE_CHANGE[0]; i++)
                check_step(sc->name, sc->nsteps + i, &b, &sc->lim, &RATE_CHANGE[i]);
    }
}

static void test_kth_request_of_a_burst(void **state)
{
    (void)state;
    /* All at once: the k-th waits (k - size) / rate, up to size + rate × max_delay. */
    const struct rl_limit lims[] = {{.rate = 2, .size = 40, .max_delay_us = 2 * S},
                                    {.rate = 5, .size = 10, .max_delay_us = 2 * S},
                                    {.rate = 3, .size = 1, .max_delay_us = 1500000},
                                    {.rate = 500, .size = 1000, .max_delay_us = 2 * S}};
    for (size_t l = 0; l < sizeof lims / sizeof lims[0]; l++) {
        const struct rl_limit *lim = &lims[l];
        struct rl_bucket b = RL_BUCKET_INIT;
        int64_t admitted = lim->size + lim->rate * lim->max_delay_us / S;
        for (int64_t k = 1; k <= admitted + 3; k++) {
            struct rl_verdict v = rl_bucket_take(&b, lim, 7 * S, 1);
            int64_t owed = k - lim->size; /* tokens of debt this request leaves */
            int64_t delay = owed <= 0 ? 0 : (owed * S + lim->rate - 1) / lim->rate;
            if (k <= admitted) {
                assert_true(v.allowed);
                assert_int_equal(v.delay_us, delay);
                assert_true(v.delay_us <= lim->max_delay_us);
            } else {
                assert_false(v.allowed);
                assert_true(v.retry_after_ms > 0);
            }
        }
    }
}

static void test_many_small_requests(void **state)
{
    (void)state;
    /* A client hammering every microsecond for ten seconds: what it is admitted equals
     * the bucket plus the rate over the time plus the debt allowed, to the request: the
     * refill at µs steps loses and invents nothing. Every delay is within the bound. */
    const int32_t rates[] = {1, 3, 7, 20};
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        struct rl_limit lim = {.rate = rates[r], .size = 5, .max_delay_us = 2 * S};
        struct rl_bucket b = RL_BUCKET_INIT;
        int64_t admitted = 0, refused = 0;
        for (int64_t t = 0; t < 10 * S; t++) {
            struct rl_verdict v = rl_bucket_take(&b, &lim, t, 1);
            if (v.allowed) {
                admitted++;
                assert_true(v.delay_us <= lim.max_delay_us);
            } else {
                refused++;
            }
        }
        /* Tokens earned by t = 10 s - 1 µs: rate × (10 s - 1 µs), rounded down. */
        int64_t expect = lim.size + 2 * lim.rate + (lim.rate * (10 * S - 1)) / S;
        assert_int_equal(admitted, expect);
        assert_int_equal(admitted + refused, 10 * S);
    }
}

static void test_sequential_client_is_never_refused(void **state)
{
    (void)state;
    /* A wallet: the next call goes once the previous one is answered (its delay, then
     * 3 ms at the node). However small the bucket, it is slowed to the rate, never
     * refused, as long as one token's time (1/rate) fits the bound. */
    struct rl_limit lim = {.rate = 2, .size = 1, .max_delay_us = 2 * S};
    struct rl_bucket b = RL_BUCKET_INIT;
    int64_t t = 0;
    for (int i = 0; i < 200; i++) {
        struct rl_verdict v = rl_bucket_take(&b, &lim, t, 1);
        assert_true(v.allowed);
        assert_true(v.delay_us <= S / lim.rate);
        t += v.delay_us + 3000;
    }
    assert_true(t >= 199 * S / 2); /* 200 calls at 2/s, one of them from the bucket */
}

static void test_available(void **state)
{
    (void)state;
    struct rl_limit lim = {.rate = 2, .size = 3, .max_delay_us = 2 * S};
    struct rl_bucket b = RL_BUCKET_INIT;
    assert_int_equal(rl_bucket_available(&b, &lim, 0), 3);
    for (int i = 0; i < 5; i++)
        assert_true(rl_bucket_take(&b, &lim, 0, 1).allowed);
    assert_int_equal(rl_bucket_available(&b, &lim, 0), -2);      /* in debt */
    assert_int_equal(rl_bucket_available(&b, &lim, 250000), -2); /* -1.5 rounds down */
    assert_int_equal(rl_bucket_available(&b, &lim, 1000000), 0);
    lim.size = 1; /* a smaller bucket lowers what is held */
    assert_int_equal(rl_bucket_available(&b, &lim, 10 * S), 1);
}

static void test_cost_larger_than_one(void **state)
{
    (void)state;
    struct rl_limit lim = {.rate = 5, .size = 10, .max_delay_us = 2 * S};
    struct rl_bucket b = RL_BUCKET_INIT;
    assert_true(rl_bucket_take(&b, &lim, 0, 10).allowed);  /* the whole bucket */
    struct rl_verdict v = rl_bucket_take(&b, &lim, 0, 10); /* 10 more: 2 s of debt */
    assert_true(v.allowed);
    assert_int_equal(v.delay_us, 2 * S);
    v = rl_bucket_take(&b, &lim, 0, 1);
    assert_false(v.allowed);
    assert_int_equal(v.retry_after_ms, 200);
    struct rl_bucket fresh = RL_BUCKET_INIT;
    assert_false(rl_bucket_take(&fresh, &lim, 0, 21).allowed); /* more than ever fits */
}

static void test_huge_numbers_do_not_overflow(void **state)
{
    (void)state;
    struct rl_limit lim = {.rate = INT32_MAX, .size = INT32_MAX, .max_delay_us = INT64_MAX};
    struct rl_bucket b = RL_BUCKET_INIT;
    assert_true(rl_bucket_take(&b, &lim, 0, UINT32_MAX).allowed);
    assert_true(rl_bucket_take(&b, &lim, INT64_MAX / 2, UINT32_MAX).allowed);
    assert_int_equal(rl_bucket_available(&b, &lim, INT64_MAX / 2 + 10 * S), INT32_MAX);
}

static void test_table_per_tenant(void **state)
{
    (void)state;
    struct rl_table *t = rl_table_new();
    assert_non_null(t);
    struct rl_limit lim = {.rate = 2, .size = 4, .max_delay_us = S};
    for (int i = 0; i < 4; i++)
        assert_int_equal(rl_take(t, 7, &lim, 0).delay_us, 0);
    assert_int_equal(rl_take(t, 7, &lim, 0).delay_us, 500000);
    assert_int_equal(rl_take(t, 7, &lim, 0).delay_us, 1000000);
    struct rl_verdict v = rl_take(t, 7, &lim, 0);
    assert_false(v.allowed);
    assert_int_equal(v.retry_after_ms, 500);
    /* Another tenant has its own bucket. */
    assert_int_equal(rl_take(t, 8, &lim, 0).delay_us, 0);
    assert_int_equal(rl_count(t), 2);
    /* The bucket, and its debt, survive a new tier for the same id: of the 2 tokens owed,
     * 20 ms at 50/s repaid 1; this request owes 2 again: 40 ms. */
    struct rl_limit faster = {.rate = 50, .size = 100, .max_delay_us = S};
    assert_int_equal(rl_take(t, 7, &faster, 20000).delay_us, 40000);
    /* Sweeping drops the buckets that are full again: tenant 8 (3 of 4 left at 0) is
     * full at 0.5 s; tenant 7, 2 tokens owed and 100 to fill at 20 ms at 50/s, at 2.06 s. */
    assert_int_equal(rl_sweep(t, 499999), 0);
    assert_int_equal(rl_sweep(t, 500000), 1);
    assert_int_equal(rl_count(t), 1);
    assert_int_equal(rl_sweep(t, 2059999), 0);
    assert_int_equal(rl_sweep(t, 2060000), 1);
    assert_int_equal(rl_count(t), 0);
    rl_table_free(t);
}

/* A limit shared by a fleet of 4 replicas: each request costs 4 tokens, so one replica
 * gives a quarter of the rate and of the burst, without rounding (rate 10, size 6: 1.5
 * requests at once, then one every 0.4 s). */
static void test_table_fleet_share(void **state)
{
    (void)state;
    struct rl_table *t = rl_table_new();
    assert_non_null(t);
    struct rl_limit lim = {.rate = 10, .size = 6, .max_delay_us = S, .replicas = 4};
    assert_int_equal(rl_take(t, 1, &lim, 0).delay_us, 0);      /* 6 - 4 = 2 left */
    assert_int_equal(rl_take(t, 1, &lim, 0).delay_us, 200000); /* owes 2: 0.2 s */
    assert_int_equal(rl_take(t, 1, &lim, 0).delay_us, 600000); /* owes 6: 0.6 s */
    assert_int_equal(rl_take(t, 1, &lim, 0).delay_us, S);      /* owes 10: at the bound */
    struct rl_verdict v = rl_take(t, 1, &lim, 0);
    assert_false(v.allowed);
    assert_int_equal(v.retry_after_ms, 400); /* 4 tokens at 10/s */
    /* A client that waits for each answer gets 10 / 4 requests a second from this replica
     * (the fleet of 4: the plan's 10): over 10 s, 25 and the first at once. */
    int64_t served = 0, at = 0;
    while (at <= 10 * S) {
        struct rl_verdict w = rl_take(t, 2, &lim, at);
        assert_true(w.allowed);
        at += w.delay_us > 0 ? w.delay_us : 1;
        served += at <= 10 * S;
    }
    assert_true(served >= 25 && served <= 27);
    /* 0 and 1 are one replica alone. */
    struct rl_limit alone = {.rate = 10, .size = 6, .max_delay_us = 0, .replicas = 0};
    for (int i = 0; i < 6; i++)
        assert_true(rl_take(t, 3, &alone, 0).allowed);
    assert_false(rl_take(t, 3, &alone, 0).allowed);
    rl_table_free(t);
}

struct hammer {
    struct rl_table *t;
    int64_t allowed;
};

static void *hammer_run(void *arg)
{
    struct hammer *h = arg;
    struct rl_limit lim = {.rate = 1000, .size = 2000, .max_delay_us = 500000};
    for (int i = 0; i < 100000; i++)
        h->allowed += rl_take(h->t, 1, &lim, 0).allowed;
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
    assert_int_equal(total, 2500); /* the bucket and the debt allowed, no more, no less */
    rl_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenarios),
        cmocka_unit_test(test_kth_request_of_a_burst),
        cmocka_unit_test(test_many_small_requests),
        cmocka_unit_test(test_sequential_client_is_never_refused),
        cmocka_unit_test(test_available),
        cmocka_unit_test(test_cost_larger_than_one),
        cmocka_unit_test(test_huge_numbers_do_not_overflow),
        cmocka_unit_test(test_table_per_tenant),
        cmocka_unit_test(test_table_fleet_share),
        cmocka_unit_test(test_table_concurrent_takes_are_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
