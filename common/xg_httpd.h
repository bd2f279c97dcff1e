/* xg_httpd — a small libmicrohttpd server with a routing table, for the admin listeners
 * and billing's API: {method, path, handler}. Request bodies are collected up to a limit
 * (413 beyond it); per-request state is freed in the completion callback only.
 *
 * Answers it gives itself, as {"error":{"code","message"}}: 404 "not_found" (no route
 * for the path), 405 "method_not_allowed" with an Allow header (the path exists, the
 * method does not), 413 "body_too_large" (refused from Content-Length before the body is
 * read, or after a chunked body passes the limit). HEAD is served by a GET route.
 *
 * Slow clients: a head must complete within the header timeout and a body keep a minimum
 * rate (xg_mhd_guard.h; a thread of its own ticks the rule), and one address holds at
 * most max_per_address connections; refused and closed connections are counted
 * (xg_httpd_counts).
 *
 * Threading: MHD's internal thread pool (`threads` workers, epoll). Handlers run on those
 * threads and must be thread-safe with respect to their closure. A handler queues a
 * response (xg_reply_*) and returns its result, or suspends the connection (see
 * XG_HTTPD_DONE); the body pointer lives until the request completes. */
#ifndef XG_HTTPD_H
#define XG_HTTPD_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xg_guard.h"
#include "xg_proxy_addr.h"
#include "xg_proxy_admit.h"

struct xg_httpd_request {
    struct MHD_Connection *conn;
    const char *method;
    const char *path; /* URL path without the query string */
    const char *body; /* NUL-terminated; "" when none     */
    size_t body_len;
    void *closure;                      /* the server's closure             */
    const struct xg_proxy_trust *trust; /* the server's trusted_proxies */
    void *priv;                         /* xg_httpd's own (xg_httpd_state) */
};

/* What a handler did: the three results of the gateway front end's app (front.h,
 * FRONT_QUEUED, FRONT_DONE, FRONT_CLOSE), which libmicrohttpd's yes/no cannot tell apart.
 * Only xg_httpd turns one into an MHD_Result. */
enum xg_httpd_result {
    XG_HTTPD_QUEUED, /* an answer is queued (xg_reply_*) */
    XG_HTTPD_DONE,   /* nothing to send now: the handler suspended the connection
                      * (MHD_suspend_connection); once it resumes it (MHD_resume_connection)
                      * the handler is called again with the same request, and answers */
    XG_HTTPD_CLOSE,  /* drop the connection without (more of) an answer */
};

typedef enum xg_httpd_result (*xg_httpd_handler)(const struct xg_httpd_request *req);

struct xg_httpd_route {
    const char *method; /* "GET", "POST", … ; NULL = any                      */
    const char *path;   /* exact path, or a prefix ending in '*' (matches any rest)  */
    xg_httpd_handler handler;
};

/* Called once per routed request when it completes (answered or dropped), on an MHD
 * thread: route is the index in the route table, status the HTTP status sent (0 when the
 * connection was dropped before a complete answer), elapsed_us the time from the head's
 * arrival to completion (a suspended request's whole wait included), tag the handler's
 * (xg_httpd_set_tag; -1 when none). The router's own 404 and 405 have no route and are not
 * reported. */
typedef void (*xg_httpd_answered_fn)(void *closure, size_t route, unsigned status,
                                     int64_t elapsed_us, int tag);

struct xg_httpd_options {
    const char *bind_addr;               /* an IP literal: "127.0.0.1", "::1"         */
    uint16_t port;                       /* 0 = choose one (see xg_httpd_port)         */
    unsigned threads;                    /* worker threads, >= 1                      */
    size_t max_body;                     /* bytes; larger bodies get 413              */
    unsigned timeout_s;                  /* idle connection timeout                   */
    const struct xg_httpd_route *routes; /* terminated by {NULL,NULL,NULL} */
    /* Peers whose PROXY header and X-Forwarded-For name the client (copied; NULL =
     * nobody). proxy_protocol: each connection starts with a PROXY header, read by
     * xg_mhd_proxy.h before libmicrohttpd takes the socket (a trusted peer may omit it). */
    const struct xg_proxy_trust *trusted_proxies;
    bool proxy_protocol;
    /* Slow clients (xg_mhd_guard.h): a head_timeout_ms of 0 takes xg_guard.h's defaults.
     * max_per_address: connections one client address may hold open (0 = no cap). */
    struct xg_guard_limits guard;
    size_t max_per_address;
    /* proxy_protocol: the PROXY reader's places and header deadline (0s: the defaults) */
    struct xg_proxy_admit_limits proxy;
    void *closure;
    xg_httpd_answered_fn answered; /* NULL: nothing reported */
};

struct xg_httpd;

/* Starts listening. Returns NULL with a message in err on failure (e.g. port in use). */
struct xg_httpd *xg_httpd_start(const struct xg_httpd_options *opt, char *err, size_t errlen);

/* The bound port (useful when started with port 0). */
uint16_t xg_httpd_port(const struct xg_httpd *srv);

/* Stops accepting new connections (first step of a drain): new clients are refused at
 * once while requests in flight complete. Idempotent. */
void xg_httpd_quiesce(struct xg_httpd *srv);

/* The slow-client closes and cap refusals so far, for the daemon's metrics (valid until
 * xg_httpd_stop). */
const struct xg_guard_counts *xg_httpd_counts(const struct xg_httpd *srv);

/* Stops the server and frees it. */
void xg_httpd_stop(struct xg_httpd *srv);

/* The handler's own state of this request, kept across a suspension (XG_HTTPD_DONE): NULL
 * until set. xg_httpd_set_state stores it with release, which xg_httpd calls on it once the
 * request completes (the connection answered or dropped); release NULL frees nothing. */
void *xg_httpd_state(const struct xg_httpd_request *req);
void xg_httpd_set_state(const struct xg_httpd_request *req, void *state, void (*release)(void *));

/* A small number the handler attaches to the request, passed to the options' answered
 * callback (billing: the error registry's code it answered with). The last one set wins. */
void xg_httpd_set_tag(const struct xg_httpd_request *req, int tag);

/* Returns the value of a query-string argument, or NULL. */
const char *xg_httpd_query(const struct xg_httpd_request *req, const char *key);

/* Returns a request header, or NULL. */
const char *xg_httpd_header(const struct xg_httpd_request *req, const char *name);

/* The values of every copy of header name, in the order they came, joined with ',' into
 * out. False (out "") when they do not fit. */
#define XG_HTTPD_MAX_FORWARDED 4096
__attribute__((warn_unused_result)) bool
xg_httpd_header_join(struct MHD_Connection *conn, const char *name, char *out, size_t outlen);

/* As xg_httpd_header_join, but a list too long for out keeps its tail, whole entries only
 * (xg_proxy_list_append): what X-Forwarded-For is read with, so that a client padding the
 * header is still the address the balancer appended. outlen >= 2. */
void xg_httpd_header_join_tail(struct MHD_Connection *conn, const char *name, char *out,
                               size_t outlen);

/* Writes the client's address as text ("127.0.0.1") into buf: the socket peer, or, when
 * the peer is in trusted_proxies, the rightmost untrusted address of X-Forwarded-For
 * (xg_proxy_client_addr; every copy of the header, in order). "unknown" when there is
 * none. The one accessor for per-client limits. */
void xg_httpd_client_addr(const struct xg_httpd_request *req, char *buf, size_t len);

#endif
