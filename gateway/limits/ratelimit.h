/* ratelimit — the per-tenant burst limit, a token bucket that shapes before it refuses.
 *
 * A tier has a sustained rate (tiers.burst_rps, requests per second) and a burst size
 * (tiers.burst_size, requests): the bucket holds at most burst_size tokens and refills at
 * the rate. A request takes one token. When none is there it is not refused at once: the
 * bucket may go into debt down to -(rate x max_delay), and the request is held until its
 * token has been earned, delay = debt / rate. Only a request whose delay would pass the
 * bound (max_delay, and never beyond the request's own deadline) is refused, with how
 * long until it would fit. So a client that sends N requests at once is served
 * burst_size of them at once, then one every 1/rate s, and refused only beyond
 * burst_size + rate x max_delay; a client that waits for each answer (a wallet: its calls
 * are sequential) is never refused, only slowed to the rate once its burst is spent.
 *
 * Pure core: struct rl_bucket and rl_bucket_take, with the time passed in, no I/O, no
 * locks; table-tested in tests/unit/gateway/limits/test_ratelimit.c.
 *
 * The shell, struct rl_table, keeps one bucket per tenant id, created on a tenant's first
 * request, in an RCU lock-free hash table (liburcu-bp). The limit is not stored: every call
 * passes the tier's current numbers, so a tier change or renewal (NOTIFY, which replaces
 * the tenant snapshot) takes effect on the next request while the bucket, keyed by id,
 * survives it (with its debt: a lowered rate repays it more slowly). Each bucket has its
 * own spinlock held for a few arithmetic operations; no lock is shared between tenants,
 * and a request costs one hash lookup: O(1).
 *
 * Memory: 72 bytes per tenant that sent a request since its bucket was last swept
 * (rl_sweep drops buckets that are full again, which loses nothing); tenants that only
 * sit in the tenant table cost nothing here.
 *
 * Threads: rl_take from any thread (urcu-bp registers readers itself); rl_sweep from one
 * thread at a time; rl_table_free when no other call can run. */
#ifndef RATELIMIT_H
#define RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tokens are counted in millionths, so any rate refills smoothly at microsecond steps:
 * at `rate` requests per second a bucket earns `rate` units per microsecond. */
#define RL_UNIT 1000000LL

/* The longest wait a bucket ever grants (bounds rate x max_delay far from overflowing). */
#define RL_MAX_DELAY_US (3600LL * 1000000)

/* A tier's burst limit, as one request sees it. */
struct rl_limit {
    int32_t rate;         /* sustained requests per second (tiers.burst_rps); > 0 */
    int32_t size;         /* bucket size in requests (tiers.burst_size); > 0 */
    int64_t max_delay_us; /* longest a request may be held for its token; 0: refuse at once */
    /* Replicas the limit is shared by (gateway/limits/fleet.h): rl_take charges each
     * request this many tokens, the bucket cut to rate/replicas and size/replicas without
     * rounding. 0 or 1: this replica alone. */
    uint32_t replicas;
};

struct rl_bucket {
    int64_t tokens;  /* in RL_UNIT per request; < 0 is debt; RL_FRESH: never used (full) */
    int64_t last_us; /* monotonic time of the last refill */
    int64_t full_us; /* when it is full again at the rate of its last use (rl_sweep) */
};

#define RL_FRESH INT64_MIN
#define RL_BUCKET_INIT                                                                             \
    {                                                                                              \
        .tokens = RL_FRESH, .last_us = 0, .full_us = 0                                             \
    }

/* What one take decided. */
struct rl_verdict {
    bool allowed;
    int64_t delay_us;       /* allowed: hold the request this long first (0: serve now) */
    int64_t retry_after_ms; /* refused: until the same request would be allowed */
};

/* Pure: refills b for the time since its last refill at lim->rate (capped at lim->size;
 * time that goes backwards refills nothing and becomes the new base), then takes `cost`
 * requests. They are served at once when the tokens are there; otherwise they leave a
 * debt, and are due once it is repaid: delay_us = debt / rate, rounded up to a
 * microsecond. Allowed when delay_us <= lim->max_delay_us (exactly at the bound
 * included); otherwise nothing is taken and retry_after_ms (rounded up) says when the
 * same take would fit the bound. */
struct rl_verdict rl_bucket_take(struct rl_bucket *b, const struct rl_limit *lim, int64_t now_us,
                                 uint32_t cost);

/* Pure: whole requests in b at now_us (after a refill that is not stored), rounded down;
 * negative while in debt. */
int64_t rl_bucket_available(const struct rl_bucket *b, const struct rl_limit *lim, int64_t now_us);

struct rl_table;

struct rl_table *rl_table_new(void);
void rl_table_free(struct rl_table *t);

/* Takes one request from the tenant's bucket under lim (creating the bucket full on first
 * use), at lim->replicas tokens. When a new bucket cannot be allocated the request is allowed at
 * once: a limiter must not turn memory pressure into an outage. */
struct rl_verdict rl_take(struct rl_table *t, int64_t tenant_id, const struct rl_limit *lim,
                          int64_t now_us);

/* Drops the buckets that are full again by now_us (at the rate of their last use), which
 * is what a new one is. Returns how many were dropped. */
size_t rl_sweep(struct rl_table *t, int64_t now_us);
/* Number of buckets held. */
size_t rl_count(struct rl_table *t);

#endif
