/* Table tests for gateway/nodes/honesty: a node marked misbehaving at the limit of
 * mismatches within the window and not before, agreements that do not undo mismatches,
 * mismatches that age out, the doubling time out with its ceiling, and the cooldown that
 * starts again after a clean window; suspicions that count only once the quorum tip they
 * were seen at has held for settle_ms, and are excused when it moved. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>

#include "nodes/honesty.h"

#define S 1000
#define M (60 * S)
#define H (60 * M)

/* One step: at time t the node agreed ('a') or mismatched ('m'); want: whether that step
 * marked it, and whether it may serve right after. */
struct step {
    int64_t t;
    char what;
    bool marks, serves;
};

static void run(const struct step *steps, size_t n, const struct honesty_params *p)
{
    struct honesty h = {0};
    for (size_t i = 0; i < n; i++) {
        bool marked = honesty_record(&h, steps[i].what == 'a', steps[i].t, p);
        if (marked != steps[i].marks || honesty_allows(&h, steps[i].t) != steps[i].serves)
            fail_msg("step %zu (t=%lld %c): marked %d serves %d", i, (long long)steps[i].t,
                     steps[i].what, marked, honesty_allows(&h, steps[i].t));
    }
}

static void test_limit(void **state)
{
    (void)state;
    struct honesty_params p = honesty_params_default();
    static const struct step steps[] = {
        {0, 'm', false, true},
        {1 * S, 'a', false, true}, /* an agreement undoes none */
        {2 * S, 'm', false, true},
        {3 * S, 'm', true, false}, /* the third: out 1 min */
        {30 * S, 'm', false, false},
        {3 * S + M, 'a', false, true}, /* back after 1 min */
        {3 * S + M + 1, 'm', false, true},
        {3 * S + M + 2, 'm', false, true},
        {3 * S + M + 3, 'm', true, false}, /* again: out 2 min */
        {3 * S + 2 * M + 3, 'a', false, false},
        {3 * S + 3 * M + 3, 'a', false, true},
    };
    run(steps, sizeof steps / sizeof steps[0], &p);
}

static void test_window(void **state)
{
    (void)state;
    struct honesty_params p = honesty_params_default();
    static const struct step steps[] = {
        {0, 'm', false, true},
        {30 * M, 'm', false, true},
        {H, 'm', false, true}, /* the first has aged out: two in the window */
        {H + 1, 'm', true, false},
    };
    run(steps, sizeof steps / sizeof steps[0], &p);
}

static void test_cooldown(void **state)
{
    (void)state;
    struct honesty_params p = {.limit = 1, .window_ms = H, .cooldown_ms = M, .ceiling_ms = 3 * M};
    struct honesty h = {0};
    int64_t t = 0;
    int64_t want[] = {M, 2 * M, 3 * M, 3 * M}; /* doubling, then the ceiling */
    for (size_t i = 0; i < 4; i++) {
        assert_true(honesty_record(&h, false, t, &p));
        assert_int_equal(h.out_until_ms - t, want[i]);
        t = h.out_until_ms;
        assert_true(honesty_allows(&h, t));
    }
    /* a whole window without a mismatch: the next time out is the first again */
    t += H;
    assert_true(honesty_record(&h, false, t, &p));
    assert_int_equal(h.out_until_ms - t, M);
    assert_int_equal(h.marked, 5);
    assert_int_equal(h.mismatched, 5);
    assert_int_equal(h.agreed, 0);
}

static void test_limits_clamped(void **state)
{
    (void)state;
    struct honesty_params p = honesty_params_default();
    p.limit = 1000; /* held to HONESTY_MAX_LIMIT */
    struct honesty h = {0};
    for (int i = 1; i < HONESTY_MAX_LIMIT; i++)
        assert_false(honesty_record(&h, false, i, &p));
    assert_true(honesty_record(&h, false, HONESTY_MAX_LIMIT, &p));
    p.limit = 0; /* at least 1 */
    struct honesty g = {0};
    assert_true(honesty_record(&g, false, 0, &p));
}

/* A suspicion counts once its tip has held settle_ms; a moved tip excuses it; while the
 * quorum is unknown it waits, up to the window. */
static void test_settle(void **state)
{
    (void)state;
    struct honesty_params p = honesty_params_default();
    p.limit = 2;
    p.settle_ms = 10 * S;
    struct honesty h = {0};
    honesty_suspect(&h, "aa", 0);
    honesty_suspect(&h, "aa", 1 * S);
    assert_false(honesty_settle(&h, "aa", 5 * S, &p)); /* too young: both wait */
    assert_int_equal(h.nsuspects, 2);
    assert_int_equal(h.mismatched, 0);
    assert_false(honesty_settle(&h, "bb", 10 * S, &p)); /* the tip moved: the first excused */
    assert_int_equal(h.excused, 1);
    assert_int_equal(h.nsuspects, 1);
    assert_false(honesty_settle(&h, "aa", 11 * S, &p)); /* one mismatch, under the limit */
    assert_int_equal(h.mismatched, 1);
    assert_true(honesty_allows(&h, 11 * S));
    honesty_suspect(&h, "cc", 12 * S);
    assert_false(honesty_settle(&h, NULL, 30 * S, &p)); /* no quorum: it waits */
    assert_int_equal(h.nsuspects, 1);
    assert_true(honesty_settle(&h, "cc", 31 * S, &p)); /* the second: marked */
    assert_false(honesty_allows(&h, 31 * S));
    honesty_suspect(&h, "dd", 40 * S);
    assert_false(honesty_settle(&h, NULL, 40 * S + H, &p)); /* a window without a quorum */
    assert_int_equal(h.excused, 2);
    assert_int_equal(h.nsuspects, 0);
    for (int i = 0; i < HONESTY_SUSPECTS + 3; i++) /* bounded, the newest kept */
        honesty_suspect(&h, i < 3 ? "ee" : "ff", 2 * H + i);
    assert_int_equal(h.nsuspects, HONESTY_SUSPECTS);
    assert_string_equal(h.suspects[0].tip, "ff");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit),          cmocka_unit_test(test_window),
        cmocka_unit_test(test_cooldown),       cmocka_unit_test(test_settle),
        cmocka_unit_test(test_limits_clamped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
