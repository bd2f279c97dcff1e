/* tenant_feed — hands parsed tenant rows from the thread that reads them to a second
 * thread that publishes them, so a full load parses and inserts on two cores.
 *
 * pgsync's full load reads a million rows from COPY, parses and unwraps each (its own
 * thread), while the RCU tables' inserts, which wait on cache misses, run on the feed's
 * writer thread (docs/BENCHMARKS.md, "A million tenants"). Rows travel in batches through a
 * small ring; the reader blocks only when every batch is still queued.
 *
 * Ownership and threads:
 *   - The store's writer side (tenants.h: "one thread at a time") belongs to the feed's
 *     writer thread from tenant_feed_start until tenant_feed_finish returns; the caller
 *     calls no tenants_ writer function in between. Readers are not affected.
 *   - tenant_feed_slot, tenant_feed_push and tenant_feed_finish are the reading thread's:
 *     one thread only. The slot is the caller's until tenant_feed_push hands it over; the
 *     feed owns the batches, and a row is parsed straight into its slot (no copy).
 *   - tenant_feed_finish publishes what is queued, joins the writer thread and frees the
 *     feed; afterwards the store's writer side is the caller's again (the join orders
 *     every insert before it). */
#ifndef TENANT_FEED_H
#define TENANT_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "state/tenants.h"

struct tenant_feed;

/* Starts the writer thread, which upserts every row under `generation`. NULL when out of
 * memory or no thread can be started (the caller then upserts rows itself). */
struct tenant_feed *tenant_feed_start(struct tenant_store *store, uint64_t generation);

/* Where the next row goes: the same slot until tenant_feed_push (a row that did not
 * parse is simply not pushed, and its slot is reused). */
struct tenant_row *tenant_feed_slot(struct tenant_feed *feed);
/* Hands the slot's row to the writer thread; waits while every batch is still queued. */
void tenant_feed_push(struct tenant_feed *feed);

/* Publishes the rest, stops the writer and frees the feed. False when an upsert ran out
 * of memory (the rows after it were not published). */
__attribute__((warn_unused_result)) bool tenant_feed_finish(struct tenant_feed *feed);

#endif
