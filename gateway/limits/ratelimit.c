/* ratelimit — per-tenant token buckets: the pure bucket and its lock-free table. */
#define _LGPL_SOURCE
#include <urcu-bp.h>

#include <urcu/rculfhash.h>

#include "limits/ratelimit.h"
#include "core/spinlock.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a <= 0 ? 0 : (a + b - 1) / b;
}

/* The bucket's tokens at now_us and the time base to store with them. */
static int64_t refill(const struct rl_bucket *b, const struct rl_limit *lim, int64_t now_us,
                      int64_t *base_us)
{
    int64_t cap = (int64_t)lim->size * RL_UNIT;
    *base_us = now_us;
    if (b->tokens == RL_FRESH)
        return cap;
    int64_t elapsed = now_us - b->last_us;
    if (elapsed <= 0)
        return min64(b->tokens, cap); /* a smaller bucket also lowers what is held */
    int64_t gap = cap - b->tokens;
    /* Compared before multiplying: elapsed × rate then stays below gap + rate. */
    if (gap <= 0 || elapsed >= gap / lim->rate + 1)
        return cap;
    return min64(b->tokens + elapsed * lim->rate, cap);
}

struct rl_verdict rl_bucket_take(struct rl_bucket *b, const struct rl_limit *lim, int64_t now_us,
                                 uint32_t cost)
{
    int64_t base;
    int64_t tokens = refill(b, lim, now_us, &base);
    int64_t max_delay = lim->max_delay_us < 0 ? 0 : min64(lim->max_delay_us, RL_MAX_DELAY_US);
    int64_t floor = -(int64_t)lim->rate * max_delay; /* the deepest debt allowed */
    int64_t after = tokens - (int64_t)cost * RL_UNIT;
    struct rl_verdict v = {.allowed = after >= floor};
    if (v.allowed) {
        tokens = after;
        v.delay_us = ceil_div(-after, lim->rate);
    } else {
        v.retry_after_ms = ceil_div(floor - after, (int64_t)lim->rate * 1000);
    }
    b->tokens = tokens;
    b->last_us = base;
    b->full_us = base + ceil_div((int64_t)lim->size * RL_UNIT - tokens, lim->rate);
    return v;
}

int64_t rl_bucket_available(const struct rl_bucket *b, const struct rl_limit *lim, int64_t now_us)
{
    int64_t base;
    int64_t tokens = refill(b, lim, now_us, &base);
    return tokens >= 0 ? tokens / RL_UNIT : -ceil_div(-tokens, RL_UNIT);
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

struct rl_verdict rl_take(struct rl_table *t, int64_t tenant_id, const struct rl_limit *lim,
                          int64_t now_us)
{
    struct rl_verdict v = {.allowed = true};
    rcu_read_lock();
    struct rl_entry *e = entry_get(t, tenant_id);
    if (e) {
        entry_lock(e);
        v = rl_bucket_take(&e->bucket, lim, now_us, lim->replicas > 1 ? lim->replicas : 1);
        entry_unlock(e);
    }
    rcu_read_unlock();
    return v;
}

size_t rl_sweep(struct rl_table *t, int64_t now_us)
{
    size_t dropped = 0;
    struct cds_lfht_iter iter;
    struct cds_lfht_node *node;
    rcu_read_lock();
    for (cds_lfht_first(t->ht, &iter); (node = cds_lfht_iter_get_node(&iter)) != NULL;
         cds_lfht_next(t->ht, &iter)) {
        struct rl_entry *e = caa_container_of(node, struct rl_entry, node);
        entry_lock(e);
        bool full = e->bucket.tokens != RL_FRESH && now_us >= e->bucket.full_us;
        entry_unlock(e);
        /* A request racing with this delete updates a bucket about to be freed: it was
         * full, so the next request gets a new full bucket, which is what it held. */
        if (full && cds_lfht_del(t->ht, &e->node) == 0) {
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
