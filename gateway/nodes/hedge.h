/* hedge — when a read is asked of a second node while the first has not answered (pure
 * rules and one shared budget).
 *
 * A node that has not answered within the hedge delay is probably stuck (frozen, or
 * behind a queue), and the client should not wait for its timeout: the same idempotent
 * read goes to the next node and the first good answer wins (gateway/serve/proxy.h). The
 * delay comes from the node's own recent latency: the 95th percentile of its last
 * HEDGE_WINDOW good answers, kept within [floor, cap]; a node with no history yet gets the
 * cap. The budget bounds the extra load on the nodes: every read earns budget_pct hundredths
 * of a hedge, a hedge spends one, and at most HEDGE_BURST can be saved up, so that in steady
 * state at most budget_pct % of the reads are hedged, while a freeze (a burst of stuck
 * reads) can draw on what was saved.
 *
 * Threads: a window is the caller's to lock (the prober keeps one per node under its
 * mutex); the budget is atomic and shared by every loop. */
#ifndef HEDGE_H
#define HEDGE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define HEDGE_WINDOW 32
#define HEDGE_BURST  50 /* hedges the budget can save up */

struct hedge_options {
    int64_t floor_ms;    /* never sooner than this [50] */
    int64_t cap_ms;      /* never later than this [500] */
    unsigned budget_pct; /* hedges per 100 reads, at most; 0: never hedge [5] */
};

/* The last HEDGE_WINDOW latencies of one node's good answers. Zeroed: empty. */
struct hedge_window {
    double ms[HEDGE_WINDOW];
    unsigned count, next;
};

void hedge_window_add(struct hedge_window *w, double ms);

/* The 95th percentile of the window (nearest rank); -1 while it is empty. */
double hedge_window_p95(const struct hedge_window *w);

/* The hedge delay for a node whose window's p95 is p95_ms (-1: none yet): within
 * [floor_ms, cap_ms], the cap while there is no history. */
int64_t hedge_delay_ms(double p95_ms, const struct hedge_options *o);

/* Budget, in hundredths of a hedge. */
struct hedge_budget {
    atomic_int_fast64_t credit;
};

/* Starts full, so that a freeze right after start can be hedged. */
void hedge_budget_init(struct hedge_budget *b);

/* A read was sent: earns budget_pct hundredths, up to HEDGE_BURST hedges. */
void hedge_budget_earn(struct hedge_budget *b, unsigned budget_pct);

/* Takes one hedge from the budget: false when there is not one left. */
bool hedge_budget_spend(struct hedge_budget *b);

#endif
