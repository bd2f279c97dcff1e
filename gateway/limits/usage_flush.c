/* usage_flush — writes local quota counts to usage_daily and reads the totals back. */
#include "limits/usage_flush.h"

#include "xg_log.h"
#include "xg_pg.h"
#include "xg_clock.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu-bp.h>

/* Buckets idle this long are full again; dropping them loses nothing. */
#define SWEEP_EVERY_MS 60000
/* The last flush at shutdown retries this long while PostgreSQL does not answer. */
#define FINAL_FLUSH_MS 3000

static const char *const flush_queries[] = {"gw_usage_add", NULL};

struct usage_flush {
    struct xg_pg *pg;
    struct quota_table *quota;
    struct rl_table *buckets;
    pthread_t thread;
    bool running;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    bool kicked, stop; /* under mu */
    /* Drained and not yet written: owned by the thread. */
    struct quota_row *rows;
    size_t nrows, cap;
    bool pg_down_logged;
    atomic_ullong flushes, failures, rows_written, held_rows, max_during_flush;
};

static int compare_rows(const void *a, const void *b)
{
    const struct quota_row *x = a, *y = b;
    if (x->tenant_id != y->tenant_id)
        return x->tenant_id < y->tenant_id ? -1 : 1;
    return (x->day > y->day) - (x->day < y->day);
}

size_t usage_flush_merge(struct quota_row *rows, size_t n)
{
    if (n == 0)
        return 0;
    qsort(rows, n, sizeof *rows, compare_rows);
    size_t out = 0;
    for (size_t i = 1; i < n; i++) {
        if (compare_rows(&rows[out], &rows[i]) == 0)
            rows[out].amount += rows[i].amount;
        else
            rows[++out] = rows[i];
    }
    return out + 1;
}

/* PostgreSQL array literals for the three columns; false when out of memory. */
static bool build_arrays(const struct quota_row *rows, size_t n, char *arrays[3])
{
    size_t size = n * 22 + 3;
    for (int c = 0; c < 3; c++) {
        arrays[c] = malloc(size);
        if (!arrays[c])
            return false;
    }
    size_t len[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        const char *sep = i ? "," : "{";
        len[0] += (size_t)snprintf(arrays[0] + len[0], size - len[0], "%s%" PRId64, sep,
                                   rows[i].tenant_id);
        len[1] +=
            (size_t)snprintf(arrays[1] + len[1], size - len[1], "%s%" PRId32, sep, rows[i].day);
        len[2] +=
            (size_t)snprintf(arrays[2] + len[2], size - len[2], "%s%" PRId64, sep, rows[i].amount);
    }
    for (int c = 0; c < 3; c++)
        snprintf(arrays[c] + len[c], size - len[c], "%s}", n ? "" : "{");
    return true;
}

/* Feeds every returned total back with the amount this flush added for its key. */
static void apply_totals(struct usage_flush *f, PGresult *res)
{
    int n = PQntuples(res);
    for (int r = 0; r < n; r++) {
        struct quota_row key = {
            .tenant_id = strtoll(PQgetvalue(res, r, 0), NULL, 10),
            .day = (int32_t)strtol(PQgetvalue(res, r, 1), NULL, 10),
        };
        const struct quota_row *sent =
            bsearch(&key, f->rows, f->nrows, sizeof *f->rows, compare_rows);
        if (sent)
            quota_apply_total(f->quota, key.tenant_id, key.day, sent->amount,
                              strtoll(PQgetvalue(res, r, 2), NULL, 10));
    }
}

struct add_tx {
    const char *params[3];
    PGresult *res; /* the totals, once committed */
};

/* gw_usage_add alone in a transaction: a connection that breaks before COMMIT was sent
 * has added nothing, so xg_pg_transaction may run it again on a new connection. */
static enum xg_tx_result on_add_tx(struct xg_pg *pg, void *ctx)
{
    struct add_tx *t = ctx;
    PQclear(t->res); /* a rerun's earlier answer was rolled back */
    t->res = xg_pg_exec(pg, "gw_usage_add", 3, t->params);
    return t->res ? XG_TX_COMMIT : xg_pg_tx_classify(pg);
}

/* The held batch after a lost COMMIT answer: never sent again. */
static void drop_unknown(struct usage_flush *f)
{
    int64_t amount = 0;
    for (size_t i = 0; i < f->nrows; i++)
        amount += f->rows[i].amount;
    atomic_fetch_add(&f->failures, 1);
    xg_log(XG_LOG_ERROR, "usage_flush_unknown",
           "the connection broke after COMMIT of %zu rows (%" PRId64 " weighted requests) was "
           "sent: not sent again, so as never to count them twice",
           f->nrows, amount);
    f->nrows = 0;
    atomic_store(&f->held_rows, 0);
}

/* Writes the held rows in one transaction. True when PostgreSQL took them (or there were
 * none); when it did not, they stay held for the next attempt. When the answer to COMMIT
 * was lost, whether they were added is unknown: they are dropped (logged with their
 * count), because sending them again could count them twice (docs/LIMITS.md). */
static bool write_rows(struct usage_flush *f)
{
    f->nrows = usage_flush_merge(f->rows, f->nrows);
    atomic_store(&f->held_rows, f->nrows);
    if (f->nrows == 0)
        return true;
    if (!xg_pg_ok(f->pg) && !xg_pg_connect(f->pg))
        goto failed;
    char *arrays[3] = {NULL, NULL, NULL};
    bool built = build_arrays(f->rows, f->nrows, arrays);
    struct add_tx t = {.params = {arrays[0], arrays[1], arrays[2]}};
    int64_t counted_before = quota_unflushed_requests(f->quota);
    enum xg_tx_result r = built ? xg_pg_transaction(f->pg, NULL, on_add_tx, &t) : XG_TX_ERROR;
    /* Requests served while the statement ran: the part of the overshoot bound that
     * grows with PostgreSQL's latency (docs/LIMITS.md). */
    int64_t during = quota_unflushed_requests(f->quota) - counted_before;
    if (during > 0 && (uint64_t)during > atomic_load(&f->max_during_flush))
        atomic_store(&f->max_during_flush, (uint64_t)during);
    for (int c = 0; c < 3; c++)
        free(arrays[c]);
    if (r != XG_TX_COMMIT) {
        PQclear(t.res);
        if (built && xg_pg_outcome_unknown(f->pg)) {
            drop_unknown(f);
            return false;
        }
        goto failed;
    }
    apply_totals(f, t.res);
    PQclear(t.res);
    atomic_fetch_add(&f->flushes, 1);
    atomic_fetch_add(&f->rows_written, f->nrows);
    if (f->pg_down_logged)
        xg_log(XG_LOG_INFO, "usage_flush_resumed", "usage counts written again");
    f->pg_down_logged = false;
    f->nrows = 0;
    atomic_store(&f->held_rows, 0);
    return true;
failed:
    atomic_fetch_add(&f->failures, 1);
    if (!f->pg_down_logged)
        xg_log(XG_LOG_WARN, "usage_flush_failed",
               "cannot write usage counts (%s); counting on, keeping %zu rows for the retry",
               xg_pg_last_error(f->pg), f->nrows);
    f->pg_down_logged = true;
    return false;
}

static bool flush_once(struct usage_flush *f)
{
    if (!quota_drain(f->quota, &f->rows, &f->nrows, &f->cap))
        xg_log(XG_LOG_ERROR, "usage_drain_oom", "out of memory; the rest waits in the table");
    return write_rows(f);
}

/* Sleeps until kicked, stopped, or `until_ms` (monotonic). Returns false when stopping. */
static bool wait_for_work(struct usage_flush *f, int64_t until_ms)
{
    pthread_mutex_lock(&f->mu);
    while (!f->kicked && !f->stop) {
        int64_t now = xg_monotonic_ms();
        if (now >= until_ms)
            break;
        struct timespec ts = xg_monotonic_deadline(until_ms - now);
        if (pthread_cond_timedwait(&f->cond, &f->mu, &ts) == ETIMEDOUT)
            break;
    }
    f->kicked = false;
    bool go_on = !f->stop;
    pthread_mutex_unlock(&f->mu);
    return go_on;
}

static void final_flush(struct usage_flush *f)
{
    int64_t deadline = xg_monotonic_ms() + FINAL_FLUSH_MS;
    while (!flush_once(f) && xg_monotonic_ms() < deadline) {
        struct timespec pause = {0, 200 * 1000000L};
        nanosleep(&pause, NULL);
    }
    int64_t lost = 0;
    for (size_t i = 0; i < f->nrows; i++)
        lost += f->rows[i].amount;
    if (lost)
        xg_log(XG_LOG_ERROR, "usage_lost",
               "PostgreSQL unreachable at shutdown: %" PRId64 " weighted requests of %zu "
               "tenant-days not written",
               lost, f->nrows);
}

static void *flush_loop(void *arg)
{
    struct usage_flush *f = arg;
    rcu_register_thread();
    /* Connected before the first batch: a connect inside the first flush would let a busy
     * replica serve a few hundred more requests before it learns the shared total. */
    if (!xg_pg_connect(f->pg))
        xg_log(XG_LOG_WARN, "usage_flush_unconnected", "PostgreSQL: %s (retrying at each flush)",
               xg_pg_last_error(f->pg));
    int64_t last_flush = xg_monotonic_ms(), last_sweep = last_flush;
    for (;;) {
        if (!wait_for_work(f, last_flush + QUOTA_FLUSH_INTERVAL_MS))
            break;
        int64_t now = xg_monotonic_ms();
        bool anything = f->nrows > 0 || quota_unflushed_requests(f->quota) > 0;
        if (anything &&
            quota_flush_due(quota_batches_full(f->quota) > 0, now - last_flush, anything)) {
            (void)flush_once(f);
            last_flush = xg_monotonic_ms();
        } else if (now - last_flush >= QUOTA_FLUSH_INTERVAL_MS) {
            last_flush = now;
        }
        if (f->buckets && now - last_sweep >= SWEEP_EVERY_MS) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            (void)rl_sweep(f->buckets, (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
            last_sweep = now;
        }
    }
    final_flush(f);
    xg_log(XG_LOG_INFO, "usage_flush_summary",
           "flushes %llu, failed attempts %llu, rows %llu, most requests served during one "
           "flush %llu",
           (unsigned long long)atomic_load(&f->flushes),
           (unsigned long long)atomic_load(&f->failures),
           (unsigned long long)atomic_load(&f->rows_written),
           (unsigned long long)atomic_load(&f->max_during_flush));
    rcu_unregister_thread();
    return NULL;
}

struct usage_flush *usage_flush_new(const char *conninfo)
{
    struct usage_flush *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cond, &attr);
    pthread_condattr_destroy(&attr);
    f->pg = xg_pg_new(conninfo, flush_queries);
    if (!f->pg) {
        free(f);
        return NULL;
    }
    return f;
}

bool usage_flush_start(struct usage_flush *f, struct quota_table *quota, struct rl_table *buckets)
{
    f->quota = quota;
    f->buckets = buckets;
    f->running = pthread_create(&f->thread, NULL, flush_loop, f) == 0;
    return f->running;
}

void usage_flush_kick(void *flusher)
{
    struct usage_flush *f = flusher;
    pthread_mutex_lock(&f->mu);
    f->kicked = true;
    pthread_cond_signal(&f->cond);
    pthread_mutex_unlock(&f->mu);
}

void usage_flush_stop(struct usage_flush *f)
{
    if (!f)
        return;
    if (f->running) {
        pthread_mutex_lock(&f->mu);
        f->stop = true;
        pthread_cond_signal(&f->cond);
        pthread_mutex_unlock(&f->mu);
        pthread_join(f->thread, NULL);
    }
    xg_pg_free(f->pg);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cond);
    free(f->rows);
    free(f);
}

void usage_flush_stats(struct usage_flush *f, struct usage_flush_stats *out)
{
    out->flushes = atomic_load(&f->flushes);
    out->failures = atomic_load(&f->failures);
    out->rows_written = atomic_load(&f->rows_written);
    out->held_rows = atomic_load(&f->held_rows);
    out->max_during_flush = atomic_load(&f->max_during_flush);
}
