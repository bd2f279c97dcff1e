/* xg_admin — health and readiness on the admin listener, plus the daemon's routes. */
#include "xg_admin.h"

#include "xg_reply.h"

#include <stdlib.h>
#include <string.h>

#define ADMIN_MAX_ROUTES 64

struct xg_admin {
    struct xg_httpd *httpd;
    const struct xg_ready_check *checks;
    void *closure;
    struct xg_httpd_route routes[ADMIN_MAX_ROUTES + 3];
};

static enum MHD_Result on_healthz(const struct xg_httpd_request *req)
{
    return xg_reply_json(req->conn, MHD_HTTP_OK, json_pack("{s:s}", "status", "ok"));
}

/* /readyz: 200 {"status":"ready","checks":{name:"ok"}} or 503 with each failing reason. */
static enum MHD_Result on_readyz(const struct xg_httpd_request *req)
{
    const struct xg_admin *admin = req->closure;
    json_t *checks = json_object();
    bool all_ready = true;
    for (const struct xg_ready_check *c = admin->checks; c && c->name; c++) {
        char reason[256] = "";
        bool ready = c->fn(c->ctx, reason, sizeof reason);
        all_ready = all_ready && ready;
        json_object_set_new(checks, c->name, json_string(ready ? "ok" : reason));
    }
    return xg_reply_json(req->conn, all_ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
                         json_pack("{s:s,s:o}", "status", all_ready ? "ready" : "not_ready",
                                   "checks", checks));
}

struct xg_admin *xg_admin_start(const struct xg_admin_options *opt, char *err, size_t errlen)
{
    struct xg_admin *admin = calloc(1, sizeof *admin);
    if (!admin)
        return NULL;
    admin->checks = opt->checks;
    admin->closure = opt->closure;
    size_t n = 0;
    admin->routes[n++] = (struct xg_httpd_route){"GET", "/healthz", on_healthz};
    admin->routes[n++] = (struct xg_httpd_route){"GET", "/readyz", on_readyz};
    for (const struct xg_httpd_route *r = opt->routes; r && r->path && n < ADMIN_MAX_ROUTES; r++)
        admin->routes[n++] = *r;
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
    admin->httpd = xg_httpd_start(&hopt, err, errlen);
    if (!admin->httpd) {
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
    free(admin);
}

unsigned xg_admin_port(const struct xg_admin *admin)
{
    return xg_httpd_port(admin->httpd);
}

void *xg_admin_closure(const struct xg_httpd_request *req)
{
    return ((const struct xg_admin *)req->closure)->closure;
}
