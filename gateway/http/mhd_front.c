/* mhd_front — libmicrohttpd behind front.h; see mhd_front.h. */
#include "http/mhd_front.h"

#include "http/linger.h"
#include "xg_httpd.h"
#include "xg_mhd_guard.h"
#include "xg_mhd_proxy.h"
#include "xg_str.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <unistd.h>

struct mhd_front {
    struct front_app app;
    struct loop *loop;
    struct MHD_Daemon *daemon;
    struct linger_set *linger; /* the sockets libmicrohttpd closed, draining; NULL at stop */
    struct xg_mhd_guard *guard;
    size_t max_body;
    /* proxy_protocol: the PROXY reader's thread queues each socket whose header it read
     * into a pipe; the loop's thread takes them and adds them to the daemon (libmicrohttpd
     * run from outside adds a connection on the caller's thread only) */
    struct xg_mhd_proxy *proxy;
    int handoff[2];
    struct loop_watch handoff_watch;
};

/* One socket on its way from the PROXY reader to the daemon (well under PIPE_BUF, so
 * each write is whole). */
struct handoff {
    int fd;
    socklen_t addrlen;
    struct sockaddr_storage addr;
};

/* One request on a libmicrohttpd connection: its con_cls, freed at completion. */
struct mhd_conn {
    struct mhd_front *m;
    struct MHD_Connection *conn;
    void *req;  /* the app's */
    char *body; /* gathered so far (owned until handed to on_body), NUL-terminated */
    size_t body_len, body_cap;
    bool too_large;
    bool suspended; /* waits, or did: the next access call is a resume */
    char *query;    /* the target's query, rebuilt from the arguments (owned), or NULL */
};

/* ---- the connection operations (front_ops) ------------------------------------------- */

static bool mhd_respond(void *conn, unsigned status, const struct front_header *headers,
                        size_t nheaders, const char *body, size_t len, bool body_owned)
{
    struct mhd_conn *c = conn;
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        len, (void *)body, body_owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
    if (!resp) {
        if (body_owned)
            free((void *)body);
        return false;
    }
    for (size_t i = 0; i < nheaders; i++)
        MHD_add_response_header(resp, headers[i].name, headers[i].value);
    enum MHD_Result rc = MHD_queue_response(c->conn, status, resp);
    MHD_destroy_response(resp);
    return rc == MHD_YES;
}

static void mhd_suspend(void *conn)
{
    struct mhd_conn *c = conn;
    MHD_suspend_connection(c->conn);
    c->suspended = true;
}

/* libmicrohttpd takes the connection back in its next run. */
static void mhd_resume(void *conn)
{
    struct mhd_conn *c = conn;
    MHD_resume_connection(c->conn);
}

/* As nginx does for a request it waits on (ngx_http_upstream_check_broken_connection), a
 * peer that shut its side counts as gone: a client that closes looks the same until we
 * write. */
static bool mhd_peer_left(const void *conn)
{
    const struct mhd_conn *c = conn;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return false;
    struct pollfd p = {.fd = ci->connect_fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

static void mhd_client_address(const void *conn, char *out, size_t outlen)
{
    const struct mhd_conn *c = conn;
    out[0] = '\0';
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out,
                  (socklen_t)outlen);
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, out,
                  (socklen_t)outlen);
}

static const char *mhd_header(const void *conn, const char *name)
{
    const struct mhd_conn *c = conn;
    return MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, name);
}

struct header_tally {
    const char *name;
    size_t count;
};

static enum MHD_Result tally_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    (void)value;
    struct header_tally *t = cls;
    if (strcasecmp(key, t->name) == 0)
        t->count++;
    return MHD_YES;
}

static size_t mhd_header_count(const void *conn, const char *name)
{
    const struct mhd_conn *c = conn;
    struct header_tally t = {name, 0};
    MHD_get_connection_values(c->conn, MHD_HEADER_KIND, tally_header, &t);
    return t.count;
}

static bool mhd_header_join(const void *conn, const char *name, char *out, size_t outlen)
{
    const struct mhd_conn *c = conn;
    return xg_httpd_header_join(c->conn, name, out, outlen);
}

static bool mhd_query_arg(const void *conn, const char *name, char *out, size_t outlen)
{
    const struct mhd_conn *c = conn;
    const char *v = MHD_lookup_connection_value(c->conn, MHD_GET_ARGUMENT_KIND, name);
    return v && xg_str_copy(out, outlen, v);
}

struct query_text {
    char *text;
    size_t len, cap;
    bool failed;
};

static enum MHD_Result add_argument(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    struct query_text *q = cls;
    size_t need = q->len + 1 + strlen(key) + (value ? 1 + strlen(value) : 0) + 1;
    if (need > q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 128;
        while (cap < need)
            cap *= 2;
        char *grown = realloc(q->text, cap);
        if (!grown) {
            q->failed = true;
            return MHD_NO;
        }
        q->text = grown;
        q->cap = cap;
    }
    q->len += (size_t)sprintf(q->text + q->len, "%s%s%s%s", q->len ? "&" : "", key,
                              value ? "=" : "", value ? value : "");
    return MHD_YES;
}

/* The request target's query as the client sent it: libmicrohttpd keeps the arguments in
 * order and, with keep_escaped, undecoded, so joining them gives the text back (what a
 * Digest uri covers). NULL when there is none or memory ran out. */
static char *rebuild_query(struct MHD_Connection *conn)
{
    struct query_text q = {0};
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, add_argument, &q);
    if (q.failed) {
        free(q.text);
        return NULL;
    }
    return q.text;
}

static const struct front_ops mhd_ops = {
    .respond = mhd_respond,
    .suspend = mhd_suspend,
    .resume = mhd_resume,
    .peer_left = mhd_peer_left,
    .client_address = mhd_client_address,
    .header = mhd_header,
    .header_count = mhd_header_count,
    .header_join = mhd_header_join,
    .query_arg = mhd_query_arg,
    /* No streams: libmicrohttpd would need a callback response fed from the loop's
     * thread; this front end's challenges carry no XMR402 features="sse" (xmr402_flow.h). */
};

/* ---- libmicrohttpd's callbacks --------------------------------------------------------- */

static void append_body(struct mhd_conn *c, const char *data, size_t len)
{
    if (c->too_large)
        return;
    if (c->body_len + len > c->m->max_body) {
        c->too_large = true;
        return;
    }
    if (c->body_len + len + 1 > c->body_cap) {
        size_t cap = c->body_cap ? c->body_cap * 2 : 1;
        while (cap < c->body_len + len + 1)
            cap *= 2;
        char *grown = realloc(c->body, cap);
        if (!grown) {
            c->too_large = true;
            return;
        }
        c->body = grown;
        c->body_cap = cap;
    }
    memcpy(c->body + c->body_len, data, len);
    c->body_len += len;
    c->body[c->body_len] = '\0';
}

static enum MHD_Result mhd_result(enum front_result r)
{
    return r == FRONT_CLOSE ? MHD_NO : MHD_YES;
}

/* The head (first call), the body in pieces, then its end; later calls after a resume. */
static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **con_cls)
{
    (void)version;
    struct mhd_front *m = cls;
    struct mhd_conn *c = *con_cls;
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c)
            return MHD_NO;
        c->m = m;
        c->conn = conn;
        const char *cl =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        c->query = rebuild_query(conn);
        const char *te =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
        const char *expect =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
        xg_mhd_guard_head(m->guard, conn, xg_mhd_guard_expects_body(conn));
        struct front_head head = {.path = url,
                                  .query = c->query ? c->query : "",
                                  .method = method,
                                  .has_length = cl != NULL,
                                  .content_length = cl ? strtoull(cl, NULL, 10) : 0,
                                  .chunked = te && strcasestr(te, "chunked"),
                                  .expect_continue =
                                      expect && strcasecmp(expect, "100-continue") == 0};
        enum front_result r =
            m->app.on_head(m->app.cls, (struct front_client){&mhd_ops, c}, &head, &c->req);
        if (!c->req) {
            free(c->query);
            free(c);
            return MHD_NO;
        }
        *con_cls = c;
        return mhd_result(r);
    }
    if (*upload_data_size) {
        xg_mhd_guard_body(m->guard, conn, *upload_data_size);
        append_body(c, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (c->suspended)
        return mhd_result(m->app.on_resume(m->app.cls, c->req));
    xg_mhd_guard_handled(m->guard, conn);
    char *body = c->too_large || c->body_len == 0 ? NULL : c->body;
    size_t len = body ? c->body_len : 0;
    if (!body)
        free(c->body);
    c->body = NULL;
    c->body_len = c->body_cap = 0;
    return mhd_result(m->app.on_body(m->app.cls, c->req, body, len, c->too_large));
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    struct mhd_front *m = cls;
    struct mhd_conn *c = *con_cls;
    xg_mhd_guard_completed(m->guard, conn);
    if (!c)
        return;
    m->app.on_completed(m->app.cls, c->req);
    free(c->body);
    free(c->query);
    free(c);
    *con_cls = NULL;
}

/* libmicrohttpd 0.9.75 closes a connection's socket right after this callback, with
 * MHD_USE_TURBO not even shut down first: a client still sending (the rest of an
 * oversized head answered 431, a body refused on its head) would be reset and could lose
 * the answer. A duplicate of the descriptor keeps the socket open for a lingering close
 * (linger.h) after libmicrohttpd let go of its own. Engine thread (inside MHD_run); at
 * MHD_stop_daemon m->linger is gone and the socket just closes. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct mhd_front *m = cls;
    xg_mhd_guard_connection(m->guard, conn, socket_context, code);
    if (code != MHD_CONNECTION_NOTIFY_CLOSED || !m->linger)
        return;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    int fd = ci ? fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (fd >= 0)
        linger_take(m->linger, fd, false);
}

/* monerod matches the request target as sent, without percent-decoding; so do we (an
 * escaped path is no monerod path, and a Digest uri is compared as sent). */
static size_t keep_escaped(void *cls, struct MHD_Connection *conn, char *s)
{
    (void)cls;
    (void)conn;
    return strlen(s);
}

/* ---- the PROXY protocol (proxy_protocol) ---------------------------------------------- */

/* The PROXY reader's thread: a socket whose header was read, for the loop's thread. */
static void on_proxied(void *ctx, int fd, const struct sockaddr *addr, socklen_t addrlen)
{
    struct mhd_front *m = ctx;
    struct handoff h = {.fd = fd, .addrlen = addrlen};
    memcpy(&h.addr, addr, addrlen);
    ssize_t n;
    do
        n = write(m->handoff[1], &h, sizeof h);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof h)
        close(fd); /* the loop is that far behind: refuse rather than queue more */
}

/* The loop's thread: libmicrohttpd takes the queued sockets (and closes one it cannot). */
static void on_handoff(struct loop_watch *w, uint32_t events)
{
    (void)events;
    struct mhd_front *m =
        (struct mhd_front *)((char *)w - offsetof(struct mhd_front, handoff_watch));
    struct handoff h;
    while (read(m->handoff[0], &h, sizeof h) == (ssize_t)sizeof h)
        (void)MHD_add_connection(m->daemon, h.fd, (const struct sockaddr *)&h.addr, h.addrlen);
}

static bool start_proxy(struct mhd_front *m, const struct mhd_front_options *opt, struct loop *l,
                        char *err, size_t errlen)
{
    if (pipe2(m->handoff, O_NONBLOCK | O_CLOEXEC) != 0) {
        m->handoff[0] = m->handoff[1] = -1;
        snprintf(err, errlen, "cannot create the PROXY handoff pipe: %s", strerror(errno));
        return false;
    }
    m->handoff_watch.on_event = on_handoff;
    if (!loop_watch_add(l, m->handoff[0], EPOLLIN, &m->handoff_watch)) {
        snprintf(err, errlen, "cannot watch the PROXY handoff pipe");
        return false;
    }
    struct xg_mhd_proxy_options popt = {
        .addr = (const struct sockaddr *)&opt->addr,
        .addrlen = xg_sockaddr_len(&opt->addr),
        .reuse_port = true, /* one port, all loops */
        .trust = opt->trust,
        .limits = opt->proxy,
        .counts = opt->counts,
        .hand = on_proxied,
        .ctx = m,
    };
    char why[160];
    m->proxy = xg_mhd_proxy_start(&popt, why, sizeof why);
    if (!m->proxy) {
        snprintf(err, errlen, "cannot listen on %s (PROXY protocol): %s", opt->name, why);
        return false;
    }
    return true;
}

static void stop_proxy(struct mhd_front *m)
{
    xg_mhd_proxy_stop(m->proxy); /* first: no more handoffs */
    m->proxy = NULL;
    if (m->handoff[0] >= 0) {
        struct handoff h;
        loop_watch_remove(m->loop, m->handoff[0]);
        while (read(m->handoff[0], &h, sizeof h) == (ssize_t)sizeof h)
            close(h.fd);
        close(m->handoff[0]);
    }
    if (m->handoff[1] >= 0)
        close(m->handoff[1]);
    m->handoff[0] = m->handoff[1] = -1;
}

/* ---- the daemon on the loop's thread --------------------------------------------------- */

/* The upstream engine's thread runs the daemon: accept, read, answer, resume; and the
 * lingering close of what libmicrohttpd closed. */
static void on_host_run(void *cls)
{
    struct mhd_front *m = cls;
    MHD_run(m->daemon);
    (void)xg_mhd_guard_sweep(m->guard);
    linger_run(m->linger);
}

static long on_host_timeout(void *cls)
{
    struct mhd_front *m = cls;
    long linger_ms = linger_timeout_ms(m->linger);
    MHD_UNSIGNED_LONG_LONG mhd_ms;
    long ms = MHD_get_timeout(m->daemon, &mhd_ms) != MHD_YES ? -1
              : mhd_ms > 1000                                ? 1000
                                                             : (long)mhd_ms;
    if (linger_ms >= 0 && (ms < 0 || linger_ms < ms))
        ms = linger_ms;
    long guard_ms = xg_mhd_guard_sweep(m->guard);
    if (guard_ms >= 0 && (ms < 0 || guard_ms < ms))
        ms = guard_ms;
    return ms;
}

struct mhd_front *mhd_front_start(const struct mhd_front_options *opt, const struct front_app *app,
                                  struct loop *l, char *err, size_t errlen)
{
    bool tls = opt->tls != NULL;
    struct mhd_front *m = calloc(1, sizeof *m);
    struct linger_budget budget = LINGER_BUDGET_DEFAULT;
    if (m) {
        m->handoff[0] = m->handoff[1] = -1;
        m->linger = linger_new(l, &budget, LINGER_MAX_SOCKETS);
    }
    if (!m || !m->linger) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    m->app = *app;
    m->loop = l;
    m->max_body = opt->max_body;
    struct xg_mhd_guard_options gopt = {.limits = opt->guard,
                                        .idle_timeout_ms = opt->connection_timeout_s * 1000,
                                        .addrcap = opt->addrcap,
                                        .trust = opt->trust,
                                        .counts = opt->counts};
    if (gopt.limits.header_timeout_ms <= 0)
        gopt.limits = (struct xg_guard_limits){.header_timeout_ms = XG_GUARD_HEADER_TIMEOUT_MS,
                                               .body_grace_ms = XG_GUARD_BODY_GRACE_MS,
                                               .body_min_rate = XG_GUARD_BODY_MIN_RATE,
                                               .body_window_ms = XG_GUARD_BODY_WINDOW_MS,
                                               .body_timeout_ms = XG_GUARD_BODY_TIMEOUT_MS,
                                               .send_min_rate = XG_GUARD_SEND_MIN_RATE};
    m->guard = xg_mhd_guard_new(&gopt);
    if (!m->guard) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* No thread of libmicrohttpd's own: the loop's thread runs it (see server.h). */
    unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG | MHD_USE_TURBO;
    if (tls)
        flags |= MHD_USE_TLS;
    if (opt->addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6; /* IPv6 alone (libmicrohttpd sets IPV6_V6ONLY), as the own front */
    /* proxy_protocol: xg_mhd_proxy listens instead (the listening options then repeat a
     * harmless one, as the array ends at the first MHD_OPTION_END) */
    bool pp = opt->proxy_protocol;
    if (pp)
        flags |= MHD_USE_NO_LISTEN_SOCKET;
    struct MHD_OptionItem options[] = {
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)opt->connection_timeout_s, NULL},
        {pp ? MHD_OPTION_CONNECTION_TIMEOUT : MHD_OPTION_SOCK_ADDR,
         pp ? (intptr_t)opt->connection_timeout_s : 0, pp ? NULL : (void *)&opt->addr},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)opt->max_connections, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)opt->max_head, NULL},
        {pp ? MHD_OPTION_CONNECTION_TIMEOUT : MHD_OPTION_LISTEN_BACKLOG_SIZE,
         pp ? (intptr_t)opt->connection_timeout_s : 1024, NULL},
        /* SO_REUSEPORT: one port, all loops */
        {pp ? MHD_OPTION_CONNECTION_TIMEOUT : MHD_OPTION_LISTENING_ADDRESS_REUSE,
         pp ? (intptr_t)opt->connection_timeout_s : 1, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, m},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, m},
        {MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)keep_escaped, NULL},
        /* every handshake asks for the certificate in service: a reload swaps it */
        {tls ? MHD_OPTION_HTTPS_CERT_CALLBACK : MHD_OPTION_END, 0, tls_cert_callback()},
        {MHD_OPTION_END, 0, NULL},
    };
    m->daemon = MHD_start_daemon(flags, 0, xg_mhd_guard_accept, m->guard, on_access, m,
                                 MHD_OPTION_ARRAY, options, MHD_OPTION_END);
    if (!m->daemon) {
        snprintf(err, errlen, "cannot listen on %s%s", opt->name, tls ? " (TLS)" : "");
        goto fail;
    }
    const union MHD_DaemonInfo *epoll_fd = MHD_get_daemon_info(m->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    if (!epoll_fd) {
        snprintf(err, errlen, "libmicrohttpd has no epoll descriptor");
        goto fail;
    }
    struct loop_host host = {
        .fd = epoll_fd->epoll_fd, .run = on_host_run, .timeout_ms = on_host_timeout, .ctx = m};
    loop_attach_host(l, &host);
    if (pp && !start_proxy(m, opt, l, err, errlen))
        goto fail;
    return m;
fail:
    mhd_front_stop(m);
    return NULL;
}

uint16_t mhd_front_port(const struct mhd_front *m)
{
    if (m->proxy)
        return xg_mhd_proxy_port(m->proxy);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(m->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

void mhd_front_quiesce(struct mhd_front *m)
{
    if (m->proxy) {
        xg_mhd_proxy_quiesce(m->proxy);
        return;
    }
    MHD_socket fd = MHD_quiesce_daemon(m->daemon);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
}

void mhd_front_stop(struct mhd_front *m)
{
    if (!m)
        return;
    stop_proxy(m);
    linger_free(m->linger); /* first: the daemon's last closes do not linger */
    m->linger = NULL;
    if (m->daemon)
        MHD_stop_daemon(m->daemon);
    xg_mhd_guard_free(m->guard);
    free(m);
}
