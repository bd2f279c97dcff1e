/* Table tests for gateway/hedge: the latency window's p95, the delay's floor and cap, and
 * the budget's bound on extra node requests. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "nodes/hedge.h"

static void test_window_p95(void **state)
{
    (void)state;
    struct hedge_window w = {0};
    assert_true(hedge_window_p95(&w) < 0); /* empty */
    hedge_window_add(&w, 7);
    assert_true(hedge_window_p95(&w) == 7);
    for (int i = 1; i <= 20; i++)
        hedge_window_add(&w, i); /* with the 7: 21 samples, nearest rank 20 of 21 */
    assert_true(hedge_window_p95(&w) == 19);
    /* The window keeps the last HEDGE_WINDOW: old slow answers age out. */
    for (int i = 0; i < HEDGE_WINDOW; i++)
        hedge_window_add(&w, i == 0 ? 900 : 3);
    assert_true(hedge_window_p95(&w) == 3);
}

static void test_delay(void **state)
{
    (void)state;
    const struct hedge_options o = {.floor_ms = 50, .cap_ms = 500, .budget_pct = 5};
    const struct {
        double p95;
        int64_t delay;
    } rows[] = {
        {-1, 500},                 /* no history: the cap */
        {3.2, 50},                 /* the floor */
        {120.1, 121},              /* rounded up */
        {499.5, 500}, {9000, 500}, /* the cap */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(hedge_delay_ms(rows[i].p95, &o), rows[i].delay);
}

static void test_budget(void **state)
{
    (void)state;
    struct hedge_budget b;
    hedge_budget_init(&b);
    unsigned saved = 0;
    while (hedge_budget_spend(&b))
        saved++;
    assert_int_equal(saved, HEDGE_BURST); /* starts full */
    /* Steady state at 5 %: 1000 reads earn 50 hedges, never more. */
    unsigned hedged = 0;
    for (int i = 0; i < 1000; i++) {
        hedge_budget_earn(&b, 5);
        if (hedge_budget_spend(&b))
            hedged++;
    }
    assert_int_equal(hedged, 50);
    /* Saving up stops at the burst. */
    for (int i = 0; i < 100000; i++)
        hedge_budget_earn(&b, 5);
    saved = 0;
    while (hedge_budget_spend(&b))
        saved++;
    assert_int_equal(saved, HEDGE_BURST);
    /* 0 %: never. */
    hedge_budget_earn(&b, 0);
    assert_false(hedge_budget_spend(&b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_p95),
        cmocka_unit_test(test_delay),
        cmocka_unit_test(test_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
