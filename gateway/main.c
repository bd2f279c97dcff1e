/* xmrgate-gateway — serves the monerod daemon RPC to paying tenants.
 *
 * main wires the modules together: configuration, PostgreSQL readiness, the admin
 * listener, and the shutdown and reload signals. */
#include "ops/admin_api.h"
#include "serve/context.h"
#include "serve/gw_config.h"
#include "ops/gw_metrics.h"
#include "limits/limits.h"
#include "nodes/nodes.h"
#include "state/pgsync.h"
#include "nodes/blocksub.h"
#include "nodes/prober.h"
#include "serve/server.h"
#include "http/tls_cert.h"
#include "state/tenants.h"
#include "xmr402/xmr402_streams.h"
#include "nodes/upstream.h"
#include "xg_admin.h"
#include "xg_cli.h"
#include "xg_clock.h"
#include "xg_hex.h"
#include "xg_dbwatch.h"
#include "xg_log.h"
#include "xg_reply.h"
#include "xg_signal.h"
#include "xg_version.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long SIGTERM waits for in-flight requests before closing their connections. */
#define DRAIN_DEADLINE_MS 10000
/* How long the start may wait on PostgreSQL or the first probes before it says so. */
#define FIRST_LOAD_PATIENCE_MS 2000

struct gateway {
    const char *config_path;
    struct gw_config cfg;
    struct gw_context ctx;
    struct xg_dbwatch *dbwatch;
    struct pgsync *pgsync;
    struct gw_server *server;
    /* The prober's own engine: one connection per node, apart from the client requests'
     * pools, so that a pool saturated by clients (or a node's cap) never delays a probe. */
    struct up_engine *probe_up;
    struct blocksub *blocksub; /* NULL when [nodes] zmq is "" */
    struct xg_admin *admin;
    struct admin_api *admin_api;
    struct gw_metrics *metrics;
    struct xg_ready_check ready_checks[8];
};

/* Readiness is what a balancer routes by: a replica is ready while it can serve the
 * tenants it knows. A PostgreSQL outage is shared by every replica and served through
 * (fail-static), so it is degraded (200, the reason in the body and the metrics
 * xmrgate_gateway_database_up and xmrgate_gateway_tenants_synced), never not ready; not
 * ready is a schema this build does not fit, tenants never loaded, no usable node, or the
 * drain after SIGTERM. */
static bool ready_database(void *ctx, char *reason, size_t len)
{
    struct gateway *gw = ctx;
    enum xg_db_state state = xg_dbwatch_state(gw->dbwatch, reason, len);
    enum xg_readiness r = xg_dbwatch_readiness(state, true);
    if (r == XG_READINESS_READY)
        reason[0] = '\0';
    return r != XG_READINESS_NOT;
}

/* Always ready: notes a schema ahead of this build (expand migrations it ignores). */
static bool ready_schema(void *ctx, char *reason, size_t len)
{
    struct gateway *gw = ctx;
    xg_dbwatch_schema_note(gw->dbwatch, reason, len);
    return true;
}

/* The metric: the LISTEN connection is up and loaded now. */
static bool tenants_synced(void *ctx, char *reason, size_t len)
{
    struct gateway *gw = ctx;
    return pgsync_synced(gw->pgsync, reason, len);
}

static bool ready_tenants(void *ctx, char *reason, size_t len)
{
    struct gateway *gw = ctx;
    if (pgsync_synced(gw->pgsync, reason, len)) {
        reason[0] = '\0';
        return true;
    }
    if (!pgsync_loaded(gw->pgsync))
        return false;
    snprintf(reason, len,
             "not following PostgreSQL: serving the tenants loaded before; new tenants and "
             "changes wait for the reconnect");
    return true;
}

static bool ready_serving(void *ctx, char *reason, size_t len)
{
    (void)ctx;
    if (!xg_stop_requested)
        return true;
    snprintf(reason, len, "stopping: draining the requests in flight");
    return false;
}

static bool ready_quorum(void *ctx, char *reason, size_t len)
{
    struct gateway *gw = ctx;
    return prober_ready(gw->ctx.prober, reason, len);
}

static bool ready_prober(void *ctx, char *reason, size_t len)
{
    struct gateway *gw = ctx;
    return prober_alive(gw->ctx.prober, reason, len);
}

static bool ready_nodes(void *ctx, char *reason, size_t len)
{
    struct gateway *gw = ctx;
    nodes_read_lock();
    size_t count = nodes_current(gw->ctx.nodes)->count;
    nodes_read_unlock();
    if (count == 0)
        snprintf(reason, len, "no enabled node in the nodes table");
    return count > 0;
}

/* The HTTPS certificate: read again on every SIGHUP (the files, not their paths, change on
 * renewal); a pair that does not load keeps the one in service. */
static void publish_tls(struct gateway *gw, bool reloaded)
{
    struct tls_cert_info info = tls_cert_info(gw_server_tls(gw->server));
    gw_metrics_set_tls_not_after(gw->metrics, info.not_after);
    xg_log_fields(XG_LOG_INFO, reloaded ? "tls_reloaded" : "tls_loaded",
                  json_pack("{s:s,s:I,s:I}", "sha256", info.sha256, "not_after",
                            (json_int_t)info.not_after, "chain", (json_int_t)info.chain_length),
                  "serving the certificate %s (chain of %u) to new connections", info.sha256,
                  info.chain_length);
}

static void reload_tls(struct gateway *gw)
{
    if (!gw_server_tls(gw->server))
        return;
    char err[512];
    if (!gw_server_reload_tls(gw->server, err, sizeof err)) {
        xg_log(XG_LOG_ERROR, "tls_reload_rejected", "%s (keeping the certificate in service)", err);
        return;
    }
    publish_tls(gw, true);
}

/* Lets one process hold thousands of client connections. */
static void raise_fd_limit(void)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &lim);
    }
}

/* The answer cache and the prober (node health, quorum tip, ranking). */
static bool nodes_start(struct gateway *gw, char *err, size_t errlen)
{
    struct gw_context *ctx = &gw->ctx;
    const struct gw_config *cfg = &gw->cfg;
    ctx->tip_ttl_ms = cfg->probe_interval_ms;
    ctx->cache_min_depth = cfg->cache_min_depth;
    ctx->cache = cache_new((size_t)cfg->cache_size);
    ctx->flight = flight_new();
    if (!ctx->cache || !ctx->flight) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    struct prober_options popt = {
        .interval_ms = cfg->probe_interval_ms,
        .timeout_ms = cfg->probe_timeout_ms,
        .historical_lag = cfg->historical_lag,
        .latency_bucket_ms = 5,
        .health = health_params_default(),
    };
    popt.health.cooldown_base_ms = cfg->cooldown_base_ms;
    popt.health.cooldown_ceiling_ms = cfg->cooldown_ceiling_ms;
    popt.health.breaker_failures = (int)cfg->breaker_failures;
    popt.health.breaker_open_ms = cfg->breaker_open_ms;
    popt.honesty = honesty_params_default();
    popt.honesty.limit = (int)cfg->mismatch_limit;
    popt.honesty.cooldown_ms = cfg->cooldown_base_ms;
    popt.honesty.ceiling_ms = cfg->cooldown_ceiling_ms;
    /* The quorum learns of a block within a round and its timeout once most nodes have it:
     * that, and 5 s for the block to spread, before a difference is taken for a lie. */
    popt.honesty.settle_ms = cfg->probe_interval_ms + cfg->probe_timeout_ms + 5000;
    popt.fit = cfg->node_fit;
    popt.hedge = (struct hedge_options){
        .floor_ms = cfg->hedge_floor_ms,
        .cap_ms = cfg->hedge_cap_ms > cfg->hedge_floor_ms ? cfg->hedge_cap_ms : cfg->hedge_floor_ms,
        .budget_pct = (unsigned)cfg->hedge_budget_pct,
    };
    /* The loops' options (CA, pinned certificates, timeouts: a node is trusted the same way
     * by its probes and by its requests), with one connection per node of its own: a
     * round's two calls take turns on it. */
    struct up_engine_options uopt = gw_server_engine_options(cfg);
    uopt.max_connections_per_node = 1;
    uopt.cap_share = 1;
    gw->probe_up = up_engine_start(&uopt, err, errlen);
    if (!gw->probe_up)
        return false;
    ctx->prober = prober_start(&popt, ctx->nodes, gw->probe_up, ctx->cache, err, errlen);
    if (!ctx->prober)
        return false;
    if (cfg->node_zmq[0])
        gw->blocksub =
            blocksub_start(cfg->node_zmq, ctx->nodes, prober_publication, ctx->prober, err, errlen);
    return !cfg->node_zmq[0] || gw->blocksub;
}

static bool context_init(struct gateway *gw, char *err, size_t errlen)
{
    struct gw_context *ctx = &gw->ctx;
    ctx->cfg = &gw->cfg;
    ctx->max_body = (size_t)gw->cfg.max_body;
    ctx->request_timeout_ms = gw->cfg.request_timeout_ms;
    ctx->node_timeout_ms = gw->cfg.node_timeout_ms;
    /* Replicas that share nonce_secret accept each other's nonces. */
    uint8_t nonce_key[32];
    if (gw->cfg.nonce_secret[0])
        SHA256((const unsigned char *)gw->cfg.nonce_secret, strlen(gw->cfg.nonce_secret),
               nonce_key);
    else if (RAND_bytes(nonce_key, sizeof nonce_key) != 1) {
        snprintf(err, errlen, "no randomness for the nonce secret");
        return false;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct digest_config dcfg = {
        .nonce_key = nonce_key,
        .nonce_key_len = sizeof nonce_key,
        .realm = gw->cfg.realm,
        .nonce_lifetime_ms = gw->cfg.nonce_lifetime_ms,
    };
    ctx->digest = digest_verifier_new(&dcfg, (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000);
    if (!ctx->digest) {
        snprintf(err, errlen, "[server] realm: not usable in a Digest challenge");
        return false;
    }
    ctx->tenants = tenants_new();
    ctx->sessions = sessions_new();
    ctx->nodes = nodes_new();
    if (gw->cfg.xmr402_streams > 0) {
        ctx->xmr402_streams =
            xmr402_streams_new((size_t)gw->cfg.xmr402_streams, gw->cfg.xmr402_streams_per_payment);
        if (!ctx->xmr402_streams) {
            snprintf(err, errlen, "out of memory");
            return false;
        }
    }
    ctx->tip_wait_ms = gw->cfg.tip_wait_ms;
    ctx->serve_unverified = gw->cfg.serve_unverified;
    ctx->read_your_writes_ms = gw->cfg.read_your_writes_ms;
    if (!ctx->tenants || !ctx->sessions || !ctx->nodes) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    struct up_engine_options uopt = gw_server_engine_options(&gw->cfg);
    ctx->up = up_engine_start(&uopt, err, errlen);
    if (!ctx->up)
        return false;
    if (!nodes_start(gw, err, errlen))
        return false;
    ctx->limits = limits_start(gw->cfg.limits_enabled, gw->cfg.limits_max_delay_ms * 1000,
                               gw->cfg.database_url);
    if (!ctx->limits) {
        snprintf(err, errlen, "cannot start the usage flusher");
        return false;
    }
    if (gw->cfg.limits_share_burst && !limits_share_burst(ctx->limits, gw->cfg.database_url)) {
        snprintf(err, errlen, "cannot start the fleet heartbeat");
        return false;
    }
    return true;
}

/* The admin listener: health, readiness, metrics and the admin API (admin_api.h). */
static bool admin_start(struct gateway *gw)
{
    char err[512];
    struct gw_metrics_sources src = {
        .prober = gw->ctx.prober,
        .cache = gw->ctx.cache,
        .tenants = gw->ctx.tenants,
        .limits = gw->ctx.limits,
        .dbwatch = gw->dbwatch,
        .tenants_synced = tenants_synced,
        .tenants_synced_ctx = gw,
    };
    struct admin_api_deps deps = {
        .conninfo = gw->cfg.database_url,
        .prober = gw->ctx.prober,
        .nodes = gw->ctx.nodes,
        .tenants = gw->ctx.tenants,
        .cache = gw->ctx.cache,
    };
    gw->admin_api = admin_api_new(&deps);
    if (!gw->admin_api || !gw_metrics_watch(gw->metrics, &src)) {
        xg_log(XG_LOG_ERROR, "startup_failed", "cannot start the admin API or the metrics");
        return false;
    }
    struct xg_admin_options aopt = {
        .bind_addr = gw->cfg.admin_bind,
        .port = (unsigned)gw->cfg.admin_port,
        .checks = gw->ready_checks,
        .routes = admin_api_routes,
        .closure = gw->admin_api,
        .metrics = gw_metrics_registry(gw->metrics),
        .token = gw->cfg.admin_token,
    };
    gw->admin = xg_admin_start(&aopt, err, sizeof err);
    if (!gw->admin) {
        xg_log(XG_LOG_ERROR, "startup_failed", "admin listener: %s", err);
        return false;
    }
    if (!gw->cfg.admin_token[0])
        xg_log(XG_LOG_WARN, "admin_api_disabled",
               "[admin] token is empty: only /healthz, /readyz and /metrics are served");
    return true;
}

/* The client port opens once the gateway knows its tenants and has probed its nodes: a
 * request in the first milliseconds would otherwise be refused as from an unknown tenant,
 * or sent to unprobed nodes in table order. Waits for PostgreSQL as long as it takes (as
 * for the schema); the probe round is bounded by the probe timeout. False when stopping. */
static bool await_first_load(struct gateway *gw)
{
    char reason[256];
    int64_t started = xg_monotonic_ms();
    bool told = false;
    while (!pgsync_synced(gw->pgsync, reason, sizeof reason)) {
        if (xg_stop_requested)
            return false;
        if (!told && xg_monotonic_ms() - started >= FIRST_LOAD_PATIENCE_MS) {
            xg_log(XG_LOG_WARN, "waiting_for_tenants", "not serving yet: %s", reason);
            told = true;
        }
        struct timespec tick = {0, 10 * 1000000L};
        nanosleep(&tick, NULL);
    }
    if (!prober_probe_now(gw->ctx.prober, gw->cfg.probe_timeout_ms + FIRST_LOAD_PATIENCE_MS))
        xg_log(XG_LOG_WARN, "first_probe_late",
               "the first probe round has not ended: serving the nodes in table order until it "
               "does");
    return true;
}

/* pgsync's observer: its reloads and NOTIFYs counted in the metrics. */
static void on_full_reload(void *metrics)
{
    gw_metrics_full_reload(metrics);
}

static void on_notify_applied(void *metrics, const char *channel, double seconds)
{
    gw_metrics_notify_applied(metrics, channel, seconds);
}

static bool gateway_start(struct gateway *gw)
{
    char err[512];
    raise_fd_limit();
    if (!xg_dbwatch_wait_schema(gw->cfg.database_url, &xg_stop_requested, err, sizeof err)) {
        xg_log(XG_LOG_ERROR, "startup_refused", "%s", err);
        return false;
    }
    gw->dbwatch = xg_dbwatch_start(gw->cfg.database_url);
    if (!gw->dbwatch) {
        xg_log(XG_LOG_ERROR, "startup_failed", "cannot start the database watcher");
        return false;
    }
    /* Before the request path starts: it counts from its first request. */
    gw->metrics = gw_metrics_new(gw->cfg.slow_request_ms);
    gw->ctx.metrics = gw->metrics;
    if (!gw->metrics) {
        xg_log(XG_LOG_ERROR, "startup_failed", "out of memory");
        return false;
    }
    uint8_t ha1_key[TOKEN_HA1_KEY_LEN], ha1_key_previous[TOKEN_HA1_KEY_LEN];
    bool rotating = gw->cfg.ha1_key_previous[0] != '\0';
    if (!xg_hex_decode(gw->cfg.ha1_key, ha1_key, sizeof ha1_key) ||
        (rotating &&
         !xg_hex_decode(gw->cfg.ha1_key_previous, ha1_key_previous, sizeof ha1_key_previous)) ||
        !context_init(gw, err, sizeof err)) {
        xg_log(XG_LOG_ERROR, "startup_failed", "%s", err);
        return false;
    }
    if (rotating)
        xg_log(XG_LOG_INFO, "ha1_key_rotating",
               "[auth] ha1_key_previous set: Digest HA1 values wrapped under it are still "
               "accepted until rewrap-ha1 rewrites them");
    const struct pgsync_observer counted = {
        .arg = gw->metrics, .full_reload = on_full_reload, .notify_applied = on_notify_applied};
    gw->pgsync = pgsync_start(gw->cfg.database_url, ha1_key, rotating ? ha1_key_previous : NULL,
                              gw->ctx.tenants, gw->ctx.nodes, &counted);
    OPENSSL_cleanse(ha1_key, sizeof ha1_key);
    OPENSSL_cleanse(ha1_key_previous, sizeof ha1_key_previous);
    if (!gw->pgsync) {
        xg_log(XG_LOG_ERROR, "startup_failed", "cannot start the tenant follower");
        return false;
    }
    if (!await_first_load(gw))
        return false;
    gw->server = gw_server_start(&gw->ctx, err, sizeof err);
    if (!gw->server) {
        xg_log(XG_LOG_ERROR, "startup_failed", "%s", err);
        return false;
    }
    gw->ready_checks[0] = (struct xg_ready_check){"database", ready_database, gw, true, false};
    gw->ready_checks[1] = (struct xg_ready_check){"tenants", ready_tenants, gw, true, false};
    gw->ready_checks[2] = (struct xg_ready_check){"nodes", ready_nodes, gw, false, false};
    gw->ready_checks[3] = (struct xg_ready_check){
        .name = "quorum", .fn = ready_quorum, .ctx = gw, .reports_degraded = true};
    gw->ready_checks[4] = (struct xg_ready_check){"prober", ready_prober, gw, false, false};
    gw->ready_checks[5] = (struct xg_ready_check){"serving", ready_serving, gw, false, false};
    gw->ready_checks[6] = (struct xg_ready_check){
        .name = "schema", .fn = ready_schema, .ctx = gw, .reports_note = true};
    if (gw_server_tls(gw->server))
        publish_tls(gw, false);
    if (!admin_start(gw))
        return false;
    xg_log(XG_LOG_INFO, "started", "%s (commit %s) serving %s on %s:%u, admin on %s:%u",
           xg_version(), xg_version_commit(), gw->cfg.tls_cert[0] ? "HTTPS" : "HTTP", gw->cfg.bind,
           gw_server_port(gw->server), gw->cfg.admin_bind, xg_admin_port(gw->admin));
    return true;
}

/* Stops accepting, lets in-flight requests finish up to the drain deadline, then stops. */
static void drain(struct gateway *gw)
{
    if (!gw->server)
        return;
    gw_server_quiesce(gw->server);
    long inflight = gw_server_inflight(gw->server);
    xg_log_fields(XG_LOG_INFO, "draining", json_pack("{s:I}", "inflight", (json_int_t)inflight),
                  "no new connections; waiting up to %d ms for %ld requests in flight",
                  DRAIN_DEADLINE_MS, inflight);
    int waited = 0;
    for (; waited < DRAIN_DEADLINE_MS && gw_server_inflight(gw->server) > 0; waited += 20) {
        struct timespec tick = {0, 20 * 1000000L};
        nanosleep(&tick, NULL);
    }
    long left = gw_server_inflight(gw->server);
    if (left > 0)
        xg_log(XG_LOG_WARN, "drain_deadline", "%ld requests still in flight", left);
    else
        xg_log_fields(XG_LOG_INFO, "drained", json_pack("{s:I}", "waited_ms", (json_int_t)waited),
                      "every request in flight was answered");
}

static void gateway_stop(struct gateway *gw)
{
    drain(gw);
    xg_admin_stop(gw->admin);
    admin_api_free(gw->admin_api);
    /* The engine first: it cancels waiting jobs, which resumes their connections. */
    /* The prober first: it waits for its own calls, which the engine must still run. */
    blocksub_stop(gw->blocksub); /* it calls into the prober */
    prober_stop(gw->ctx.prober);
    up_engine_free(gw->probe_up); /* after the prober, whose calls it runs */
    if (gw->ctx.up)
        up_engine_stop(gw->ctx.up);
    gw_server_stop(gw->server);
    /* After the server: the last usage flush includes every request answered. */
    limits_stop(gw->ctx.limits);
    up_engine_free(gw->ctx.up);
    pgsync_stop(gw->pgsync);
    xg_dbwatch_stop(gw->dbwatch);
    tenants_free(gw->ctx.tenants);
    sessions_free(gw->ctx.sessions);
    nodes_free(gw->ctx.nodes);
    cache_free(gw->ctx.cache);
    flight_free(gw->ctx.flight);
    xmr402_streams_free(gw->ctx.xmr402_streams);
    digest_verifier_free(gw->ctx.digest);
    /* Last: the summary thread logs what it still holds; nothing counts any more. */
    gw_metrics_stop(gw->metrics);
}

/* Hands the running values of the reloadable keys (gw_config.c marks them) to what uses
 * them; a key marked reloadable there must be applied here. */
static void apply_reloadable(struct gateway *gw)
{
    enum xg_log_level level;
    if (xg_log_level_parse(gw->cfg.log_level, &level))
        xg_log_set_level(level);
    xg_admin_set_token(gw->admin, gw->cfg.admin_token);
    gw_metrics_set_slow_ms(gw->metrics, gw->cfg.slow_request_ms);
}

/* SIGHUP: re-reads the file; a bad one is rejected whole and the running configuration
 * kept. The keys marked reloadable in gw_config.c take effect at once; a change to any other
 * key is named in the log as needing a restart, and is not applied. */
static void on_reload(void *ctx)
{
    struct gateway *gw = ctx;
    const char *path = gw->config_path;
    struct gw_config fresh = {0};
    char err[512], changed[512], fixed[512];
    reload_tls(gw);
    if (!gw_config_load(&fresh, path, err, sizeof err)) {
        xg_log(XG_LOG_ERROR, "reload_rejected", "%s (keeping the running configuration)", err);
        return;
    }
    size_t napplied = xg_config_diff(gw_config_keys, gw_config_key_count, &gw->cfg, &fresh, true,
                                     changed, sizeof changed);
    size_t nfixed = xg_config_diff(gw_config_keys, gw_config_key_count, &gw->cfg, &fresh, false,
                                   fixed, sizeof fixed);
    xg_config_take_reloadable(gw_config_keys, gw_config_key_count, &gw->cfg, &fresh);
    gw_config_free(&fresh);
    apply_reloadable(gw);
    if (nfixed)
        xg_log(XG_LOG_WARN, "reload_needs_restart",
               "changed but only applied at the next start: %s", fixed);
    xg_log_fields(XG_LOG_INFO, "reloaded", json_pack("{s:I}", "applied", (json_int_t)napplied),
                  "configuration reloaded from %s%s%s", path ? path : "(env)",
                  napplied ? "; applied: " : "", napplied ? changed : "");
}

int main(int argc, char **argv)
{
    const struct xg_cli_daemon cli_daemon = {.name = "xmrgate-gateway",
                                             .operands = "",
                                             .keys = gw_config_keys,
                                             .nkeys = gw_config_key_count};
    struct xg_cli cli;
    switch (xg_cli_parse(&cli_daemon, argc, argv, &cli)) {
    case XG_CLI_RUN:
        break;
    case XG_CLI_DONE:
        return 0;
    case XG_CLI_USAGE:
        return 2;
    }
    if (cli.operand < argc) { /* the gateway takes none */
        xg_cli_usage(&cli_daemon, stderr);
        return 2;
    }
    const char *config_path = cli.config_path;
    bool check_only = cli.check_config;

    struct gateway gw = {.config_path = config_path};
    char err[512];
    if (!gw_config_load(&gw.cfg, config_path, err, sizeof err)) {
        fprintf(stderr, "xmrgate-gateway: %s\n", err);
        return 2;
    }
    if (check_only) {
        gw_config_free(&gw.cfg);
        puts("configuration ok");
        return 0;
    }
    enum xg_log_level level = XG_LOG_INFO;
    if (!xg_log_level_parse(gw.cfg.log_level, &level))
        level = XG_LOG_INFO;
    xg_log_init("gateway", level);
    xg_signals_install();
    curl_global_init(CURL_GLOBAL_ALL);

    int status = 1;
    if (gateway_start(&gw)) {
        status = 0;
        xg_run_until_stopped(on_reload, &gw);
        xg_log(XG_LOG_INFO, "stopping", "signal received");
    }
    gateway_stop(&gw);
    gw_config_free(&gw.cfg);
    curl_global_cleanup();
    xg_log(XG_LOG_INFO, "stopped", NULL);
    return status;
}
