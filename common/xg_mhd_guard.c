/* xg_mhd_guard — slow clients and the per-address cap on libmicrohttpd; see the header. */
#include "xg_mhd_guard.h"

#include "xg_clock.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct guard_conn {
    struct guard_conn *prev, *next;
    int fd;
    struct xg_guard guard;
    struct xg_proxy_ip key;
    bool counted; /* holds a place of key in the cap */
};

struct xg_mhd_guard {
    struct xg_mhd_guard_options opt;
    struct xg_proxy_trust trust;
    pthread_mutex_t lock;
    struct guard_conn *conns;
};

struct xg_mhd_guard *xg_mhd_guard_new(const struct xg_mhd_guard_options *opt)
{
    struct xg_mhd_guard *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->opt = *opt;
    if (opt->trust)
        g->trust = *opt->trust;
    g->opt.trust = &g->trust;
    pthread_mutex_init(&g->lock, NULL);
    return g;
}

void xg_mhd_guard_free(struct xg_mhd_guard *g)
{
    if (!g)
        return;
    while (g->conns) { /* none after MHD_stop_daemon; kept safe anyway */
        struct guard_conn *c = g->conns;
        g->conns = c->next;
        if (c->counted)
            xg_addrcap_release(g->opt.addrcap, &c->key);
        free(c);
    }
    pthread_mutex_destroy(&g->lock);
    free(g);
}

static enum xg_addrcap_key_kind key_of(const struct xg_mhd_guard *g, const struct sockaddr *addr,
                                       struct xg_proxy_ip *key)
{
    struct xg_proxy_ip peer;
    if (!addr || !xg_proxy_ip_from_sockaddr(addr, &peer))
        return XG_ADDRCAP_EXEMPT;
    return xg_addrcap_key(&g->trust, &peer, false, NULL, key);
}

enum MHD_Result xg_mhd_guard_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    (void)addrlen;
    struct xg_mhd_guard *g = cls;
    struct xg_proxy_ip key;
    if (key_of(g, addr, &key) != XG_ADDRCAP_COUNT || xg_addrcap_has_room(g->opt.addrcap, &key))
        return MHD_YES;
    if (g->opt.counts)
        atomic_fetch_add(&g->opt.counts->refused_over_cap, 1);
    return MHD_NO;
}

static struct guard_conn *record_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void conn_started(struct xg_mhd_guard *g, struct MHD_Connection *conn, void **socket_context)
{
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ad =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    struct guard_conn *c = calloc(1, sizeof *c);
    if (!c || !fd) {
        free(c);
        return; /* out of memory: this connection goes untimed and uncounted */
    }
    c->fd = fd->connect_fd;
    if (key_of(g, ad ? ad->client_addr : NULL, &c->key) == XG_ADDRCAP_COUNT) {
        c->counted = xg_addrcap_acquire(g->opt.addrcap, &c->key);
        if (!c->counted) { /* another thread took the last place since the accept */
            if (g->opt.counts)
                atomic_fetch_add(&g->opt.counts->refused_over_cap, 1);
            shutdown(c->fd, SHUT_RDWR);
        }
    }
    xg_guard_head(&c->guard, xg_monotonic_coarse_ms());
    pthread_mutex_lock(&g->lock);
    c->next = g->conns;
    if (g->conns)
        g->conns->prev = c;
    g->conns = c;
    pthread_mutex_unlock(&g->lock);
    *socket_context = c;
}

static void conn_closed(struct xg_mhd_guard *g, void **socket_context)
{
    struct guard_conn *c = *socket_context;
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        g->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&g->lock);
    if (c->counted)
        xg_addrcap_release(g->opt.addrcap, &c->key);
    free(c);
    *socket_context = NULL;
}

void xg_mhd_guard_connection(struct xg_mhd_guard *g, struct MHD_Connection *conn,
                             void **socket_context, enum MHD_ConnectionNotificationCode code)
{
    if (!g)
        return;
    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        conn_started(g, conn, socket_context);
    else if (code == MHD_CONNECTION_NOTIFY_CLOSED)
        conn_closed(g, socket_context);
}

void xg_mhd_guard_head(struct xg_mhd_guard *g, struct MHD_Connection *conn, bool body)
{
    struct guard_conn *c = g ? record_of(conn) : NULL;
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    if (body)
        xg_guard_body(&g->opt.limits, &c->guard, xg_monotonic_coarse_ms());
    else
        xg_guard_idle(&c->guard);
    pthread_mutex_unlock(&g->lock);
}

void xg_mhd_guard_body(struct xg_mhd_guard *g, struct MHD_Connection *conn, size_t n)
{
    struct guard_conn *c = g ? record_of(conn) : NULL;
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    xg_guard_bytes(&g->opt.limits, &c->guard, n, xg_monotonic_coarse_ms());
    pthread_mutex_unlock(&g->lock);
}

void xg_mhd_guard_handled(struct xg_mhd_guard *g, struct MHD_Connection *conn)
{
    struct guard_conn *c = g ? record_of(conn) : NULL;
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    xg_guard_idle(&c->guard);
    pthread_mutex_unlock(&g->lock);
}

void xg_mhd_guard_completed(struct xg_mhd_guard *g, struct MHD_Connection *conn)
{
    struct guard_conn *c = g && conn ? record_of(conn) : NULL;
    if (!c)
        return;
    pthread_mutex_lock(&g->lock);
    /* the next head may wait the idle timeout before its first byte, which is unseen */
    xg_guard_idle(&c->guard);
    xg_guard_head(&c->guard, xg_monotonic_coarse_ms() + g->opt.idle_timeout_ms);
    pthread_mutex_unlock(&g->lock);
}

long xg_mhd_guard_sweep(struct xg_mhd_guard *g)
{
    int64_t now = xg_monotonic_coarse_ms(), next = INT64_MAX;
    pthread_mutex_lock(&g->lock);
    for (struct guard_conn *c = g->conns; c; c = c->next) {
        int64_t due;
        enum xg_guard_verdict v = xg_guard_check(&g->opt.limits, &c->guard, now, &due);
        if (v != XG_GUARD_OK) {
            xg_guard_count(g->opt.counts, v);
            xg_guard_idle(&c->guard);
            shutdown(c->fd, SHUT_RDWR); /* libmicrohttpd sees the end and closes it */
            continue;
        }
        if (due < next)
            next = due;
    }
    pthread_mutex_unlock(&g->lock);
    return next == INT64_MAX ? -1 : next > now ? (long)(next - now) : 0;
}

bool xg_mhd_guard_expects_body(struct MHD_Connection *conn)
{
    const char *cl =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    return te != NULL || (cl && strtoull(cl, NULL, 10) > 0);
}
