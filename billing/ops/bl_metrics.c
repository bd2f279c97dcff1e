/* bl_metrics — billing's families and the collector that fills them at scrape time. */
#include "ops/bl_metrics.h"

#include "xg_guard.h"

#include "core/bl_error.h"
#include "core/pricing.h"
#include "hooks/hook_retry.h"
#include "hooks/hook_sender.h"
#include "payments/poller.h"
#include "xg_clock.h"
#include "xg_dbwatch.h"
#include "xg_http.h"
#include "xg_log.h"
#include "xg_metrics.h"
#include "xg_pg.h"
#include "xg_version.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const invoice_states[] = {"pending",     "seen",      "confirming", "paid",
                                             "provisioned", "underpaid", "expired",    "late",
                                             "reverted",    NULL};
static const char *const payment_states[] = {"pool", "confirmed", "gone", "double_spend", NULL};
static const char *const metric_queries[] = {"bl_metrics_invoices", "bl_metrics_payments",
                                             "bl_metrics_webhook_outbox", NULL};
static const char *const status_classes[] = {"2xx", "3xx", "4xx", "5xx", "dropped", NULL};
static const char *const xmr402_steps[] = {"challenge", "verify", NULL};
/* the error registry's codes, in its order (filled once from bl_error.h) */
static const char *error_codes[BL_ERROR_COUNT + 1];

const double bl_metrics_latency_bounds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                            0.5,   1,    2.5,   5,    10};
const size_t bl_metrics_latency_nbounds =
    sizeof bl_metrics_latency_bounds / sizeof bl_metrics_latency_bounds[0];

enum bl_metrics_status_class bl_metrics_status_class(unsigned status)
{
    if (status == 0)
        return BL_METRICS_DROPPED;
    if (status >= 200 && status < 600)
        return (enum bl_metrics_status_class)(status / 100 - 2);
    return BL_METRICS_OTHER_STATUS;
}

int bl_metrics_xmr402_step(const char *route_path)
{
    if (strcmp(route_path, "/api/xmr402/challenge") == 0)
        return 0;
    if (strcmp(route_path, "/api/xmr402/verify") == 0)
        return 1;
    return -1;
}

struct bl_metrics {
    struct bl_metrics_sources src;
    char *conninfo, *daemon_url;
    struct xg_metrics *reg;
    struct xg_pg *pg;
    struct xg_http_client *http;
    struct xg_metric_labels *invoice_state, *pay_state, *close_reason;
    struct xg_metric_labels *hook_reason, *route, *status_class, *step, *error_code;
    struct xg_metric_labels *breaker_state;
    struct xg_metric *hook_backlog, *hook_oldest, *hook_failures, *hook_query_ok;
    struct xg_metric *hook_destinations;
    struct xg_metric *challenges, *verifies, *refusals, *requests, *latency;
    int64_t outbox_read_ms; /* when the outbox was last read (monotonic; 0: never) */
    struct xg_metric *invoices, *invoice_age, *payments, *piconero, *cycles, *failures,
        *cycle_seconds, *last_transfers, *wallet_height, *wallet_lag, *wallet_up, *cursor, *leader,
        *rate_age, *database_up, *aggregates_ok, *swept, *client_closes, *held_proofs;
};

static void collect_database(struct bl_metrics *m)
{
    if (!xg_pg_ok(m->pg) && !xg_pg_connect(m->pg)) {
        xg_metric_set(m->aggregates_ok, NULL, 0);
        return;
    }
    PGresult *inv = xg_pg_exec(m->pg, "bl_metrics_invoices", 0, NULL);
    PGresult *pay = inv ? xg_pg_exec(m->pg, "bl_metrics_payments", 0, NULL) : NULL;
    xg_metric_set(m->aggregates_ok, NULL, inv && pay);
    if (inv && pay) {
        /* States without a row are 0, not absent: an alert on "paid" needs the series. */
        for (unsigned i = 0; invoice_states[i]; i++) {
            xg_metric_set(m->invoices, &i, 0);
            xg_metric_set(m->invoice_age, &i, 0);
        }
        for (unsigned i = 0; payment_states[i]; i++) {
            xg_metric_set(m->payments, &i, 0);
            xg_metric_set(m->piconero, &i, 0);
        }
        for (int r = 0; r < PQntuples(inv); r++) {
            unsigned s = xg_metric_label_index(m->invoice_state, PQgetvalue(inv, r, 0));
            xg_metric_set(m->invoices, &s, strtod(PQgetvalue(inv, r, 1), NULL));
            xg_metric_set(m->invoice_age, &s, strtod(PQgetvalue(inv, r, 2), NULL));
        }
        for (int r = 0; r < PQntuples(pay); r++) {
            unsigned s = xg_metric_label_index(m->pay_state, PQgetvalue(pay, r, 0));
            xg_metric_set(m->payments, &s, strtod(PQgetvalue(pay, r, 1), NULL));
            xg_metric_set(m->piconero, &s, strtod(PQgetvalue(pay, r, 2), NULL));
        }
    }
    PQclear(inv);
    PQclear(pay);
}

/* The outbox's backlog and oldest pending event, read at most every
 * BL_METRICS_OUTBOX_EVERY_MS: between reads a scrape shows the last values. */
static void collect_outbox(struct bl_metrics *m)
{
    int64_t now = xg_monotonic_ms();
    if (m->outbox_read_ms && now - m->outbox_read_ms < BL_METRICS_OUTBOX_EVERY_MS)
        return;
    m->outbox_read_ms = now;
    PGresult *res =
        xg_pg_ok(m->pg) ? xg_pg_exec(m->pg, "bl_metrics_webhook_outbox", 0, NULL) : NULL;
    bool ok = res && PQntuples(res) == 1;
    xg_metric_set(m->hook_query_ok, NULL, ok);
    if (ok) {
        xg_metric_set(m->hook_backlog, NULL, strtod(PQgetvalue(res, 0, 0), NULL));
        xg_metric_set(m->hook_oldest, NULL, strtod(PQgetvalue(res, 0, 1), NULL));
    }
    PQclear(res);
}

static void on_api_answered(void *ctx, size_t route, unsigned status, double seconds, int error)
{
    struct bl_metrics *m = ctx;
    unsigned r = route < xg_metric_label_count(m->route) - 1 ? (unsigned)route
                                                             : xg_metric_label_count(m->route) - 1;
    unsigned rc[2] = {r, (unsigned)bl_metrics_status_class(status)};
    xg_metric_inc(m->requests, rc);
    xg_metric_observe(m->latency, &r, seconds);
    int step = route < xg_metric_label_count(m->route) - 1
                   ? bl_metrics_xmr402_step(api_route_paths[route])
                   : -1;
    if (step < 0 || status == 0)
        return;
    if (step == 0 && error < 0 && status / 100 == 2)
        xg_metric_inc(m->challenges, NULL);
    if (step == 1)
        xg_metric_inc(m->verifies, NULL);
    if (error >= 0) {
        unsigned se[2] = {(unsigned)step,
                          error < BL_ERROR_COUNT ? (unsigned)error : BL_ERROR_COUNT};
        xg_metric_inc(m->refusals, se);
    }
}

struct api_observer bl_metrics_api_observer(struct bl_metrics *m)
{
    return (struct api_observer){.answered = on_api_answered, .ctx = m};
}

/* monerod's chain length, or -1. */
static int64_t daemon_height(struct bl_metrics *m)
{
    if (!m->daemon_url[0])
        return -1;
    char url[512], err[256];
    snprintf(url, sizeof url, "%s/json_rpc", m->daemon_url);
    json_t *res = xg_jsonrpc_call(m->http, url, "get_block_count", NULL, 2000, err, sizeof err);
    int64_t h = res ? (int64_t)json_integer_value(json_object_get(res, "count")) : -1;
    json_decref(res);
    return h;
}

static void on_collect(void *arg)
{
    struct bl_metrics *m = arg;
    char reason[256];
    if (m->src.dbwatch)
        xg_metric_set(m->database_up, NULL,
                      xg_dbwatch_ready(m->src.dbwatch, reason, sizeof reason));
    collect_database(m);
    collect_outbox(m);
    if (m->src.hooks) {
        uint64_t n[HOOK_FAILURE_COUNT];
        hook_sender_failures(m->src.hooks, n);
        for (unsigned i = 0; i < HOOK_FAILURE_COUNT; i++)
            xg_metric_store(m->hook_failures, &i, n[i]);
        uint64_t b[HOOK_BREAKER_NSTATES];
        hook_sender_breakers(m->src.hooks, b);
        for (unsigned i = 0; i < HOOK_BREAKER_NSTATES; i++)
            xg_metric_set(m->hook_destinations, &i, (double)b[i]);
    }
    if (m->src.poller) {
        struct poller_stats st;
        poller_stats(m->src.poller, &st);
        xg_metric_store(m->cycles, NULL, (uint64_t)st.cycles);
        xg_metric_store(m->failures, NULL, (uint64_t)st.failures);
        xg_metric_store(m->swept, NULL, (uint64_t)st.swept);
        xg_metric_set(m->cycle_seconds, NULL, (double)st.last_cycle_us / 1e6);
        xg_metric_set(m->last_transfers, NULL, (double)st.last_transfers);
        xg_metric_set(m->wallet_height, NULL, (double)st.wallet_height);
        xg_metric_set(m->cursor, NULL, (double)st.cursor);
        xg_metric_set(m->leader, NULL, st.leader);
        xg_metric_set(m->wallet_up, NULL, poller_ready(m->src.poller, reason, sizeof reason));
        int64_t dh = daemon_height(m);
        if (dh >= 0 && st.wallet_height > 0)
            xg_metric_set(m->wallet_lag, NULL, (double)(dh - st.wallet_height));
    }
    if (m->src.clients) {
        uint64_t n[XG_GUARD_NREASONS];
        xg_guard_counts_read(m->src.clients, n);
        for (unsigned i = 0; i < XG_GUARD_NREASONS; i++)
            xg_metric_store(m->client_closes, &i, n[i]);
    }
    if (m->src.api)
        xg_metric_set(m->held_proofs, NULL, (double)api_held_proofs(m->src.api));
    if (m->src.prices) {
        int64_t age = price_source_age_ms(m->src.prices);
        xg_metric_set(m->rate_age, NULL, age < 0 ? -1 : (double)age / 1000.0);
    }
}

#define GAUGE(name, help) xg_metric_gauge(m->reg, name, help, NULL, 0)

static bool families(struct bl_metrics *m)
{
    m->invoice_state = xg_metric_labels_fixed(m->reg, "state", invoice_states);
    m->pay_state = xg_metric_labels_fixed(m->reg, "state", payment_states);
    m->close_reason = xg_metric_labels_fixed(m->reg, "reason", xg_guard_count_reasons);
    for (unsigned i = 0; i < BL_ERROR_COUNT; i++)
        error_codes[i] = bl_error_code((enum bl_error)i);
    m->hook_reason = xg_metric_labels_fixed(m->reg, "reason", hook_failure_names);
    m->breaker_state = xg_metric_labels_fixed(m->reg, "state", hook_breaker_state_names);
    m->route = xg_metric_labels_fixed(m->reg, "route", api_route_paths);
    m->status_class = xg_metric_labels_fixed(m->reg, "code", status_classes);
    m->step = xg_metric_labels_fixed(m->reg, "step", xmr402_steps);
    m->error_code = xg_metric_labels_fixed(m->reg, "reason", error_codes);
    if (!m->invoice_state || !m->pay_state || !m->close_reason || !m->hook_reason || !m->route ||
        !m->status_class || !m->step || !m->error_code || !m->breaker_state)
        return false;
    m->hook_backlog = GAUGE("xmrgate_billing_webhook_backlog",
                            "Webhook events neither delivered nor given up (all instances).");
    m->hook_oldest = GAUGE("xmrgate_billing_webhook_oldest_pending_seconds",
                           "Seconds since the oldest pending webhook event was written (0: none).");
    m->hook_query_ok = GAUGE("xmrgate_billing_webhook_query_ok",
                             "1 when the last read of the webhook outbox succeeded.");
    m->hook_failures = xg_metric_counter(
        m->reg, "xmrgate_billing_webhook_failures_total",
        "Webhook attempts that failed on this instance, by reason (each retry counts).",
        (struct xg_metric_labels *[]){m->hook_reason}, 1);
    m->hook_destinations = xg_metric_gauge(
        m->reg, "xmrgate_billing_webhook_destinations",
        "Webhook destinations (host and port) this instance keeps a breaker for, by its state: "
        "closed (an attempt under way, or failures below breaker_threshold), open (its events "
        "wait), half_open (one probe may go).",
        (struct xg_metric_labels *[]){m->breaker_state}, 1);
    m->challenges = xg_metric_counter(m->reg, "xmrgate_billing_xmr402_challenges_total",
                                      "XMR402 challenges issued (2xx answers).", NULL, 0);
    m->verifies = xg_metric_counter(m->reg, "xmrgate_billing_xmr402_verifies_total",
                                    "XMR402 proofs answered, whatever the answer.", NULL, 0);
    m->refusals = xg_metric_counter(
        m->reg, "xmrgate_billing_xmr402_refusals_total",
        "XMR402 challenges and proofs refused, by step and the error registry's code.",
        (struct xg_metric_labels *[]){m->step, m->error_code}, 2);
    m->requests = xg_metric_counter(
        m->reg, "xmrgate_billing_api_requests_total",
        "API requests completed, by route pattern and status class (dropped: no answer).",
        (struct xg_metric_labels *[]){m->route, m->status_class}, 2);
    m->latency = xg_metric_histogram(
        m->reg, "xmrgate_billing_api_request_duration_seconds",
        "API requests from arrival to answer (a held proof's wait included), by route pattern.",
        (struct xg_metric_labels *[]){m->route}, 1, bl_metrics_latency_bounds,
        bl_metrics_latency_nbounds);
    if (!m->hook_backlog || !m->hook_oldest || !m->hook_query_ok || !m->hook_failures ||
        !m->hook_destinations || !m->challenges || !m->verifies || !m->refusals || !m->requests ||
        !m->latency)
        return false;
    m->client_closes = xg_metric_counter(
        m->reg, "xmrgate_billing_client_closes_total",
        "API connections closed for a head not complete within header_timeout or a body "
        "under body_min_rate, or refused at accept over max_connections_per_address or, with "
        "proxy_protocol, when the PROXY reader has no place left (proxy_full).",
        (struct xg_metric_labels *[]){m->close_reason}, 1);
    m->invoices = xg_metric_gauge(m->reg, "xmrgate_billing_invoices", "Invoices by state.",
                                  (struct xg_metric_labels *[]){m->invoice_state}, 1);
    m->invoice_age = xg_metric_gauge(
        m->reg, "xmrgate_billing_invoice_oldest_age_seconds",
        "Seconds since the least recently changed invoice in each state last changed.",
        (struct xg_metric_labels *[]){m->invoice_state}, 1);
    m->payments = xg_metric_gauge(m->reg, "xmrgate_billing_payments",
                                  "Payments seen by the view-only wallet, by state (pool = "
                                  "seen, confirmed = mined).",
                                  (struct xg_metric_labels *[]){m->pay_state}, 1);
    m->piconero = xg_metric_gauge(m->reg, "xmrgate_billing_received_piconero",
                                  "Piconero carried by the stored payments, by state.",
                                  (struct xg_metric_labels *[]){m->pay_state}, 1);
    m->cycles = xg_metric_counter(m->reg, "xmrgate_billing_poll_cycles_total",
                                  "Completed poll cycles on this instance.", NULL, 0);
    m->failures = xg_metric_counter(m->reg, "xmrgate_billing_poll_failures_total",
                                    "Poll cycles that failed (wallet-rpc or PostgreSQL).", NULL, 0);
    m->swept = xg_metric_counter(m->reg, "xmrgate_billing_xmr402_challenges_swept_total",
                                 "Expired unpaid XMR402 challenges deleted after their retention.",
                                 NULL, 0);
    m->cycle_seconds =
        GAUGE("xmrgate_billing_poll_cycle_seconds", "Duration of the last completed poll cycle.");
    m->last_transfers = GAUGE("xmrgate_billing_poll_transfers",
                              "Transfers in the last cycle's get_transfers answer.");
    m->wallet_height = GAUGE("xmrgate_billing_wallet_height", "The view-only wallet's height.");
    m->wallet_lag = GAUGE("xmrgate_billing_wallet_lag_blocks",
                          "Blocks the view-only wallet is behind monerod.");
    m->wallet_up = GAUGE("xmrgate_billing_wallet_up",
                         "1 when wallet-rpc answered recently and is not far behind.");
    m->cursor =
        GAUGE("xmrgate_billing_poll_cursor_height", "Height below which every transfer is stored.");
    m->leader = GAUGE("xmrgate_billing_leader",
                      "1 on the instance holding the advisory lock (it polls and provisions).");
    m->rate_age = GAUGE("xmrgate_billing_rate_age_seconds",
                        "Age of the exchange rate held (-1: none yet, or no rate source).");
    m->held_proofs = GAUGE("xmrgate_billing_xmr402_held_proofs",
                           "XMR402 proofs waiting now for their transaction ([xmr402] unseen_hold; "
                           "bounded by max_held_proofs).");
    m->database_up = GAUGE("xmrgate_billing_database_up",
                           "1 when PostgreSQL answers and the schema is current.");
    m->aggregates_ok = GAUGE("xmrgate_billing_metrics_query_ok",
                             "1 when this scrape could read the invoice and payment counts.");
    return m->invoices && m->invoice_age && m->payments && m->piconero && m->cycles &&
           m->failures && m->cycle_seconds && m->last_transfers && m->wallet_height &&
           m->wallet_lag && m->wallet_up && m->cursor && m->leader && m->rate_age &&
           m->database_up && m->aggregates_ok && m->swept && m->client_closes && m->held_proofs;
}

struct bl_metrics *bl_metrics_new(const struct bl_metrics_sources *src)
{
    struct bl_metrics *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->src = *src;
    m->conninfo = strdup(src->conninfo ? src->conninfo : "");
    m->daemon_url = strdup(src->daemon_url ? src->daemon_url : "");
    m->reg = xg_metrics_new();
    m->http = xg_http_client_new();
    if (!m->conninfo || !m->daemon_url || !m->reg || !m->http)
        goto fail;
    m->pg = xg_pg_new(m->conninfo, metric_queries);
    if (!m->pg || !xg_version_register_metric(m->reg) || !families(m) ||
        !xg_metrics_add_collector(m->reg, on_collect, m))
        goto fail;
    return m;
fail:
    bl_metrics_free(m);
    return NULL;
}

void bl_metrics_free(struct bl_metrics *m)
{
    if (!m)
        return;
    xg_metrics_free(m->reg);
    xg_pg_free(m->pg);
    xg_http_client_free(m->http);
    free(m->conninfo);
    free(m->daemon_url);
    free(m);
}

struct xg_metrics *bl_metrics_registry(struct bl_metrics *m)
{
    return m ? m->reg : NULL;
}
