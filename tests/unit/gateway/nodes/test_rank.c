/* Table tests for gateway/rank: the key order (own before public, quorum tip, tier, latency
 * bucket), the rotation among equals, and which ranked nodes may serve. */
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
        {0, 1, NODE_PRIMARY, 1.0, false},  /* lagging primary */
        {1, 0, NODE_PUBLIC, 1.0, false},   /* public fallback on the tip */
        {2, 0, NODE_STANDBY, 1.0, false},  /* standby on the tip */
        {3, 0, NODE_PRIMARY, 40.0, false}, /* slow primary on the tip */
        {4, 0, NODE_PRIMARY, 2.0, false},  /* fast primary on the tip */
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
        {0, 0, NODE_PRIMARY, 1.0, true},   /* fast primary on the tip, below the floor */
        {1, 2, NODE_STANDBY, 40.0, false}, /* slow, lagging standby at the floor */
        {2, 0, NODE_PUBLIC, 1.0, false},   /* public */
        {3, 0, NODE_STANDBY, 1.0, true},   /* standby below the floor */
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
        {0, 0, NODE_PRIMARY, 1.2, false}, /* bucket 0 */
        {1, 0, NODE_PRIMARY, 3.9, false}, /* bucket 0: equal to 0 */
        {2, 0, NODE_PRIMARY, 4.8, false}, /* bucket 0 */
        {3, 0, NODE_STANDBY, 1.0, false}, /* its own group */
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
    struct rank_input in[] = {{7, 0, NODE_PRIMARY, 5.1, false}, {9, 0, NODE_PRIMARY, 4.9, false}};
    size_t out[2];
    for (uint64_t rotation = 0; rotation < 3; rotation++) {
        order_of(in, 2, rotation, out);
        assert_int_equal(out[0], 9);
        assert_int_equal(out[1], 7);
    }
    rank_order(in, 0, 0, 5.0, out); /* nothing to rank: nothing written, no crash */
}

static void test_public_after_lagging_own(void **state)
{
    (void)state;
    struct rank_input in[] = {
        {0, 0, NODE_PUBLIC, 0.5, false},   /* public on the tip, fastest */
        {1, 3, NODE_STANDBY, 90.0, false}, /* standby 3 blocks behind, slow */
        {2, 0, NODE_PUBLIC, 9.0, false},   /* another public on the tip */
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
            in[i] = (struct rank_input){i, 0, rows[r].p[i], 1.0, false};
        assert_int_equal(rank_servable(in, rows[r].n), rows[r].servable);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_order),       cmocka_unit_test(test_public_after_lagging_own),
        cmocka_unit_test(test_servable),        cmocka_unit_test(test_rotation_among_equals),
        cmocka_unit_test(test_latency_buckets), cmocka_unit_test(test_below_floor_after_the_others),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
