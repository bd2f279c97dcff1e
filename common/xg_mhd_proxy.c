/* xg_mhd_proxy — PROXY headers read before libmicrohttpd takes a socket; see the header.
 *
 * One epoll: the listening socket (level-triggered), a wake-up eventfd, and each pending
 * connection edge-triggered. The opening bytes are peeked (MSG_PEEK), never consumed
 * until the rule has decided, so a trusted peer's plain HTTP reaches libmicrohttpd whole;
 * edge-triggered, every new segment wakes the thread again although the peeked bytes stay
 * queued. Pending connections sit in a list in accept order, so the oldest is the first
 * to time out. Untrusted ones are also counted by network in a private address cap
 * (xg_addrcap.h, keyed by the network), which is what per_network bounds. */
#include "xg_mhd_proxy.h"

#include "xg_addrcap.h"
#include "xg_clock.h"

#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* The longest header taken: a v1 header is at most 107 bytes; v2 with HAProxy's TLVs
 * (ALPN, authority, SSL details) stays well under this. */
#define PROXY_MAX_HEADER 2048

struct pending {
    struct pending *prev, *next;
    int fd;
    int64_t deadline_ms;
    struct xg_proxy_ip peer;
    bool trusted;
    struct xg_proxy_ip network; /* untrusted: the key its place in netcap is under */
};

struct xg_mhd_proxy {
    struct xg_mhd_proxy_options opt;
    struct xg_proxy_trust trust;
    int listen_fd, epoll_fd, wake_fd;
    uint16_t port;
    pthread_t thread;
    bool running;
    atomic_bool stopping, quiesce;
    struct pending *head, *tail; /* thread-owned, as everything below */
    size_t npending, nuntrusted;
    struct xg_addrcap *netcap; /* untrusted places by network; NULL: per_network 0 */
    bool accept_paused;        /* out of descriptors: the listener is not watched */
    bool dropped;              /* a pending connection went since the pause */
    int64_t accept_retry_ms;
};

static void pending_drop(struct xg_mhd_proxy *p, struct pending *c, bool close_fd)
{
    /* The list's invariant (the analyzer cannot see it): c is the head exactly when it has
     * no predecessor, the tail exactly when it has no successor. */
    assert((c->prev == NULL) == (p->head == c));
    assert((c->next == NULL) == (p->tail == c));
    if (c->prev)
        c->prev->next = c->next;
    else
        p->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        p->tail = c->prev;
    p->npending--;
    if (!c->trusted) {
        p->nuntrusted--;
        xg_addrcap_release(p->netcap, &c->network);
    }
    p->dropped = true;
    epoll_ctl(p->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
    if (close_fd)
        close(c->fd);
    free(c);
}

static socklen_t to_sockaddr(const struct xg_proxy_ip *ip, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (ip->family == 4) {
        struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
        v4->sin_family = AF_INET;
        memcpy(&v4->sin_addr, ip->bytes, 4);
        return sizeof *v4;
    }
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    v6->sin6_family = AF_INET6;
    memcpy(&v6->sin6_addr, ip->bytes, 16);
    return sizeof *v6;
}

/* Consumes exactly n bytes that a peek has already seen. */
static bool skip_bytes(int fd, size_t n)
{
    char buf[PROXY_MAX_HEADER];
    while (n > 0) {
        ssize_t r = recv(fd, buf, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        n -= (size_t)r;
    }
    return true;
}

/* The connection's opening bytes came (or more of them): decide. */
static void pending_read(struct xg_mhd_proxy *p, struct pending *c)
{
    char buf[PROXY_MAX_HEADER];
    ssize_t n;
    do
        n = recv(c->fd, buf, sizeof buf, MSG_PEEK);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) { /* closed or failed before a header */
        pending_drop(p, c, true);
        return;
    }
    struct xg_proxy_opening o;
    switch (xg_proxy_opening_read(&p->trust, &c->peer, buf, (size_t)n, sizeof buf, &o)) {
    case XG_PROXY_OPENING_WAIT:
        return;
    case XG_PROXY_OPENING_REFUSE:
        pending_drop(p, c, true);
        return;
    case XG_PROXY_OPENING_PASS:
        break;
    }
    int fd = c->fd;
    pending_drop(p, c, false);
    if (!skip_bytes(fd, o.skip)) {
        close(fd);
        return;
    }
    struct sockaddr_storage ss;
    socklen_t len = to_sockaddr(&o.client, &ss);
    p->opt.hand(p->opt.ctx, fd, (const struct sockaddr *)&ss, len);
}

/* Whether the newcomer from peer gets a place (xg_proxy_admit.h); counts a refusal. */
static bool admit(struct xg_mhd_proxy *p, struct pending *c)
{
    const struct xg_proxy_admit_limits *l = &p->opt.limits;
    c->trusted = xg_proxy_trusted(&p->trust, &c->peer);
    if (!c->trusted)
        c->network = xg_proxy_ip_network(&c->peer, l->ipv4_bits, l->ipv6_bits);
    struct xg_proxy_admit_state st = {.pending = p->npending,
                                      .untrusted = p->nuntrusted,
                                      .network =
                                          c->trusted ? 0 : xg_addrcap_held(p->netcap, &c->network)};
    enum xg_proxy_admit_verdict v = xg_proxy_admit(l, c->trusted, &st);
    if (v == XG_PROXY_ADMIT_OK && !c->trusted && !xg_addrcap_acquire(p->netcap, &c->network))
        v = XG_PROXY_ADMIT_NETWORK; /* out of memory for its entry */
    if (v != XG_PROXY_ADMIT_OK && p->opt.counts)
        atomic_fetch_add(v == XG_PROXY_ADMIT_NETWORK ? &p->opt.counts->refused_over_cap
                                                     : &p->opt.counts->proxy_full,
                         1);
    return v == XG_PROXY_ADMIT_OK;
}

static void pause_accepting(struct xg_mhd_proxy *p)
{
    /* The listener stays readable while the queue holds connections: unwatched, it no
     * longer wakes the thread, which spun a core here before. */
    epoll_ctl(p->epoll_fd, EPOLL_CTL_DEL, p->listen_fd, NULL);
    p->accept_paused = true;
    p->dropped = false;
    p->accept_retry_ms = xg_monotonic_coarse_ms() + XG_ACCEPT_PAUSE_MS;
}

static void resume_accepting(struct xg_mhd_proxy *p)
{
    if (!p->accept_paused || (!p->dropped && xg_monotonic_coarse_ms() < p->accept_retry_ms))
        return;
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = &p->listen_fd};
    if (epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, p->listen_fd, &lev) == 0)
        p->accept_paused = false;
    else
        p->accept_retry_ms = xg_monotonic_coarse_ms() + XG_ACCEPT_PAUSE_MS;
}

static void accept_some(struct xg_mhd_proxy *p)
{
    for (int i = 0; i < 64; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(p->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            enum xg_accept_step step = xg_accept_error(errno);
            if (step == XG_ACCEPT_RETRY)
                continue;
            if (step == XG_ACCEPT_PAUSE)
                pause_accepting(p);
            return;
        }
        struct pending *c = calloc(1, sizeof *c);
        if (!c || !xg_proxy_ip_from_sockaddr((const struct sockaddr *)&ss, &c->peer) ||
            !admit(p, c)) {
            free(c);
            close(fd);
            continue;
        }
        c->fd = fd;
        c->deadline_ms = xg_monotonic_coarse_ms() + p->opt.limits.header_timeout_ms;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = c};
        if (epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
            if (!c->trusted)
                xg_addrcap_release(p->netcap, &c->network);
            free(c);
            close(fd);
            continue;
        }
        c->prev = p->tail;
        if (p->tail)
            p->tail->next = c;
        else
            p->head = c;
        p->tail = c;
        p->npending++;
        if (!c->trusted)
            p->nuntrusted++;
        pending_read(p, c); /* the header often came with the connection */
    }
}

/* Closes the connections whose header is late; returns the ms until the next is due. */
static int sweep(struct xg_mhd_proxy *p)
{
    int64_t now = xg_monotonic_coarse_ms();
    while (p->head && p->head->deadline_ms <= now) {
        if (p->opt.counts)
            atomic_fetch_add(&p->opt.counts->header_timeouts, 1);
        pending_drop(p, p->head, true);
    }
    int64_t due = p->head ? p->head->deadline_ms : INT64_MAX;
    if (p->accept_paused && p->accept_retry_ms < due)
        due = p->accept_retry_ms;
    if (due == INT64_MAX)
        return -1;
    int64_t ms = due - now;
    return ms > 1000 ? 1000 : ms < 0 ? 0 : (int)ms + 1;
}

static void *proxy_main(void *arg)
{
    struct xg_mhd_proxy *p = arg;
    bool listening = true;
    while (!atomic_load(&p->stopping)) {
        if (listening && atomic_load(&p->quiesce)) {
            epoll_ctl(p->epoll_fd, EPOLL_CTL_DEL, p->listen_fd, NULL);
            shutdown(p->listen_fd, SHUT_RDWR); /* new clients are refused, not queued */
            listening = false;
            p->accept_paused = false;
        }
        if (listening)
            resume_accepting(p);
        struct epoll_event ev[32];
        int n = epoll_wait(p->epoll_fd, ev, 32, sweep(p));
        for (int i = 0; i < n; i++) {
            if (ev[i].data.ptr == &p->listen_fd) {
                if (listening)
                    accept_some(p);
            } else if (ev[i].data.ptr == &p->wake_fd) {
                uint64_t v;
                (void)!read(p->wake_fd, &v, sizeof v);
            } else {
                pending_read(p, ev[i].data.ptr);
            }
        }
    }
    while (p->head)
        pending_drop(p, p->head, true);
    return NULL;
}

static void wake(struct xg_mhd_proxy *p)
{
    uint64_t one = 1;
    (void)!write(p->wake_fd, &one, sizeof one);
}

static void proxy_free(struct xg_mhd_proxy *p)
{
    if (p->listen_fd >= 0)
        close(p->listen_fd);
    if (p->epoll_fd >= 0)
        close(p->epoll_fd);
    xg_addrcap_free(p->netcap);
    if (p->wake_fd >= 0)
        close(p->wake_fd);
    free(p);
}

static bool listen_on(struct xg_mhd_proxy *p, char *err, size_t errlen)
{
    const struct xg_mhd_proxy_options *opt = &p->opt;
    p->listen_fd = socket(opt->addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (p->listen_fd < 0 ||
        setsockopt(p->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        (opt->reuse_port &&
         setsockopt(p->listen_fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) ||
        (opt->addr->sa_family == AF_INET6 &&
         setsockopt(p->listen_fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) ||
        bind(p->listen_fd, opt->addr, opt->addrlen) != 0 || listen(p->listen_fd, 1024) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return false;
    }
    struct sockaddr_storage a;
    memset(&a, 0, sizeof a); /* getsockname fills it; zeroed for the analyzer */
    socklen_t sl = sizeof a;
    if (getsockname(p->listen_fd, (struct sockaddr *)&a, &sl) == 0)
        p->port = xg_sockaddr_port(&a);
    return true;
}

struct xg_mhd_proxy *xg_mhd_proxy_start(const struct xg_mhd_proxy_options *opt, char *err,
                                        size_t errlen)
{
    struct xg_mhd_proxy *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->opt = *opt;
    if (opt->trust)
        p->trust = *opt->trust;
    p->opt.trust = &p->trust;
    p->opt.limits = xg_proxy_admit_resolve(&opt->limits);
    p->listen_fd = p->epoll_fd = p->wake_fd = -1;
    if (p->opt.limits.per_network > 0 && !(p->netcap = xg_addrcap_new(p->opt.limits.per_network))) {
        snprintf(err, errlen, "out of memory");
        proxy_free(p);
        return NULL;
    }
    if (!listen_on(p, err, errlen)) {
        proxy_free(p);
        return NULL;
    }
    p->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = &p->listen_fd};
    struct epoll_event wev = {.events = EPOLLIN, .data.ptr = &p->wake_fd};
    if (p->epoll_fd < 0 || p->wake_fd < 0 ||
        epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, p->listen_fd, &lev) != 0 ||
        epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, p->wake_fd, &wev) != 0 ||
        pthread_create(&p->thread, NULL, proxy_main, p) != 0) {
        snprintf(err, errlen, "cannot start the PROXY header reader: %s", strerror(errno));
        proxy_free(p);
        return NULL;
    }
    p->running = true;
    return p;
}

uint16_t xg_mhd_proxy_port(const struct xg_mhd_proxy *p)
{
    return p->port;
}

void xg_mhd_proxy_quiesce(struct xg_mhd_proxy *p)
{
    atomic_store(&p->quiesce, true);
    wake(p);
}

void xg_mhd_proxy_stop(struct xg_mhd_proxy *p)
{
    if (!p)
        return;
    if (p->running) {
        atomic_store(&p->stopping, true);
        wake(p);
        pthread_join(p->thread, NULL);
    }
    proxy_free(p);
}
