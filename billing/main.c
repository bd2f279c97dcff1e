/* xmrgate-billing — sells plans, watches payments through a view-only wallet and
 * provisions tenants.
 *
 *   xmrgate-billing [--config FILE]            serve (API, web pages, poller)
 *   xmrgate-billing [--config FILE] migrate    apply pending migrations and exit
 *   xmrgate-billing [--config FILE] grant --tier ID --days N
 *                                              create a tenant without payment (grant.h)
 *   xmrgate-billing [--config FILE] rewrap-ha1 [--batch N]
 *                                              re-wrap Digest HA1s under the new ha1_key
 *                                              (rewrap.h) */
#include "api/api.h"
#include "core/bl_config.h"
#include "ops/bl_metrics.h"
#include "ops/grant.h"
#include "ops/rewrap.h"
#include "hooks/hook_sender.h"
#include "payments/poller.h"
#include "core/pricing.h"
#include "wallet/wallet.h"
#include "xg_reply.h"
#include "xg_admin.h"
#include "xg_cli.h"
#include "xg_dbwatch.h"
#include "xg_log.h"
#include "xg_migrate.h"
#include "xg_pg.h"
#include "xg_signal.h"
#include "xg_version.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct billing {
    const char *config_path;
    struct bl_config cfg;
    struct xg_dbwatch *dbwatch;
    struct xg_admin *admin;
    struct xg_ready_check ready_checks[4];
    struct wallet *wallet;
    struct price_source *prices;
    struct poller *poller;
    struct hook_sender *hooks;
    struct api *api;
    struct bl_metrics *metrics;
};

/* `migrate`: connects (with backoff, so it can run while PostgreSQL is starting) and
 * applies what is pending. */
static int run_migrate(const struct bl_config *cfg)
{
    static const char *const no_queries[] = {NULL};
    struct xg_pg *pg = xg_pg_new(cfg->database_url, no_queries);
    char err[1024];
    int status = 1;
    if (!pg || !xg_pg_connect_backoff(pg, &xg_stop_requested)) {
        xg_log(XG_LOG_ERROR, "migrate_failed", "PostgreSQL unreachable");
        goto out;
    }
    if (!xg_migrate_apply(xg_pg_conn(pg), cfg->migrations_dir, err, sizeof err)) {
        xg_log(XG_LOG_ERROR, "migrate_failed", "%s", err);
        fprintf(stderr, "xmrgate-billing migrate: %s\n", err);
        goto out;
    }
    status = 0;
out:
    xg_pg_free(pg);
    return status;
}

static bool ready_database(void *ctx, char *reason, size_t len)
{
    struct billing *bl = ctx;
    return xg_dbwatch_ready(bl->dbwatch, reason, len);
}

/* Always ready: notes a schema ahead of this build (expand migrations it ignores). */
static bool ready_schema(void *ctx, char *reason, size_t len)
{
    struct billing *bl = ctx;
    xg_dbwatch_schema_note(bl->dbwatch, reason, len);
    return true;
}

static bool ready_wallet(void *ctx, char *reason, size_t len)
{
    struct billing *bl = ctx;
    return poller_ready(bl->poller, reason, len);
}

/* GET /status on the admin listener: this instance's role and its last poll cycle. */
static enum xg_httpd_result on_status(const struct xg_httpd_request *req)
{
    struct billing *bl = xg_admin_closure(req);
    struct poller_stats st;
    poller_stats(bl->poller, &st);
    return xg_reply_json(req->conn, 200,
                         json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "role",
                                   st.leader ? "leader" : "standby", "leader", st.leader, "cycles",
                                   (json_int_t)st.cycles, "failures", (json_int_t)st.failures,
                                   "last_cycle_us", (json_int_t)st.last_cycle_us, "last_transfers",
                                   (json_int_t)st.last_transfers, "last_changed",
                                   (json_int_t)st.last_changed, "last_settled",
                                   (json_int_t)st.last_settled, "wallet_height",
                                   (json_int_t)st.wallet_height, "cursor", (json_int_t)st.cursor));
}

static const struct xg_httpd_route admin_routes[] = {
    {"GET", "/status", on_status},
    {NULL, NULL, NULL},
};

/* The wallet client, the rate source, the poller thread and the public API. */
static bool start_services(struct billing *bl)
{
    const struct bl_config *c = &bl->cfg;
    char err[512];
    bl->wallet = wallet_new(c->wallet_url, (long)c->wallet_timeout_ms);
    struct price_source_options popt = {
        .url = c->rate_url,
        .path = c->rate_path,
        .currency = c->rate_currency,
        .refresh_ms = c->rate_refresh_ms,
        .max_age_ms = c->rate_max_age_ms,
        .timeout_ms = c->rate_timeout_ms,
    };
    bl->prices = price_source_start(&popt);
    struct poller_options opt = {
        .conninfo = c->database_url,
        .wallet = bl->wallet,
        .interval_ms = c->poll_interval_ms,
        .safety_margin = c->safety_margin,
        .late_grace_s = c->late_grace_ms / 1000,
        .max_backoff_ms = c->max_backoff_ms,
        .max_lag_blocks = c->max_lag,
        .daemon_url = c->daemon_url,
        .challenge_retention_s = c->xmr402_challenge_retention_ms / 1000,
        .free_retention_s = c->free_retention_ms / 1000,
        .usage_retention_s = c->usage_retention_ms / 1000,
    };
    bl->poller = bl->wallet ? poller_new(&opt) : NULL;
    if (!bl->wallet || !bl->prices || !bl->poller || !poller_start(bl->poller)) {
        xg_log(XG_LOG_ERROR, "startup_failed", "cannot start the wallet poller");
        return false;
    }
    struct hook_sender_options hopt = {
        .conninfo = c->database_url,
        .allow = &c->hook_allow_list,
        .retry = {.base_ms = c->hook_retry_base_ms,
                  .cap_ms = c->hook_retry_cap_ms,
                  .give_up_ms = c->hook_retry_for_ms},
        .timeout_ms = c->hook_timeout_ms,
        .max_response = c->hook_max_response,
        .interval_ms = c->hook_poll_interval_ms,
        .senders = c->hook_senders,
        .per_destination = c->hook_per_destination,
        .breaker = {.threshold = (int)c->hook_breaker_threshold,
                    .cooldown_ms = c->hook_breaker_cooldown_ms,
                    .cooldown_max_ms = c->hook_breaker_cooldown_max_ms},
    };
    memcpy(hopt.key, c->hook_key, sizeof hopt.key);
    bl->hooks = hook_sender_new(&hopt);
    OPENSSL_cleanse(hopt.key, sizeof hopt.key);
    if (!bl->hooks || !hook_sender_start(bl->hooks)) {
        xg_log(XG_LOG_ERROR, "startup_failed", "cannot start the webhook sender");
        return false;
    }
    struct api_options aopt = {.cfg = c, .wallet = bl->wallet, .prices = bl->prices};
    bl->api = api_start(&aopt, err, sizeof err);
    if (!bl->api) {
        xg_log(XG_LOG_ERROR, "startup_failed", "API listener: %s", err);
        return false;
    }
    xg_log(XG_LOG_INFO, "api_started", "API on %s:%u", c->bind, api_port(bl->api));
    return true;
}

static bool billing_start(struct billing *bl)
{
    char err[512];
    if (!xg_dbwatch_wait_schema(bl->cfg.database_url, &xg_stop_requested, err, sizeof err)) {
        xg_log(XG_LOG_ERROR, "startup_refused", "%s", err);
        return false;
    }
    bl->dbwatch = xg_dbwatch_start(bl->cfg.database_url);
    if (!bl->dbwatch) {
        xg_log(XG_LOG_ERROR, "startup_failed", "cannot start the database watcher");
        return false;
    }
    if (!start_services(bl))
        return false;
    struct bl_metrics_sources msrc = {
        .conninfo = bl->cfg.database_url,
        .daemon_url = bl->cfg.daemon_url,
        .poller = bl->poller,
        .prices = bl->prices,
        .dbwatch = bl->dbwatch,
        .clients = api_client_counts(bl->api),
        .hooks = bl->hooks,
        .api = bl->api,
    };
    bl->metrics = bl_metrics_new(&msrc);
    if (!bl->metrics) {
        xg_log(XG_LOG_ERROR, "startup_failed", "cannot start the metrics");
        return false;
    }
    struct api_observer obs = bl_metrics_api_observer(bl->metrics);
    api_observe(bl->api, &obs);
    bl->ready_checks[0] = (struct xg_ready_check){"database", ready_database, bl, false, false};
    bl->ready_checks[1] = (struct xg_ready_check){"wallet", ready_wallet, bl, false, false};
    bl->ready_checks[2] = (struct xg_ready_check){
        .name = "schema", .fn = ready_schema, .ctx = bl, .reports_note = true};
    struct xg_admin_options aopt = {
        .bind_addr = bl->cfg.admin_bind,
        .port = (unsigned)bl->cfg.admin_port,
        .checks = bl->ready_checks,
        .routes = admin_routes,
        .closure = bl,
        .token = bl->cfg.admin_token,
        .metrics = bl_metrics_registry(bl->metrics),
    };
    bl->admin = xg_admin_start(&aopt, err, sizeof err);
    if (!bl->admin) {
        xg_log(XG_LOG_ERROR, "startup_failed", "admin listener: %s", err);
        return false;
    }
    xg_log(XG_LOG_INFO, "started", "%s (commit %s), admin on %s:%u", xg_version(),
           xg_version_commit(), bl->cfg.admin_bind, xg_admin_port(bl->admin));
    return true;
}

static void billing_stop(struct billing *bl)
{
    xg_admin_stop(bl->admin);
    api_stop(bl->api); /* it reports to the metrics until it stops */
    bl_metrics_free(bl->metrics);
    hook_sender_free(bl->hooks);
    poller_free(bl->poller);
    price_source_stop(bl->prices);
    wallet_free(bl->wallet);
    xg_dbwatch_stop(bl->dbwatch);
}

/* Hands the running values of the reloadable keys (bl_config.c marks them) to what uses
 * them; a key marked reloadable there must be applied here. */
static void apply_reloadable(struct billing *bl)
{
    enum xg_log_level level;
    if (xg_log_level_parse(bl->cfg.log_level, &level))
        xg_log_set_level(level);
    if (bl->wallet)
        wallet_set_timeout(bl->wallet, (long)bl->cfg.wallet_timeout_ms);
    if (bl->poller)
        poller_set_interval(bl->poller, bl->cfg.poll_interval_ms);
    if (bl->admin)
        xg_admin_set_token(bl->admin, bl->cfg.admin_token);
}

/* SIGHUP: re-reads the file; a bad one is rejected whole and the running configuration
 * kept. The keys marked reloadable in bl_config.c take effect at once; a change to any
 * other key is named in the log as needing a restart, and is not applied. */
static void on_reload(void *ctx)
{
    struct billing *bl = ctx;
    struct bl_config fresh = {0};
    char err[512], fixed[512];
    if (!bl_config_load(&fresh, bl->config_path, err, sizeof err)) {
        xg_log(XG_LOG_ERROR, "reload_rejected", "%s (keeping the running configuration)", err);
        return;
    }
    if (xg_config_diff(bl_config_keys, bl_config_key_count, &bl->cfg, &fresh, false, fixed,
                       sizeof fixed))
        xg_log(XG_LOG_WARN, "reload_needs_restart",
               "changed but only applied at the next start: %s", fixed);
    xg_config_take_reloadable(bl_config_keys, bl_config_key_count, &bl->cfg, &fresh);
    bl_config_free(&fresh);
    apply_reloadable(bl);
    xg_log(XG_LOG_INFO, "reloaded", "configuration reloaded");
}

int main(int argc, char **argv)
{
    const struct xg_cli_daemon cli_daemon = {
        .name = "xmrgate-billing",
        .operands = "[serve|migrate|grant --tier ID --days N|rewrap-ha1 [--batch N]]",
        .keys = bl_config_keys,
        .nkeys = bl_config_key_count};
    struct xg_cli cli;
    switch (xg_cli_parse(&cli_daemon, argc, argv, &cli)) {
    case XG_CLI_RUN:
        break;
    case XG_CLI_DONE:
        return 0;
    case XG_CLI_USAGE:
        return 2;
    }
    const char *config_path = cli.config_path;
    bool check_only = cli.check_config;
    int operand = cli.operand;
    const char *command = operand < argc ? argv[operand] : "serve";
    if (strcmp(command, "serve") != 0 && strcmp(command, "migrate") != 0 &&
        strcmp(command, "grant") != 0 && strcmp(command, "rewrap-ha1") != 0) {
        xg_cli_usage(&cli_daemon, stderr);
        return 2;
    }

    struct billing bl = {.config_path = config_path};
    char err[512];
    if (!bl_config_load(&bl.cfg, config_path, err, sizeof err)) {
        fprintf(stderr, "xmrgate-billing: %s\n", err);
        return 2;
    }
    if (check_only) {
        bl_config_free(&bl.cfg);
        puts("configuration ok");
        return 0;
    }
    enum xg_log_level level = XG_LOG_INFO;
    if (!xg_log_level_parse(bl.cfg.log_level, &level))
        level = XG_LOG_INFO;
    xg_log_init("billing", level);
    xg_signals_install();

    int status;
    if (strcmp(command, "migrate") == 0) {
        status = run_migrate(&bl.cfg);
    } else if (strcmp(command, "grant") == 0) {
        status = grant_main(&bl.cfg, argc - operand, argv + operand);
    } else if (strcmp(command, "rewrap-ha1") == 0) {
        status = rewrap_main(&bl.cfg, argc - operand, argv + operand);
    } else {
        curl_global_init(CURL_GLOBAL_ALL);
        status = 1;
        if (billing_start(&bl)) {
            status = 0;
            xg_run_until_stopped(on_reload, &bl);
            xg_log(XG_LOG_INFO, "stopping", "signal received");
        }
        billing_stop(&bl);
        curl_global_cleanup();
        xg_log(XG_LOG_INFO, "stopped", NULL);
    }
    bl_config_free(&bl.cfg);
    return status;
}
