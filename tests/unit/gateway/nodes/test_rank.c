/* Table tests for gateway/rank: the key order (own before public, quorum tip, tier, expected
 * latency bucket, requests outstanding), the rotation among equals, the peak-sensitive
 * latency average, and which ranked nodes may serve. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "nodes/rank.h"

static void order_of(const struct rank_input *in, size_t n, uint64_t rotation, size_t *out)
{
    rank_order(in, n, rotation, 5.0, out);
}

static void test_key_order(void **state)
{
    (void)state;
    struct rank_input in[] = {
        {0, 1, NODE_PRIMARY, 1.0, false, 0},  /* lagging primary */
        {1, 0, NODE_PUBLIC, 1.0, false, 0},   /* public fallback on the tip */
        {2, 0, NODE_STANDBY, 1.0, false, 0},  /* standby on the tip */
        {3, 0, NODE_PRIMARY, 40.0, false, 0}, /* slow primary on the tip */
        {4, 0, NODE_PRIMARY, 2.0, false, 0},  /* fast primary on the tip */
    };
    size_t out[5];
    for (uint64_t rotation = 0; rotation < 4; rotation++) {
        order_of(in, 5, rotation, out);
        /* No two are equal: rotation changes nothing. A public node on the tip comes after
         * an own node one block behind. */
        size_t expected[] = {4, 3, 2, 0, 1};
        assert_memory_equal(out, expected, sizeof expected);
    }
}

/* A node known below the tenant's floor ranks after every own node at or past it, however
 * close to the quorum tip or fast it is, and still before a public node. */
static void test_below_floor_after_the_others(void **state)
{
    (void)state;
    struct rank_input in[] = {
        {0, 0, NODE_PRIMARY, 1.0, true, 0},   /* fast primary on the tip, below the floor */
        {1, 2, NODE_STANDBY, 40.0, false, 0}, /* slow, lagging standby at the floor */
        {2, 0, NODE_PUBLIC, 1.0, false, 0},   /* public */
        {3, 0, NODE_STANDBY, 1.0, true, 0},   /* standby below the floor */
    };
    size_t out[4];
    for (uint64_t rotation = 0; rotation < 3; rotation++) {
        order_of(in, 4, rotation, out);
        size_t expected[] = {1, 0, 3, 2};
        assert_memory_equal(out, expected, sizeof expected);
    }
    assert_int_equal(rank_servable(in, 4), 3);
}

static void test_rotation_among_equals(void **state)
{
    (void)state;
    struct rank_input in[] = {
        {0, 0, NODE_PRIMARY, 1.2, false, 0}, /* bucket 0 */
        {1, 0, NODE_PRIMARY, 3.9, false, 0}, /* bucket 0: equal to 0 */
        {2, 0, NODE_PRIMARY, 4.8, false, 0}, /* bucket 0 */
        {3, 0, NODE_STANDBY, 1.0, false, 0}, /* its own group */
    };
    size_t out[4], first_counts[3] = {0};
    for (uint64_t rotation = 0; rotation < 30; rotation++) {
        order_of(in, 4, rotation, out);
        assert_true(out[0] < 3 && out[1] < 3 && out[2] < 3);
        assert_int_equal(out[3], 3);
        /* Every equal appears once among the first three. */
        assert_int_not_equal(out[0], out[1]);
        assert_int_not_equal(out[1], out[2]);
        assert_int_not_equal(out[0], out[2]);
        first_counts[out[0]]++;
    }
    /* The first place is spread evenly. */
    assert_int_equal(first_counts[0], 10);
    assert_int_equal(first_counts[1], 10);
    assert_int_equal(first_counts[2], 10);
}

static void test_latency_buckets(void **state)
{
    (void)state;
    /* 4.9 ms and 5.1 ms fall in different 5 ms buckets: the faster always leads. */
    struct rank_input in[] = {{7, 0, NODE_PRIMARY, 5.1, false, 0},
                              {9, 0, NODE_PRIMARY, 4.9, false, 0}};
    size_t out[2];
    for (uint64_t rotation = 0; rotation < 3; rotation++) {
        order_of(in, 2, rotation, out);
        assert_int_equal(out[0], 9);
        assert_int_equal(out[1], 7);
    }
    rank_order(in, 0, 0, 5.0, out); /* nothing to rank: nothing written, no crash */
}

/* The expected latency: EMA × (outstanding + 1), in buckets. */
static void test_bucket_rows(void **state)
{
    (void)state;
    const struct {
        double ema_ms;
        unsigned outstanding;
        double bucket_ms;
        int64_t bucket;
    } rows[] = {
        {1.0, 0, 5.0, 0},   {1.0, 4, 5.0, 1},   /* 5 ms expected: the next bucket */
        {1.0, 3, 5.0, 0},   {0.4, 20, 5.0, 1},  /* 8.4 ms */
        {9.9, 0, 5.0, 1},   {2.0, 9, 5.0, 4},   /* 20 ms */
        {1.0, 0, 0.0, 1},   {0.0, 100, 5.0, 0}, /* bucket <= 0 means 1 ms; no EMA yet */
        {50.0, 1, 5.0, 20},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(rank_bucket(rows[i].ema_ms, rows[i].outstanding, rows[i].bucket_ms),
                         rows[i].bucket);
}

/* A burst piled onto the fastest node puts an idle slower one first; among nodes in one
 * bucket the least loaded leads whatever the rotation; equal loads still rotate. */
static void test_outstanding_order(void **state)
{
    (void)state;
    const struct {
        double ema_a, ema_b;
        unsigned out_a, out_b;
        size_t first; /* 0: a, 1: b, 2: either (they rotate) */
    } rows[] = {
        {1.0, 3.0, 0, 0, 2},   /* idle, 1 and 3 ms: one bucket, nothing outstanding: rotate */
        {1.0, 3.0, 9, 0, 1},   /* a: 10 ms expected, b: 3 ms */
        {1.0, 3.0, 2, 0, 1},   /* 3 ms and 3 ms: one bucket, a has more outstanding: b */
        {1.0, 1.0, 3, 1, 1},   /* one bucket: fewer outstanding first */
        {1.0, 1.0, 2, 2, 2},   /* equal: rotate */
        {0.5, 20.0, 30, 0, 0}, /* 15.5 ms against 20 ms: a still leads */
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        struct rank_input in[] = {{0, 0, NODE_PRIMARY, rows[r].ema_a, false, rows[r].out_a},
                                  {1, 0, NODE_PRIMARY, rows[r].ema_b, false, rows[r].out_b}};
        size_t out[2], firsts[2] = {0};
        for (uint64_t rotation = 0; rotation < 4; rotation++) {
            order_of(in, 2, rotation, out);
            firsts[out[0]]++;
        }
        size_t first = rows[r].first;
        if (first == 2) {
            assert_int_equal(firsts[0], 2);
            assert_int_equal(firsts[1], 2);
        } else {
            assert_int_equal(firsts[first], 4);
        }
    }
}

/* A peak is taken at once; below the average it decays with time. */
static void test_peak_ewma(void **state)
{
    (void)state;
    const struct {
        double ema, sample;
        int64_t elapsed_ms;
        double expected;
    } rows[] = {
        {-1, 3.0, 0, 3.0},    /* first answer */
        {2.0, 40.0, 1, 40.0}, /* a stall shows with its first answer */
        {40.0, 2.0, 0, 40.0}, /* a burst at one instant changes nothing */
        {40.0, 2.0, 2000, 2.0 + 38.0 / 2.718281828459045}, /* one time constant */
        {40.0, 2.0, 200000, 2.0},                          /* long ago: the sample */
        {40.0, 2.0, -5, 40.0},                             /* a clock step back counts as no time */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_float_equal(rank_peak_ewma(rows[i].ema, rows[i].sample, rows[i].elapsed_ms, 2000),
                           rows[i].expected, 1e-6);
}

static void test_public_after_lagging_own(void **state)
{
    (void)state;
    struct rank_input in[] = {
        {0, 0, NODE_PUBLIC, 0.5, false, 0},   /* public on the tip, fastest */
        {1, 3, NODE_STANDBY, 90.0, false, 0}, /* standby 3 blocks behind, slow */
        {2, 0, NODE_PUBLIC, 9.0, false, 0},   /* another public on the tip */
    };
    size_t out[3];
    order_of(in, 3, 0, out);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 0);
    assert_int_equal(out[2], 2);
}

static void test_servable(void **state)
{
    (void)state;
    const struct {
        enum node_priority p[4];
        size_t n, servable;
    } rows[] = {
        {{NODE_PRIMARY, NODE_STANDBY, NODE_PUBLIC}, 3, 2}, /* own ones only */
        {{NODE_PUBLIC, NODE_PUBLIC}, 2, 2},                /* no own node: the public ones */
        {{NODE_STANDBY, NODE_PUBLIC, NODE_PUBLIC}, 3, 1},
        {{NODE_PRIMARY, NODE_PRIMARY}, 2, 2},
        {{NODE_PRIMARY}, 0, 0}, /* none at all */
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        struct rank_input in[4];
        for (size_t i = 0; i < rows[r].n; i++)
            in[i] = (struct rank_input){i, 0, rows[r].p[i], 1.0, false, 0};
        assert_int_equal(rank_servable(in, rows[r].n), rows[r].servable);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_order),       cmocka_unit_test(test_public_after_lagging_own),
        cmocka_unit_test(test_servable),        cmocka_unit_test(test_rotation_among_equals),
        cmocka_unit_test(test_latency_buckets), cmocka_unit_test(test_below_floor_after_the_others),
        cmocka_unit_test(test_bucket_rows),     cmocka_unit_test(test_outstanding_order),
        cmocka_unit_test(test_peak_ewma),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
