/* gw_metrics — the gateway's families, request-path hooks, collectors and slow summary. */
#include "ops/gw_metrics.h"

#include "auth/auth.h"
#include "cache/cache.h"
#include "limits/limits.h"
#include "nodes/prober.h"
#include "state/tenants.h"
#include "nodes/upstream.h"
#include "xg_clock.h"
#include "xg_dbwatch.h"
#include "xg_guard.h"
#include "xg_log.h"
#include "xg_metrics.h"
#include "xg_version.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOW_SUMMARY_MS 60000
#define METHOD_SLOTS    1024 /* the pointer → label index table; > 2 × the method count */

/* Seconds: client-facing answers range from cache hits (µs) to bulk .bin syncs (s). */
static const double latency_bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                        0.25,   0.5,   1,      2.5,   5,    10,    30};
static const double apply_bounds[] = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1};
/* Seconds a request over its burst bucket is held: from one token's share (1/rate) to
 * [limits] max_delay (2 s by default, at most 60). */
static const double delay_bounds[] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10};

static const char *const class_values[] = {"immutable", "tip",  "passthrough", "broadcast",
                                           "denied",    "none", NULL};
static const char *const status_values[] = {"200", "202", "400", "401", "402", "403", "404", "405",
                                            "413", "429", "500", "502", "503", "504", NULL};
static const char *const outcome_values[] = {"node", "cache", "refused", "failed", NULL};
static const char *const node_outcome_values[] = {"ok",   "connect_error", "timeout", "http_error",
                                                  "busy", "broken",        NULL};
static const char *const bcast_values[] = {"accepted", "rejected", "failed", NULL};
static const char *const hedge_values[] = {"sent", "won", "no_budget", "moved", NULL};
static const char *const checked_values[] = {"agreed",     "majority", "disagreed",
                                             "unverified", "refused",  NULL};
static const char *const answer_values[] = {"agreed", "mismatched", NULL};
static const char *const scheme_values[] = {"digest", "basic", "bearer",    "api_key",
                                            "path",   "none",  "malformed", NULL};
static const char *const limit_values[] = {"burst", "quota", NULL};
static const char *const channel_values[] = {"xmrgate_tenants", "xmrgate_tiers", "xmrgate_nodes",
                                             NULL};
static const char *const breaker_names[] = {"closed", "open", "half-open", NULL};
/* What a node says it is (nodes/fit.h): "unknown" until it told. */
static const char *const network_values[] = {"mainnet", "testnet", "stagenet",
                                             "regtest", "unknown", NULL};
static const char *const restricted_values[] = {"true", "false", "unknown", NULL};
#define NODE_RPC_VERSIONS 8 /* distinct RPC versions labelled (more: "other") */

struct method_slot {
    const struct method_info *info;
    unsigned index;
};

struct gw_metrics {
    struct xg_metrics *reg;
    struct gw_metrics_sources src;
    /* label sets */
    struct xg_metric_labels *cls, *method, *status, *outcome, *node, *node_outcome, *bcast, *scheme,
        *limit, *channel, *hedge, *checked_outcome, *answer, *network, *rpc_version, *restricted;
    const char **method_names; /* methods_at order, NULL-terminated (owned array) */
    struct method_slot method_slots[METHOD_SLOTS];
    /* the request path */
    struct xg_metric *requests, *outcomes, *duration, *auth_failures, *rate_limited, *burst_delay,
        *payment_required, *node_requests, *node_duration, *broadcasts, *broadcast_nodes, *slow,
        *hedges, *checked, *node_answers, *node_misbehaving, *behind_tip, *coalesced,
        *notify_applied, *notify_seconds, *full_reloads, *client_closes, *xmr402_streams;
    atomic_long xmr402_streams_open; /* the gauge's count, and [xmr402] streams' cap */
    struct xg_metric_labels *close_reason;
    struct xg_guard_counts clients;
    /* collected */
    struct xg_metric *node_up, *node_dropped, *node_height, *node_lag, *node_ema, *node_breaker,
        *node_cooldown, *quorum_known, *quorum_height, *quorum_degraded, *quorum_healthy,
        *quorum_voters, *quorum_agreeing, *nodes_configured, *cache_hits, *cache_settled_hits,
        *cache_misses, *cache_evictions, *cache_purged, *cache_bytes, *cache_entries,
        *cache_max_bytes, *cache_epoch, *tenants_loaded, *tenants_bytes, *database_up,
        *tenants_synced, *usage_flushes, *usage_flush_failures, *usage_rows_held, *fleet_replicas,
        *prober_round_age, *prober_round_took, *prober_stalled, *prober_rounds;
    struct xg_metric *node_info, *node_refused, *node_error_rate; /* what each node is */
    /* set when the certificate is loaded (gw_metrics_set_tls_not_after) */
    struct xg_metric *tls_not_after;
    /* the slow-request summary */
    _Atomic int64_t slow_ms;
    _Atomic uint64_t *slow_count; /* per method label index */
    _Atomic uint64_t *slow_max_us;
    pthread_t thread;
    bool thread_started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;
};

/* ---- labels ---------------------------------------------------------------------------- */

static size_t slot_of(const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 17;
    x *= UINT64_C(0xed5ad4bb);
    x ^= x >> 11;
    return x % METHOD_SLOTS;
}

/* The method label's values are the table's canonical names, in table order; a pointer
 * hash turns a row into its index without comparing strings on the request path. */
static bool methods_labels(struct gw_metrics *m)
{
    size_t n = methods_count();
    m->method_names = calloc(n + 1, sizeof *m->method_names);
    if (!m->method_names)
        return false;
    for (size_t i = 0; i < n; i++) {
        const struct method_info *info = methods_at(i);
        m->method_names[i] = info->name;
        size_t s = slot_of(info);
        while (m->method_slots[s].info)
            s = (s + 1) % METHOD_SLOTS;
        m->method_slots[s] = (struct method_slot){info, (unsigned)i};
    }
    m->method = xg_metric_labels_fixed(m->reg, "method", m->method_names);
    return m->method != NULL;
}

static unsigned method_index(const struct gw_metrics *m, const struct method_info *info)
{
    if (info)
        for (size_t s = slot_of(info); m->method_slots[s].info; s = (s + 1) % METHOD_SLOTS)
            if (m->method_slots[s].info == info)
                return m->method_slots[s].index;
    return (unsigned)methods_count(); /* "other" */
}

static unsigned class_index(const struct method_info *info)
{
    return info ? (unsigned)info->cls : 5; /* "none" */
}

enum gw_node_outcome gw_metrics_node_outcome(int up_outcome, long http_status, bool busy)
{
    switch ((enum up_outcome)up_outcome) {
    case UP_OK:
        return http_status >= 500 || http_status < 200 ? GW_NODE_HTTP_ERROR
               : busy                                  ? GW_NODE_BUSY
                                                       : GW_NODE_OK;
    case UP_CONNECT_ERROR:
        return GW_NODE_CONNECT_ERROR;
    case UP_TIMEOUT:
        return GW_NODE_TIMEOUT;
    case UP_TOO_LARGE:
    case UP_PROTOCOL_ERROR:
    case UP_CANCELLED:
    case UP_INTERNAL_ERROR:
        break;
    }
    return GW_NODE_BROKEN;
}

/* The status label's index without formatting or comparing text (the request path). */
static unsigned status_index(unsigned status)
{
    static const unsigned codes[] = {200, 202, 400, 401, 402, 403, 404,
                                     405, 413, 429, 500, 502, 503, 504};
    unsigned i = 0;
    while (i < sizeof codes / sizeof codes[0] && codes[i] != status)
        i++;
    return i; /* past the end: "other" */
}

const char *gw_metrics_status_label(unsigned status)
{
    unsigned i = status_index(status);
    return i < sizeof status_values / sizeof status_values[0] - 1 ? status_values[i]
                                                                  : XG_METRICS_OTHER;
}

const char *gw_metrics_auth_scheme(int kind)
{
    switch ((enum auth_kind)kind) {
    case AUTH_DIGEST:
        return "digest";
    case AUTH_BASIC:
        return "basic";
    case AUTH_BEARER:
        return "bearer";
    case AUTH_API_KEY:
        return "api_key";
    case AUTH_PATH_TOKEN:
        return "path";
    case AUTH_NONE:
        return "none";
    case AUTH_MALFORMED:
    case AUTH_INVALID:
        return "malformed";
    case AUTH_OTHER_SCHEME:
        break;
    }
    return XG_METRICS_OTHER;
}

/* ---- families -------------------------------------------------------------------------- */

#define L(...)  ((struct xg_metric_labels *[]){__VA_ARGS__})
#define NL(...) (sizeof(L(__VA_ARGS__)) / sizeof(struct xg_metric_labels *))
#define COUNTER(name, help, ...)                                                                   \
    xg_metric_counter(m->reg, name, help, L(__VA_ARGS__), NL(__VA_ARGS__))
#define GAUGE(name, help, ...) xg_metric_gauge(m->reg, name, help, L(__VA_ARGS__), NL(__VA_ARGS__))

static bool request_families(struct gw_metrics *m)
{
    m->requests = COUNTER("xmrgate_gateway_requests_total",
                          "Client requests answered, by method class, method and HTTP status.",
                          m->cls, m->method, m->status);
    m->outcomes = COUNTER("xmrgate_gateway_request_outcomes_total",
                          "Client requests by how they were answered: node, cache, refused by "
                          "the gateway, failed (no usable node answer).",
                          m->cls, m->outcome);
    m->duration = xg_metric_histogram(m->reg, "xmrgate_gateway_request_duration_seconds",
                                      "Client-facing latency, first byte to queued answer.",
                                      L(m->cls, m->outcome), 2, latency_bounds,
                                      sizeof latency_bounds / sizeof latency_bounds[0]);
    m->auth_failures = xg_metric_counter(
        m->reg, "xmrgate_gateway_auth_failures_total",
        "Requests refused with 401, by the credential scheme presented.", L(m->scheme), 1);
    m->rate_limited =
        xg_metric_counter(m->reg, "xmrgate_gateway_rate_limited_total",
                          "Requests refused with 429, by the limit hit.", L(m->limit), 1);
    m->burst_delay = xg_metric_histogram(
        m->reg, "xmrgate_gateway_burst_delay_seconds",
        "Requests over their tier's burst bucket held until their token was due instead of "
        "refused, by the delay given (_count: requests delayed, _sum: total delay).",
        NULL, 0, delay_bounds, sizeof delay_bounds / sizeof delay_bounds[0]);
    m->payment_required =
        xg_metric_counter(m->reg, "xmrgate_gateway_payment_required_total",
                          "Requests answered 402 Payment Required (XMR402).", NULL, 0);
    m->node_requests = COUNTER("xmrgate_gateway_node_requests_total",
                               "Client requests sent to each node, by outcome (probes excluded).",
                               m->node, m->node_outcome);
    m->node_duration =
        xg_metric_histogram(m->reg, "xmrgate_gateway_node_request_duration_seconds",
                            "Per-node latency of client requests.", L(m->node), 1, latency_bounds,
                            sizeof latency_bounds / sizeof latency_bounds[0]);
    m->broadcasts =
        COUNTER("xmrgate_gateway_broadcasts_total",
                "Transaction broadcasts: accepted by at least one node, or not.", m->bcast);
    m->broadcast_nodes = COUNTER("xmrgate_gateway_broadcast_node_outcomes_total",
                                 "Each node's answer to a broadcast.", m->node, m->bcast);
    m->hedges = COUNTER("xmrgate_gateway_hedged_reads_total",
                        "Reads asked of a second node while the first had not answered: sent, "
                        "won (its answer served), no_budget (due, not sent), moved (a "
                        "confirmation left for the next node past its hedge delay).",
                        m->hedge);
    m->checked = COUNTER("xmrgate_gateway_checked_reads_total",
                         "Reads of decoys and fees served only when own nodes agree: agreed, "
                         "majority (a third node decided), disagreed (503), unverified (one "
                         "node, served marked), refused (one node, 503).",
                         m->checked_outcome);
    m->node_answers = COUNTER("xmrgate_gateway_node_checked_answers_total",
                              "Each node's checked answers: agreed with the other own nodes, or "
                              "the odd one out.",
                              m->node, m->answer);
    m->node_misbehaving =
        GAUGE("xmrgate_gateway_node_misbehaving",
              "1 while the node serves no read because its checked answers differed from the "
              "other own nodes' (nodes/honesty.h).",
              m->node);
    m->behind_tip = xg_metric_counter(
        m->reg, "xmrgate_gateway_behind_served_tip_total",
        "Reads refused 503 because no node had reached the chain tip already served to the "
        "tenant (monotonic reads).",
        NULL, 0);
    m->coalesced = xg_metric_counter(
        m->reg, "xmrgate_gateway_cache_coalesced_total",
        "Cache misses that waited for an identical request already asking a node, and were "
        "answered from the cache once it stored the answer.",
        NULL, 0);
    m->slow =
        COUNTER("xmrgate_gateway_slow_requests_total",
                "Client requests slower than the slow-request threshold, by method.", m->method);
    m->notify_applied = COUNTER("xmrgate_gateway_notify_applied_total",
                                "PostgreSQL NOTIFYs applied to the in-memory tables.", m->channel);
    m->notify_seconds = xg_metric_histogram(
        m->reg, "xmrgate_gateway_notify_apply_seconds",
        "Time from a NOTIFY's arrival to the change serving requests.", L(m->channel), 1,
        apply_bounds, sizeof apply_bounds / sizeof apply_bounds[0]);
    m->full_reloads =
        xg_metric_counter(m->reg, "xmrgate_gateway_full_reloads_total",
                          "Full reloads of tenants and nodes (start, reconnect).", NULL, 0);
    m->close_reason = xg_metric_labels_fixed(m->reg, "reason", xg_guard_count_reasons);
    m->client_closes =
        m->close_reason
            ? xg_metric_counter(m->reg, "xmrgate_gateway_client_closes_total",
                                "Client connections closed for a head not complete within "
                                "header_timeout (408), a body under body_min_rate over "
                                "body_window or past body_timeout (408), an answer taken "
                                "under send_min_rate (slow_reader), or refused at accept over "
                                "max_connections_per_address or with no place left in the "
                                "PROXY reader (proxy_full).",
                                (struct xg_metric_labels *[]){m->close_reason}, 1)
            : NULL;
    m->xmr402_streams = xg_metric_gauge(
        m->reg, "xmrgate_gateway_xmr402_streams_open",
        "XMR402 event streams open (accepted, waiting for confirmations).", NULL, 0);
    return m->xmr402_streams && m->client_closes && m->requests && m->outcomes && m->duration &&
           m->auth_failures && m->rate_limited && m->burst_delay && m->payment_required &&
           m->node_requests && m->node_duration && m->broadcasts && m->broadcast_nodes && m->slow &&
           m->hedges && m->checked && m->node_answers && m->node_misbehaving && m->behind_tip &&
           m->coalesced && m->notify_applied && m->notify_seconds && m->full_reloads;
}

#define PLAIN_GAUGE(name, help)   xg_metric_gauge(m->reg, name, help, NULL, 0)
#define PLAIN_COUNTER(name, help) xg_metric_counter(m->reg, name, help, NULL, 0)

static bool collected_families(struct gw_metrics *m)
{
    m->node_up =
        GAUGE("xmrgate_gateway_node_up",
              "1 when the node passes the semantic health check (hysteresis applied).", m->node);
    m->node_dropped = GAUGE("xmrgate_gateway_node_dropped",
                            "1 when the node failed past the cooldown ceiling and is out of "
                            "rotation until an operator re-enables it.",
                            m->node);
    m->node_height = GAUGE("xmrgate_gateway_node_height", "The node's chain height.", m->node);
    m->node_lag = GAUGE("xmrgate_gateway_node_lag_blocks",
                        "Blocks the node is behind the quorum tip (-1: another chain, or "
                        "unknown).",
                        m->node);
    m->node_ema = GAUGE("xmrgate_gateway_node_latency_ema_seconds",
                        "Probe latency, exponential moving average (alpha 0.3).", m->node);
    m->node_breaker = GAUGE("xmrgate_gateway_node_breaker_state",
                            "Circuit breaker: 0 closed, 1 open, 2 half-open.", m->node);
    m->node_cooldown =
        GAUGE("xmrgate_gateway_node_cooldown_seconds",
              "Current probe cooldown of a failing node (0: probed every round).", m->node);
    m->node_info = xg_metric_gauge(
        m->reg, "xmrgate_gateway_node_info",
        "1 for each node, labelled with what it says it is: its network (get_info nettype), "
        "RPC version (get_version, MAJOR.MINOR) and restricted mode.",
        (struct xg_metric_labels *[]){m->node, m->network, m->rpc_version, m->restricted}, 4);
    m->node_refused = GAUGE("xmrgate_gateway_node_refused",
                            "1 when the node does not fit the pool ([nodes] network, "
                            "min_rpc_version, require_restricted) and is never healthy.",
                            m->node);
    m->node_error_rate = GAUGE("xmrgate_gateway_node_error_rate",
                               "Share of the node's recent client requests that failed "
                               "(moving average over about the last 20).",
                               m->node);
    m->quorum_known =
        PLAIN_GAUGE("xmrgate_gateway_quorum_known", "1 once a probe round has found a tip.");
    m->quorum_height =
        PLAIN_GAUGE("xmrgate_gateway_quorum_tip_height", "Chain height at the quorum tip.");
    m->quorum_degraded = PLAIN_GAUGE("xmrgate_gateway_quorum_degraded",
                                     "1 when no majority of the configured own nodes agrees on "
                                     "a tip (serving from the highest node; still ready).");
    m->quorum_voters = PLAIN_GAUGE("xmrgate_gateway_quorum_voters",
                                   "Own nodes (primary and standby) configured: the quorum is a "
                                   "majority of these.");
    m->quorum_agreeing = PLAIN_GAUGE("xmrgate_gateway_quorum_agreeing_nodes",
                                     "Own nodes on the quorum tip (0 when degraded).");
    m->quorum_healthy =
        PLAIN_GAUGE("xmrgate_gateway_quorum_healthy_nodes", "Nodes up and on the quorum tip.");
    m->nodes_configured =
        PLAIN_GAUGE("xmrgate_gateway_nodes_configured", "Enabled nodes in the nodes table.");
    m->cache_hits = PLAIN_COUNTER("xmrgate_gateway_cache_hits_total", "Answer cache hits.");
    m->cache_settled_hits =
        PLAIN_COUNTER("xmrgate_gateway_cache_settled_hits_total",
                      "Of the cache hits: settled entries (deep blocks, sync batches, ranges).");
    m->cache_misses = PLAIN_COUNTER("xmrgate_gateway_cache_misses_total", "Answer cache misses.");
    m->cache_evictions = PLAIN_COUNTER("xmrgate_gateway_cache_evictions_total",
                                       "Entries evicted to stay under the memory bound.");
    m->cache_purged = PLAIN_COUNTER("xmrgate_gateway_cache_purged_total",
                                    "Entries dropped because a reorg changed their epoch.");
    m->cache_bytes = PLAIN_GAUGE("xmrgate_gateway_cache_bytes", "Bytes held by the answer cache.");
    m->cache_entries = PLAIN_GAUGE("xmrgate_gateway_cache_entries", "Entries in the answer cache.");
    m->cache_max_bytes =
        PLAIN_GAUGE("xmrgate_gateway_cache_max_bytes", "The answer cache's memory bound.");
    m->cache_epoch = PLAIN_GAUGE("xmrgate_gateway_cache_epoch",
                                 "Reorgs seen (each bumps the cache epoch above its fork).");
    m->tenants_loaded = PLAIN_GAUGE("xmrgate_gateway_tenants_loaded", "Tenants held in memory.");
    m->tenants_bytes = PLAIN_GAUGE("xmrgate_gateway_tenants_bytes",
                                   "Bytes the tenant snapshots and tier versions hold (the "
                                   "allocator's usable sizes, hash buckets not counted).");
    m->database_up = PLAIN_GAUGE("xmrgate_gateway_database_up",
                                 "1 when PostgreSQL answers and the schema is current.");
    m->tenants_synced = PLAIN_GAUGE("xmrgate_gateway_tenants_synced",
                                    "1 when the LISTEN connection is up and fully loaded.");
    m->usage_flushes = PLAIN_COUNTER("xmrgate_gateway_usage_flushes_total",
                                     "Usage counts flushed to PostgreSQL (statements).");
    m->usage_flush_failures = PLAIN_COUNTER("xmrgate_gateway_usage_flush_failures_total",
                                            "Usage flushes that failed (retried later).");
    m->usage_rows_held =
        PLAIN_GAUGE("xmrgate_gateway_usage_rows_held", "Usage rows waiting for PostgreSQL.");
    m->fleet_replicas = PLAIN_GAUGE("xmrgate_gateway_fleet_replicas",
                                    "Gateway replicas beating in this database: each gives a "
                                    "tenant this share of its burst ([limits] share_burst).");
    m->prober_round_age = PLAIN_GAUGE("xmrgate_gateway_prober_last_round_age_seconds",
                                      "Seconds since the prober last ended a probe round (since "
                                      "it started, before any ended).");
    m->prober_round_took = PLAIN_GAUGE("xmrgate_gateway_prober_last_round_duration_seconds",
                                       "How long the last probe round took.");
    m->prober_stalled = PLAIN_GAUGE("xmrgate_gateway_prober_stalled",
                                    "1 when no probe round has ended for three rounds' time "
                                    "(3 x the longer of probe_interval and probe_timeout): the "
                                    "replica is not ready.");
    m->prober_rounds = PLAIN_COUNTER("xmrgate_gateway_prober_rounds_total",
                                     "Probe rounds ended (at the interval and for ZMQ "
                                     "publications).");
    m->tls_not_after = PLAIN_GAUGE("xmrgate_gateway_tls_cert_not_after_seconds",
                                   "The served TLS certificate's notAfter as a Unix time (absent "
                                   "when the gateway serves plain HTTP).");
    if (!m->node_info || !m->node_refused || !m->node_error_rate)
        return false;
    return m->prober_round_age && m->prober_round_took && m->prober_stalled && m->prober_rounds &&
           m->tls_not_after && m->node_up && m->node_dropped && m->node_height && m->node_lag &&
           m->node_ema && m->node_breaker && m->node_cooldown && m->quorum_known &&
           m->quorum_height && m->quorum_degraded && m->quorum_healthy && m->quorum_voters &&
           m->quorum_agreeing && m->nodes_configured && m->cache_hits && m->cache_settled_hits &&
           m->cache_misses && m->cache_evictions && m->cache_purged && m->cache_bytes &&
           m->cache_entries && m->cache_max_bytes && m->cache_epoch && m->tenants_loaded &&
           m->tenants_bytes && m->database_up && m->tenants_synced && m->usage_flushes &&
           m->usage_flush_failures && m->usage_rows_held && m->fleet_replicas;
}

struct xg_guard_counts *gw_metrics_client_counts(struct gw_metrics *m)
{
    return m ? &m->clients : NULL;
}

struct gw_metrics *gw_metrics_new(int64_t slow_ms)
{
    struct gw_metrics *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    pthread_mutex_init(&m->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&m->cond, &attr);
    pthread_condattr_destroy(&attr);
    atomic_init(&m->slow_ms, slow_ms);
    m->reg = xg_metrics_new();
    if (!m->reg || !xg_version_register_metric(m->reg))
        goto fail;
    m->cls = xg_metric_labels_fixed(m->reg, "class", class_values);
    m->status = xg_metric_labels_fixed(m->reg, "status", status_values);
    m->outcome = xg_metric_labels_fixed(m->reg, "outcome", outcome_values);
    m->node = xg_metric_labels_dynamic(m->reg, "node", GW_METRICS_MAX_NODES);
    m->node_outcome = xg_metric_labels_fixed(m->reg, "outcome", node_outcome_values);
    m->bcast = xg_metric_labels_fixed(m->reg, "result", bcast_values);
    m->hedge = xg_metric_labels_fixed(m->reg, "event", hedge_values);
    m->checked_outcome = xg_metric_labels_fixed(m->reg, "outcome", checked_values);
    m->answer = xg_metric_labels_fixed(m->reg, "answer", answer_values);
    m->scheme = xg_metric_labels_fixed(m->reg, "scheme", scheme_values);
    m->limit = xg_metric_labels_fixed(m->reg, "limit", limit_values);
    m->channel = xg_metric_labels_fixed(m->reg, "channel", channel_values);
    m->network = xg_metric_labels_fixed(m->reg, "network", network_values);
    m->rpc_version = xg_metric_labels_dynamic(m->reg, "rpc_version", NODE_RPC_VERSIONS);
    m->restricted = xg_metric_labels_fixed(m->reg, "restricted", restricted_values);
    if (!m->cls || !m->status || !m->outcome || !m->node || !m->node_outcome || !m->bcast ||
        !m->hedge || !m->checked_outcome || !m->answer || !m->scheme || !m->limit || !m->channel ||
        !m->network || !m->rpc_version || !m->restricted || !methods_labels(m))
        goto fail;
    size_t nmethods = methods_count() + 1;
    m->slow_count = calloc(nmethods, sizeof *m->slow_count);
    m->slow_max_us = calloc(nmethods, sizeof *m->slow_max_us);
    if (!m->slow_count || !m->slow_max_us || !request_families(m) || !collected_families(m))
        goto fail;
    return m;
fail:
    gw_metrics_stop(m);
    return NULL;
}

struct xg_metrics *gw_metrics_registry(struct gw_metrics *m)
{
    return m ? m->reg : NULL;
}

void gw_metrics_set_tls_not_after(struct gw_metrics *m, int64_t not_after)
{
    if (m)
        xg_metric_set(m->tls_not_after, NULL, (double)not_after);
}

void gw_metrics_set_slow_ms(struct gw_metrics *m, int64_t slow_ms)
{
    if (m)
        atomic_store(&m->slow_ms, slow_ms);
}

/* ---- the request path ------------------------------------------------------------------ */

static void note_slow(struct gw_metrics *m, unsigned method, double seconds)
{
    int64_t slow_ms = atomic_load_explicit(&m->slow_ms, memory_order_relaxed);
    if (slow_ms <= 0 || seconds * 1000.0 < (double)slow_ms)
        return;
    xg_metric_inc(m->slow, &method);
    atomic_fetch_add_explicit(&m->slow_count[method], 1, memory_order_relaxed);
    uint64_t us = (uint64_t)(seconds * 1e6);
    uint64_t old = atomic_load_explicit(&m->slow_max_us[method], memory_order_relaxed);
    while (us > old &&
           !atomic_compare_exchange_weak_explicit(&m->slow_max_us[method], &old, us,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

void gw_metrics_request(struct gw_metrics *m, const struct method_info *info, unsigned status,
                        enum gw_outcome outcome, double seconds)
{
    if (!m)
        return;
    unsigned cls = class_index(info), method = method_index(m, info);
    unsigned st = status_index(status);
    xg_metric_inc(m->requests, (unsigned[]){cls, method, st});
    xg_metric_inc(m->outcomes, (unsigned[]){cls, (unsigned)outcome});
    xg_metric_observe(m->duration, (unsigned[]){cls, (unsigned)outcome}, seconds);
    note_slow(m, method, seconds);
}

void gw_metrics_auth_failure(struct gw_metrics *m, const char *scheme)
{
    if (m)
        xg_metric_inc(m->auth_failures, (unsigned[]){xg_metric_label_index(m->scheme, scheme)});
}

void gw_metrics_rate_limited(struct gw_metrics *m, bool quota)
{
    if (m)
        xg_metric_inc(m->rate_limited, (unsigned[]){quota ? 1u : 0u});
}

void gw_metrics_burst_delayed(struct gw_metrics *m, double seconds)
{
    if (m)
        xg_metric_observe(m->burst_delay, NULL, seconds);
}

bool gw_metrics_xmr402_stream_open(struct gw_metrics *m, long cap)
{
    if (!m)
        return cap > 0;
    long n = atomic_fetch_add(&m->xmr402_streams_open, 1) + 1;
    if (n > cap) {
        atomic_fetch_sub(&m->xmr402_streams_open, 1);
        return false;
    }
    xg_metric_set(m->xmr402_streams, NULL, (double)n);
    return true;
}

void gw_metrics_xmr402_stream_closed(struct gw_metrics *m)
{
    if (m)
        xg_metric_set(m->xmr402_streams, NULL,
                      (double)(atomic_fetch_sub(&m->xmr402_streams_open, 1) - 1));
}

void gw_metrics_payment_required(struct gw_metrics *m)
{
    if (m)
        xg_metric_inc(m->payment_required, NULL);
}

void gw_metrics_node_call(struct gw_metrics *m, const char *node, enum gw_node_outcome outcome,
                          double seconds)
{
    if (!m)
        return;
    unsigned n = xg_metric_label_index(m->node, node);
    xg_metric_inc(m->node_requests, (unsigned[]){n, (unsigned)outcome});
    if (outcome != GW_NODE_CONNECT_ERROR)
        xg_metric_observe(m->node_duration, &n, seconds);
}

void gw_metrics_hedge(struct gw_metrics *m, enum gw_hedge_event event)
{
    if (m)
        xg_metric_inc(m->hedges, (unsigned[]){(unsigned)event});
}

void gw_metrics_checked(struct gw_metrics *m, enum gw_checked_outcome outcome)
{
    if (m)
        xg_metric_inc(m->checked, (unsigned[]){(unsigned)outcome});
}

void gw_metrics_coalesced(struct gw_metrics *m)
{
    if (m)
        xg_metric_inc(m->coalesced, NULL);
}

void gw_metrics_behind_tip(struct gw_metrics *m)
{
    if (m)
        xg_metric_inc(m->behind_tip, NULL);
}

void gw_metrics_broadcast(struct gw_metrics *m, bool accepted)
{
    if (m)
        xg_metric_inc(m->broadcasts,
                      (unsigned[]){accepted ? GW_BCAST_ACCEPTED : GW_BCAST_REJECTED});
}

void gw_metrics_broadcast_node(struct gw_metrics *m, const char *node,
                               enum gw_broadcast_outcome outcome)
{
    if (m)
        xg_metric_inc(m->broadcast_nodes,
                      (unsigned[]){xg_metric_label_index(m->node, node), (unsigned)outcome});
}

void gw_metrics_notify_applied(struct gw_metrics *m, const char *channel, double seconds)
{
    if (!m)
        return;
    unsigned c = xg_metric_label_index(m->channel, channel);
    xg_metric_inc(m->notify_applied, &c);
    xg_metric_observe(m->notify_seconds, &c, seconds);
}

void gw_metrics_full_reload(struct gw_metrics *m)
{
    if (m)
        xg_metric_inc(m->full_reloads, NULL);
}

/* ---- collectors ------------------------------------------------------------------------ */

static int breaker_code(const char *name)
{
    for (int i = 0; name && breaker_names[i]; i++)
        if (strcmp(breaker_names[i], name) == 0)
            return i;
    return -1;
}

static void collect_node(struct gw_metrics *m, const json_t *node)
{
    unsigned n = xg_metric_label_index(m->node, json_string_value(json_object_get(node, "name")));
    xg_metric_set(m->node_up, &n, json_is_true(json_object_get(node, "up")));
    xg_metric_set(m->node_dropped, &n, json_is_true(json_object_get(node, "dropped")));
    xg_metric_set(m->node_height, &n, (double)json_integer_value(json_object_get(node, "height")));
    xg_metric_set(m->node_lag, &n,
                  (double)json_integer_value(json_object_get(node, "tip_distance")));
    xg_metric_set(m->node_ema, &n, json_number_value(json_object_get(node, "ema_ms")) / 1000.0);
    xg_metric_set(m->node_breaker, &n,
                  breaker_code(json_string_value(json_object_get(node, "breaker"))));
    xg_metric_set(m->node_cooldown, &n,
                  (double)json_integer_value(json_object_get(node, "cooldown_ms")) / 1000.0);
    const json_t *answers = json_object_get(node, "answers");
    xg_metric_set(m->node_misbehaving, &n, json_is_true(json_object_get(answers, "misbehaving")));
    xg_metric_store(m->node_answers, (unsigned[]){n, 0},
                    (uint64_t)json_integer_value(json_object_get(answers, "agreed")));
    xg_metric_store(m->node_answers, (unsigned[]){n, 1},
                    (uint64_t)json_integer_value(json_object_get(answers, "mismatched")));
    xg_metric_set(m->node_refused, &n, json_is_false(json_object_get(node, "fits")));
    xg_metric_set(m->node_error_rate, &n, json_number_value(json_object_get(node, "error_rate")));
    const char *network = json_string_value(json_object_get(node, "network"));
    const char *rpc_version = json_string_value(json_object_get(node, "rpc_version"));
    const json_t *restricted = json_object_get(node, "restricted");
    unsigned info[] = {
        n,
        xg_metric_label_index(m->network, network ? network : "unknown"),
        xg_metric_label_index(m->rpc_version,
                              rpc_version && rpc_version[0] ? rpc_version : "unknown"),
        xg_metric_label_index(m->restricted, json_is_boolean(restricted)
                                                 ? (json_is_true(restricted) ? "true" : "false")
                                                 : "unknown"),
    };
    xg_metric_set(m->node_info, info, 1);
}

/* Nodes come and go: the per-node gauges are republished whole on every scrape. */
static void collect_prober(struct gw_metrics *m)
{
    struct xg_metric *per_node[] = {m->node_up,         m->node_dropped,    m->node_height,
                                    m->node_lag,        m->node_ema,        m->node_breaker,
                                    m->node_cooldown,   m->node_info,       m->node_refused,
                                    m->node_error_rate, m->node_misbehaving};
    for (size_t i = 0; i < sizeof per_node / sizeof per_node[0]; i++)
        xg_metric_reset(per_node[i]);
    json_t *status = prober_status(m->src.prober);
    const json_t *nodes = json_object_get(status, "nodes");
    size_t i;
    const json_t *node;
    json_array_foreach(nodes, i, node) collect_node(m, node);
    xg_metric_set(m->nodes_configured, NULL, (double)json_array_size(nodes));
    struct prober_quorum q = prober_quorum(m->src.prober);
    xg_metric_set(m->quorum_known, NULL, q.known);
    xg_metric_set(m->quorum_height, NULL, (double)q.height);
    xg_metric_set(m->quorum_degraded, NULL, q.degraded);
    xg_metric_set(m->quorum_healthy, NULL, (double)q.healthy);
    xg_metric_set(m->quorum_voters, NULL, (double)q.voters);
    xg_metric_set(m->quorum_agreeing, NULL, (double)q.agreeing);
    json_decref(status);
    struct prober_liveness l = prober_liveness(m->src.prober);
    xg_metric_set(m->prober_round_age, NULL, (double)l.age_ms / 1000.0);
    xg_metric_set(m->prober_round_took, NULL, (double)l.last_round_ms / 1000.0);
    xg_metric_set(m->prober_stalled, NULL, l.stalled);
    xg_metric_store(m->prober_rounds, NULL, l.rounds);
}

static void collect_cache(struct gw_metrics *m)
{
    struct cache_stats cs = cache_stats(m->src.cache);
    xg_metric_store(m->cache_hits, NULL, cs.hits);
    xg_metric_store(m->cache_settled_hits, NULL, cs.settled_hits);
    xg_metric_store(m->cache_misses, NULL, cs.misses);
    xg_metric_store(m->cache_evictions, NULL, cs.evictions);
    xg_metric_store(m->cache_purged, NULL, cs.purged);
    xg_metric_set(m->cache_bytes, NULL, (double)cs.bytes);
    xg_metric_set(m->cache_entries, NULL, (double)cs.entries);
    xg_metric_set(m->cache_max_bytes, NULL, (double)cs.max_bytes);
    xg_metric_set(m->cache_epoch, NULL, (double)cs.epoch);
}

static void on_collect(void *arg)
{
    struct gw_metrics *m = arg;
    char reason[256];
    uint64_t closes[XG_GUARD_NREASONS];
    xg_guard_counts_read(&m->clients, closes);
    for (unsigned i = 0; i < XG_GUARD_NREASONS; i++)
        xg_metric_store(m->client_closes, &i, closes[i]);
    if (m->src.prober)
        collect_prober(m);
    if (m->src.cache)
        collect_cache(m);
    if (m->src.tenants) {
        xg_metric_set(m->tenants_loaded, NULL, (double)tenants_count(m->src.tenants));
        xg_metric_set(m->tenants_bytes, NULL, (double)tenants_bytes(m->src.tenants));
    }
    if (m->src.dbwatch)
        xg_metric_set(m->database_up, NULL,
                      xg_dbwatch_ready(m->src.dbwatch, reason, sizeof reason));
    if (m->src.tenants_synced)
        xg_metric_set(m->tenants_synced, NULL,
                      m->src.tenants_synced(m->src.tenants_synced_ctx, reason, sizeof reason));
    if (m->src.limits) {
        struct usage_flush_stats fs;
        if (limits_flush_stats(m->src.limits, &fs)) {
            xg_metric_store(m->usage_flushes, NULL, fs.flushes);
            xg_metric_store(m->usage_flush_failures, NULL, fs.failures);
            xg_metric_set(m->usage_rows_held, NULL, (double)fs.held_rows);
        }
        xg_metric_set(m->fleet_replicas, NULL, (double)limits_fleet_replicas(m->src.limits));
    }
}

/* ---- the slow-request summary ---------------------------------------------------------- */

/* One line for the minute's slow requests, by method; nothing when there were none. */
static void log_slow_summary(struct gw_metrics *m)
{
    json_t *methods = json_object();
    size_t n = methods_count() + 1;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t count = atomic_exchange(&m->slow_count[i], 0);
        uint64_t max_us = atomic_exchange(&m->slow_max_us[i], 0);
        if (count == 0)
            continue;
        total += count;
        json_object_set_new(
            methods, i < n - 1 ? m->method_names[i] : XG_METRICS_OTHER,
            json_pack("{s:I,s:f}", "count", (json_int_t)count, "max_ms", (double)max_us / 1000.0));
    }
    if (total == 0) {
        json_decref(methods);
        return;
    }
    xg_log_fields(XG_LOG_WARN, "slow_requests",
                  json_pack("{s:o,s:I}", "methods", methods, "threshold_ms",
                            (json_int_t)atomic_load(&m->slow_ms)),
                  "%llu requests slower than the threshold in the last minute",
                  (unsigned long long)total);
}

static void *summary_loop(void *arg)
{
    struct gw_metrics *m = arg;
    pthread_mutex_lock(&m->lock);
    while (!m->stop) {
        struct timespec until = xg_monotonic_deadline(SLOW_SUMMARY_MS);
        while (!m->stop && pthread_cond_timedwait(&m->cond, &m->lock, &until) != ETIMEDOUT)
            ;
        pthread_mutex_unlock(&m->lock);
        log_slow_summary(m);
        pthread_mutex_lock(&m->lock);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

bool gw_metrics_watch(struct gw_metrics *m, const struct gw_metrics_sources *src)
{
    if (!m)
        return false;
    m->src = *src;
    if (!xg_metrics_add_collector(m->reg, on_collect, m))
        return false;
    m->thread_started = pthread_create(&m->thread, NULL, summary_loop, m) == 0;
    return m->thread_started;
}

void gw_metrics_stop(struct gw_metrics *m)
{
    if (!m)
        return;
    if (m->thread_started) {
        pthread_mutex_lock(&m->lock);
        m->stop = true;
        pthread_cond_broadcast(&m->cond);
        pthread_mutex_unlock(&m->lock);
        pthread_join(m->thread, NULL);
    }
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->lock);
    xg_metrics_free(m->reg);
    free(m->method_names);
    free((void *)m->slow_count);
    free((void *)m->slow_max_us);
    free(m);
}
