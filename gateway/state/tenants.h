/* tenants — every tenant in memory, for lock-free lookups on the request path.
 *
 * Three RCU lock-free hash tables (liburcu-bp, rculfhash) index the same snapshots by
 * id, by token hash (path token, Bearer, Basic) and by handle (Digest username).
 * Readers never block: they look up inside tenants_read_lock()/unlock() and copy what
 * they need before unlocking. A snapshot is immutable once published; one writer thread
 * (pgsync) replaces it whole on every NOTIFY and frees the old one after a grace period.
 *
 * Memory: one struct tenant (~180 bytes) plus three hash nodes per tenant. */
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
/* Publishes a copy of row, replacing the snapshot with the same id (and dropping its
 * old token and handle keys if they changed). `generation` marks it as seen by the
 * current full load (see tenants_sweep). Returns false only when out of memory. */
__attribute__((warn_unused_result)) bool
tenants_upsert(struct tenant_store *store, const struct tenant_row *row, uint64_t generation);
void tenants_remove(struct tenant_store *store, int64_t id);
/* After a full reload: removes every tenant whose generation is older. Returns how many. */
size_t tenants_sweep(struct tenant_store *store, uint64_t generation);
size_t tenants_count(struct tenant_store *store);

/* Reader side. Lookups return a snapshot valid until tenants_read_unlock. */
void tenants_read_lock(void);
void tenants_read_unlock(void);
const struct tenant_row *tenants_find_token(struct tenant_store *store, const uint8_t hash[32]);
const struct tenant_row *tenants_find_handle(struct tenant_store *store, const char *handle);
const struct tenant_row *tenants_find_id(struct tenant_store *store, int64_t id);

#endif
