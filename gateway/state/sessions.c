/* sessions — per-tenant served tip and accepted nodes; see sessions.h. */
#include "state/sessions.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <urcu-bp.h>
#include <urcu/rculfhash.h>

struct session_entry {
    struct cds_lfht_node node;
    int64_t tenant_id;
    _Atomic int64_t served_tip;
    _Atomic uint64_t accepted;
    _Atomic int64_t accepted_until_ms;
    struct rcu_head rcu;
};

struct sessions {
    struct cds_lfht *ht;
};

static unsigned long hash_id(int64_t id)
{
    uint64_t x = (uint64_t)id * 0x9E3779B97F4A7C15ULL; /* Fibonacci hashing */
    return (unsigned long)(x ^ (x >> 29));
}

static int match_id(struct cds_lfht_node *node, const void *key)
{
    return caa_container_of(node, struct session_entry, node)->tenant_id == *(const int64_t *)key;
}

struct sessions *sessions_new(void)
{
    struct sessions *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ht = cds_lfht_new(1024, 1024, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, NULL);
    if (!s->ht) {
        free(s);
        return NULL;
    }
    return s;
}

static void free_entry_rcu(struct rcu_head *head)
{
    free(caa_container_of(head, struct session_entry, rcu));
}

void sessions_free(struct sessions *s)
{
    if (!s)
        return;
    struct cds_lfht_iter iter;
    struct cds_lfht_node *node;
    rcu_read_lock();
    for (cds_lfht_first(s->ht, &iter); (node = cds_lfht_iter_get_node(&iter)) != NULL;
         cds_lfht_next(s->ht, &iter)) {
        if (cds_lfht_del(s->ht, node) == 0)
            call_rcu(&caa_container_of(node, struct session_entry, node)->rcu, free_entry_rcu);
    }
    rcu_read_unlock();
    rcu_barrier();
    cds_lfht_destroy(s->ht, NULL);
    free(s);
}

/* The tenant's entry; created when missing and create is set. Inside a read-side section. */
static struct session_entry *entry_get(struct sessions *s, int64_t tenant_id, bool create)
{
    unsigned long hash = hash_id(tenant_id);
    struct cds_lfht_iter iter;
    cds_lfht_lookup(s->ht, hash, match_id, &tenant_id, &iter);
    struct cds_lfht_node *node = cds_lfht_iter_get_node(&iter);
    if (node)
        return caa_container_of(node, struct session_entry, node);
    if (!create)
        return NULL;
    struct session_entry *fresh = calloc(1, sizeof *fresh);
    if (!fresh)
        return NULL;
    cds_lfht_node_init(&fresh->node);
    fresh->tenant_id = tenant_id;
    node = cds_lfht_add_unique(s->ht, hash, match_id, &tenant_id, &fresh->node);
    if (node != &fresh->node)
        free(fresh); /* another thread created it first: never published, free at once */
    return caa_container_of(node, struct session_entry, node);
}

struct session_view sessions_get(struct sessions *s, int64_t tenant_id)
{
    struct session_view v = {0};
    if (!s)
        return v;
    rcu_read_lock();
    struct session_entry *e = entry_get(s, tenant_id, false);
    if (e) {
        v.served_tip = atomic_load_explicit(&e->served_tip, memory_order_relaxed);
        v.accepted_until_ms = atomic_load_explicit(&e->accepted_until_ms, memory_order_acquire);
        v.accepted = atomic_load_explicit(&e->accepted, memory_order_relaxed);
    }
    rcu_read_unlock();
    return v;
}

void sessions_served_tip(struct sessions *s, int64_t tenant_id, int64_t height)
{
    if (!s || height <= 0)
        return;
    rcu_read_lock();
    struct session_entry *e = entry_get(s, tenant_id, true);
    if (e) {
        int64_t seen = atomic_load_explicit(&e->served_tip, memory_order_relaxed);
        while (seen < height &&
               !atomic_compare_exchange_weak_explicit(&e->served_tip, &seen, height,
                                                      memory_order_relaxed, memory_order_relaxed)) {
        }
    }
    rcu_read_unlock();
}

void sessions_accepted(struct sessions *s, int64_t tenant_id, uint64_t accepted, int64_t until_ms)
{
    if (!s)
        return;
    rcu_read_lock();
    struct session_entry *e = entry_get(s, tenant_id, true);
    if (e) {
        /* the nodes first: a reader that sees the new time sees them too */
        atomic_store_explicit(&e->accepted, accepted, memory_order_relaxed);
        atomic_store_explicit(&e->accepted_until_ms, until_ms, memory_order_release);
    }
    rcu_read_unlock();
}

size_t sessions_count(struct sessions *s)
{
    long before, after;
    unsigned long count;
    rcu_read_lock();
    cds_lfht_count_nodes(s->ht, &before, &count, &after);
    rcu_read_unlock();
    return (size_t)count;
}
