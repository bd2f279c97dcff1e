/* hold — the timers of one event loop's held requests: a request over its tenant's burst
 * bucket, but within the bound of the wait it may be given (gateway/limits/ratelimit.h), waits
 * here until its token is due instead of being refused.
 *
 * Why a timer set and not a sleep: a held request is a suspended connection, as one
 * waiting on a node (upstream.h explains that shape), plus one entry in this set; no
 * thread, no node connection. The set has one timerfd in its loop's epoll set
 * (loop_watch_add), armed at the earliest due time to the microsecond: when it fires,
 * the due entries fire on the loop's thread, whatever else keeps the loop busy.
 *
 * Entries are intrusive (struct hold_entry lives in the request): the set keeps pointers
 * in a binary min-heap on due time, so adding, cancelling and popping cost O(log n), and
 * the set allocates only when it grows. Ownership: the set owns its array and its timer
 * descriptor; an entry must be cancelled (or have fired) before its memory goes.
 *
 * Threads: one set per loop, used on that loop's thread only (hold_set_new before the
 * loop serves, hold_set_free after the loop stopped). */
#ifndef HOLD_H
#define HOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/loop.h"

struct hold_entry {
    int64_t due_us; /* monotonic */
    size_t pos;     /* 1 + its index in the heap; 0 while not in a set */
    void (*on_due)(struct hold_entry *e);
};

struct hold_set;

/* A set whose timer runs on loop l; with l NULL, no timer: the caller runs the set
 * itself (hold_run; the unit tests). NULL when memory or the timer descriptor fail. */
struct hold_set *hold_set_new(struct loop *l);
/* Frees the set; entries still in it are forgotten (their on_due never runs). NULL is
 * fine. */
void hold_set_free(struct hold_set *s);

/* Queues e to fire at due_us (e must not be in a set). False when memory runs out; e is
 * then not queued. */
__attribute__((warn_unused_result)) bool hold_add(struct hold_set *s, struct hold_entry *e,
                                                  int64_t due_us,
                                                  void (*on_due)(struct hold_entry *e));

/* Takes e out of the set if it is in it (idempotent). */
void hold_cancel(struct hold_set *s, struct hold_entry *e);

static inline bool hold_queued(const struct hold_entry *e)
{
    return e->pos != 0;
}

/* Fires, in due order, every entry due at now_us: each leaves the set, then its on_due
 * runs (which may add or cancel entries). Returns how many fired. The timer does this by
 * itself; call it directly only without one, or to release every entry (INT64_MAX). */
size_t hold_run(struct hold_set *s, int64_t now_us);

/* When the next entry is due (monotonic µs); INT64_MAX when the set is empty. */
int64_t hold_next_due(const struct hold_set *s);

/* Entries waiting. */
size_t hold_count(const struct hold_set *s);

#endif
