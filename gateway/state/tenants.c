/* tenants — the in-memory tenant table on RCU hash tables, in compact snapshots. */
#define _LGPL_SOURCE
#include <urcu-bp.h>

#include <urcu/rculfhash.h>

#include "state/tenants.h"

#include <malloc.h>
#include <openssl/crypto.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A tier's parameters, shared by all its tenants. Immutable once published and kept until
 * the store is freed, so a reader may follow a snapshot's pointer without more care. */
struct tenant_tier {
    struct tenant_tier *next;
    int32_t burst_rps;
    int32_t burst_size;
    int64_t daily_quota;
    char id[TENANT_TIER_MAX + 1];
};

struct tenant {
    struct cds_lfht_node by_id;
    struct cds_lfht_node by_token;
    struct cds_lfht_node by_handle;
    const struct tenant_tier *tier;
    int64_t id;
    int64_t valid_until;
    uint32_t generation;
    bool suspended;
    uint8_t token_hash[32];
    uint8_t digest_ha1[16];
    char handle[]; /* NUL-terminated, allocated to its length */
};

/* What call_rcu needs to free a replaced snapshot: allocated only when one is replaced,
 * so a live snapshot carries no rcu_head. */
struct tenant_retired {
    struct rcu_head rcu;
    struct tenant *tenant;
};

#define TIER_BUCKETS 64

struct tenant_store {
    struct cds_lfht *by_id;
    struct cds_lfht *by_token;
    struct cds_lfht *by_handle;
    struct tenant_tier *tiers[TIER_BUCKETS]; /* writer side only */
    size_t count;                            /* writer side only */
    unsigned long buckets;                   /* writer side only: each table's size */
    size_t tier_count;                       /* writer side only */
    size_t bytes;                            /* writer side only */
};

static unsigned long hash_bytes(const void *data, size_t len)
{
    /* FNV-1a, 64-bit: keys are short; token hashes are already uniform. */
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return (unsigned long)h;
}

/* The id itself: ids come from an identity column, so they are dense and spread evenly
 * over the buckets, and a full load (in id order, as the table was filled) then walks the
 * id table's buckets in order instead of at random, a cache miss fewer per tenant. */
static unsigned long hash_id(int64_t id)
{
    return (unsigned long)id;
}

static unsigned long hash_token(const uint8_t hash[32])
{
    unsigned long h;
    memcpy(&h, hash, sizeof h);
    return h;
}

static int match_id(struct cds_lfht_node *node, const void *key)
{
    const struct tenant *t = caa_container_of(node, struct tenant, by_id);
    return t->id == *(const int64_t *)key;
}

static int match_token(struct cds_lfht_node *node, const void *key)
{
    const struct tenant *t = caa_container_of(node, struct tenant, by_token);
    return CRYPTO_memcmp(t->token_hash, key, 32) == 0;
}

static int match_handle(struct cds_lfht_node *node, const void *key)
{
    const struct tenant *t = caa_container_of(node, struct tenant, by_handle);
    return strcmp(t->handle, key) == 0;
}

/* The tables' sizing. A bucket is a 16-byte list node and a tenant has a node in each of
 * the three tables, so buckets cost 48 bytes per tenant at one per node. They are kept
 * between a quarter and a half of the tenants instead (chains of two to four, 12 to 24
 * bytes per tenant). The tables' own lazy resizing (CDS_LFHT_AUTO_RESIZE) is not used: it
 * grows from a worker thread that waits for grace periods, and a million inserts in a row
 * outran it and walked chains thousands long (three quarters of the load's CPU time). */
#define TENANT_BUCKETS_MIN 1024UL

/* Grows every table to a power of two of at least expected / 2 buckets, once the
 * tenants outnumber four per bucket or a bulk load is announced. Writer side, outside
 * any read-side section: cds_lfht_resize waits for the readers. */
static void resize_for(struct tenant_store *store, size_t expected)
{
    unsigned long want = TENANT_BUCKETS_MIN;
    while (want < expected / 2 && want < (1UL << 30))
        want <<= 1;
    if (want <= store->buckets)
        return;
    struct cds_lfht *tables[] = {store->by_id, store->by_token, store->by_handle};
    for (size_t i = 0; i < 3; i++)
        cds_lfht_resize(tables[i], want);
    store->buckets = want;
}

struct tenant_store *tenants_new(void)
{
    struct tenant_store *store = calloc(1, sizeof *store);
    if (!store)
        return NULL;
    /* Sized by resize_for, not by the tables' own lazy resizing (see there). */
    store->buckets = TENANT_BUCKETS_MIN;
    store->by_id = cds_lfht_new(TENANT_BUCKETS_MIN, TENANT_BUCKETS_MIN, 0, 0, NULL);
    store->by_token = cds_lfht_new(TENANT_BUCKETS_MIN, TENANT_BUCKETS_MIN, 0, 0, NULL);
    store->by_handle = cds_lfht_new(TENANT_BUCKETS_MIN, TENANT_BUCKETS_MIN, 0, 0, NULL);
    if (!store->by_id || !store->by_token || !store->by_handle) {
        tenants_free(store);
        return NULL;
    }
    return store;
}

static void free_retired_rcu(struct rcu_head *head)
{
    struct tenant_retired *r = caa_container_of(head, struct tenant_retired, rcu);
    free(r->tenant);
    free(r);
}

/* Frees t after a grace period; t is already unlinked from every table. */
static void retire(struct tenant_store *store, struct tenant *t)
{
    store->bytes -= malloc_usable_size(t);
    struct tenant_retired *r = malloc(sizeof *r);
    if (r) {
        r->tenant = t;
        call_rcu(&r->rcu, free_retired_rcu);
        return;
    }
    /* Out of memory for the deferral: wait for the readers here instead. */
    synchronize_rcu();
    free(t);
}

/* Removes every node of a table; frees the entries when `owner` (the by_id table).
 * Called inside a read-side section. */
static void drain_table(struct cds_lfht *table, bool owner)
{
    struct cds_lfht_iter iter;
    cds_lfht_first(table, &iter);
    struct cds_lfht_node *node;
    while ((node = cds_lfht_iter_get_node(&iter)) != NULL) {
        cds_lfht_next(table, &iter);
        (void)cds_lfht_del(table, node);
        if (owner)
            free(caa_container_of(node, struct tenant, by_id));
    }
}

void tenants_free(struct tenant_store *store)
{
    if (!store)
        return;
    rcu_barrier(); /* snapshots already replaced are freed by call_rcu */
    rcu_read_lock();
    if (store->by_token)
        drain_table(store->by_token, false);
    if (store->by_handle)
        drain_table(store->by_handle, false);
    if (store->by_id)
        drain_table(store->by_id, true);
    rcu_read_unlock();
    /* Destroy outside the read-side section: it waits for a grace period. */
    struct cds_lfht *tables[] = {store->by_token, store->by_handle, store->by_id};
    for (size_t i = 0; i < 3; i++)
        if (tables[i])
            cds_lfht_destroy(tables[i], NULL);
    for (size_t b = 0; b < TIER_BUCKETS; b++)
        for (struct tenant_tier *tier = store->tiers[b], *next; tier; tier = next) {
            next = tier->next;
            free(tier);
        }
    free(store);
}

/* The tier version with exactly row's parameters, added when new; NULL when out of
 * memory. Writer side only. */
static const struct tenant_tier *intern_tier(struct tenant_store *store,
                                             const struct tenant_row *row)
{
    size_t len = strnlen(row->tier_id, TENANT_TIER_MAX);
    struct tenant_tier **bucket = &store->tiers[hash_bytes(row->tier_id, len) % TIER_BUCKETS];
    for (struct tenant_tier *tier = *bucket; tier; tier = tier->next)
        if (tier->burst_rps == row->burst_rps && tier->burst_size == row->burst_size &&
            tier->daily_quota == row->daily_quota && strncmp(tier->id, row->tier_id, len) == 0 &&
            tier->id[len] == '\0')
            return tier;
    struct tenant_tier *tier = calloc(1, sizeof *tier);
    if (!tier)
        return NULL;
    tier->burst_rps = row->burst_rps;
    tier->burst_size = row->burst_size;
    tier->daily_quota = row->daily_quota;
    memcpy(tier->id, row->tier_id, len);
    tier->next = *bucket;
    *bucket = tier;
    store->tier_count++;
    store->bytes += malloc_usable_size(tier);
    return tier;
}

static struct tenant *lookup_id(struct tenant_store *store, int64_t id)
{
    struct cds_lfht_iter iter;
    cds_lfht_lookup(store->by_id, hash_id(id), match_id, &id, &iter);
    struct cds_lfht_node *node = cds_lfht_iter_get_node(&iter);
    return node ? caa_container_of(node, struct tenant, by_id) : NULL;
}

/* Unlinks t from the token and handle tables. */
static void unlink_keys(struct tenant_store *store, struct tenant *t)
{
    (void)cds_lfht_del(store->by_token, &t->by_token);
    (void)cds_lfht_del(store->by_handle, &t->by_handle);
}

bool tenants_upsert(struct tenant_store *store, const struct tenant_row *row, uint64_t generation)
{
    const struct tenant_tier *tier = intern_tier(store, row);
    size_t handle_len = strnlen(row->handle, TENANT_HANDLE_MAX);
    struct tenant *fresh = tier ? malloc(offsetof(struct tenant, handle) + handle_len + 1) : NULL;
    if (!fresh)
        return false;
    memset(fresh, 0, offsetof(struct tenant, handle));
    fresh->tier = tier;
    fresh->id = row->id;
    fresh->valid_until = row->valid_until;
    fresh->generation = (uint32_t)generation;
    fresh->suspended = row->suspended;
    memcpy(fresh->token_hash, row->token_hash, sizeof fresh->token_hash);
    memcpy(fresh->digest_ha1, row->digest_ha1, sizeof fresh->digest_ha1);
    memcpy(fresh->handle, row->handle, handle_len);
    fresh->handle[handle_len] = '\0';
    cds_lfht_node_init(&fresh->by_id);
    cds_lfht_node_init(&fresh->by_token);
    cds_lfht_node_init(&fresh->by_handle);
    store->bytes += malloc_usable_size(fresh);

    rcu_read_lock();
    /* The id table first: replacing there finds the old snapshot without a lookup of its
     * own. Until the token and handle follow, a reader by those keys still finds the old
     * snapshot, which stays valid for the grace period: every reader finds one of the two. */
    struct cds_lfht_node *replaced_id =
        cds_lfht_add_replace(store->by_id, hash_id(row->id), match_id, &fresh->id, &fresh->by_id);
    struct tenant *old = replaced_id ? caa_container_of(replaced_id, struct tenant, by_id) : NULL;
    struct cds_lfht_node *replaced_token =
        cds_lfht_add_replace(store->by_token, hash_token(fresh->token_hash), match_token,
                             fresh->token_hash, &fresh->by_token);
    struct cds_lfht_node *replaced_handle =
        cds_lfht_add_replace(store->by_handle, hash_bytes(fresh->handle, handle_len), match_handle,
                             fresh->handle, &fresh->by_handle);
    /* A token or handle that moved to another tenant id displaces that tenant's key;
     * the database's unique constraints make this a transient state only. */
    (void)replaced_token;
    (void)replaced_handle;
    if (old) {
        unlink_keys(store, old);
        retire(store, old);
    } else {
        store->count++;
    }
    rcu_read_unlock();
    if (store->count > 4 * store->buckets)
        resize_for(store, store->count);
    return true;
}

void tenants_remove(struct tenant_store *store, int64_t id)
{
    rcu_read_lock();
    struct tenant *old = lookup_id(store, id);
    if (old && cds_lfht_del(store->by_id, &old->by_id) == 0) {
        unlink_keys(store, old);
        store->count--;
        retire(store, old);
    }
    rcu_read_unlock();
}

size_t tenants_sweep(struct tenant_store *store, uint64_t generation)
{
    size_t removed = 0;
    struct cds_lfht_iter iter;
    struct cds_lfht_node *node;
    rcu_read_lock();
    /* Iterated by hand: cds_lfht_for_each_entry forms its end pointer from NULL. */
    cds_lfht_first(store->by_id, &iter);
    while ((node = cds_lfht_iter_get_node(&iter)) != NULL) {
        struct tenant *t = caa_container_of(node, struct tenant, by_id);
        cds_lfht_next(store->by_id, &iter);
        if (t->generation != (uint32_t)generation && cds_lfht_del(store->by_id, &t->by_id) == 0) {
            unlink_keys(store, t);
            store->count--;
            removed++;
            retire(store, t);
        }
    }
    rcu_read_unlock();
    return removed;
}

void tenants_reserve(struct tenant_store *store, size_t expected)
{
    resize_for(store, expected);
}

size_t tenants_count(struct tenant_store *store)
{
    return store->count;
}

size_t tenants_bytes(struct tenant_store *store)
{
    return store->bytes;
}

size_t tenants_tier_count(struct tenant_store *store)
{
    return store->tier_count;
}

/* Copies a snapshot into the request's value type. Inside a read-side section. */
static void copy_out(const struct tenant *t, struct tenant_row *out)
{
    out->id = t->id;
    memcpy(out->token_hash, t->token_hash, sizeof out->token_hash);
    memcpy(out->digest_ha1, t->digest_ha1, sizeof out->digest_ha1);
    memcpy(out->handle, t->handle, strlen(t->handle) + 1); /* at most TENANT_HANDLE_MAX */
    memcpy(out->tier_id, t->tier->id, sizeof out->tier_id);
    out->burst_rps = t->tier->burst_rps;
    out->burst_size = t->tier->burst_size;
    out->daily_quota = t->tier->daily_quota;
    out->valid_until = t->valid_until;
    out->suspended = t->suspended;
}

bool tenants_find_token(struct tenant_store *store, const uint8_t hash[32], struct tenant_row *out)
{
    struct cds_lfht_iter iter;
    rcu_read_lock();
    cds_lfht_lookup(store->by_token, hash_token(hash), match_token, hash, &iter);
    struct cds_lfht_node *node = cds_lfht_iter_get_node(&iter);
    if (node)
        copy_out(caa_container_of(node, struct tenant, by_token), out);
    rcu_read_unlock();
    return node != NULL;
}

bool tenants_find_handle(struct tenant_store *store, const char *handle, struct tenant_row *out)
{
    struct cds_lfht_iter iter;
    rcu_read_lock();
    cds_lfht_lookup(store->by_handle, hash_bytes(handle, strlen(handle)), match_handle, handle,
                    &iter);
    struct cds_lfht_node *node = cds_lfht_iter_get_node(&iter);
    if (node)
        copy_out(caa_container_of(node, struct tenant, by_handle), out);
    rcu_read_unlock();
    return node != NULL;
}

bool tenants_find_id(struct tenant_store *store, int64_t id, struct tenant_row *out)
{
    rcu_read_lock();
    const struct tenant *t = lookup_id(store, id);
    if (t)
        copy_out(t, out);
    rcu_read_unlock();
    return t != NULL;
}
