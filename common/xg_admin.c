/* xg_admin — health, readiness and metrics on the admin listener, plus the daemon's
 * routes behind the admin credential. */
#include "xg_admin.h"

#include "xg_metrics.h"
#include "xg_reply.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ADMIN_MAX_ROUTES 64

struct xg_admin {
    struct xg_httpd *httpd;
    const struct xg_ready_check *checks;
    void *closure;
    struct xg_metrics *metrics;
    pthread_mutex_t token_lock; /* guards token: a reload replaces it */
    char *token;
    const struct xg_httpd_route *daemon_routes;         /* the handlers the guard calls */
    struct xg_httpd_route routes[ADMIN_MAX_ROUTES + 5]; /* four of ours, a terminator */
};

static enum xg_httpd_result on_healthz(const struct xg_httpd_request *req)
{
    return xg_reply_json(req->conn, MHD_HTTP_OK, json_pack("{s:s}", "status", "ok"));
}

/* /readyz: 200 {"status":"ready","degraded":false,"checks":{name:"ok"}} or 503 with each
 * failing reason; a check that passes degraded shows its reason and makes "degraded" true; one
 * that passes with a note shows it. */
static enum xg_httpd_result on_readyz(const struct xg_httpd_request *req)
{
    const struct xg_admin *admin = req->closure;
    json_t *checks = json_object();
    bool all_ready = true, degraded = false;
    for (const struct xg_ready_check *c = admin->checks; c && c->name; c++) {
        char reason[256] = "";
        bool ready = c->fn(c->ctx, reason, sizeof reason);
        bool note = ready && (c->reports_degraded || c->reports_note) && reason[0];
        all_ready = all_ready && ready;
        degraded = degraded || (note && c->reports_degraded);
        json_object_set_new(checks, c->name, json_string(ready && !note ? "ok" : reason));
    }
    return xg_reply_json(req->conn, all_ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
                         json_pack("{s:s,s:b,s:o}", "status", all_ready ? "ready" : "not_ready",
                                   "degraded", degraded, "checks", checks));
}

static enum xg_httpd_result on_metrics(const struct xg_httpd_request *req)
{
    const struct xg_admin *admin = req->closure;
    size_t len = 0;
    char *text = xg_metrics_render(admin->metrics, &len);
    if (!text)
        return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_OUT_OF_MEMORY,
                                    "cannot render the metrics");
    enum xg_httpd_result r =
        xg_reply_bytes(req->conn, MHD_HTTP_OK, XG_METRICS_CONTENT_TYPE, text, len);
    free(text);
    return r;
}

bool xg_admin_bearer_ok(const char *authorization, const char *token)
{
    static const char scheme[] = "Bearer ";
    if (!authorization || !token || !token[0] ||
        strncasecmp(authorization, scheme, sizeof scheme - 1) != 0)
        return false;
    const char *given = authorization + sizeof scheme - 1;
    /* Digests of equal length, so the comparison's time says nothing about the token. */
    unsigned char a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)given, strlen(given), a);
    SHA256((const unsigned char *)token, strlen(token), b);
    return CRYPTO_memcmp(a, b, sizeof a) == 0;
}

static bool route_matches(const struct xg_httpd_route *r, const struct xg_httpd_request *req)
{
    size_t n = strlen(r->path);
    bool path = n > 0 && r->path[n - 1] == '*' ? strncmp(r->path, req->path, n - 1) == 0
                                               : strcmp(r->path, req->path) == 0;
    return path && (!r->method || strcmp(r->method, req->method) == 0 ||
                    (strcmp(req->method, "HEAD") == 0 && strcmp(r->method, "GET") == 0));
}

/* Every daemon route goes through here: the credential first, then the daemon's handler
 * (the first of its routes that matches, as xg_httpd chose it). */
static enum xg_httpd_result on_guarded(const struct xg_httpd_request *req)
{
    struct xg_admin *admin = req->closure;
    const char *auth = xg_httpd_header(req, MHD_HTTP_HEADER_AUTHORIZATION);
    pthread_mutex_lock(&admin->token_lock);
    bool enabled = admin->token && admin->token[0];
    bool ok = enabled && xg_admin_bearer_ok(auth, admin->token);
    pthread_mutex_unlock(&admin->token_lock);
    if (!enabled)
        return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_DISABLED, NULL);
    if (!ok)
        return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_UNAUTHORIZED, NULL);
    for (const struct xg_httpd_route *r = admin->daemon_routes; r && r->path; r++)
        if (route_matches(r, req))
            return r->handler(req);
    return xg_admin_reply_error(req->conn, XG_ADMIN_ERROR_NOT_FOUND, NULL);
}

enum xg_httpd_result xg_admin_reply_error(struct MHD_Connection *conn, enum xg_admin_error e,
                                          const char *message)
{
    static const char *const challenge[] = {MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                            "Bearer realm=\"xmrgate-admin\"", NULL};
    return xg_reply_json_with(conn, xg_admin_error_info(e)->status, xg_admin_error_json(e, message),
                              e == XG_ADMIN_ERROR_UNAUTHORIZED ? challenge : NULL);
}

struct xg_admin *xg_admin_start(const struct xg_admin_options *opt, char *err, size_t errlen)
{
    struct xg_admin *admin = calloc(1, sizeof *admin);
    if (!admin)
        return NULL;
    admin->checks = opt->checks;
    admin->closure = opt->closure;
    admin->metrics = opt->metrics;
    admin->daemon_routes = opt->routes;
    admin->token = strdup(opt->token ? opt->token : "");
    pthread_mutex_init(&admin->token_lock, NULL);
    size_t n = 0;
    admin->routes[n++] = (struct xg_httpd_route){"GET", "/healthz", on_healthz};
    admin->routes[n++] = (struct xg_httpd_route){"GET", "/livez", on_healthz};
    admin->routes[n++] = (struct xg_httpd_route){"GET", "/readyz", on_readyz};
    if (admin->metrics)
        admin->routes[n++] = (struct xg_httpd_route){"GET", "/metrics", on_metrics};
    for (const struct xg_httpd_route *r = opt->routes; r && r->path && n < ADMIN_MAX_ROUTES; r++)
        admin->routes[n++] = (struct xg_httpd_route){r->method, r->path, on_guarded};
    admin->routes[n] = (struct xg_httpd_route){NULL, NULL, NULL};

    struct xg_httpd_options hopt = {
        .bind_addr = opt->bind_addr,
        .port = (uint16_t)opt->port,
        .threads = 1,
        .max_body = 64 * 1024,
        .timeout_s = 10,
        .routes = admin->routes,
        .closure = admin,
    };
    admin->httpd = admin->token ? xg_httpd_start(&hopt, err, errlen) : NULL;
    if (!admin->httpd) {
        pthread_mutex_destroy(&admin->token_lock);
        free(admin->token);
        free(admin);
        return NULL;
    }
    return admin;
}

void xg_admin_stop(struct xg_admin *admin)
{
    if (!admin)
        return;
    xg_httpd_stop(admin->httpd);
    pthread_mutex_destroy(&admin->token_lock);
    free(admin->token);
    free(admin);
}

void xg_admin_set_token(struct xg_admin *admin, const char *token)
{
    char *fresh = strdup(token ? token : "");
    if (!admin || !fresh) {
        free(fresh);
        return;
    }
    pthread_mutex_lock(&admin->token_lock);
    char *old = admin->token;
    admin->token = fresh;
    pthread_mutex_unlock(&admin->token_lock);
    OPENSSL_cleanse(old, strlen(old));
    free(old);
}

unsigned xg_admin_port(const struct xg_admin *admin)
{
    return xg_httpd_port(admin->httpd);
}

void *xg_admin_closure(const struct xg_httpd_request *req)
{
    return ((const struct xg_admin *)req->closure)->closure;
}
