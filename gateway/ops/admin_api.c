/* admin_api — node and tenant administration, node status and the route explainer. */
#include "ops/admin_api.h"

#include "cache/cache.h"
#include "rpc/methods.h"
#include "rpc/plan.h"
#include "nodes/node_url.h"
#include "nodes/nodes.h"
#include "nodes/prober.h"
#include "state/tenants.h"
#include "xg_admin.h"
#include "xg_log.h"
#include "xg_pg.h"
#include "xg_reply.h"
#include "xg_clock.h"

#include <errno.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define APPLY_WAIT_MS 2000

static const char *const admin_queries[] = {
    "adm_nodes_all",
    "adm_node_insert",
    "adm_node_update",
    "adm_node_delete",
    "adm_tenant_get",
    "adm_tenant_set_state",
    NULL,
};

struct admin_api {
    struct admin_api_deps deps;
    char *conninfo;
    pthread_mutex_t lock; /* guards pg */
    struct xg_pg *pg;
};

struct admin_api *admin_api_new(const struct admin_api_deps *deps)
{
    struct admin_api *api = calloc(1, sizeof *api);
    if (!api)
        return NULL;
    api->deps = *deps;
    api->conninfo = strdup(deps->conninfo);
    api->pg = api->conninfo ? xg_pg_new(api->conninfo, admin_queries) : NULL;
    if (!api->pg) {
        free(api->conninfo);
        free(api);
        return NULL;
    }
    api->deps.conninfo = api->conninfo;
    pthread_mutex_init(&api->lock, NULL);
    return api;
}

void admin_api_free(struct admin_api *api)
{
    if (!api)
        return;
    xg_pg_free(api->pg);
    pthread_mutex_destroy(&api->lock);
    free(api->conninfo);
    free(api);
}

/* ---- pure checks ----------------------------------------------------------------------- */

bool admin_node_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 64)
        return false;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '.' || *p == '-'))
            return false;
    return true;
}

/* http(s)://authority with no path, query or fragment: the gateway appends the paths. */
bool admin_node_url_ok(const char *url)
{
    if (!url)
        return false;
    const char *rest = strncmp(url, "http://", 7) == 0    ? url + 7
                       : strncmp(url, "https://", 8) == 0 ? url + 8
                                                          : NULL;
    if (!rest || !*rest || strlen(url) > 255)
        return false;
    return strpbrk(rest, "/?# \t") == NULL;
}

static bool take_string(const json_t *body, const char *key, const char **out, char *err,
                        size_t errlen)
{
    const json_t *v = json_object_get(body, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_string(v)) {
        snprintf(err, errlen, "%s: expected a string", key);
        return false;
    }
    *out = json_string_value(v);
    return true;
}

static bool take_bool(const json_t *body, const char *key, const char **out, char *err,
                      size_t errlen)
{
    const json_t *v = json_object_get(body, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_boolean(v)) {
        snprintf(err, errlen, "%s: expected true or false", key);
        return false;
    }
    *out = json_is_true(v) ? "true" : "false";
    return true;
}

bool admin_node_change_parse(const json_t *body, bool adding, struct admin_node_change *out,
                             char *err, size_t errlen)
{
    static const char *const known[] = {"name", "url", "priority", "pruned", "enabled", NULL};
    *out = (struct admin_node_change){0};
    if (!json_is_object(body)) {
        snprintf(err, errlen, "expected a JSON object");
        return false;
    }
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)body, key, value)
    {
        bool ok = false;
        for (size_t i = 0; known[i] && !ok; i++)
            ok = strcmp(known[i], key) == 0;
        if (!ok) {
            snprintf(err, errlen, "%s: unknown member", key);
            return false;
        }
    }
    if (!take_string(body, "name", &out->name, err, errlen) ||
        !take_string(body, "url", &out->url, err, errlen) ||
        !take_string(body, "priority", &out->priority, err, errlen) ||
        !take_bool(body, "pruned", &out->pruned, err, errlen) ||
        !take_bool(body, "enabled", &out->enabled, err, errlen))
        return false;
    enum node_priority prio;
    if (adding && (!out->name || !out->url)) {
        snprintf(err, errlen, "name and url are required");
        return false;
    }
    if (out->name && !admin_node_name_ok(out->name)) {
        snprintf(err, errlen, "name: 1 to 64 of A-Z a-z 0-9 _ . -");
        return false;
    }
    if (out->url && !admin_node_url_ok(out->url)) {
        snprintf(err, errlen, "url: http:// or https:// and host[:port], nothing after it");
        return false;
    }
    if (out->priority && !nodes_priority_parse(out->priority, &prio)) {
        snprintf(err, errlen, "priority: primary, standby or public");
        return false;
    }
    return true;
}

/* ---- PostgreSQL ------------------------------------------------------------------------ */

/* Runs a named query, reconnecting once if the connection broke. Lock held by the caller.
 * NULL with the reason in the connection's last error. */
static PGresult *admin_exec(struct admin_api *api, const char *name, int n,
                            const char *const *params)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!xg_pg_ok(api->pg) && !xg_pg_connect(api->pg))
            return NULL;
        PGresult *res = xg_pg_exec(api->pg, name, n, params);
        if (res || xg_pg_ok(api->pg))
            return res;
    }
    return NULL;
}

static enum xg_httpd_result reply_db_error(struct admin_api *api,
                                           const struct xg_httpd_request *req)
{
    const char *state = xg_pg_last_sqlstate(api->pg);
    if (strcmp(state, "23505") == 0)
        return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_CONFLICT,
                                    "a node with that name or URL exists");
    if (strncmp(state, "23", 2) == 0 || strncmp(state, "22", 2) == 0)
        return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_INVALID, xg_pg_last_error(api->pg));
    xg_log(XG_LOG_ERROR, "admin_db_error", "%s", xg_pg_last_error(api->pg));
    return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_DATABASE_UNAVAILABLE, NULL);
}

/* ---- node status ----------------------------------------------------------------------- */

static const char *name_of(const json_t *node)
{
    const char *name = json_string_value(json_object_get(node, "name"));
    return name ? name : "";
}

static const json_t *live_node(const json_t *status, const char *name)
{
    size_t i;
    const json_t *n;
    json_array_foreach(json_object_get(status, "nodes"), i, n)
    {
        if (strcmp(name_of(n), name) == 0)
            return n;
    }
    return NULL;
}

/* One node: its row, merged with what the prober knows (nothing for a disabled node). */
static json_t *node_json(PGresult *res, int row, const json_t *status)
{
    const char *name = PQgetvalue(res, row, 1);
    bool enabled = strcmp(PQgetvalue(res, row, 5), "t") == 0;
    char url[512]; /* the column holds at most 255 characters: the shown form fits */
    node_url_redact(PQgetvalue(res, row, 2), url, sizeof url);
    json_t *obj = json_pack("{s:I,s:s,s:s,s:s,s:b,s:b,s:s}", "id",
                            (json_int_t)strtoll(PQgetvalue(res, row, 0), NULL, 10), "name", name,
                            "url", url, "priority", PQgetvalue(res, row, 3), "pruned",
                            strcmp(PQgetvalue(res, row, 4), "t") == 0, "enabled", enabled,
                            "updated_at", PQgetvalue(res, row, 6));
    const json_t *live = live_node(status, name);
    const char *state = !enabled ? "disabled" : !live ? "pending" : NULL;
    if (live) {
        const char *key;
        json_t *value;
        json_object_foreach((json_t *)live, key, value)
        {
            if (!json_object_get(obj, key))
                json_object_set(obj, key, value);
        }
        /* A disabled node may still be in the prober until the NOTIFY lands. */
        state = !enabled                                         ? "disabled"
                : json_is_true(json_object_get(live, "dropped")) ? "dropped"
                : json_is_true(json_object_get(live, "up"))      ? "up"
                                                                 : "down";
    }
    json_object_set_new(obj, "state", json_string(state));
    return obj;
}

static json_t *quorum_json(struct admin_api *api)
{
    struct prober_quorum q = prober_quorum(api->deps.prober);
    char reason[256] = "";
    bool ready = prober_ready(api->deps.prober, reason, sizeof reason);
    json_t *obj =
        json_pack("{s:b,s:b,s:I,s:s,s:I,s:b,s:s?}", "known", q.known, "degraded", q.degraded,
                  "height", (json_int_t)q.height, "hash", q.hash, "healthy", (json_int_t)q.healthy,
                  "ready", ready, "reason", reason[0] ? reason : NULL);
    json_object_set_new(obj, "agreeing", json_integer((json_int_t)q.agreeing));
    json_object_set_new(obj, "voters", json_integer((json_int_t)q.voters));
    return obj;
}

static json_t *cache_json(struct cache *c)
{
    struct cache_stats cs = cache_stats(c);
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "hits", (json_int_t)cs.hits,
                     "settled_hits", (json_int_t)cs.settled_hits, "misses", (json_int_t)cs.misses,
                     "evictions", (json_int_t)cs.evictions, "purged", (json_int_t)cs.purged,
                     "entries", (json_int_t)cs.entries, "bytes", (json_int_t)cs.bytes, "max_bytes",
                     (json_int_t)cs.max_bytes, "epoch", (json_int_t)cs.epoch);
}

/* Every node of the table; when PostgreSQL is away, what the prober knows, said so. */
static json_t *nodes_json(struct admin_api *api, const char *only)
{
    json_t *status = prober_status(api->deps.prober);
    json_t *nodes = json_array();
    pthread_mutex_lock(&api->lock);
    PGresult *res = admin_exec(api, "adm_nodes_all", 0, NULL);
    pthread_mutex_unlock(&api->lock);
    if (res) {
        for (int i = 0; i < PQntuples(res); i++)
            if (!only || strcmp(PQgetvalue(res, i, 1), only) == 0)
                json_array_append_new(nodes, node_json(res, i, status));
        PQclear(res);
    } else {
        size_t i;
        json_t *n;
        json_array_foreach(json_object_get(status, "nodes"), i, n)
        {
            if (!only || strcmp(name_of(n), only) == 0)
                json_array_append(nodes, n);
        }
    }
    json_t *out = json_pack("{s:o,s:s}", "nodes", nodes, "source",
                            res ? "database" : "memory (PostgreSQL unreachable)");
    /* Rounds run for ZMQ publications and what their probes showed (prober_pub_stats). */
    json_object_set(out, "publications", json_object_get(status, "publications"));
    json_decref(status);
    return out;
}

static enum xg_httpd_result on_nodes(const struct xg_httpd_request *req)
{
    struct admin_api *api = xg_admin_closure(req);
    json_t *out = nodes_json(api, NULL);
    json_object_set_new(out, "quorum", quorum_json(api));
    json_object_set_new(out, "cache", cache_json(api->deps.cache));
    return xg_reply_json(req->conn, MHD_HTTP_OK, out);
}

static enum xg_httpd_result on_quorum(const struct xg_httpd_request *req)
{
    struct admin_api *api = xg_admin_closure(req);
    return xg_reply_json(req->conn, MHD_HTTP_OK, quorum_json(api));
}

/* ---- node changes ---------------------------------------------------------------------- */

static json_t *parse_body(const struct xg_httpd_request *req)
{
    return req->body_len ? json_loadb(req->body, req->body_len, 0, NULL) : json_object();
}

static enum xg_httpd_result node_write(struct admin_api *api, const struct xg_httpd_request *req,
                                       const char *query, const struct admin_node_change *c,
                                       unsigned ok_status, const char *event)
{
    const char *params[] = {c->name, c->url, c->priority, c->pruned, c->enabled};
    int n = strcmp(query, "adm_node_delete") == 0 ? 1 : 5;
    if (strcmp(query, "adm_node_insert") == 0) {
        params[2] = c->priority ? c->priority : "primary";
        params[3] = c->pruned ? c->pruned : "false";
        params[4] = c->enabled ? c->enabled : "true";
    }
    pthread_mutex_lock(&api->lock);
    PGresult *res = admin_exec(api, query, n, params);
    bool written = res && PQntuples(res) > 0;
    enum xg_httpd_result rc = XG_HTTPD_QUEUED;
    if (!res)
        rc = reply_db_error(api, req);
    else if (!written)
        rc = xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_UNKNOWN_NODE, "no node by that name");
    PQclear(res);
    pthread_mutex_unlock(&api->lock);
    if (!written)
        return rc;
    xg_log_fields(XG_LOG_INFO, event, json_pack("{s:s}", "node", c->name),
                  "admin API: node %s (%s)", c->name, event);
    json_t *out = nodes_json(api, c->name);
    json_object_set_new(out, "result", json_string(event));
    return xg_reply_json(req->conn, ok_status, out);
}

static enum xg_httpd_result on_nodes_add(const struct xg_httpd_request *req)
{
    struct admin_api *api = xg_admin_closure(req);
    json_t *body = parse_body(req);
    struct admin_node_change c;
    char err[256];
    enum xg_httpd_result rc;
    if (!admin_node_change_parse(body, true, &c, err, sizeof err))
        rc = xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_INVALID, err);
    else
        rc = node_write(api, req, "adm_node_insert", &c, MHD_HTTP_CREATED, "node_added");
    json_decref(body);
    return rc;
}

/* /v1/nodes/<name>[/enable|/disable|/reenable] */
static enum xg_httpd_result on_node_item(const struct xg_httpd_request *req)
{
    struct admin_api *api = xg_admin_closure(req);
    char name[72], action[24] = "";
    const char *rest = req->path + strlen("/v1/nodes/");
    if (sscanf(rest, "%71[^/]/%23s", name, action) < 1 || !admin_node_name_ok(name))
        return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_UNKNOWN_NODE, NULL);
    struct admin_node_change c = {.name = name};
    const char *m = req->method;
    if (!action[0] && (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0)) {
        json_t *out = nodes_json(api, name);
        bool found = json_array_size(json_object_get(out, "nodes")) > 0;
        if (!found) {
            json_decref(out);
            return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_UNKNOWN_NODE, NULL);
        }
        return xg_reply_json(req->conn, MHD_HTTP_OK, out);
    }
    if (!action[0] && strcmp(m, "DELETE") == 0)
        return node_write(api, req, "adm_node_delete", &c, MHD_HTTP_OK, "node_removed");
    if (!action[0] && strcmp(m, "PATCH") == 0) {
        json_t *body = parse_body(req);
        char err[256];
        enum xg_httpd_result rc;
        if (json_object_get(body, "name"))
            rc = xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_INVALID,
                                      "a node's name cannot change: remove it and add it");
        else if (!admin_node_change_parse(body, false, &c, err, sizeof err))
            rc = xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_INVALID, err);
        else {
            c.name = name;
            rc = node_write(api, req, "adm_node_update", &c, MHD_HTTP_OK, "node_changed");
        }
        json_decref(body);
        return rc;
    }
    if (strcmp(m, "POST") == 0 && strcmp(action, "enable") == 0) {
        c.enabled = "true";
        return node_write(api, req, "adm_node_update", &c, MHD_HTTP_OK, "node_enabled");
    }
    if (strcmp(m, "POST") == 0 && strcmp(action, "disable") == 0) {
        c.enabled = "false";
        return node_write(api, req, "adm_node_update", &c, MHD_HTTP_OK, "node_disabled");
    }
    if (strcmp(m, "POST") == 0 && strcmp(action, "reenable") == 0)
        return node_write(api, req, "adm_node_update", &c, MHD_HTTP_OK, "node_reenabled");
    return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_METHOD_NOT_ALLOWED,
                                "GET, PATCH, DELETE /v1/nodes/<name>; POST …/enable, …/disable, "
                                "…/reenable");
}

/* ---- the route explainer --------------------------------------------------------------- */

/* Why a node is not among the candidates, from its live state. */
static const char *exclusion(const json_t *n, bool need_tip, int64_t historical_ok)
{
    if (json_is_true(json_object_get(n, "dropped")))
        return "dropped after its cooldown ceiling (re-enable it)";
    if (!json_is_true(json_object_get(n, "up")))
        return "down (failing health probes)";
    int64_t lag = json_integer_value(json_object_get(n, "tip_distance"));
    if (lag < 0)
        return "not on the quorum chain";
    if (need_tip && lag > 0)
        return "behind the quorum tip";
    if (lag > historical_ok)
        return "too far behind for historical reads";
    const char *breaker = json_string_value(json_object_get(n, "breaker"));
    if (breaker && strcmp(breaker, "closed") != 0)
        return "circuit breaker open (client requests failing)";
    return "pruned, and the request needs a full node";
}

static bool explain_target(const json_t *body, const struct method_info **info,
                           const json_t **params, char *err, size_t errlen)
{
    const char *method = json_string_value(json_object_get(body, "method"));
    const char *path = json_string_value(json_object_get(body, "path"));
    if (!method == !path) {
        snprintf(err, errlen, "give either method (JSON-RPC) or path (plain endpoint)");
        return false;
    }
    *info = method ? methods_find_jsonrpc(method, strlen(method))
                   : methods_find_path(path, strlen(path));
    *params = method ? json_object_get(body, "params") : json_object_get(body, "body");
    if (!*info)
        snprintf(err, errlen, "%s: not a monerod method (answered -32601 or 404)",
                 method ? method : path);
    return *info != NULL;
}

static enum xg_httpd_result on_route(const struct xg_httpd_request *req)
{
    struct admin_api *api = xg_admin_closure(req);
    json_t *body = parse_body(req);
    const struct method_info *info = NULL;
    const json_t *params = NULL;
    char err[256];
    if (!explain_target(body, &info, &params, err, sizeof err)) {
        json_decref(body);
        return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_INVALID, err);
    }
    json_t *out = json_pack("{s:s,s:s,s:s,s:b,s:i}", "method", info->name, "class",
                            methods_class_name(info->cls), "needs_full_node",
                            methods_full_node_name(info->needs_full_node), "writes", info->writes,
                            "quota_weight", (int)info->weight);
    json_object_set_new(out, "quorum", quorum_json(api));
    /* The plan proxy follows for the same request (a .bin body cannot be given here: it is
     * planned as a body that names nothing and asks for no pool). */
    struct plan plan;
    plan_for(info, &(struct plan_request){.params = info->kind == METHOD_BIN_PATH ? NULL : params},
             &plan);
    json_object_set_new(out, "plan", plan_json(&plan));
    if (plan.route == PLAN_ROUTE_REFUSED) {
        json_object_set_new(out, "decision",
                            json_string("denied: answered as restricted monerod answers, no "
                                        "node is asked"));
        json_decref(body);
        return xg_reply_json(req->conn, MHD_HTTP_OK, out);
    }
    struct node_info picked[16];
    size_t n;
    bool need_tip = plan.route == PLAN_ROUTE_TIP;
    const char *decision;
    if (plan.route == PLAN_ROUTE_BROADCAST) {
        n = prober_healthy(api->deps.prober, picked, 16);
        decision = "broadcast: sent to every node listed, in parallel; accepted if any accepts";
    } else {
        struct prober_pick pick = {.need_tip = need_tip, .want_full = plan.full_node};
        n = prober_rank(api->deps.prober, &pick, picked, 16);
        decision = n ? "read: the first node; on a connection error, timeout, 5xx or BUSY one "
                       "retry on the second"
                     : "no healthy node: the configured order is tried (X-Xmrgate-Degraded)";
    }
    json_object_set_new(out, "decision", json_string(decision));
    json_object_set_new(out, "cache",
                        json_string(info->cls == METHOD_TIP ? "tip: served from the cache for "
                                                              "one probe interval"
                                    : info->cls == METHOD_IMMUTABLE
                                        ? "immutable: cached when named by hash or deep "
                                          "enough below the quorum tip"
                                        : "never cached"));
    json_t *status = prober_status(api->deps.prober);
    json_t *candidates = json_array();
    for (size_t i = 0; i < n; i++) {
        const json_t *live = live_node(status, picked[i].name);
        json_array_append_new(candidates, json_pack("{s:i,s:s,s:s,s:b,s:O?,s:O?}", "rank",
                                                    (int)i + 1, "name", picked[i].name, "priority",
                                                    picked[i].priority == NODE_PRIMARY   ? "primary"
                                                    : picked[i].priority == NODE_STANDBY ? "standby"
                                                                                         : "public",
                                                    "pruned", picked[i].pruned, "tip_distance",
                                                    json_object_get(live, "tip_distance"), "ema_ms",
                                                    json_object_get(live, "ema_ms")));
    }
    json_t *excluded = json_array();
    size_t i;
    const json_t *node;
    json_array_foreach(json_object_get(status, "nodes"), i, node)
    {
        const char *name = name_of(node);
        bool chosen = false;
        for (size_t k = 0; k < n && !chosen; k++)
            chosen = strcmp(picked[k].name, name) == 0;
        if (!chosen)
            json_array_append_new(excluded, json_pack("{s:s,s:s}", "name", name, "why",
                                                      exclusion(node, need_tip, INT64_MAX)));
    }
    json_decref(status);
    json_object_set_new(out, "rank_key",
                        json_string("on the quorum tip, then priority tier, then EMA latency "
                                    "(equals rotate)"));
    json_object_set_new(out, "candidates", candidates);
    json_object_set_new(out, "excluded", excluded);
    json_decref(body);
    return xg_reply_json(req->conn, MHD_HTTP_OK, out);
}

/* ---- tenants --------------------------------------------------------------------------- */

/* This replica's in-memory view: -1 not loaded, 0 active, 1 suspended. */
static int memory_state(struct admin_api *api, int64_t id)
{
    struct tenant_row t;
    return tenants_find_id(api->deps.tenants, id, &t) ? t.suspended : -1;
}

static json_t *tenant_json(struct admin_api *api, int64_t id, bool *found)
{
    char idtext[24];
    snprintf(idtext, sizeof idtext, "%lld", (long long)id);
    const char *params[] = {idtext};
    pthread_mutex_lock(&api->lock);
    PGresult *res = admin_exec(api, "adm_tenant_get", 1, params);
    pthread_mutex_unlock(&api->lock);
    *found = res && PQntuples(res) == 1;
    if (!*found) {
        PQclear(res);
        return NULL;
    }
    int mem = memory_state(api, id);
    json_t *out = json_pack(
        "{s:I,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:i,s:i,s:{s:b,s:s?}}", "id", (json_int_t)id, "handle",
        PQgetvalue(res, 0, 1), "tier", PQgetvalue(res, 0, 2), "state", PQgetvalue(res, 0, 3),
        "valid_until", PQgetvalue(res, 0, 4), "created_at", PQgetvalue(res, 0, 5), "used_today",
        (json_int_t)strtoll(PQgetvalue(res, 0, 6), NULL, 10), "daily_quota",
        (json_int_t)strtoll(PQgetvalue(res, 0, 7), NULL, 10), "burst_rps",
        atoi(PQgetvalue(res, 0, 8)), "burst_size", atoi(PQgetvalue(res, 0, 9)), "this_replica",
        "loaded", mem >= 0, "state",
        mem < 0 ? NULL
        : mem   ? "suspended"
                : "active");
    PQclear(res);
    return out;
}

static bool parse_tenant_path(const char *path, int64_t *id, char *action, size_t len)
{
    const char *rest = path + strlen("/v1/tenants/");
    char *end;
    errno = 0;
    long long v = strtoll(rest, &end, 10);
    if (end == rest || errno || v <= 0)
        return false;
    *id = v;
    action[0] = '\0';
    if (*end == '/')
        snprintf(action, len, "%s", end + 1);
    else if (*end)
        return false;
    return true;
}

static enum xg_httpd_result set_tenant_state(struct admin_api *api,
                                             const struct xg_httpd_request *req, int64_t id,
                                             bool suspend)
{
    char idtext[24];
    snprintf(idtext, sizeof idtext, "%lld", (long long)id);
    const char *params[] = {idtext, suspend ? "suspended" : "active"};
    pthread_mutex_lock(&api->lock);
    PGresult *res = admin_exec(api, "adm_tenant_set_state", 2, params);
    enum xg_httpd_result rc = XG_HTTPD_QUEUED;
    bool found = res && PQntuples(res) == 1;
    if (!res)
        rc = reply_db_error(api, req);
    else if (!found)
        rc = xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_UNKNOWN_TENANT, NULL);
    PQclear(res);
    pthread_mutex_unlock(&api->lock);
    if (!found)
        return rc;
    /* Wait for our own copy to follow the NOTIFY, as every replica's does. */
    int64_t started = xg_monotonic_ms(), waited;
    while ((waited = xg_monotonic_ms() - started) < APPLY_WAIT_MS &&
           memory_state(api, id) != (suspend ? 1 : 0)) {
        struct timespec tick = {0, 2 * 1000000L};
        nanosleep(&tick, NULL);
    }
    bool applied = memory_state(api, id) == (suspend ? 1 : 0);
    xg_log_fields(XG_LOG_INFO, suspend ? "tenant_suspended" : "tenant_resumed",
                  json_pack("{s:I}", "tenant", (json_int_t)id), "admin API: tenant %s",
                  suspend ? "suspended" : "resumed");
    bool again;
    json_t *out = tenant_json(api, id, &again);
    if (!out)
        out = json_object();
    json_object_set_new(out, "applied_here_ms", applied ? json_integer(waited) : json_null());
    return xg_reply_json(req->conn, MHD_HTTP_OK, out);
}

static enum xg_httpd_result on_tenant_item(const struct xg_httpd_request *req)
{
    struct admin_api *api = xg_admin_closure(req);
    int64_t id;
    char action[24];
    if (!parse_tenant_path(req->path, &id, action, sizeof action))
        return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_UNKNOWN_TENANT,
                                    "expected /v1/tenants/<numeric id>");
    bool post = strcmp(req->method, "POST") == 0;
    if (!action[0] && (strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0)) {
        bool found;
        json_t *out = tenant_json(api, id, &found);
        if (!found)
            return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_UNKNOWN_TENANT,
                                        "no tenant by that id (or PostgreSQL unreachable)");
        return xg_reply_json(req->conn, MHD_HTTP_OK, out);
    }
    if (post && strcmp(action, "suspend") == 0)
        return set_tenant_state(api, req, id, true);
    if (post && strcmp(action, "resume") == 0)
        return set_tenant_state(api, req, id, false);
    return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_METHOD_NOT_ALLOWED,
                                "GET /v1/tenants/<id>; POST …/suspend, …/resume");
}

const struct xg_httpd_route admin_api_routes[] = {
    {"GET", "/nodes", on_nodes},
    {"GET", "/v1/nodes", on_nodes},
    {"POST", "/v1/nodes", on_nodes_add},
    {NULL, "/v1/nodes/*", on_node_item},
    {"GET", "/v1/quorum", on_quorum},
    {"POST", "/v1/route", on_route},
    {NULL, "/v1/tenants/*", on_tenant_item},
    {NULL, NULL, NULL},
};
