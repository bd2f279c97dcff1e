/* usage_flush — the thread that writes the local quota counts (quota) to usage_daily and
 * feeds PostgreSQL's totals back, on its own PostgreSQL connection.
 *
 * It flushes when quota kicks it (a tenant filled its batch, quota_flush_batch) or
 * QUOTA_FLUSH_INTERVAL_MS after the last flush, whichever comes first: one statement
 * (gw_usage_add) in one transaction per flush, whatever the number of tenants. While
 * PostgreSQL is unreachable, read-only (a standby) or switching primaries it keeps the
 * drained counts (merged per tenant and day, so memory stays bounded by the tenants
 * served) and retries them with the next flush, on whichever server is the primary then;
 * the request path never waits for it. A transaction the connection lost before COMMIT
 * was sent added nothing and is sent again; one whose COMMIT answer was lost may have
 * added its counts, so they are dropped and logged (usage_flush_unknown), never counted
 * twice. usage_flush_stop drains and flushes one last time (SIGTERM).
 * A crash loses what was counted since the last successful flush: one interval normally,
 * everything counted during an outage of PostgreSQL (docs/LIMITS.md).
 *
 * It also sweeps the burst buckets that are full again (rl_sweep) once a minute, when
 * given a table.
 *
 * Ownership: the quota and ratelimit tables are the caller's and must outlive the flusher.
 * usage_flush_kick matches quota_table_new's kick callback. */
#ifndef USAGE_FLUSH_H
#define USAGE_FLUSH_H

#include <stdbool.h>
#include <stdint.h>

#include "limits/quota.h"
#include "limits/ratelimit.h"

struct usage_flush;

/* Creates the flusher (not yet running): quota_table_new needs its kick closure first. */
struct usage_flush *usage_flush_new(const char *conninfo);
/* Starts the thread over `quota` (and `buckets` to sweep, may be NULL). */
__attribute__((warn_unused_result)) bool
usage_flush_start(struct usage_flush *f, struct quota_table *quota, struct rl_table *buckets);
/* quota's kick callback: wakes the thread for a flush now. Any thread. */
void usage_flush_kick(void *flusher);
/* Stops the thread after a last drain and flush (bounded by a few seconds when PostgreSQL
 * is unreachable; what is then still unwritten is logged as lost), and frees f. */
void usage_flush_stop(struct usage_flush *f);

/* Counters for tests and metrics. */
struct usage_flush_stats {
    uint64_t flushes;          /* successful statements */
    uint64_t failures;         /* failed attempts */
    uint64_t rows_written;     /* rows sent in successful statements */
    uint64_t held_rows;        /* rows waiting for PostgreSQL now */
    uint64_t max_during_flush; /* most requests counted while one statement ran */
};
void usage_flush_stats(struct usage_flush *f, struct usage_flush_stats *out);

/* Pure: sorts rows by (tenant_id, day) and merges duplicates (amounts added); returns the
 * new count. The statement needs each key once, in a stable order. */
size_t usage_flush_merge(struct quota_row *rows, size_t n);

#endif
