/* tenants — the in-memory tenant table on RCU hash tables. */
#define _LGPL_SOURCE
#include <urcu-bp.h>

#include <urcu/rculfhash.h>

#include "state/tenants.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

struct tenant {
    struct tenant_row row;
    uint64_t generation;
    struct cds_lfht_node by_id;
    struct cds_lfht_node by_token;
    struct cds_lfht_node by_handle;
    struct rcu_head rcu;
};

struct tenant_store {
    struct cds_lfht *by_id;
    struct cds_lfht *by_token;
    struct cds_lfht *by_handle;
    size_t count; /* writer side only */
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

static unsigned long hash_id(int64_t id)
{
    return hash_bytes(&id, sizeof id);
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
    return t->row.id == *(const int64_t *)key;
}

static int match_token(struct cds_lfht_node *node, const void *key)
{
    const struct tenant *t = caa_container_of(node, struct tenant, by_token);
    return CRYPTO_memcmp(t->row.token_hash, key, 32) == 0;
}

static int match_handle(struct cds_lfht_node *node, const void *key)
{
    const struct tenant *t = caa_container_of(node, struct tenant, by_handle);
    return strcmp(t->row.handle, key) == 0;
}

struct tenant_store *tenants_new(void)
{
    struct tenant_store *store = calloc(1, sizeof *store);
    if (!store)
        return NULL;
    int flags = CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING;
    store->by_id = cds_lfht_new(1024, 1024, 0, flags, NULL);
    store->by_token = cds_lfht_new(1024, 1024, 0, flags, NULL);
    store->by_handle = cds_lfht_new(1024, 1024, 0, flags, NULL);
    if (!store->by_id || !store->by_token || !store->by_handle) {
        tenants_free(store);
        return NULL;
    }
    return store;
}

static void free_tenant_rcu(struct rcu_head *head)
{
    free(caa_container_of(head, struct tenant, rcu));
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
    free(store);
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
    struct tenant *fresh = calloc(1, sizeof *fresh);
    if (!fresh)
        return false;
    fresh->row = *row;
    fresh->row.handle[TENANT_HANDLE_MAX] = '\0';
    fresh->row.tier_id[TENANT_TIER_MAX] = '\0';
    fresh->generation = generation;
    cds_lfht_node_init(&fresh->by_id);
    cds_lfht_node_init(&fresh->by_token);
    cds_lfht_node_init(&fresh->by_handle);

    rcu_read_lock();
    struct tenant *old = lookup_id(store, row->id);
    /* Publish the new keys first, so a reader always finds one of the two snapshots. */
    struct cds_lfht_node *replaced_token =
        cds_lfht_add_replace(store->by_token, hash_token(fresh->row.token_hash), match_token,
                             fresh->row.token_hash, &fresh->by_token);
    struct cds_lfht_node *replaced_handle = cds_lfht_add_replace(
        store->by_handle, hash_bytes(fresh->row.handle, strlen(fresh->row.handle)), match_handle,
        fresh->row.handle, &fresh->by_handle);
    cds_lfht_add_replace(store->by_id, hash_id(row->id), match_id, &fresh->row.id, &fresh->by_id);
    /* A token or handle that moved to another tenant id displaces that tenant's key;
     * the database's unique constraints make this a transient state only. */
    (void)replaced_token;
    (void)replaced_handle;
    if (old) {
        unlink_keys(store, old);
        call_rcu(&old->rcu, free_tenant_rcu);
    } else {
        store->count++;
    }
    rcu_read_unlock();
    return true;
}

void tenants_remove(struct tenant_store *store, int64_t id)
{
    rcu_read_lock();
    struct tenant *old = lookup_id(store, id);
    if (old && cds_lfht_del(store->by_id, &old->by_id) == 0) {
        unlink_keys(store, old);
        store->count--;
        call_rcu(&old->rcu, free_tenant_rcu);
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
        if (t->generation < generation && cds_lfht_del(store->by_id, &t->by_id) == 0) {
            unlink_keys(store, t);
            store->count--;
            removed++;
            call_rcu(&t->rcu, free_tenant_rcu);
        }
    }
    rcu_read_unlock();
    return removed;
}

size_t tenants_count(struct tenant_store *store)
{
    return store->count;
}

void tenants_read_lock(void)
{
    rcu_read_lock();
}

void tenants_read_unlock(void)
{
    rcu_read_unlock();
}

const struct tenant_row *tenants_find_token(struct tenant_store *store, const uint8_t hash[32])
{
    struct cds_lfht_iter iter;
    cds_lfht_lookup(store->by_token, hash_token(hash), match_token, hash, &iter);
    struct cds_lfht_node *node = cds_lfht_iter_get_node(&iter);
    return node ? &caa_container_of(node, struct tenant, by_token)->row : NULL;
}

const struct tenant_row *tenants_find_handle(struct tenant_store *store, const char *handle)
{
    struct cds_lfht_iter iter;
    cds_lfht_lookup(store->by_handle, hash_bytes(handle, strlen(handle)), match_handle, handle,
                    &iter);
    struct cds_lfht_node *node = cds_lfht_iter_get_node(&iter);
    return node ? &caa_container_of(node, struct tenant, by_handle)->row : NULL;
}

const struct tenant_row *tenants_find_id(struct tenant_store *store, int64_t id)
{
    struct tenant *t = lookup_id(store, id);
    return t ? &t->row : NULL;
}
