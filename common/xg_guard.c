/* xg_guard — the header timeout, the body's windowed minimum rate and deadline, and the
 * answer's windowed minimum rate; see xg_guard.h. */
#include "xg_guard.h"

#include <stddef.h>
#include <stdint.h>

size_t xg_guard_body_cap(size_t cap, size_t need, size_t first)
{
    if (need <= cap)
        return cap;
    size_t n = cap == 0 ? first : cap > SIZE_MAX / 2 ? need : cap * 2;
    return n < need ? n : need;
}

static uint64_t phase_rate(const struct xg_guard_limits *lim, enum xg_guard_phase phase)
{
    if (phase == XG_GUARD_BODY)
        return lim->body_min_rate;
    if (phase == XG_GUARD_SEND)
        return lim->send_min_rate;
    return 0;
}

static int64_t window_ms(const struct xg_guard_limits *lim)
{
    return lim->body_window_ms > 0 ? lim->body_window_ms : XG_GUARD_BODY_WINDOW_MS;
}

static void start(const struct xg_guard_limits *lim, struct xg_guard *g, enum xg_guard_phase phase,
                  int64_t now_ms)
{
    *g = (struct xg_guard){
        .phase = phase, .since_ms = now_ms, .paid_until_ms = now_ms + lim->body_grace_ms};
}

void xg_guard_head(struct xg_guard *g, int64_t now_ms)
{
    if (g->phase == XG_GUARD_HEAD)
        return;
    *g = (struct xg_guard){.phase = XG_GUARD_HEAD, .since_ms = now_ms};
}

void xg_guard_body(const struct xg_guard_limits *lim, struct xg_guard *g, int64_t now_ms)
{
    start(lim, g, XG_GUARD_BODY, now_ms);
}

void xg_guard_send(const struct xg_guard_limits *lim, struct xg_guard *g, int64_t now_ms)
{
    if (g->phase != XG_GUARD_SEND)
        start(lim, g, XG_GUARD_SEND, now_ms);
}

void xg_guard_idle(struct xg_guard *g)
{
    *g = (struct xg_guard){.phase = XG_GUARD_IDLE};
}

void xg_guard_bytes(const struct xg_guard_limits *lim, struct xg_guard *g, uint64_t n,
                    int64_t now_ms)
{
    if (g->phase != XG_GUARD_BODY && g->phase != XG_GUARD_SEND)
        return;
    g->bytes = n > UINT64_MAX - g->bytes ? UINT64_MAX : g->bytes + n;
    uint64_t rate = phase_rate(lim, g->phase);
    if (rate == 0)
        return;
    /* The credit never reaches past the window ahead of now (nor shortens the grace). */
    int64_t cap = now_ms + window_ms(lim);
    if (cap < g->since_ms + lim->body_grace_ms)
        cap = g->since_ms + lim->body_grace_ms;
    if (g->paid_until_ms >= cap)
        return;
    uint64_t room = (uint64_t)(cap - g->paid_until_ms);
    if (n >= (room + 1) * rate / 1000 + 1) { /* enough to reach the cap whatever the carry */
        g->paid_until_ms = cap;
        g->carry = 0;
        return;
    }
    uint64_t total = g->carry + n * 1000;
    uint64_t ms = total / rate;
    g->carry = total % rate;
    if (ms >= room) {
        g->paid_until_ms = cap;
        g->carry = 0;
    } else {
        g->paid_until_ms += (int64_t)ms;
    }
}

enum xg_guard_verdict xg_guard_check(const struct xg_guard_limits *lim, const struct xg_guard *g,
                                     int64_t now_ms, int64_t *due_ms)
{
    *due_ms = INT64_MAX;
    int64_t elapsed = now_ms - g->since_ms;
    enum xg_guard_verdict slow = XG_GUARD_BODY_TOO_SLOW;
    switch (g->phase) {
    case XG_GUARD_IDLE:
        return XG_GUARD_OK;
    case XG_GUARD_HEAD:
        if (elapsed >= lim->header_timeout_ms)
            return XG_GUARD_HEAD_TIMEOUT;
        *due_ms = g->since_ms + lim->header_timeout_ms;
        return XG_GUARD_OK;
    case XG_GUARD_BODY:
        if (lim->body_timeout_ms > 0) {
            if (elapsed >= lim->body_timeout_ms)
                return XG_GUARD_BODY_TOO_SLOW;
            *due_ms = g->since_ms + lim->body_timeout_ms;
        }
        break;
    case XG_GUARD_SEND:
        slow = XG_GUARD_SEND_TOO_SLOW;
        break;
    }
    if (phase_rate(lim, g->phase) == 0)
        return XG_GUARD_OK;
    if (now_ms > g->paid_until_ms) {
        *due_ms = INT64_MAX;
        return slow;
    }
    if (g->paid_until_ms + 1 < *due_ms)
        *due_ms = g->paid_until_ms + 1;
    return XG_GUARD_OK;
}

void xg_guard_count(struct xg_guard_counts *c, enum xg_guard_verdict v)
{
    if (!c)
        return;
    if (v == XG_GUARD_HEAD_TIMEOUT)
        atomic_fetch_add(&c->header_timeouts, 1);
    else if (v == XG_GUARD_BODY_TOO_SLOW)
        atomic_fetch_add(&c->slow_bodies, 1);
    else if (v == XG_GUARD_SEND_TOO_SLOW)
        atomic_fetch_add(&c->slow_readers, 1);
}

const char *const xg_guard_count_reasons[XG_GUARD_NREASONS + 1] = {
    "header_timeout", "slow_body", "over_address_cap", "slow_reader", "proxy_full", NULL};

void xg_guard_counts_read(const struct xg_guard_counts *c, uint64_t out[XG_GUARD_NREASONS])
{
    out[0] = atomic_load(&c->header_timeouts);
    out[1] = atomic_load(&c->slow_bodies);
    out[2] = atomic_load(&c->refused_over_cap);
    out[3] = atomic_load(&c->slow_readers);
    out[4] = atomic_load(&c->proxy_full);
}
