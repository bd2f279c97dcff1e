/* quota — the daily quota (UTC day), shared by every gateway replica through PostgreSQL
 * without putting PostgreSQL on the request path.
 *
 * Each replica counts weighted requests per tenant locally. A flusher (usage_flush) drains
 * the counts when one tenant has counted its batch (quota_flush_batch: 1 % of its daily
 * quota, at least QUOTA_FLUSH_MIN_BATCH, and QUOTA_FLUSH_MIN_BATCH again once what is left
 * falls under two batches) or QUOTA_FLUSH_INTERVAL_MS after the last flush, whichever
 * comes first, adds them to usage_daily in one statement, and feeds PostgreSQL's new
 * totals back (quota_apply_total): that total, which includes every replica's flushed
 * counts, replaces what this replica believed — lowering what is left when other replicas
 * served the tenant, raising it when the row was reset. The quota itself comes with every
 * call from the tenant snapshot, so a renewal or tier change (NOTIFY) applies to the next
 * request. A replica refuses locally once its view has nothing left for the call's weight.
 *
 * What this replica believes used today = PostgreSQL's last total + counts drained but not
 * yet confirmed + counts not yet drained. So its own requests are never lost from view,
 * also while PostgreSQL is unreachable; what it cannot see is the other replicas'
 * unflushed counts: at most one batch each, so the overshoot across replicas is at most
 * replicas x max(QUOTA_FLUSH_MIN_BATCH, 1 % of the daily quota) weighted requests plus what
 * is served while one flush statement runs (docs/LIMITS.md).
 *
 * Pure core: struct quota_counts and the quota_counts_* functions (the day, the weights and
 * the time are parameters; no I/O, no locks), table-tested in
 * tests/unit/gateway/limits/test_quota.c.
 *
 * Shell: struct quota_table, one entry per tenant id (created on first use; never in the
 * replaced tenant snapshot, so counts survive tier changes) in an RCU lock-free hash table,
 * each with its own spinlock; an entry with new counts is pushed once onto a lock-free
 * list for the flusher, so a flush touches only tenants that were served. O(1) per
 * request, no lock shared between tenants. Memory: 80 bytes (one malloc) per tenant served
 * since the gateway started; tenants that only sit in the tenant table cost nothing here.
 *
 * Threads: quota_charge, quota_peek from any thread; quota_drain and quota_apply_total from
 * one flusher thread at a time; quota_table_free when nothing else runs. */
#ifndef QUOTA_H
#define QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The smallest batch, in weighted requests, and the batch near the end of a quota. */
#define QUOTA_FLUSH_MIN_BATCH 100
/* A tenant's batch elsewhere is this fraction of its daily quota (1 / QUOTA_FLUSH_SHARE). */
#define QUOTA_FLUSH_SHARE 100
/* The longest a count waits for a flush when no batch fills. */
#define QUOTA_FLUSH_INTERVAL_MS 5000

/* Days since 1970-01-01, UTC. */
static inline int32_t quota_day(int64_t unix_s)
{
    return (int32_t)((unix_s >= 0 ? unix_s : unix_s - 86399) / 86400);
}

/* Unix time when `day` ends (the next UTC midnight): X-RateLimit-Reset. */
static inline int64_t quota_day_end(int32_t day)
{
    return ((int64_t)day + 1) * 86400;
}

/* One tenant's counts for the current day. */
struct quota_counts {
    int32_t day;         /* the day the fields below count; 0 = never used */
    int32_t carry_day;   /* the day of `carry` */
    int64_t confirmed;   /* usage_daily.used as PostgreSQL last answered it for `day` */
    int64_t unconfirmed; /* drained for `day`, PostgreSQL's answer not back yet */
    int64_t pending;     /* counted for `day`, not drained yet */
    int64_t carry;       /* counted on the previous day, not drained yet */
};

/* What a tenant has, for the X-RateLimit-* headers and GET /v1/usage. */
struct quota_status {
    int64_t limit;     /* the daily quota */
    int64_t used;      /* today, as this replica sees it */
    int64_t remaining; /* max(0, limit - used) */
    int64_t reset;     /* unix time of the next UTC midnight */
};

/* Pure: moves c to `day` when it is later (what was pending moves to carry, to be drained
 * for its own day; the new day starts from zero). A day earlier than c->day (a clock set
 * back) keeps counting on c->day. */
void quota_counts_roll(struct quota_counts *c, int32_t day);

/* Pure: the status of c on `day` under `limit`. */
void quota_counts_status(const struct quota_counts *c, int32_t day, int64_t limit,
                         struct quota_status *out);

/* Pure: rolls c to `day`, then counts `weight` if it fits under `limit` (used + weight <=
 * limit). Returns true when counted. */
__attribute__((warn_unused_result)) bool quota_counts_charge(struct quota_counts *c, int32_t day,
                                                             int64_t limit, uint32_t weight);

/* One drained count: what the flusher adds to usage_daily. */
struct quota_row {
    int64_t tenant_id;
    int32_t day;
    int64_t amount;
};

/* Pure: takes c's undrained counts into out[0..1] (carry first; at most 2 rows, zero
 * amounts left out) and marks the current day's part unconfirmed. Returns the row count. */
size_t quota_counts_drain(struct quota_counts *c, int64_t tenant_id, struct quota_row out[2]);

/* Pure: PostgreSQL answered `total` for `day` after adding `amount` drained from c: the
 * total replaces the confirmed count and the amount is no longer unconfirmed. An answer for
 * another day than c's current one changes nothing. */
void quota_counts_apply(struct quota_counts *c, int32_t day, int64_t amount, int64_t total);

/* Pure: the weighted requests a replica counts for one tenant before it flushes:
 * max(QUOTA_FLUSH_MIN_BATCH, limit / QUOTA_FLUSH_SHARE), and QUOTA_FLUSH_MIN_BATCH once
 * `remaining` (this replica's view) is under twice that amount, so that the last stretch
 * of a quota is shared in small batches. This is the per-replica term of the overshoot
 * bound. */
int64_t quota_flush_batch(int64_t limit, int64_t remaining);

/* Pure: whether c's undrained counts fill its batch under `limit` on c's day. */
bool quota_counts_batch_full(const struct quota_counts *c, int64_t limit);

/* Pure: whether a flush is due: some tenant filled its batch since the last drain, or
 * `elapsed_ms` since the last flush reached the interval (with anything to flush). */
bool quota_flush_due(bool batch_full, int64_t elapsed_ms, bool anything);

struct quota_table;

/* `kick` (may be NULL) is called, from the request thread, when a tenant's undrained counts
 * fill its batch (quota_flush_batch), once per tenant and drain: the flusher's wake-up. */
struct quota_table *quota_table_new(void (*kick)(void *cls), void *kick_cls);
void quota_table_free(struct quota_table *t);

/* Counts `weight` for the tenant on the UTC day of now_unix when it fits under `limit`.
 * Returns true when counted; *out (not NULL) is the status after the call either way.
 * Out of memory for a new entry: allowed, uncounted (a limiter must not cause an outage). */
__attribute__((warn_unused_result)) bool quota_charge(struct quota_table *t, int64_t tenant_id,
                                                      int64_t limit, uint32_t weight,
                                                      int64_t now_unix, struct quota_status *out);

/* The tenant's status without counting anything. */
void quota_peek(struct quota_table *t, int64_t tenant_id, int64_t limit, int64_t now_unix,
                struct quota_status *out);

/* Flusher side. Appends every undrained count to *rows (*nrows rows, grown with realloc up
 * to *cap; the caller frees *rows) and resets the batch trigger's request counter. Returns
 * false when out of memory: what was not drained stays in the table, nothing is lost. A
 * drained count stays unconfirmed in this replica's view until quota_apply_total: while
 * PostgreSQL is unreachable the flusher keeps the rows and retries them. */
__attribute__((warn_unused_result)) bool quota_drain(struct quota_table *t, struct quota_row **rows,
                                                     size_t *nrows, size_t *cap);

/* Feeds one PostgreSQL answer back: after adding `amount` for (tenant_id, day), the total
 * is `total`. */
void quota_apply_total(struct quota_table *t, int64_t tenant_id, int32_t day, int64_t amount,
                       int64_t total);

/* Requests counted since the last drain. */
int64_t quota_unflushed_requests(struct quota_table *t);
/* Tenants that filled their batch since the last drain. */
int64_t quota_batches_full(struct quota_table *t);
size_t quota_count(struct quota_table *t);

#endif
