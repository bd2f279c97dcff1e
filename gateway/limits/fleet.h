/* fleet — how many gateway replicas share this database, so that each takes its share of
 * a plan's burst: the burst a plan promises holds for the fleet, not per replica.
 *
 * Every replica beats into gateway_replicas (migrations/0006) once a second (FLEET_BEAT_MS)
 * on a connection of its own and reads back how many replicas beat within FLEET_TTL_MS,
 * itself included: N. A request then costs N tokens of the tenant's bucket (struct rl_limit
 * .replicas), which is the bucket cut to rate/N and burst/N exactly, with no rounding: a
 * balancer that spreads a tenant's requests evenly gives it the plan's rate over the fleet.
 * One that sends all of a tenant's requests to one replica gives it rate/N (the price of
 * not sharing a bucket across machines on every request).
 *
 * While the count changes: a replica that joins is counted by the others at their next
 * beat (≤ 1 s; until then the fleet allows up to (N+1)/N of the rate); one that stops
 * cleanly deletes its row (counted out at the others' next beat); one that dies is counted
 * until its beat is older than FLEET_TTL_MS (the fleet then allows (N-1)/N of the rate for
 * up to that long). While PostgreSQL is away the last count holds (fleet_next).
 *
 * Heartbeats stay in their database: a region's replicas share a tenant's burst among
 * themselves (docs/DEPLOYMENT.md).
 *
 * Pure core: fleet_next, table-tested. Threads: fleet_replicas from any thread. */
#ifndef FLEET_H
#define FLEET_H

#include <stdbool.h>
#include <stdint.h>

#define FLEET_BEAT_MS 1000
#define FLEET_TTL_MS  3500
/* A count beyond this is an operator's mistake or an attack on the table: capped. */
#define FLEET_MAX 1024

/* Pure: the count to use after a beat. answered: the beat's statement returned `counted`
 * (replicas within the TTL, this one included); otherwise the previous count holds. Never
 * below 1 nor above FLEET_MAX. */
uint32_t fleet_next(uint32_t previous, bool answered, int64_t counted);

struct fleet;

/* Starts the beat on its own connection to conninfo. NULL when out of memory or the thread
 * cannot start. */
struct fleet *fleet_start(const char *conninfo);
/* Deletes this replica's row (bounded: one attempt) and stops. NULL is fine. */
void fleet_stop(struct fleet *f);
/* Replicas sharing the burst now (1 before the first beat, and for NULL). */
uint32_t fleet_replicas(const struct fleet *f);

#endif
