/* xg_httpd — a routing table on libmicrohttpd.
 *
 * MHD calls the access handler several times per request: once with the headers, once
 * per body chunk, and once more when the body is complete. The route (or the 404, 405
 * or 413 answer) is decided on the first call, so bodies for unknown paths are never
 * buffered and an oversized Content-Length is refused before it is read. The per-request
 * state lives until MHD's completion callback, which alone frees it. */
#include "xg_httpd.h"

#include "xg_clock.h"
#include "xg_log.h"
#include "xg_mhd_guard.h"
#include "xg_mhd_proxy.h"

#include <arpa/inet.h>
#include <assert.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* A chunked body that keeps coming after it is known to be too large is read and thrown
 * away (MHD cannot answer mid-body) only up to this many times the limit, then dropped. */
#define DISCARD_FACTOR 4

struct xg_httpd {
    struct MHD_Daemon *daemon;
    const struct xg_httpd_route *routes;
    void *closure;
    xg_httpd_answered_fn answered;
    struct xg_proxy_trust trust;
    size_t max_body;
    uint16_t port;
    MHD_socket quiesced_fd;
    pthread_mutex_t log_lock; /* guards last_log: MHD threads log concurrently */
    char last_log[256];
    /* slow clients and the per-address cap */
    struct xg_guard_counts counts;
    struct xg_addrcap *addrcap;
    struct xg_mhd_guard *guard;
    struct xg_mhd_proxy *proxy; /* proxy_protocol: it accepts, not libmicrohttpd */
    pthread_t sweeper;
    bool sweeping;
    pthread_mutex_t sweep_lock;
    pthread_cond_t sweep_wake;
    bool stopping; /* under sweep_lock */
};

/* How often the sweeper looks at the connections at most: the rule's times are seconds. */
#define SWEEP_MAX_MS 250

struct request_state {
    const struct xg_httpd_route *route;
    char *body;
    size_t len, cap;
    bool too_large;
    size_t discarded;
    void *handler_state; /* the handler's, across a suspension (xg_httpd_set_state) */
    void (*handler_release)(void *state);
    int64_t arrived_us; /* the head's arrival (monotonic) */
    int tag;            /* the handler's (xg_httpd_set_tag) */
};

static bool path_matches(const char *pattern, const char *path)
{
    size_t n = strlen(pattern);
    if (n > 0 && pattern[n - 1] == '*')
        return strncmp(pattern, path, n - 1) == 0;
    return strcmp(pattern, path) == 0;
}

static bool method_matches(const char *route_method, const char *method)
{
    if (!route_method || strcmp(route_method, method) == 0)
        return true;
    /* MHD answers HEAD with the headers of the GET response */
    return strcmp(method, "HEAD") == 0 && strcmp(route_method, "GET") == 0;
}

/* Finds the route; on a path match with no method match, fills `allow` for the 405. */
static const struct xg_httpd_route *route_find(const struct xg_httpd_route *routes,
                                               const char *method, const char *path, char *allow,
                                               size_t allow_len, bool *path_known)
{
    *path_known = false;
    allow[0] = '\0';
    for (const struct xg_httpd_route *r = routes; r->path; r++) {
        if (!path_matches(r->path, path))
            continue;
        *path_known = true;
        if (method_matches(r->method, method))
            return r;
        size_t used = strlen(allow);
        snprintf(allow + used, allow_len - used, "%s%s", used ? ", " : "", r->method);
    }
    return NULL;
}

/* The one place a handler's result becomes libmicrohttpd's: a queued answer or a suspended
 * request keep the connection (MHD calls again after a resume), a close drops it. */
static enum MHD_Result mhd_result_of(enum xg_httpd_result r)
{
    return r == XG_HTTPD_CLOSE ? MHD_NO : MHD_YES;
}

/* The router's own answers, {"error":{"code","message"}} as the registries' bodies are, but
 * queued here: xg_reply serves the handlers and sits above the router. */
static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned int status, const char *body,
                              const char *allow)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!resp) {
        xg_log(XG_LOG_ERROR, "reply_failed", "cannot create a response (out of memory)");
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    if (allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result queued = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return queued;
}

static enum MHD_Result refuse_route(struct MHD_Connection *conn, bool path_known, const char *allow)
{
    if (!path_known)
        return refuse(conn, MHD_HTTP_NOT_FOUND,
                      "{\"error\":{\"code\":\"not_found\",\"message\":\"no such path\"}}", NULL);
    return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
                  "{\"error\":{\"code\":\"method_not_allowed\",\"message\":\"method not "
                  "allowed\"}}",
                  allow);
}

static enum MHD_Result reply_too_large(struct xg_httpd *srv, struct MHD_Connection *conn)
{
    char body[160];
    snprintf(body, sizeof body,
             "{\"error\":{\"code\":\"body_too_large\",\"message\":\"request body larger than "
             "%zu bytes\"}}",
             srv->max_body);
    return refuse(conn, MHD_HTTP_CONTENT_TOO_LARGE, body, NULL);
}

static bool declared_too_large(struct xg_httpd *srv, struct MHD_Connection *conn)
{
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (!cl)
        return false;
    char *end;
    unsigned long long n = strtoull(cl, &end, 10);
    return *end == '\0' && n > srv->max_body;
}

static bool body_append(struct xg_httpd *srv, struct request_state *st, const char *data, size_t n)
{
    if (st->too_large || n > srv->max_body - st->len) {
        st->too_large = true;
        st->discarded += n;
        return st->discarded / DISCARD_FACTOR <= srv->max_body;
    }
    if (st->len + n + 1 > st->cap) {
        size_t cap = st->cap ? st->cap : 1024;
        while (cap < st->len + n + 1)
            cap *= 2;
        char *grown = realloc(st->body, cap);
        if (!grown)
            return false;
        st->body = grown;
        st->cap = cap;
    }
    memcpy(st->body + st->len, data, n);
    st->len += n;
    st->body[st->len] = '\0';
    return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
    struct xg_httpd *srv = cls;
    struct request_state *st = *req_cls;
    (void)version;

    if (!st) {
        char allow[128];
        bool path_known;
        const struct xg_httpd_route *route =
            route_find(srv->routes, method, url, allow, sizeof allow, &path_known);
        xg_mhd_guard_head(srv->guard, conn, xg_mhd_guard_expects_body(conn));
        if (!route)
            return refuse_route(conn, path_known, allow);
        if (declared_too_large(srv, conn))
            return reply_too_large(srv, conn);
        st = calloc(1, sizeof *st);
        if (!st)
            return MHD_NO;
        st->route = route;
        st->arrived_us = xg_monotonic_us();
        st->tag = -1;
        *req_cls = st;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        xg_mhd_guard_body(srv->guard, conn, *upload_data_size);
        bool keep = body_append(srv, st, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return keep ? MHD_YES : MHD_NO;
    }
    xg_mhd_guard_handled(srv->guard, conn);
    if (st->too_large)
        return reply_too_large(srv, conn);
    struct xg_httpd_request req = {
        .conn = conn,
        .method = method,
        .path = url,
        .body = st->body ? st->body : "",
        .body_len = st->len,
        .closure = srv->closure,
        .trust = &srv->trust,
        .priv = st,
    };
    return mhd_result_of(st->route->handler(&req));
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode code)
{
    struct xg_httpd *srv = cls;
    struct request_state *st = *req_cls;
    xg_mhd_guard_completed(srv->guard, conn);
    if (st && srv->answered) {
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_HTTP_STATUS);
        unsigned status =
            code == MHD_REQUEST_TERMINATED_COMPLETED_OK && info ? info->http_status : 0;
        srv->answered(srv->closure, (size_t)(st->route - srv->routes), status,
                      xg_monotonic_us() - st->arrived_us, st->tag);
    }
    if (st) {
        if (st->handler_release)
            st->handler_release(st->handler_state);
        free(st->body);
        free(st);
    }
    *req_cls = NULL;
}

void xg_httpd_set_tag(const struct xg_httpd_request *req, int tag)
{
    struct request_state *st = req->priv;
    if (st)
        st->tag = tag;
}

void *xg_httpd_state(const struct xg_httpd_request *req)
{
    const struct request_state *st = req->priv;
    return st ? st->handler_state : NULL;
}

void xg_httpd_set_state(const struct xg_httpd_request *req, void *state, void (*release)(void *))
{
    struct request_state *st = req->priv;
    assert(st); /* a request xg_httpd made, not one built by hand */
    st->handler_state = state;
    st->handler_release = release;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct xg_httpd *srv = cls;
    char line[256];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == ' '))
        line[--n] = '\0';
    pthread_mutex_lock(&srv->log_lock);
    memcpy(srv->last_log, line, sizeof line);
    pthread_mutex_unlock(&srv->log_lock);
    xg_log(XG_LOG_WARN, "httpd_error", "%s", line);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct xg_httpd *srv = cls;
    xg_mhd_guard_connection(srv->guard, conn, socket_context, code);
}

/* Ticks the slow-client rule until the stop. */
static void *sweep_main(void *arg)
{
    struct xg_httpd *srv = arg;
    pthread_mutex_lock(&srv->sweep_lock);
    while (!srv->stopping) {
        pthread_mutex_unlock(&srv->sweep_lock);
        long ms = xg_mhd_guard_sweep(srv->guard);
        if (ms < 0 || ms > SWEEP_MAX_MS)
            ms = SWEEP_MAX_MS;
        struct timespec at = xg_monotonic_deadline(ms > 0 ? ms : 1);
        pthread_mutex_lock(&srv->sweep_lock);
        if (!srv->stopping)
            pthread_cond_timedwait(&srv->sweep_wake, &srv->sweep_lock, &at);
    }
    pthread_mutex_unlock(&srv->sweep_lock);
    return NULL;
}

static void stop_sweeper(struct xg_httpd *srv)
{
    if (!srv->sweeping)
        return;
    pthread_mutex_lock(&srv->sweep_lock);
    srv->stopping = true;
    pthread_cond_signal(&srv->sweep_wake);
    pthread_mutex_unlock(&srv->sweep_lock);
    pthread_join(srv->sweeper, NULL);
    srv->sweeping = false;
}

static bool start_guard(struct xg_httpd *srv, const struct xg_httpd_options *opt)
{
    struct xg_guard_limits lim = opt->guard;
    if (lim.header_timeout_ms <= 0)
        lim = (struct xg_guard_limits){.header_timeout_ms = XG_GUARD_HEADER_TIMEOUT_MS,
                                       .body_grace_ms = XG_GUARD_BODY_GRACE_MS,
                                       .body_min_rate = XG_GUARD_BODY_MIN_RATE,
                                       .body_window_ms = XG_GUARD_BODY_WINDOW_MS,
                                       .body_timeout_ms = XG_GUARD_BODY_TIMEOUT_MS,
                                       .send_min_rate = XG_GUARD_SEND_MIN_RATE};
    srv->addrcap = opt->max_per_address ? xg_addrcap_new(opt->max_per_address) : NULL;
    struct xg_mhd_guard_options gopt = {.limits = lim,
                                        .idle_timeout_ms = (int64_t)opt->timeout_s * 1000,
                                        .addrcap = srv->addrcap,
                                        .trust = &srv->trust,
                                        .counts = &srv->counts};
    srv->guard = xg_mhd_guard_new(&gopt);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&srv->sweep_wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&srv->sweep_lock, NULL);
    return srv->guard && (opt->max_per_address == 0 || srv->addrcap);
}

/* A connection whose PROXY header was read: libmicrohttpd takes it from here (and closes
 * it itself when it cannot). */
static void on_proxied(void *ctx, int fd, const struct sockaddr *addr, socklen_t addrlen)
{
    struct xg_httpd *srv = ctx;
    (void)MHD_add_connection(srv->daemon, fd, addr, addrlen);
}

static bool start_proxy(struct xg_httpd *srv, const struct xg_httpd_options *opt,
                        const struct sockaddr_storage *addr, bool ipv6, char *err, size_t errlen)
{
    struct xg_mhd_proxy_options popt = {
        .addr = (const struct sockaddr *)addr,
        .addrlen = ipv6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in),
        .trust = &srv->trust,
        .limits = opt->proxy,
        .counts = &srv->counts,
        .hand = on_proxied,
        .ctx = srv,
    };
    char why[160];
    srv->proxy = xg_mhd_proxy_start(&popt, why, sizeof why);
    if (!srv->proxy) {
        snprintf(err, errlen, "cannot listen on %s port %u: %s", opt->bind_addr,
                 (unsigned)opt->port, why);
        return false;
    }
    srv->port = xg_mhd_proxy_port(srv->proxy);
    return true;
}

static void server_free(struct xg_httpd *srv)
{
    xg_mhd_proxy_stop(srv->proxy);
    stop_sweeper(srv);
    xg_mhd_guard_free(srv->guard);
    xg_addrcap_free(srv->addrcap);
    pthread_cond_destroy(&srv->sweep_wake);
    pthread_mutex_destroy(&srv->sweep_lock);
    pthread_mutex_destroy(&srv->log_lock);
    free(srv);
}

struct xg_httpd *xg_httpd_start(const struct xg_httpd_options *opt, char *err, size_t errlen)
{
    struct sockaddr_storage addr;
    unsigned addrlen = xg_bind_addr_parse(opt->bind_addr, opt->port, &addr);
    bool ipv6 = addr.ss_family == AF_INET6;
    if (addrlen == 0) {
        snprintf(err, errlen, "invalid listen address \"%s\" (expected an IP address)",
                 opt->bind_addr);
        return NULL;
    }
    struct xg_httpd *srv = calloc(1, sizeof *srv);
    if (!srv) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    srv->routes = opt->routes;
    srv->closure = opt->closure;
    srv->answered = opt->answered;
    if (opt->trusted_proxies)
        srv->trust = *opt->trusted_proxies;
    srv->max_body = opt->max_body;
    srv->quiesced_fd = MHD_INVALID_SOCKET;
    pthread_mutex_init(&srv->log_lock, NULL);
    if (!start_guard(srv, opt)) {
        snprintf(err, errlen, "out of memory");
        server_free(srv);
        return NULL;
    }

    /* MHD_USE_ITC: connections handed in from the PROXY reader's thread are seen at once;
     * MHD_ALLOW_SUSPEND_RESUME: a handler may suspend its request (XG_HTTPD_DONE) */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
                     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG | (ipv6 ? MHD_USE_IPv6 : 0) |
                     (opt->proxy_protocol ? MHD_USE_NO_LISTEN_SOCKET : 0);
    struct MHD_OptionItem options[] = {
        {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_mhd_log, srv}, /* first, or MHD complains */
        {opt->proxy_protocol ? MHD_OPTION_CONNECTION_TIMEOUT : MHD_OPTION_SOCK_ADDR,
         opt->proxy_protocol ? opt->timeout_s : 0, opt->proxy_protocol ? NULL : &addr},
        {MHD_OPTION_CONNECTION_TIMEOUT, opt->timeout_s, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, srv},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, srv},
        {opt->threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, opt->threads, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    srv->daemon =
        MHD_start_daemon(flags, opt->proxy_protocol ? 0 : opt->port, xg_mhd_guard_accept,
                         srv->guard, on_request, srv, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
    if (!srv->daemon) {
        snprintf(err, errlen, "cannot listen on %s port %u: %s", opt->bind_addr,
                 (unsigned)opt->port, srv->last_log[0] ? srv->last_log : "unknown error");
        server_free(srv);
        return NULL;
    }
    if (opt->proxy_protocol) {
        if (!start_proxy(srv, opt, &addr, ipv6, err, errlen)) {
            MHD_stop_daemon(srv->daemon);
            server_free(srv);
            return NULL;
        }
    } else {
        const union MHD_DaemonInfo *info =
            MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
        srv->port = info ? info->port : opt->port;
    }
    srv->sweeping = pthread_create(&srv->sweeper, NULL, sweep_main, srv) == 0;
    if (!srv->sweeping) {
        snprintf(err, errlen, "cannot start the slow-client sweeper");
        MHD_stop_daemon(srv->daemon);
        server_free(srv);
        return NULL;
    }
    return srv;
}

uint16_t xg_httpd_port(const struct xg_httpd *srv)
{
    return srv->port;
}

void xg_httpd_quiesce(struct xg_httpd *srv)
{
    if (srv->proxy) {
        xg_mhd_proxy_quiesce(srv->proxy);
        return;
    }
    if (srv->quiesced_fd != MHD_INVALID_SOCKET)
        return;
    srv->quiesced_fd = MHD_quiesce_daemon(srv->daemon);
    /* MHD stops accepting but leaves the socket listening, so new clients would wait in
     * the backlog until the stop; shutting it down refuses them at once, which is what a
     * load balancer needs during a drain. The descriptor is closed after the stop. */
    if (srv->quiesced_fd != MHD_INVALID_SOCKET)
        shutdown(srv->quiesced_fd, SHUT_RDWR);
}

void xg_httpd_stop(struct xg_httpd *srv)
{
    if (!srv)
        return;
    xg_mhd_proxy_stop(srv->proxy); /* first: it hands sockets to the daemon */
    srv->proxy = NULL;
    stop_sweeper(srv); /* then: it shuts sockets the daemon is about to close */
    MHD_stop_daemon(srv->daemon);
    /* MHD hands the listening socket to the caller on quiesce, to close after the stop */
    if (srv->quiesced_fd != MHD_INVALID_SOCKET)
        close(srv->quiesced_fd);
    server_free(srv);
}

const struct xg_guard_counts *xg_httpd_counts(const struct xg_httpd *srv)
{
    return &srv->counts;
}

const char *xg_httpd_query(const struct xg_httpd_request *req, const char *key)
{
    return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *xg_httpd_header(const struct xg_httpd_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

struct header_join {
    const char *name;
    char *out;
    size_t cap, len;
    bool overflow;
};

static enum MHD_Result join_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    struct header_join *j = cls;
    if (strcasecmp(key, j->name) != 0 || !value)
        return MHD_YES;
    size_t n = strlen(value);
    if (j->len + n + 2 > j->cap) {
        j->overflow = true;
        return MHD_NO;
    }
    if (j->len > 0)
        j->out[j->len++] = ',';
    memcpy(j->out + j->len, value, n + 1);
    j->len += n;
    return MHD_YES;
}

bool xg_httpd_header_join(struct MHD_Connection *conn, const char *name, char *out, size_t outlen)
{
    struct header_join j = {.name = name, .out = out, .cap = outlen};
    if (outlen > 0)
        out[0] = '\0';
    MHD_get_connection_values(conn, MHD_HEADER_KIND, join_header, &j);
    if (j.overflow && outlen > 0)
        out[0] = '\0';
    return !j.overflow;
}

struct header_tail {
    const char *name;
    char *out;
    size_t cap, len;
};

static enum MHD_Result join_tail(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    (void)kind;
    struct header_tail *j = cls;
    if (strcasecmp(key, j->name) == 0 && value)
        (void)xg_proxy_list_append(j->out, j->cap, &j->len, value, strlen(value));
    return MHD_YES;
}

void xg_httpd_header_join_tail(struct MHD_Connection *conn, const char *name, char *out,
                               size_t outlen)
{
    struct header_tail j = {.name = name, .out = out, .cap = outlen};
    out[0] = '\0';
    MHD_get_connection_values(conn, MHD_HEADER_KIND, join_tail, &j);
}

void xg_httpd_client_addr(const struct xg_httpd_request *req, char *buf, size_t len)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    struct xg_proxy_ip peer;
    char addr[XG_PROXY_ADDR_TEXT] = "";
    if (info && xg_proxy_ip_from_sockaddr(info->client_addr, &peer)) {
        char xff[XG_HTTPD_MAX_FORWARDED] = "";
        /* a list too long to hold keeps its tail: the hops the balancers appended */
        if (xg_proxy_trusted(req->trust, &peer))
            xg_httpd_header_join_tail(req->conn, "X-Forwarded-For", xff, sizeof xff);
        (void)xg_proxy_client_addr(req->trust, &peer, xff, addr, sizeof addr);
    }
    snprintf(buf, len, "%s", addr[0] ? addr : "unknown");
}
