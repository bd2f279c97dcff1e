/* hold — a binary min-heap of held requests' timers, per event loop, on one timerfd. */
#include "core/hold.h"

#include "xg_clock.h"

#include <assert.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

struct hold_set {
    struct loop_watch watch; /* first: the loop hands it back on timer events */
    int timer_fd;            /* -1 without a loop */
    int64_t armed_us;        /* what the timer is set to; INT64_MAX: disarmed */
    struct hold_entry **heap;
    size_t n, cap;
};

static void on_timer(struct loop_watch *w, uint32_t events);

struct hold_set *hold_set_new(struct loop *l)
{
    struct hold_set *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->watch.on_event = on_timer;
    s->timer_fd = -1;
    s->armed_us = INT64_MAX;
    if (!l)
        return s;
    s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (s->timer_fd < 0 || !loop_watch_add(l, s->timer_fd, EPOLLIN, &s->watch)) {
        hold_set_free(s);
        return NULL;
    }
    return s;
}

void hold_set_free(struct hold_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        s->heap[i]->pos = 0;
    if (s->timer_fd >= 0)
        close(s->timer_fd);
    free(s->heap);
    free(s);
}

int64_t hold_next_due(const struct hold_set *s)
{
    return s->n ? s->heap[0]->due_us : INT64_MAX;
}

/* Sets the timer to the earliest due time, when that changed. A failed timerfd_settime
 * (EINVAL cannot happen here) would leave the entry to the next change. */
static void rearm(struct hold_set *s)
{
    int64_t due = hold_next_due(s);
    if (s->timer_fd < 0 || due == s->armed_us)
        return;
    struct itimerspec its = {0}; /* zero: disarmed */
    if (due != INT64_MAX) {
        int64_t at = due > 0 ? due : 1; /* an all-zero it_value would disarm */
        its.it_value.tv_sec = (time_t)(at / 1000000);
        its.it_value.tv_nsec = (long)(at % 1000000) * 1000;
    }
    if (timerfd_settime(s->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
        s->armed_us = due;
}

static void on_timer(struct loop_watch *w, uint32_t events)
{
    (void)events;
    struct hold_set *s = (struct hold_set *)w;
    uint64_t expirations;
    ssize_t r = read(s->timer_fd, &expirations, sizeof expirations);
    (void)r; /* EAGAIN: a re-arm raced the event; the heap says what is due */
    s->armed_us = INT64_MAX;
    (void)hold_run(s, xg_monotonic_us());
    rearm(s);
}

static void place(struct hold_set *s, size_t i, struct hold_entry *e)
{
    s->heap[i] = e;
    e->pos = i + 1;
}

static void sift_up(struct hold_set *s, size_t i)
{
    struct hold_entry *e = s->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (s->heap[parent]->due_us <= e->due_us)
            break;
        place(s, i, s->heap[parent]);
        i = parent;
    }
    place(s, i, e);
}

static void sift_down(struct hold_set *s, size_t i)
{
    struct hold_entry *e = s->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= s->n)
            break;
        if (child + 1 < s->n && s->heap[child + 1]->due_us < s->heap[child]->due_us)
            child++;
        if (e->due_us <= s->heap[child]->due_us)
            break;
        place(s, i, s->heap[child]);
        i = child;
    }
    place(s, i, e);
}

bool hold_add(struct hold_set *s, struct hold_entry *e, int64_t due_us,
              void (*on_due)(struct hold_entry *e))
{
    assert(!hold_queued(e));
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct hold_entry **grown = realloc(s->heap, cap * sizeof *grown);
        if (!grown)
            return false;
        s->heap = grown;
        s->cap = cap;
    }
    e->due_us = due_us;
    e->on_due = on_due;
    place(s, s->n++, e);
    sift_up(s, s->n - 1);
    rearm(s);
    return true;
}

/* Takes e out without touching the timer. */
static void unlink_entry(struct hold_set *s, struct hold_entry *e)
{
    size_t i = e->pos - 1;
    assert(i < s->n && s->heap[i] == e);
    e->pos = 0;
    struct hold_entry *last = s->heap[--s->n];
    if (i == s->n)
        return;
    place(s, i, last);
    if (i > 0 && s->heap[(i - 1) / 2]->due_us > last->due_us)
        sift_up(s, i);
    else
        sift_down(s, i);
}

void hold_cancel(struct hold_set *s, struct hold_entry *e)
{
    if (!hold_queued(e))
        return;
    unlink_entry(s, e);
    rearm(s);
}

size_t hold_run(struct hold_set *s, int64_t now_us)
{
    size_t fired = 0;
    while (s->n > 0 && s->heap[0]->due_us <= now_us) {
        struct hold_entry *e = s->heap[0];
        unlink_entry(s, e);
        e->on_due(e);
        fired++;
    }
    rearm(s);
    return fired;
}

size_t hold_count(const struct hold_set *s)
{
    return s->n;
}
