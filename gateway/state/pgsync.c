/* pgsync — LISTEN/NOTIFY follower for tenants and nodes. */
#include "state/pgsync.h"

#include "ops/gw_metrics.h"

#include "token.h"
#include "xg_hex.h"
#include "xg_log.h"
#include "xg_pg.h"
#include "xg_clock.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu-bp.h>

#define PGSYNC_POLL_MS 200

static const char *const pgsync_queries[] = {"gw_tenants_all", "gw_tenant_by_id",
                                             "gw_tenants_by_tier", "gw_nodes_enabled", NULL};

struct pgsync {
    struct xg_pg *pg;
    struct tenant_store *tenants;
    struct node_registry *nodes;
    uint8_t ha1_key[TOKEN_HA1_KEY_LEN];
    pthread_t thread;
    volatile sig_atomic_t stop;
    atomic_bool synced;
    uint64_t generation;
    struct gw_metrics *metrics; /* NOTIFY apply times, full reloads; may be NULL */
};

bool pgsync_parse_tenant(const char *const cols[PGSYNC_TENANT_COLUMNS],
                         const uint8_t ha1_key[TOKEN_HA1_KEY_LEN], struct tenant_row *out)
{
    memset(out, 0, sizeof *out);
    uint8_t wrapped[TOKEN_HA1_WRAPPED_LEN];
    char *end;
    out->id = strtoll(cols[0], &end, 10);
    if (*end || out->id <= 0)
        return false;
    if (!xg_hex_decode(cols[1], out->token_hash, sizeof out->token_hash) ||
        !xg_hex_decode(cols[2], wrapped, sizeof wrapped))
        return false;
    if (strlen(cols[3]) > TENANT_HANDLE_MAX || strlen(cols[4]) > TENANT_TIER_MAX)
        return false;
    strcpy(out->handle, cols[3]);
    /* A HA1 that does not unwrap (another key, a copied row) leaves Digest unusable for
     * this tenant; the token schemes still work. */
    if (!token_ha1_unwrap(ha1_key, out->handle, wrapped, out->digest_ha1))
        memset(out->digest_ha1, 0, sizeof out->digest_ha1);
    strcpy(out->tier_id, cols[4]);
    long long burst = strtoll(cols[5], &end, 10);
    if (*end || burst <= 0 || burst > INT32_MAX)
        return false;
    out->burst_rps = (int32_t)burst;
    out->daily_quota = strtoll(cols[6], &end, 10);
    if (*end || out->daily_quota <= 0)
        return false;
    out->valid_until = strtoll(cols[7], &end, 10);
    if (*end)
        return false;
    out->suspended = cols[8][0] == 't';
    long long size = strtoll(cols[9], &end, 10);
    if (*end || size <= 0 || size > INT32_MAX)
        return false;
    out->burst_size = (int32_t)size;
    return true;
}

/* Publishes every row of a tenant query result; returns false on a malformed row. */
static bool apply_tenant_rows(struct pgsync *sync, PGresult *res)
{
    int rows = PQntuples(res);
    for (int r = 0; r < rows; r++) {
        const char *cols[PGSYNC_TENANT_COLUMNS];
        for (int c = 0; c < PGSYNC_TENANT_COLUMNS; c++)
            cols[c] = PQgetvalue(res, r, c);
        struct tenant_row row;
        if (!pgsync_parse_tenant(cols, sync->ha1_key, &row)) {
            xg_log(XG_LOG_ERROR, "tenant_row_invalid", "tenant %s skipped", cols[0]);
            continue;
        }
        if (!tenants_upsert(sync->tenants, &row, sync->generation))
            return false;
    }
    return true;
}

/* Streams the full load a row at a time (PQsetSingleRowMode): holding a million rows in
 * one PGresult first more than doubled the gateway's peak memory (docs/BENCHMARKS.md). */
static bool stream_all_tenants(struct pgsync *sync)
{
    PGconn *conn = xg_pg_conn(sync->pg);
    if (!conn || !PQsendQueryPrepared(conn, "gw_tenants_all", 0, NULL, NULL, NULL, 0))
        return false;
    bool ok = PQsetSingleRowMode(conn) == 1;
    PGresult *res;
    while ((res = PQgetResult(conn)) != NULL) {
        ExecStatusType st = PQresultStatus(res);
        if (st == PGRES_SINGLE_TUPLE)
            ok = ok && apply_tenant_rows(sync, res);
        else if (st != PGRES_TUPLES_OK) {
            xg_log(XG_LOG_WARN, "tenants_load_failed", "%s", PQresultErrorMessage(res));
            ok = false;
        }
        PQclear(res); /* every result is read, so the connection is usable afterwards */
    }
    return ok;
}

static bool load_all_tenants(struct pgsync *sync)
{
    sync->generation++;
    bool ok = stream_all_tenants(sync);
    if (ok) {
        size_t gone = tenants_sweep(sync->tenants, sync->generation);
        xg_log(XG_LOG_INFO, "tenants_loaded", "%zu tenants (%zu removed)",
               tenants_count(sync->tenants), gone);
    }
    return ok;
}

static bool reload_tenant(struct pgsync *sync, const char *id)
{
    const char *params[] = {id};
    PGresult *res = xg_pg_exec(sync->pg, "gw_tenant_by_id", 1, params);
    if (!res)
        return false;
    bool ok = true;
    if (PQntuples(res) == 0)
        tenants_remove(sync->tenants, strtoll(id, NULL, 10));
    else
        ok = apply_tenant_rows(sync, res);
    PQclear(res);
    return ok;
}

static bool reload_tier(struct pgsync *sync, const char *tier_id)
{
    const char *params[] = {tier_id};
    PGresult *res = xg_pg_exec(sync->pg, "gw_tenants_by_tier", 1, params);
    if (!res)
        return false;
    bool ok = apply_tenant_rows(sync, res);
    PQclear(res);
    return ok;
}

static bool load_nodes(struct pgsync *sync)
{
    PGresult *res = xg_pg_exec(sync->pg, "gw_nodes_enabled", 0, NULL);
    if (!res)
        return false;
    int rows = PQntuples(res);
    struct node_info *list = calloc((size_t)rows + 1, sizeof *list);
    bool ok = list != NULL;
    size_t n = 0;
    for (int r = 0; ok && r < rows; r++) {
        struct node_info *node = &list[n];
        node->id = (int32_t)strtol(PQgetvalue(res, r, 0), NULL, 10);
        snprintf(node->name, sizeof node->name, "%s", PQgetvalue(res, r, 1));
        snprintf(node->url, sizeof node->url, "%s", PQgetvalue(res, r, 2));
        if (!nodes_priority_parse(PQgetvalue(res, r, 3), &node->priority))
            node->priority = NODE_PUBLIC;
        node->pruned = PQgetvalue(res, r, 4)[0] == 't';
        node->revision = strtoll(PQgetvalue(res, r, 5), NULL, 10);
        const char *bcast = PQgetvalue(res, r, 6); /* "" for NULL: by class */
        nodes_apply_class(node, bcast[0] ? bcast[0] == 't' : -1,
                          (unsigned)strtoul(PQgetvalue(res, r, 7), NULL, 10));
        n++;
    }
    if (ok)
        ok = nodes_publish(sync->nodes, list, n);
    if (ok)
        xg_log(XG_LOG_INFO, "nodes_loaded", "%zu enabled nodes", n);
    free(list);
    PQclear(res);
    return ok;
}

static bool subscribe_and_load(struct pgsync *sync)
{
    /* LISTEN first: a change committed during the load is then also notified. */
    PGresult *res = xg_pg_exec_sql(
        sync->pg, "LISTEN xmrgate_tenants; LISTEN xmrgate_tiers; LISTEN xmrgate_nodes");
    if (!res)
        return false;
    PQclear(res);
    gw_metrics_full_reload(sync->metrics);
    return load_all_tenants(sync) && load_nodes(sync);
}

static bool handle_notify(struct pgsync *sync, const PGnotify *n)
{
    if (strcmp(n->relname, "xmrgate_tenants") == 0)
        return reload_tenant(sync, n->extra);
    if (strcmp(n->relname, "xmrgate_tiers") == 0)
        return reload_tier(sync, n->extra);
    if (strcmp(n->relname, "xmrgate_nodes") == 0)
        return load_nodes(sync);
    return true;
}

/* Applies every notification libpq has already read. Reloading a row reads from the
 * socket too, so notifications can arrive in libpq's buffer without the socket turning
 * readable again: drain before every wait. */
static bool drain_notifies(struct pgsync *sync, PGconn *conn)
{
    PGnotify *n;
    while ((n = PQnotifies(conn)) != NULL) {
        double arrived = xg_monotonic_s();
        bool ok = handle_notify(sync, n);
        if (ok)
            gw_metrics_notify_applied(sync->metrics, n->relname, xg_monotonic_s() - arrived);
        PQfreemem(n);
        if (!ok)
            return false;
    }
    return true;
}

/* Waits for notifications and applies them; returns when the connection fails. */
static void follow(struct pgsync *sync)
{
    PGconn *conn = xg_pg_conn(sync->pg);
    while (!sync->stop && drain_notifies(sync, conn)) {
        struct pollfd pfd = {.fd = PQsocket(conn), .events = POLLIN};
        int rc = poll(&pfd, 1, PGSYNC_POLL_MS);
        if (rc < 0 && errno != EINTR)
            return;
        if (rc > 0 && !PQconsumeInput(conn))
            return;
    }
}

static void *sync_loop(void *arg)
{
    struct pgsync *sync = arg;
    rcu_register_thread();
    while (!sync->stop) {
        if (!xg_pg_connect_backoff(sync->pg, &sync->stop))
            break;
        if (subscribe_and_load(sync)) {
            atomic_store(&sync->synced, true);
            xg_log(XG_LOG_INFO, "pgsync_following", "listening for tenant and node changes");
            follow(sync);
        }
        atomic_store(&sync->synced, false);
        if (!sync->stop)
            xg_log(XG_LOG_WARN, "pgsync_lost",
                   "PostgreSQL connection lost (%s); serving known tenants, reconnecting",
                   xg_pg_last_error(sync->pg));
        xg_pg_disconnect(sync->pg);
    }
    rcu_unregister_thread();
    return NULL;
}

struct pgsync *pgsync_start(const char *conninfo, const uint8_t ha1_key[TOKEN_HA1_KEY_LEN],
                            struct tenant_store *tenants, struct node_registry *nodes,
                            struct gw_metrics *metrics)
{
    struct pgsync *sync = calloc(1, sizeof *sync);
    if (!sync)
        return NULL;
    memcpy(sync->ha1_key, ha1_key, TOKEN_HA1_KEY_LEN);
    sync->tenants = tenants;
    sync->nodes = nodes;
    sync->metrics = metrics;
    sync->pg = xg_pg_new(conninfo, pgsync_queries);
    if (sync->pg) /* LISTEN is the session's: a broken connection means subscribe again */
        xg_pg_session_bound(sync->pg);
    if (!sync->pg || pthread_create(&sync->thread, NULL, sync_loop, sync) != 0) {
        xg_pg_free(sync->pg);
        free(sync);
        return NULL;
    }
    return sync;
}

void pgsync_stop(struct pgsync *sync)
{
    if (!sync)
        return;
    sync->stop = 1;
    pthread_join(sync->thread, NULL);
    xg_pg_free(sync->pg);
    free(sync);
}

bool pgsync_synced(struct pgsync *sync, char *reason, size_t len)
{
    if (atomic_load(&sync->synced))
        return true;
    snprintf(reason, len, "tenant table not loaded from PostgreSQL (serving what is known)");
    return false;
}
