/* xmrgate-billing — sells plans, watches payments through a view-only wallet and
 * provisions tenants.
 *
 *   xmrgate-billing [--config FILE]            serve (API, web pages, poller)
 *   xmrgate-billing [--config FILE] migrate    apply pending migrations and exit */
#include "bl_config.h"
#include "xg_admin.h"
#include "xg_dbwatch.h"
#include "xg_log.h"
#include "xg_migrate.h"
#include "xg_pg.h"
#include "xg_signal.h"

#include <curl/curl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BILLING_VERSION "0.1.0"

struct billing {
    const char *config_path;
    struct bl_config cfg;
    struct xg_dbwatch *dbwatch;
    struct xg_admin *admin;
    struct xg_ready_check ready_checks[4];
};

static void usage(FILE *out)
{
    fprintf(out, "usage: xmrgate-billing [--config FILE] [--check-config] [--config-reference] "
                 "[--version] [serve|migrate]\n");
}

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
    bl->ready_checks[0] = (struct xg_ready_check){"database", ready_database, bl};
    struct xg_admin_options aopt = {
        .bind_addr = bl->cfg.admin_bind,
        .port = (unsigned)bl->cfg.admin_port,
        .checks = bl->ready_checks,
        .closure = bl,
    };
    bl->admin = xg_admin_start(&aopt, err, sizeof err);
    if (!bl->admin) {
        xg_log(XG_LOG_ERROR, "startup_failed", "admin listener: %s", err);
        return false;
    }
    xg_log(XG_LOG_INFO, "started", "admin on %s:%u", bl->cfg.admin_bind, xg_admin_port(bl->admin));
    return true;
}

static void billing_stop(struct billing *bl)
{
    xg_admin_stop(bl->admin);
    xg_dbwatch_stop(bl->dbwatch);
}

static void on_reload(void *ctx)
{
    struct billing *bl = ctx;
    struct bl_config fresh = {0};
    char err[512];
    if (!bl_config_load(&fresh, bl->config_path, err, sizeof err)) {
        xg_log(XG_LOG_ERROR, "reload_rejected", "%s (keeping the running configuration)", err);
        return;
    }
    enum xg_log_level level;
    if (xg_log_level_parse(fresh.log_level, &level))
        xg_log_set_level(level);
    bl_config_free(&fresh);
    xg_log(XG_LOG_INFO, "reloaded", "configuration reloaded");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},    {"check-config", no_argument, NULL, 'k'},
        {"config-reference", no_argument, NULL, 'r'}, {"version", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},            {NULL, 0, NULL, 0}};
    const char *config_path = NULL;
    bool check_only = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "c:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c': config_path = optarg; break;
        case 'k': check_only = true; break;
        case 'r':
            xg_config_print_reference(bl_config_keys, bl_config_key_count, "xmrgate-billing");
            return 0;
        case 'v': puts("xmrgate-billing " BILLING_VERSION); return 0;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    const char *command = optind < argc ? argv[optind] : "serve";
    if (strcmp(command, "serve") != 0 && strcmp(command, "migrate") != 0) {
        usage(stderr);
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
