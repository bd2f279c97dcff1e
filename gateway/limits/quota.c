/* quota — local daily counts per tenant, drained to PostgreSQL by the flusher. */
#define _LGPL_SOURCE
#include <urcu-bp.h>

#include <urcu/rculfhash.h>

#include "limits/quota.h"
#include "core/spinlock.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

/* ---- pure core ---------------------------------------------------------------------- */

void quota_counts_roll(struct quota_counts *c, int32_t day)
{
    if (day <= c->day)
        return;
    if (c->pending > 0) {
        /* A carry still there from an older day means the flusher has not drained for a
         * whole day; the counts are kept (on the older day) rather than lost. */
        if (c->carry == 0)
            c->carry_day = c->day;
        c->carry += c->pending;
    }
    c->day = day;
    c->confirmed = 0;
    c->unconfirmed = 0;
    c->pending = 0;
}

static int64_t counts_used(const struct quota_counts *c)
{
    return c->confirmed + c->unconfirmed + c->pending;
}

void quota_counts_status(const struct quota_counts *c, int32_t day, int64_t limit,
                         struct quota_status *out)
{
    struct quota_counts now = *c;
    quota_counts_roll(&now, day);
    out->limit = limit;
    out->used = counts_used(&now);
    out->remaining = out->used < limit ? limit - out->used : 0;
    out->reset = quota_day_end(now.day);
}

bool quota_counts_charge(struct quota_counts *c, int32_t day, int64_t limit, uint32_t weight)
{
    quota_counts_roll(c, day);
    if (counts_used(c) + (int64_t)weight > limit)
        return false;
    c->pending += weight;
    return true;
}

size_t quota_counts_drain(struct quota_counts *c, int64_t tenant_id, struct quota_row out[2])
{
    size_t n = 0;
    if (c->carry > 0) {
        out[n++] = (struct quota_row){tenant_id, c->carry_day, c->carry};
        c->carry = 0;
    }
    if (c->pending > 0) {
        out[n++] = (struct quota_row){tenant_id, c->day, c->pending};
        c->unconfirmed += c->pending;
        c->pending = 0;
    }
    return n;
}

void quota_counts_apply(struct quota_counts *c, int32_t day, int64_t amount, int64_t total)
{
    if (day != c->day)
        return; /* an answer for a day already over */
    c->unconfirmed = c->unconfirmed > amount ? c->unconfirmed - amount : 0;
    c->confirmed = total >= 0 ? total : 0;
}

int64_t quota_flush_batch(int64_t limit, int64_t remaining)
{
    int64_t share = limit > 0 ? limit / QUOTA_FLUSH_SHARE : 0;
    int64_t batch = share > QUOTA_FLUSH_MIN_BATCH ? share : QUOTA_FLUSH_MIN_BATCH;
    /* batch <= INT64_MAX / 100, so twice it cannot overflow. */
    return remaining < 2 * batch ? QUOTA_FLUSH_MIN_BATCH : batch;
}

bool quota_counts_batch_full(const struct quota_counts *c, int64_t limit)
{
    struct quota_status st;
    quota_counts_status(c, c->day, limit, &st);
    return c->pending + c->carry >= quota_flush_batch(limit, st.remaining);
}

bool quota_flush_due(bool batch_full, int64_t elapsed_ms, bool anything)
{
    return batch_full || (anything && elapsed_ms >= QUOTA_FLUSH_INTERVAL_MS);
}

/* ---- the table ---------------------------------------------------------------------- */

struct quota_entry {
    struct cds_lfht_node node;
    int64_t tenant_id;
    struct quota_entry *next_dirty; /* link in the table's dirty list while queued */
    atomic_bool queued;             /* on the dirty list (or about to be) */
    atomic_flag busy;               /* spinlock over counts and kicked */
    bool kicked;                    /* its batch filled since the last drain */
    struct quota_counts counts;
};

struct quota_table {
    struct cds_lfht *ht;
    _Atomic(struct quota_entry *) dirty; /* Treiber stack; only ever emptied whole */
    atomic_llong unflushed;              /* requests counted since the last drain */
    atomic_llong full;                   /* tenants whose batch filled since then */
    void (*kick)(void *cls);
    void *kick_cls;
};

static unsigned long hash_id(int64_t id)
{
    uint64_t x = (uint64_t)id * 0x9E3779B97F4A7C15ULL;
    return (unsigned long)(x ^ (x >> 29));
}

static int match_id(struct cds_lfht_node *node, const void *key)
{
    return caa_container_of(node, struct quota_entry, node)->tenant_id == *(const int64_t *)key;
}

struct quota_table *quota_table_new(void (*kick)(void *cls), void *kick_cls)
{
    struct quota_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->ht = cds_lfht_new(1024, 1024, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, NULL);
    if (!t->ht) {
        free(t);
        return NULL;
    }
    atomic_init(&t->dirty, NULL);
    atomic_init(&t->unflushed, 0);
    atomic_init(&t->full, 0);
    t->kick = kick;
    t->kick_cls = kick_cls;
    return t;
}

void quota_table_free(struct quota_table *t)
{
    if (!t)
        return;
    /* No other thread runs: entries are freed as they are unlinked. */
    struct cds_lfht_iter iter;
    struct cds_lfht_node *node;
    rcu_read_lock();
    cds_lfht_first(t->ht, &iter);
    while ((node = cds_lfht_iter_get_node(&iter)) != NULL) {
        cds_lfht_next(t->ht, &iter);
        (void)cds_lfht_del(t->ht, node);
        free(caa_container_of(node, struct quota_entry, node));
    }
    rcu_read_unlock();
    cds_lfht_destroy(t->ht, NULL);
    free(t);
}

/* The tenant's entry, created when `create`. Inside a read-side section. */
static struct quota_entry *entry_get(struct quota_table *t, int64_t tenant_id, bool create)
{
    unsigned long hash = hash_id(tenant_id);
    struct cds_lfht_iter iter;
    cds_lfht_lookup(t->ht, hash, match_id, &tenant_id, &iter);
    struct cds_lfht_node *node = cds_lfht_iter_get_node(&iter);
    if (node || !create)
        return node ? caa_container_of(node, struct quota_entry, node) : NULL;
    struct quota_entry *fresh = calloc(1, sizeof *fresh);
    if (!fresh)
        return NULL;
    cds_lfht_node_init(&fresh->node);
    fresh->tenant_id = tenant_id;
    atomic_init(&fresh->queued, false);
    atomic_flag_clear(&fresh->busy);
    node = cds_lfht_add_unique(t->ht, hash, match_id, &tenant_id, &fresh->node);
    if (node != &fresh->node)
        free(fresh); /* another thread created it first; ours was never published */
    return caa_container_of(node, struct quota_entry, node);
}

static void entry_lock(struct quota_entry *e)
{
    spinlock_acquire(&e->busy);
}

static void entry_unlock(struct quota_entry *e)
{
    spinlock_release(&e->busy);
}

/* Puts e on the dirty list unless it is there already. */
static void mark_dirty(struct quota_table *t, struct quota_entry *e)
{
    if (atomic_exchange(&e->queued, true))
        return;
    struct quota_entry *head = atomic_load(&t->dirty);
    do {
        e->next_dirty = head;
    } while (!atomic_compare_exchange_weak(&t->dirty, &head, e));
}

bool quota_charge(struct quota_table *t, int64_t tenant_id, int64_t limit, uint32_t weight,
                  int64_t now_unix, struct quota_status *out)
{
    int32_t day = quota_day(now_unix);
    bool counted = true;
    rcu_read_lock();
    struct quota_entry *e = entry_get(t, tenant_id, true);
    if (!e) {
        struct quota_counts none = {0};
        quota_counts_status(&none, day, limit, out);
        rcu_read_unlock();
        return true;
    }
    bool filled = false;
    entry_lock(e);
    counted = quota_counts_charge(&e->counts, day, limit, weight);
    quota_counts_status(&e->counts, day, limit, out);
    if (counted && !e->kicked && quota_counts_batch_full(&e->counts, limit))
        filled = e->kicked = true;
    entry_unlock(e);
    if (counted)
        mark_dirty(t, e);
    rcu_read_unlock();
    if (counted)
        atomic_fetch_add(&t->unflushed, 1);
    if (filled) {
        atomic_fetch_add(&t->full, 1);
        if (t->kick)
            t->kick(t->kick_cls);
    }
    return counted;
}

void quota_peek(struct quota_table *t, int64_t tenant_id, int64_t limit, int64_t now_unix,
                struct quota_status *out)
{
    int32_t day = quota_day(now_unix);
    struct quota_counts counts = {0};
    rcu_read_lock();
    struct quota_entry *e = entry_get(t, tenant_id, false);
    if (e) {
        entry_lock(e);
        counts = e->counts;
        entry_unlock(e);
    }
    rcu_read_unlock();
    quota_counts_status(&counts, day, limit, out);
}

static bool reserve(struct quota_row **rows, size_t *cap, size_t need)
{
    if (need <= *cap)
        return true;
    size_t grown = *cap ? *cap * 2 : 256;
    while (grown < need)
        grown *= 2;
    struct quota_row *more = realloc(*rows, grown * sizeof **rows);
    if (!more)
        return false;
    *rows = more;
    *cap = grown;
    return true;
}

bool quota_drain(struct quota_table *t, struct quota_row **rows, size_t *nrows, size_t *cap)
{
    atomic_store(&t->unflushed, 0);
    atomic_store(&t->full, 0);
    struct quota_entry *e = atomic_exchange(&t->dirty, NULL);
    bool ok = true;
    rcu_read_lock();
    while (e) {
        struct quota_entry *next = e->next_dirty; /* read before e can be queued again */
        atomic_store(&e->queued, false);
        if (!ok || !reserve(rows, cap, *nrows + 2)) {
            ok = false;
            mark_dirty(t, e); /* drained by a later call */
        } else {
            entry_lock(e);
            *nrows += quota_counts_drain(&e->counts, e->tenant_id, *rows + *nrows);
            e->kicked = false;
            entry_unlock(e);
        }
        e = next;
    }
    rcu_read_unlock();
    return ok;
}

void quota_apply_total(struct quota_table *t, int64_t tenant_id, int32_t day, int64_t amount,
                       int64_t total)
{
    rcu_read_lock();
    struct quota_entry *e = entry_get(t, tenant_id, false);
    if (e) {
        entry_lock(e);
        quota_counts_apply(&e->counts, day, amount, total);
        entry_unlock(e);
    }
    rcu_read_unlock();
}

int64_t quota_unflushed_requests(struct quota_table *t)
{
    return atomic_load(&t->unflushed);
}

int64_t quota_batches_full(struct quota_table *t)
{
    return atomic_load(&t->full);
}

size_t quota_count(struct quota_table *t)
{
    long before, after;
    unsigned long count;
    rcu_read_lock();
    cds_lfht_count_nodes(t->ht, &before, &count, &after);
    rcu_read_unlock();
    return (size_t)count;
}
