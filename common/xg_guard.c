/* xg_guard — the header timeout and minimum body rate; see xg_guard.h. */
#include "xg_guard.h"

#include <stddef.h>

void xg_guard_head(struct xg_guard *g, int64_t now_ms)
{
    if (g->phase == XG_GUARD_HEAD)
        return;
    *g = (struct xg_guard){.phase = XG_GUARD_HEAD, .since_ms = now_ms};
}

void xg_guard_body(struct xg_guard *g, int64_t now_ms)
{
    *g = (struct xg_guard){.phase = XG_GUARD_BODY, .since_ms = now_ms};
}

void xg_guard_idle(struct xg_guard *g)
{
    *g = (struct xg_guard){.phase = XG_GUARD_IDLE};
}

void xg_guard_bytes(struct xg_guard *g, uint64_t n)
{
    if (g->phase == XG_GUARD_BODY)
        g->bytes += n;
}

/* Milliseconds of body at rate that bytes cover (saturating). */
static int64_t covered_ms(uint64_t bytes, uint64_t rate)
{
    uint64_t whole = bytes / rate, part = bytes % rate;
    if (whole > (uint64_t)INT64_MAX / 1000 - 1)
        return INT64_MAX / 2;
    return (int64_t)(whole * 1000 + part * 1000 / rate);
}

enum xg_guard_verdict xg_guard_check(const struct xg_guard_limits *lim, const struct xg_guard *g,
                                     int64_t now_ms, int64_t *due_ms)
{
    *due_ms = INT64_MAX;
    int64_t elapsed = now_ms - g->since_ms;
    switch (g->phase) {
    case XG_GUARD_IDLE:
        return XG_GUARD_OK;
    case XG_GUARD_HEAD:
        if (elapsed >= lim->header_timeout_ms)
            return XG_GUARD_HEAD_TIMEOUT;
        *due_ms = g->since_ms + lim->header_timeout_ms;
        return XG_GUARD_OK;
    case XG_GUARD_BODY:
        break;
    }
    if (lim->body_min_rate == 0)
        return XG_GUARD_OK;
    /* The bytes so far keep the average at the rate until since + covered. */
    int64_t covered = covered_ms(g->bytes, lim->body_min_rate);
    int64_t until = covered > lim->body_grace_ms ? covered : lim->body_grace_ms;
    if (elapsed > until)
        return XG_GUARD_BODY_TOO_SLOW;
    *due_ms = g->since_ms + until + 1;
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
}

const char *const xg_guard_count_reasons[XG_GUARD_NREASONS + 1] = {"header_timeout", "slow_body",
                                                                   "over_address_cap", NULL};

void xg_guard_counts_read(const struct xg_guard_counts *c, uint64_t out[XG_GUARD_NREASONS])
{
    out[0] = atomic_load(&c->header_timeouts);
    out[1] = atomic_load(&c->slow_bodies);
    out[2] = atomic_load(&c->refused_over_cap);
}
