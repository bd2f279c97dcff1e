/* poller — see poller.h. */
#include "payments/poller.h"

#include "invoice/invoice.h"
#include "payments/leader.h"
#include "payments/settle.h"
#include "payments/sweep.h"
#include "payments/transfer_diff.h"
#include "wallet/subaddrs.h"
#include "xg_clock.h"
#include "xg_http.h"
#include "xg_log.h"
#include "xg_pg.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STANDBY_CHECK_MS 1000
#define FIRST_BACKOFF_MS 1000
#define READY_STALE_MS   60000
#define INVOICE_ID_SIZE  40

static const char *const poller_own_queries[] = {"bl_cursor_get",
                                                 "bl_cursor_set",
                                                 "bl_tiers_max_confirmations",
                                                 "bl_payments_live",
                                                 "bl_payment_upsert",
                                                 "bl_payment_gone",
                                                 "bl_invoices_due",
                                                 "bl_xmr402_challenges_sweep",
                                                 "bl_free_tenants_sweep",
                                                 "bl_free_grants_prune",
                                                 "bl_usage_prune",
                                                 "bl_subaddress_max", /* subaddrs.c */
                                                 NULL};

struct poller {
    struct poller_options opt;
    char *conninfo, *daemon_url;
    const char **queries; /* poller_own_queries + settle_queries */
    struct xg_pg *pg;
    struct leader *leader;
    struct xg_http_client *daemon_http;
    pthread_t thread;
    bool started;
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t wake;
    bool stopping;
    struct poller_stats stats;
    int64_t wallet_ok_at_ms; /* monotonic; 0 = never */
    char wallet_problem[256];
    bool subaddrs_checked; /* poller thread only: the wallet knew the database's subaddresses */
};

struct cycle {
    int64_t cursor, last_wallet_height, wallet_height, min_height, max_confirmations;
    struct wallet_transfer *transfers;
    size_t ntransfers;
    struct transfer_diff_row *stored, *writes;
    size_t nstored, nwrites;
    int64_t settled;
};

/* ---- reading the stored side ------------------------------------------------------ */

static bool read_cursor(struct poller *p, struct cycle *c)
{
    PGresult *res = xg_pg_exec(p->pg, "bl_cursor_get", 0, NULL);
    if (!res)
        return false;
    bool ok = PQntuples(res) == 1;
    if (ok) {
        c->cursor = xg_pg_int64(res, 0, 0);
        c->last_wallet_height = xg_pg_int64(res, 0, 1);
    }
    PQclear(res);
    res = ok ? xg_pg_exec(p->pg, "bl_tiers_max_confirmations", 0, NULL) : NULL;
    ok = res && PQntuples(res) == 1;
    if (ok)
        c->max_confirmations = xg_pg_int64(res, 0, 0);
    PQclear(res);
    return ok;
}

static bool read_live_payments(struct poller *p, struct cycle *c)
{
    char min[24];
    snprintf(min, sizeof min, "%lld", (long long)c->min_height);
    const char *params[] = {min};
    PGresult *res = xg_pg_exec(p->pg, "bl_payments_live", 1, params);
    if (!res)
        return false;
    int n = PQntuples(res);
    c->stored = calloc((size_t)n + 1, sizeof *c->stored);
    if (!c->stored) {
        PQclear(res);
        return false;
    }
    for (int i = 0; i < n; i++) {
        struct transfer_diff_row *r = &c->stored[c->nstored];
        snprintf(r->txid, sizeof r->txid, "%s", PQgetvalue(res, i, 0));
        r->subaddr = xg_pg_int64(res, i, 1);
        r->amount = xg_pg_int64(res, i, 2);
        r->height = xg_pg_int64(res, i, 3);
        r->confirmations = xg_pg_int64(res, i, 4);
        r->unlock_time = xg_pg_int64(res, i, 6);
        if (invoice_pay_state_parse(PQgetvalue(res, i, 5), &r->state))
            c->nstored++;
    }
    PQclear(res);
    return true;
}

static bool diff(struct cycle *c)
{
    c->writes = transfer_diff_compute(c->stored, c->nstored, c->transfers, c->ntransfers,
                                      c->wallet_height, &c->nwrites);
    return c->writes != NULL;
}

/* ---- writing: one transaction per subaddress ------------------------------------ */

struct group_tx {
    struct poller *p;
    const struct transfer_diff_row *rows;
    size_t n;
    int64_t wallet_height;
    int64_t settled;
    char invoices[8][INVOICE_ID_SIZE];
    size_t ninvoices;
};

static void note_invoice(struct group_tx *g, const char *id)
{
    if (!*id)
        return;
    for (size_t i = 0; i < g->ninvoices; i++)
        if (strcmp(g->invoices[i], id) == 0)
            return;
    if (g->ninvoices < sizeof g->invoices / sizeof g->invoices[0])
        snprintf(g->invoices[g->ninvoices++], INVOICE_ID_SIZE, "%s", id);
}

static bool write_row(struct xg_pg *pg, const struct transfer_diff_row *r, struct group_tx *g)
{
    char sub[24], amount[24], height[24], conf[24], unlock[24];
    snprintf(sub, sizeof sub, "%lld", (long long)r->subaddr);
    PGresult *res;
    if (r->gone) {
        const char *params[] = {r->txid, sub};
        res = xg_pg_exec(pg, "bl_payment_gone", 2, params);
    } else {
        snprintf(amount, sizeof amount, "%lld", (long long)r->amount);
        snprintf(height, sizeof height, "%lld", (long long)r->height);
        snprintf(conf, sizeof conf, "%lld", (long long)r->confirmations);
        snprintf(unlock, sizeof unlock, "%lld", (long long)r->unlock_time);
        const char *params[] = {r->txid, sub,
                                amount,  r->state == INVOICE_PAY_CONFIRMED ? height : NULL,
                                conf,    invoice_pay_state_name(r->state),
                                unlock};
        res = xg_pg_exec(pg, "bl_payment_upsert", 7, params);
    }
    if (!res)
        return false;
    if (PQntuples(res) == 1)
        note_invoice(g, PQgetvalue(res, 0, 0));
    PQclear(res);
    return true;
}

static void log_settled(const char *id, const struct settle_result *s)
{
    if (s->provisioned)
        xg_log_fields(XG_LOG_INFO, "invoice_provisioned",
                      json_pack("{s:s, s:I}", "invoice", id, "tenant", (json_int_t)s->tenant_id),
                      NULL);
    else if (s->after != s->before)
        xg_log_fields(XG_LOG_INFO, "invoice_state",
                      json_pack("{s:s, s:s, s:s}", "invoice", id, "from",
                                invoice_state_name(s->before), "to", invoice_state_name(s->after)),
                      NULL);
}

static enum xg_tx_result settle_noted(struct xg_pg *pg, struct group_tx *g)
{
    struct settle_policy policy = {.late_grace_s = g->p->opt.late_grace_s,
                                   .chain_height = g->wallet_height};
    for (size_t i = 0; i < g->ninvoices; i++) {
        struct settle_result s;
        enum xg_tx_result r = settle_invoice(pg, g->invoices[i], &policy, &s);
        if (r == XG_TX_RETRY || r == XG_TX_ERROR)
            return r;
        log_settled(g->invoices[i], &s);
        g->settled++;
    }
    return XG_TX_COMMIT;
}

static enum xg_tx_result on_group_tx(struct xg_pg *pg, void *ctx)
{
    struct group_tx *g = ctx;
    g->ninvoices = 0;
    g->settled = 0;
    for (size_t i = 0; i < g->n; i++)
        if (!write_row(pg, &g->rows[i], g))
            return xg_pg_tx_classify(pg);
    return settle_noted(pg, g);
}

static bool write_groups(struct poller *p, struct cycle *c)
{
    for (size_t start = 0; start < c->nwrites;) {
        size_t end = start;
        while (end < c->nwrites && c->writes[end].subaddr == c->writes[start].subaddr)
            end++;
        struct group_tx g = {
            .p = p, .rows = &c->writes[start], .n = end - start, .wallet_height = c->wallet_height};
        if (xg_pg_transaction(p->pg, NULL, on_group_tx, &g) != XG_TX_COMMIT) {
            xg_log(XG_LOG_ERROR, "poll_write_failed", "subaddress %lld: %s",
                   (long long)c->writes[start].subaddr, xg_pg_last_error(p->pg));
            return false;
        }
        c->settled += g.settled;
        start = end;
    }
    return true;
}

static enum xg_tx_result on_due_tx(struct xg_pg *pg, void *ctx)
{
    struct group_tx *g = ctx;
    g->settled = 0;
    return settle_noted(pg, g);
}

/* Invoices whose deadline passed (pending, reverted, underpaid past the grace period). */
static bool settle_due(struct poller *p, struct cycle *c)
{
    char grace[24];
    snprintf(grace, sizeof grace, "%lld", (long long)p->opt.late_grace_s);
    const char *params[] = {grace};
    PGresult *res = xg_pg_exec(p->pg, "bl_invoices_due", 1, params);
    if (!res)
        return false;
    bool ok = true;
    for (int i = 0; ok && i < PQntuples(res); i++) {
        struct group_tx g = {.p = p, .wallet_height = c->wallet_height};
        note_invoice(&g, PQgetvalue(res, i, 0));
        ok = xg_pg_transaction(p->pg, NULL, on_due_tx, &g) == XG_TX_COMMIT;
        c->settled += g.settled;
    }
    PQclear(res);
    return ok;
}

static bool advance_cursor(struct poller *p, const struct cycle *c)
{
    /* the lowest height a payment that is not final yet can have */
    int64_t next = c->wallet_height - c->max_confirmations - 1;
    char h[24], wh[24];
    snprintf(h, sizeof h, "%lld", (long long)(next > 0 ? next : 0));
    snprintf(wh, sizeof wh, "%lld", (long long)c->wallet_height);
    const char *params[] = {h, wh};
    PGresult *res = xg_pg_exec(p->pg, "bl_cursor_set", 2, params);
    PQclear(res);
    return res != NULL;
}

/* Unpaid XMR402 challenges past their retention (sweep.h): one bounded batch a cycle, after
 * the cycle's own work. */
static bool sweep_challenges(struct poller *p)
{
    int64_t deleted = 0;
    if (!sweep_run(p->pg, sweep_keep_s(p->opt.challenge_retention_s, p->opt.late_grace_s),
                   SWEEP_BATCH, &deleted))
        return false;
    if (deleted > 0)
        xg_log(XG_LOG_INFO, "xmr402_challenges_swept", "%lld expired unpaid challenges deleted",
               (long long)deleted);
    pthread_mutex_lock(&p->lock);
    p->stats.swept += deleted;
    pthread_mutex_unlock(&p->lock);
    return true;
}

/* Usage counts past [usage] retention (sweep.h), likewise; none kept for ever at 0. */
static bool sweep_usage(struct poller *p)
{
    int64_t days = sweep_usage_keep_days(p->opt.usage_retention_s);
    if (days == 0)
        return true;
    int64_t daily = 0, regional = 0;
    if (!sweep_usage_run(p->pg, days, SWEEP_USAGE_BATCH, &daily, &regional))
        return false;
    if (daily > 0 || regional > 0)
        xg_log_fields(XG_LOG_INFO, "usage_pruned",
                      json_pack("{s:I,s:I,s:I}", "daily", (json_int_t)daily, "regional",
                                (json_int_t)regional, "keep_days", (json_int_t)days),
                      "%lld usage_daily and %lld usage_regional rows older than %lld days deleted",
                      (long long)daily, (long long)regional, (long long)days);
    return true;
}

/* Lapsed free tenants past their retention (sweep.h), likewise. */
static bool sweep_free_tenants(struct poller *p)
{
    int64_t deleted = 0;
    if (!sweep_free_run(p->pg, p->opt.free_retention_s, SWEEP_BATCH, &deleted))
        return false;
    if (deleted > 0)
        xg_log(XG_LOG_INFO, "free_tenants_swept", "%lld lapsed free tenants deleted",
               (long long)deleted);
    pthread_mutex_lock(&p->lock);
    p->stats.free_swept += deleted;
    pthread_mutex_unlock(&p->lock);
    return true;
}

/* ---- one cycle -------------------------------------------------------------------- */

static void wallet_failed(struct poller *p, const char *what, const char *err)
{
    xg_log(XG_LOG_WARN, "wallet_unavailable", "%s: %s", what, err);
    p->subaddrs_checked = false; /* it may come back as another wallet */
    pthread_mutex_lock(&p->lock);
    snprintf(p->wallet_problem, sizeof p->wallet_problem, "wallet-rpc %s: %.200s", what, err);
    pthread_mutex_unlock(&p->lock);
}

static void wallet_answered(struct poller *p, int64_t height)
{
    pthread_mutex_lock(&p->lock);
    p->wallet_ok_at_ms = xg_monotonic_ms();
    p->wallet_problem[0] = '\0';
    p->stats.wallet_height = height;
    pthread_mutex_unlock(&p->lock);
}

static bool fetch_wallet(struct poller *p, struct cycle *c)
{
    char err[512];
    if (!wallet_refresh(p->opt.wallet, err, sizeof err)) {
        wallet_failed(p, "refresh", err);
        return false;
    }
    if (!wallet_get_transfers(p->opt.wallet, c->min_height, &c->transfers, &c->ntransfers, err,
                              sizeof err)) {
        wallet_failed(p, "get_transfers", err);
        return false;
    }
    /* after get_transfers: a block scanned in between only adds a confirmation */
    if (!wallet_get_height(p->opt.wallet, &c->wallet_height, err, sizeof err)) {
        wallet_failed(p, "get_height", err);
        return false;
    }
    wallet_answered(p, c->wallet_height);
    return true;
}

/* Before polling a wallet that may be new: it must know every subaddress handed out. */
static bool check_subaddrs(struct poller *p)
{
    struct subaddrs_result r;
    char err[512];
    if (!subaddrs_ensure(p->opt.wallet, p->pg, &r, err, sizeof err)) {
        wallet_failed(p, "subaddresses", err);
        return false;
    }
    if (r.created > 0)
        xg_log_fields(XG_LOG_WARN, "subaddresses_recreated",
                      json_pack("{s:I, s:I, s:s}", "created", (json_int_t)r.created, "up_to",
                                (json_int_t)r.db_max, "rescan",
                                r.rescan_error[0] ? r.rescan_error : "ok"),
                      "the wallet lacked subaddresses the database holds: %lld made, up to "
                      "index %lld; rescanning the chain for their payments",
                      (long long)r.created, (long long)r.db_max);
    p->subaddrs_checked = true;
    return true;
}

static bool cycle_run(struct poller *p, struct cycle *c)
{
    if (!xg_pg_connect(p->pg) || !read_cursor(p, c)) {
        xg_log(XG_LOG_ERROR, "poll_db_failed", "%s", xg_pg_last_error(p->pg));
        return false;
    }
    c->min_height = c->cursor - p->opt.safety_margin;
    if (c->min_height < 0)
        c->min_height = 0;
    if (!p->subaddrs_checked && !check_subaddrs(p))
        return false;
    if (!fetch_wallet(p, c))
        return false;
    if (c->wallet_height + p->opt.safety_margin < c->last_wallet_height) {
        /* a wallet restored from an old file or rescanning: its silence is not news */
        wallet_failed(p, "height", "far below the last polled height (rescanning?)");
        return false;
    }
    if (!read_live_payments(p, c) || !diff(c)) {
        xg_log(XG_LOG_ERROR, "poll_db_failed", "%s", xg_pg_last_error(p->pg));
        return false;
    }
    return write_groups(p, c) && settle_due(p, c) && advance_cursor(p, c) && sweep_challenges(p) &&
           sweep_free_tenants(p) && sweep_usage(p);
}

bool poller_run_once(struct poller *p)
{
    struct cycle c = {0};
    int64_t t0 = xg_monotonic_us();
    bool ok = cycle_run(p, &c);
    pthread_mutex_lock(&p->lock);
    p->stats.cycles++;
    if (ok) {
        p->stats.last_cycle_us = xg_monotonic_us() - t0;
        p->stats.last_transfers = (int64_t)c.ntransfers;
        p->stats.last_changed = (int64_t)c.nwrites;
        p->stats.last_settled = c.settled;
        p->stats.cursor = c.cursor;
    } else {
        p->stats.failures++;
    }
    pthread_mutex_unlock(&p->lock);
    if (ok && c.nwrites > 0)
        xg_log(XG_LOG_DEBUG, "poll_cycle", "%zu transfers, %zu written, %lld settled", c.ntransfers,
               c.nwrites, (long long)c.settled);
    free(c.transfers);
    free(c.stored);
    free(c.writes);
    return ok;
}

/* ---- the thread ------------------------------------------------------------------- */

/* Readiness on a standby: the wallet answers (the leader's cycles do this otherwise). */
static void probe_wallet(struct poller *p)
{
    char err[512];
    int64_t h;
    if (wallet_get_height(p->opt.wallet, &h, err, sizeof err))
        wallet_answered(p, h);
    else
        wallet_failed(p, "get_height", err);
}

/* Sleeps up to ms; returns false when stopping. */
static bool pause_ms(struct poller *p, int64_t ms)
{
    struct timespec until = xg_monotonic_deadline(ms);
    pthread_mutex_lock(&p->lock);
    while (!p->stopping && pthread_cond_timedwait(&p->wake, &p->lock, &until) == 0)
        ;
    bool go_on = !p->stopping;
    pthread_mutex_unlock(&p->lock);
    return go_on;
}

static void set_leader(struct poller *p, bool leader)
{
    pthread_mutex_lock(&p->lock);
    p->stats.leader = leader;
    pthread_mutex_unlock(&p->lock);
}

static int64_t interval_of(struct poller *p)
{
    pthread_mutex_lock(&p->lock);
    int64_t ms = p->opt.interval_ms;
    pthread_mutex_unlock(&p->lock);
    return ms;
}

static void *poller_main(void *arg)
{
    struct poller *p = arg;
    int64_t backoff = FIRST_BACKOFF_MS, delay;
    do {
        int64_t interval = interval_of(p);
        bool leader = leader_hold(p->leader);
        set_leader(p, leader);
        if (!leader) {
            probe_wallet(p);
            delay = interval < STANDBY_CHECK_MS ? interval : STANDBY_CHECK_MS;
        } else if (poller_run_once(p)) {
            backoff = FIRST_BACKOFF_MS;
            delay = interval;
        } else {
            delay = backoff;
            backoff = backoff * 2 > p->opt.max_backoff_ms ? p->opt.max_backoff_ms : backoff * 2;
        }
    } while (pause_ms(p, delay));
    leader_release(p->leader);
    return NULL;
}

struct poller *poller_new(const struct poller_options *opt)
{
    struct poller *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->opt = *opt;
    p->conninfo = strdup(opt->conninfo);
    p->daemon_url = strdup(opt->daemon_url ? opt->daemon_url : "");
    size_t nown = sizeof poller_own_queries / sizeof poller_own_queries[0] - 1, nsettle = 0;
    while (settle_queries[nsettle])
        nsettle++;
    p->queries = calloc(nown + nsettle + 1, sizeof *p->queries);
    if (!p->conninfo || !p->daemon_url || !p->queries)
        goto fail;
    memcpy(p->queries, poller_own_queries, nown * sizeof *p->queries);
    memcpy(p->queries + nown, settle_queries, nsettle * sizeof *p->queries);
    p->opt.conninfo = p->conninfo;
    p->opt.daemon_url = p->daemon_url;
    p->pg = xg_pg_new(p->conninfo, p->queries);
    p->leader = leader_new(p->conninfo);
    p->daemon_http = xg_http_client_new();
    if (!p->pg || !p->leader || !p->daemon_http)
        goto fail;
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&p->wake, &attr);
    pthread_condattr_destroy(&attr);
    snprintf(p->wallet_problem, sizeof p->wallet_problem, "wallet-rpc not checked yet");
    return p;
fail:
    xg_pg_free(p->pg);
    leader_free(p->leader);
    xg_http_client_free(p->daemon_http);
    free(p->queries);
    free(p->conninfo);
    free(p->daemon_url);
    free(p);
    return NULL;
}

bool poller_start(struct poller *p)
{
    p->started = pthread_create(&p->thread, NULL, poller_main, p) == 0;
    return p->started;
}

void poller_free(struct poller *p)
{
    if (!p)
        return;
    if (p->started) {
        pthread_mutex_lock(&p->lock);
        p->stopping = true;
        pthread_cond_signal(&p->wake);
        pthread_mutex_unlock(&p->lock);
        pthread_join(p->thread, NULL);
    }
    xg_pg_free(p->pg);
    leader_free(p->leader);
    xg_http_client_free(p->daemon_http);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    free(p->queries);
    free(p->conninfo);
    free(p->daemon_url);
    free(p);
}

/* The daemon's height, for "not far behind"; -1 when unknown. Called without the lock. */
static int64_t daemon_height(struct poller *p)
{
    if (!*p->daemon_url)
        return -1;
    char url[512], err[256];
    snprintf(url, sizeof url, "%s/json_rpc", p->daemon_url);
    json_t *res =
        xg_jsonrpc_call(p->daemon_http, url, "get_block_count", NULL, 3000, err, sizeof err);
    int64_t h = res ? (int64_t)json_integer_value(json_object_get(res, "count")) : -1;
    json_decref(res);
    return h;
}

bool poller_ready(struct poller *p, char *reason, size_t len)
{
    pthread_mutex_lock(&p->lock);
    bool fresh = p->wallet_ok_at_ms > 0 &&
                 xg_monotonic_ms() - p->wallet_ok_at_ms <= READY_STALE_MS && !p->wallet_problem[0];
    int64_t wallet_h = p->stats.wallet_height;
    if (!fresh)
        snprintf(reason, len, "%s",
                 p->wallet_problem[0] ? p->wallet_problem : "wallet-rpc silent for a minute");
    pthread_mutex_unlock(&p->lock);
    if (!fresh)
        return false;
    int64_t dh = daemon_height(p);
    if (dh >= 0 && dh - wallet_h > p->opt.max_lag_blocks) {
        snprintf(reason, len, "wallet at height %lld, daemon at %lld", (long long)wallet_h,
                 (long long)dh);
        return false;
    }
    return true;
}

void poller_set_interval(struct poller *p, int64_t interval_ms)
{
    pthread_mutex_lock(&p->lock);
    p->opt.interval_ms = interval_ms;
    pthread_mutex_unlock(&p->lock);
}

void poller_stats(struct poller *p, struct poller_stats *out)
{
    pthread_mutex_lock(&p->lock);
    *out = p->stats;
    pthread_mutex_unlock(&p->lock);
}
