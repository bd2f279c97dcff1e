/* xg_admin — the admin listener both daemons run: GET /livez and GET /healthz (the same:
 * liveness, the process answers; for a supervisor's restart, never for routing), GET
 * /readyz (every readiness check passes: 200, with "degraded": true and the reason when
 * a check passes degraded; 503 with the reasons otherwise), GET /metrics
 * (the daemon's Prometheus registry, when it has one) plus the daemon's own routes, the
 * admin API. Readiness checks are callbacks so each daemon adds its own (PostgreSQL and
 * schema for both; nodes and quorum for the gateway; wallet-rpc for billing).
 *
 * Access: /healthz, /readyz and /metrics are open — the listener binds to loopback by
 * default and they reveal no customer data — so probes and Prometheus need no secret.
 * Every daemon route needs `Authorization: Bearer <[admin] token>`, compared in constant
 * time; a missing or wrong credential gets 401, and with an empty token the admin API is
 * disabled (403 for every daemon route). */
#ifndef XG_ADMIN_H
#define XG_ADMIN_H

#include "xg_admin_error.h"
#include "xg_httpd.h"

#include <stdbool.h>
#include <stddef.h>

/* Returns true when ready; otherwise writes a short reason. */
typedef bool (*xg_ready_fn)(void *ctx, char *reason, size_t len);

struct xg_ready_check {
    const char *name; /* "database", "nodes", … */
    xg_ready_fn fn;
    void *ctx;
    /* A ready answer with a non-empty reason means "ready, but degraded": the body shows
     * the reason and "degraded": true, the status stays 200. Otherwise a ready check's
     * reason is ignored. */
    bool reports_degraded;
    /* A ready answer with a non-empty reason is a note: the body shows the reason, the
     * status stays 200 and "degraded" false (the schema ahead of this build, compatible). */
    bool reports_note;
};

struct xg_metrics;

struct xg_admin_options {
    const char *bind_addr;
    unsigned port;
    const struct xg_ready_check *checks; /* terminated by {NULL, NULL, NULL} */
    const struct xg_httpd_route *routes; /* extra routes, may be NULL; closure below */
    void *closure;
    struct xg_metrics *metrics; /* served on GET /metrics; NULL: no such route */
    const char *token;          /* the admin API's bearer credential (copied); NULL or "" = off */
};

struct xg_admin;

struct xg_admin *xg_admin_start(const struct xg_admin_options *opt, char *err, size_t errlen);
void xg_admin_stop(struct xg_admin *admin);
unsigned xg_admin_port(const struct xg_admin *admin);

/* Replaces the admin API's credential (configuration reload); "" disables the API. */
void xg_admin_set_token(struct xg_admin *admin, const char *token);

/* Pure: whether an Authorization header value carries exactly `Bearer <token>`, compared
 * in constant time (an empty token never matches). */
bool xg_admin_bearer_ok(const char *authorization, const char *token);

/* In a daemon's route handler: the closure given in the options. */
void *xg_admin_closure(const struct xg_httpd_request *req);

/* Every error an admin port answers: the registry's row e (xg_admin_error.h), with message
 * instead of its default one when not NULL; 401 also carries the Bearer challenge. */
enum xg_httpd_result xg_admin_reply_error(struct MHD_Connection *conn, enum xg_admin_error e,
                                          const char *message);

#endif
