/* ratelimit — per-tenant token buckets: the pure bucket and its lock-free table. */
#define _LGPL_SOURCE
#include <urcu-bp.h>

#include <urcu/rculfhash.h>

#include "ratelimit.h"
#include "spinlock.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Refilling from empty to full takes capacity / rps = 2 s; longer gaps add nothing, and
 * capping them keeps elapsed × rps far from overflowing. */
#define RL_FILL_US 2000000LL

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The bucket's tokens at now_us and the time base to store with them. */
static int64_t refill(const struct rl_bucket *b, int32_t rps, int64_t now_us, int64_t *base_us)
{
    int64_t cap = rl_capacity(rps) * RL_UNIT;
    *base_us = now_us;
    if (b->tokens < 0)
        return cap;
    int64_t elapsed = now_us - b->last_us;
    if (elapsed <= 0)
        return min64(b->tokens, cap); /* a lowered rate also lowers what is held */
    return min64(b->tokens + min64(elapsed, RL_FILL_US) * rps, cap);
}

bool rl_bucket_take(struct rl_bucket *b, int32_t rps, int64_t now_us, uint32_t cost,
                    int64_t *retry_after_ms)
{
    int64_t base;
    int64_t tokens = refill(b, rps, now_us, &base);
    int64_t need = (int64_t)cost * RL_UNIT;
    b->last_us = base;
    if (tokens >= need) {
        b->tokens = tokens - need;
        return true;
    }
    b->tokens = tokens;
    if (retry_after_ms) {
        int64_t per_ms = (int64_t)rps * 1000; /* tokens (in RL_UNIT) refilled per ms */
        *retry_after_ms = (need - tokens + per_ms - 1) / per_ms;
    }
    return false;
}

int64_t rl_bucket_available(const struct rl_bucket *b, int32_t rps, int64_t now_us)
{
    int64_t base;
    return refill(b, rps, now_us, &base) / RL_UNIT;
}

/* ---- the table ---------------------------------------------------------------------- */

struct rl_entry {
    struct cds_lfht_node node;
    int64_t tenant_id;
    atomic_flag busy; /* spinlock over bucket: held for a few instructions */
    struct rl_bucket bucket;
    struct rcu_head rcu;
};

struct rl_table {
    struct cds_lfht *ht;
};

static unsigned long hash_id(int64_t id)
{
    uint64_t x = (uint64_t)id * 0x9E3779B97F4A7C15ULL; /* Fibonacci hashing */
    return (unsigned long)(x ^ (x >> 29));
}

static int match_id(struct cds_lfht_node *node, const void *key)
{
    return caa_container_of(node, struct rl_entry, node)->tenant_id == *(const int64_t *)key;
}

struct rl_table *rl_table_new(void)
{
    struct rl_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->ht = cds_lfht_new(1024, 1024, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, NULL);
    if (!t->ht) {
        free(t);
        return NULL;
    }
    return t;
}

static void free_entry_rcu(struct rcu_head *head)
{
    free(caa_container_of(head, struct rl_entry, rcu));
}

void rl_table_free(struct rl_table *t)
{
    if (!t)
        return;
    struct cds_lfht_iter iter;
    struct cds_lfht_node *node;
    rcu_read_lock();
    for (cds_lfht_first(t->ht, &iter); (node = cds_lfht_iter_get_node(&iter)) != NULL;
         cds_lfht_next(t->ht, &iter)) {
        if (cds_lfht_del(t->ht, node) == 0)
            call_rcu(&caa_container_of(node, struct rl_entry, node)->rcu, free_entry_rcu);
    }
    rcu_read_unlock();
    rcu_barrier();
    cds_lfht_destroy(t->ht, NULL);
    free(t);
}

/* The tenant's entry, created if missing. Inside a read-side section. */
static struct rl_entry *entry_get(struct rl_table *t, int64_t tenant_id)
{
    unsigned long hash = hash_id(tenant_id);
    struct cds_lfht_iter iter;
    cds_lfht_lookup(t->ht, hash, match_id, &tenant_id, &iter);
    struct cds_lfht_node *node = cds_lfht_iter_get_node(&iter);
    if (node)
        return caa_container_of(node, struct rl_entry, node);
    struct rl_entry *fresh = malloc(sizeof *fresh);
    if (!fresh)
        return NULL;
    cds_lfht_node_init(&fresh->node);
    fresh->tenant_id = tenant_id;
    atomic_flag_clear(&fresh->busy);
    fresh->bucket = (struct rl_bucket)RL_BUCKET_INIT;
    node = cds_lfht_add_unique(t->ht, hash, match_id, &tenant_id, &fresh->node);
    if (node != &fresh->node)
        free(fresh); /* another thread created it first: never published, free at once */
    return caa_container_of(node, struct rl_entry, node);
}

static void entry_lock(struct rl_entry *e)
{
    spinlock_acquire(&e->busy);
}

static void entry_unlock(struct rl_entry *e)
{
    spinlock_release(&e->busy);
}

bool rl_take(struct rl_table *t, int64_t tenant_id, int32_t rps, int64_t now_us,
             int64_t *retry_after_ms)
{
    bool allowed = true;
    rcu_read_lock();
    struct rl_entry *e = entry_get(t, tenant_id);
    if (e) {
        entry_lock(e);
        allowed = rl_bucket_take(&e->bucket, rps, now_us, 1, retry_after_ms);
        entry_unlock(e);
    }
    rcu_read_unlock();
    return allowed;
}

size_t rl_sweep(struct rl_table *t, int64_t now_us, int64_t idle_us)
{
    size_t dropped = 0;
    struct cds_lfht_iter iter;
    struct cds_lfht_node *node;
    rcu_read_lock();
    for (cds_lfht_first(t->ht, &iter); (node = cds_lfht_iter_get_node(&iter)) != NULL;
         cds_lfht_next(t->ht, &iter)) {
        struct rl_entry *e = caa_container_of(node, struct rl_entry, node);
        entry_lock(e);
        int64_t last = e->bucket.last_us;
        entry_unlock(e);
        /* A request racing with this delete updates a bucket about to be freed: it is
         * idle, so the next request gets a new full bucket, which is what it held. */
        if (now_us - last >= idle_us && cds_lfht_del(t->ht, &e->node) == 0) {
            call_rcu(&e->rcu, free_entry_rcu);
            dropped++;
        }
    }
    rcu_read_unlock();
    return dropped;
}

size_t rl_count(struct rl_table *t)
{
    long before, after;
    unsigned long count;
    rcu_read_lock();
    cds_lfht_count_nodes(t->ht, &before, &count, &after);
    rcu_read_unlock();
    return (size_t)count;
}
