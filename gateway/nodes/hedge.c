/* hedge — latency window, hedge delay and the hedge budget. */
#include "nodes/hedge.h"

#include <stdlib.h>
#include <string.h>

#define HEDGE_UNIT 100 /* a hedge, in budget hundredths */

void hedge_window_add(struct hedge_window *w, double ms)
{
    w->ms[w->next] = ms;
    w->next = (w->next + 1) % HEDGE_WINDOW;
    if (w->count < HEDGE_WINDOW)
        w->count++;
}

static int compare_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hedge_window_p95(const struct hedge_window *w)
{
    if (w->count == 0)
        return -1;
    double sorted[HEDGE_WINDOW];
    memcpy(sorted, w->ms, w->count * sizeof sorted[0]);
    qsort(sorted, w->count, sizeof sorted[0], compare_ms);
    /* Nearest rank: the smallest value with at least 95 % of the window at or below it. */
    unsigned rank = (95 * w->count + 99) / 100;
    return sorted[rank - 1];
}

int64_t hedge_delay_ms(double p95_ms, const struct hedge_options *o)
{
    if (p95_ms < 0)
        return o->cap_ms;
    int64_t ms = (int64_t)(p95_ms + 0.999); /* rounded up: a node at its p95 is not late */
    if (ms < o->floor_ms)
        ms = o->floor_ms;
    return ms > o->cap_ms ? o->cap_ms : ms;
}

void hedge_budget_init(struct hedge_budget *b)
{
    atomic_init(&b->credit, (int_fast64_t)HEDGE_BURST * HEDGE_UNIT);
}

void hedge_budget_earn(struct hedge_budget *b, unsigned budget_pct)
{
    const int_fast64_t full = (int_fast64_t)HEDGE_BURST * HEDGE_UNIT;
    int_fast64_t now = atomic_load(&b->credit);
    while (now < full) {
        int_fast64_t next = now + (int_fast64_t)budget_pct;
        if (next > full)
            next = full;
        if (atomic_compare_exchange_weak(&b->credit, &now, next))
            return;
    }
}

bool hedge_budget_spend(struct hedge_budget *b)
{
    int_fast64_t now = atomic_load(&b->credit);
    while (now >= HEDGE_UNIT)
        if (atomic_compare_exchange_weak(&b->credit, &now, now - HEDGE_UNIT))
            return true;
    return false;
}
