/* xg_mhd_proxy — PROXY headers read before libmicrohttpd takes a socket; see the header.
 *
 * One epoll: the listening socket (level-triggered), a wake-up eventfd, and each pending
 * connection edge-triggered. The opening bytes are peeked (MSG_PEEK), never consumed
 * until the rule has decided, so a trusted peer's plain HTTP reaches libmicrohttpd whole;
 * edge-triggered, every new segment wakes the thread again although the peeked bytes stay
 * queued. Pending connections sit in a list in accept order, so the oldest is the first
 * to time out. */
#include "xg_mhd_proxy.h"

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
#define PROXY_MAX_HEADER      2048
#define PROXY_DEFAULT_PENDING 1024

struct pending {
    struct pending *prev, *next;
    int fd;
    int64_t deadline_ms;
    struct xg_proxy_ip peer;
};

struct xg_mhd_proxy {
    struct xg_mhd_proxy_options opt;
    struct xg_proxy_trust trust;
    int listen_fd, epoll_fd, wake_fd;
    uint16_t port;
    pthread_t thread;
    bool running;
    atomic_bool stopping, quiesce;
    struct pending *head, *tail; /* thread-owned */
    size_t npending;
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

static void accept_some(struct xg_mhd_proxy *p)
{
    for (int i = 0; i < 64; i++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(p->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        struct xg_proxy_ip peer;
        struct pending *c = p->npending < p->opt.max_pending ? calloc(1, sizeof *c) : NULL;
        if (!c || !xg_proxy_ip_from_sockaddr((const struct sockaddr *)&ss, &peer)) {
            free(c);
            close(fd);
            continue;
        }
        c->fd = fd;
        c->peer = peer;
        c->deadline_ms = xg_monotonic_coarse_ms() + p->opt.header_timeout_ms;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = c};
        if (epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
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
    if (!p->head)
        return -1;
    int64_t ms = p->head->deadline_ms - now;
    return ms > 1000 ? 1000 : (int)ms + 1;
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
        }
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
    union {
        struct sockaddr_storage ss;
        struct sockaddr_in v4;
        struct sockaddr_in6 v6;
    } a;
    memset(&a, 0, sizeof a); /* getsockname fills it; zeroed for the analyzer */
    socklen_t sl = sizeof a;
    if (getsockname(p->listen_fd, (struct sockaddr *)&a, &sl) == 0)
        p->port = ntohs(a.ss.ss_family == AF_INET6 ? a.v6.sin6_port : a.v4.sin_port);
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
    if (p->opt.max_pending == 0)
        p->opt.max_pending = PROXY_DEFAULT_PENDING;
    p->listen_fd = p->epoll_fd = p->wake_fd = -1;
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
