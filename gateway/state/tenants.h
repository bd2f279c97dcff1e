/* tenants — every tenant in memory, for lock-free lookups on the request path.
 *
 * Three RCU lock-free hash tables (liburcu-bp, rculfhash) index the same snapshots by
 * id, by token hash (path token, Bearer, Basic) and by handle (Digest username).
 * Readers never block: a lookup copies the tenant into the caller's struct tenant_row
 * inside its own read-side section. A snapshot is immutable once published; one writer
 * thread (pgsync; during a full load the writer thread of state/tenant_feed.h instead)
 * replaces it whole on every NOTIFY and frees the old one after a grace period.
 *
 * Memory: a snapshot is compact (its three hash nodes, the keys, the dates and a pointer
 * to its tier; the handle only as long as it is): 140 bytes for a schema handle, 160 with
 * the allocator's header, plus 12 to 24 bytes of hash buckets (tenants.c says why). A
 * tier's parameters live once per tier version (tenants_tier_count), not in every tenant;
 * a tier edited N times keeps N+1 small versions until the store is freed.
 * docs/BENCHMARKS.md measures a million. */
#ifndef TENANTS_H
#define TENANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TENANT_HANDLE_MAX 32
#define TENANT_TIER_MAX   32

/* The fields a request needs; what pgsync loads from PostgreSQL. */
struct tenant_row {
    int64_t id;
    uint8_t token_hash[32];
    uint8_t digest_ha1[16];
    char handle[TENANT_HANDLE_MAX + 1];
    char tier_id[TENANT_TIER_MAX + 1];
    int32_t burst_rps;  /* the tier's sustained rate, requests per second */
    int32_t burst_size; /* the tier's burst bucket, requests (ratelimit.h) */
    int64_t daily_quota;
    int64_t valid_until; /* unix seconds */
    bool suspended;
};

struct tenant_store;

struct tenant_store *tenants_new(void);
/* Frees every snapshot; no reader may be running. */
void tenants_free(struct tenant_store *store);

/* Writer side: one thread at a time. */
/* The generation is compared for equality only (tenants_sweep), so it may wrap. */
/* Publishes a copy of row, replacing the snapshot with the same id (and dropping its
 * old token and handle keys if they changed). `generation` marks it as seen by the
 * current full load (see tenants_sweep). Returns false only when out of memory. */
__attribute__((warn_unused_result)) bool
tenants_upsert(struct tenant_store *store, const struct tenant_row *row, uint64_t generation);
void tenants_remove(struct tenant_store *store, int64_t id);
/* After a full reload: removes every tenant whose generation is not `generation`.
 * Returns how many. */
size_t tenants_sweep(struct tenant_store *store, uint64_t generation);
size_t tenants_count(struct tenant_store *store);
/* Sizes the hash tables for about `expected` tenants before a bulk load. Not inside a
 * read-side section. */
void tenants_reserve(struct tenant_store *store, size_t expected);

/* Writer side: bytes the snapshots and tier versions hold (the allocator's usable
 * sizes; the hash tables' buckets are not counted). */
size_t tenants_bytes(struct tenant_store *store);
size_t tenants_tier_count(struct tenant_store *store);

/* Reader side, from any registered thread: copies the tenant into *out and returns true,
 * or returns false when there is none. */
bool tenants_find_token(struct tenant_store *store, const uint8_t hash[32], struct tenant_row *out);
bool tenants_find_handle(struct tenant_store *store, const char *handle, struct tenant_row *out);
bool tenants_find_id(struct tenant_store *store, int64_t id, struct tenant_row *out);

#endif
