/* xg_guard — the slow-client rule every front end applies (the gateway's own HTTP/1.1
 * front end, its libmicrohttpd adapter, billing's libmicrohttpd server): a request head
 * must be complete within header_timeout of its first byte, whatever trickles in; a body
 * must keep up a minimum rate over a sliding window once a grace period is over, and be
 * complete within an absolute deadline; an answer being written must be taken by the
 * client at a minimum rate over the same window (the own front end). The window is a
 * credit: bytes received (or sent) buy time at the minimum rate, but never more than the
 * window ahead of now, so a burst followed by a trickle is closed within the window
 * instead of when the average since the start falls under the rate. The idle timeout
 * (no byte at all) stays each front end's own. Pure: a front end keeps one struct xg_guard
 * per connection, tells it where the connection is (head, body, neither) and asks
 * xg_guard_check when it is due; what to do then (a 408, a close) is the front end's.
 *
 * struct xg_guard_counts are the closes and refusals a server counts for its metrics
 * (atomics: the loops or MHD's threads add, a scrape reads). */
#ifndef XG_GUARD_H
#define XG_GUARD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Defaults of the configuration keys (see each daemon's key table). */
#define XG_GUARD_HEADER_TIMEOUT_MS 10000
#define XG_GUARD_BODY_GRACE_MS     5000
#define XG_GUARD_BODY_MIN_RATE     1024 /* bytes per second */
#define XG_GUARD_BODY_WINDOW_MS    10000
#define XG_GUARD_BODY_TIMEOUT_MS   60000
#define XG_GUARD_SEND_MIN_RATE     1024 /* bytes per second */

struct xg_guard_limits {
    int64_t header_timeout_ms; /* > 0 */
    int64_t body_grace_ms;     /* a body (or an answer) is not judged before this */
    uint64_t body_min_rate;    /* bytes per second over body_window; 0 = none */
    int64_t body_window_ms;    /* the sliding window; 0 = XG_GUARD_BODY_WINDOW_MS */
    int64_t body_timeout_ms;   /* a whole body within this of its start; 0 = none */
    uint64_t send_min_rate;    /* bytes per second an answer is taken at, over the window;
                                  0 = none */
};

/* The body buffer's next capacity when it is full: first, then double cap, never past need
 * (the whole body and its terminator), so a connection holds at most about twice what it
 * sent, not what it declared. */
size_t xg_guard_body_cap(size_t cap, size_t need, size_t first);

enum xg_guard_phase {
    XG_GUARD_IDLE, /* between requests, or the request is with its handler: not judged */
    XG_GUARD_HEAD, /* reading a request head (or a PROXY header) */
    XG_GUARD_BODY, /* reading a request body */
    XG_GUARD_SEND, /* writing an answer the client has yet to take */
};

struct xg_guard {
    enum xg_guard_phase phase;
    int64_t since_ms;      /* when the phase began (monotonic) */
    uint64_t bytes;        /* body bytes received (answer bytes sent) in this phase */
    int64_t paid_until_ms; /* the bytes so far keep the rate until then */
    uint64_t carry;        /* bytes x 1000 not yet a whole millisecond at the rate */
};

enum xg_guard_verdict {
    XG_GUARD_OK,
    XG_GUARD_HEAD_TIMEOUT,  /* the head did not complete within header_timeout */
    XG_GUARD_BODY_TOO_SLOW, /* the body fell under body_min_rate over the window after the
                               grace, or is not complete at body_timeout */
    XG_GUARD_SEND_TOO_SLOW  /* the client took the answer under send_min_rate */
};

/* The phase changes: a head's first byte came (a no-op when already reading a head, so
 * that its clock is not reset by later bytes), a body starts, an answer is being sent (a
 * no-op when already sending), or neither. */
void xg_guard_head(struct xg_guard *g, int64_t now_ms);
void xg_guard_body(const struct xg_guard_limits *lim, struct xg_guard *g, int64_t now_ms);
void xg_guard_send(const struct xg_guard_limits *lim, struct xg_guard *g, int64_t now_ms);
void xg_guard_idle(struct xg_guard *g);

/* n more body bytes arrived, or answer bytes were sent, at now_ms (counted in
 * XG_GUARD_BODY and XG_GUARD_SEND only). */
void xg_guard_bytes(const struct xg_guard_limits *lim, struct xg_guard *g, uint64_t n,
                    int64_t now_ms);

/* The verdict at now_ms. *due_ms is when to ask again at the latest while it stays OK
 * (INT64_MAX when there is nothing to judge); a check before then is harmless. */
enum xg_guard_verdict xg_guard_check(const struct xg_guard_limits *lim, const struct xg_guard *g,
                                     int64_t now_ms, int64_t *due_ms);

/* What a server counts. */
struct xg_guard_counts {
    _Atomic uint64_t header_timeouts;  /* closed: the head did not complete in time */
    _Atomic uint64_t slow_bodies;      /* closed: the body came too slowly */
    _Atomic uint64_t refused_over_cap; /* refused at accept: the address had too many */
    _Atomic uint64_t slow_readers;     /* closed: the client took the answer too slowly */
    _Atomic uint64_t proxy_full;       /* refused at accept: the PROXY reader had no place */
};

/* The counts as a metric's label values, in the order of xg_guard_count_reasons
 * (NULL-terminated): header_timeout, slow_body, over_address_cap, slow_reader, proxy_full. */
#define XG_GUARD_NREASONS 5
extern const char *const xg_guard_count_reasons[XG_GUARD_NREASONS + 1];
void xg_guard_counts_read(const struct xg_guard_counts *c, uint64_t out[XG_GUARD_NREASONS]);

/* Adds the verdict (not OK) to c; c may be NULL. */
void xg_guard_count(struct xg_guard_counts *c, enum xg_guard_verdict v);

#endif
