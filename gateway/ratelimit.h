/* ratelimit — the per-tenant burst limit: a token bucket refilled at the tier's burst_rps,
 * holding at most twice that (a tenant idle for two seconds may send a burst of
 * 2 × burst_rps requests at once, then burst_rps per second).
 *
 * Pure core: struct rl_bucket and rl_bucket_take, with the time passed in, no I/O, no
 * locks; table-tested in tests/unit/test_ratelimit.c.
 *
 * The shell, struct rl_table, keeps one bucket per tenant id, created on a tenant's first
 * request, in an RCU lock-free hash table (liburcu-bp). The rate is not stored: every call
 * passes the tier's current burst_rps, so a tier change or renewal (NOTIFY, which replaces
 * the tenant snapshot) takes effect on the next request while the bucket, keyed by id,
 * survives it. Each bucket has its own spinlock held for a few arithmetic operations; no
 * lock is shared between tenants, and a request costs one hash lookup: O(1).
 *
 * Memory: 64 bytes per tenant that sent a request since its bucket was last swept
 * (rl_sweep drops buckets idle long enough to be full again, which loses nothing); tenants
 * that only sit in the tenant table cost nothing here.
 *
 * Threads: rl_take from any thread (urcu-bp registers readers itself); rl_sweep from one
 * thread at a time; rl_table_free when no other call can run. */
#ifndef RATELIMIT_H
#define RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tokens are counted in millionths, so any rate refills smoothly at microsecond steps. */
#define RL_UNIT 1000000LL

struct rl_bucket {
    int64_t tokens;  /* in RL_UNIT per request; -1 marks a bucket never used (starts full) */
    int64_t last_us; /* monotonic time of the last refill */
};

#define RL_BUCKET_INIT                                                                             \
    {                                                                                              \
        .tokens = -1, .last_us = 0                                                                 \
    }

/* Capacity of a bucket for a rate, in requests. */
static inline int64_t rl_capacity(int32_t rps)
{
    return 2 * (int64_t)rps;
}

/* Pure: refills b for the time since its last refill at `rps` per second (capped at the
 * capacity; time that goes backwards refills nothing and becomes the new base), then takes
 * `cost` requests if they are there. Returns true when taken. On false, *retry_after_ms
 * (if not NULL) is how long until `cost` requests will be there. rps must be > 0. */
__attribute__((warn_unused_result)) bool rl_bucket_take(struct rl_bucket *b, int32_t rps,
                                                        int64_t now_us, uint32_t cost,
                                                        int64_t *retry_after_ms);

/* Pure: whole requests left in b at now_us (after a refill that is not stored). */
int64_t rl_bucket_available(const struct rl_bucket *b, int32_t rps, int64_t now_us);

struct rl_table;

struct rl_table *rl_table_new(void);
void rl_table_free(struct rl_table *t);

/* Takes one request from the tenant's bucket at `rps` (creating the bucket full on first
 * use). Returns true when allowed; otherwise *retry_after_ms says when to come back. When
 * a new bucket cannot be allocated the request is allowed: a limiter must not turn memory
 * pressure into an outage. */
__attribute__((warn_unused_result)) bool rl_take(struct rl_table *t, int64_t tenant_id, int32_t rps,
                                                 int64_t now_us, int64_t *retry_after_ms);

/* Drops buckets not touched for idle_us (>= 2 s makes this lossless: such a bucket is
 * full again, which is what a new one is). Returns how many were dropped. */
size_t rl_sweep(struct rl_table *t, int64_t now_us, int64_t idle_us);
/* Number of buckets held. */
size_t rl_count(struct rl_table *t);

#endif
