/* nodeconn — see nodeconn.h. */
#include "nodes/nodeconn.h"

#include "core/http_text.h"
#include "xg_clock.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define NC_NS_PER_MS       1000000ULL
#define NC_READ_BUFFER     (64 * 1024)
#define NC_TCP_KEEPIDLE_S  30
#define NC_TCP_KEEPINTVL_S 10

enum nc_conn_state {
    NC_CONNECTING, /* connect() in progress, an exchange assigned */
    NC_BUSY,       /* sending a request or reading its answer */
    NC_IDLE,       /* kept alive, on its node's idle list */
    NC_CLOSED,     /* closed, on the client's closed list until the event batch ends */
};

struct nc_conn {
    struct loop_watch watch; /* first: the loop hands it back on the socket's events */
    struct nc_client *client;
    int fd;
    enum nc_conn_state state;
    struct nc_node *node;
    struct nc_exchange *x; /* in NC_CONNECTING and NC_BUSY */
    bool reused;           /* has carried an answer before this exchange */
    bool want_out;         /* registered for EPOLLOUT */
    uint64_t connect_deadline_ns;
    struct nc_conn *next, *prev; /* node's idle list, client's connecting or closed list */
};

struct nc_node {
    struct nc_node *next;
    char authority[NC_AUTHORITY_MAX];
    struct sockaddr_storage addr;
    socklen_t addr_len;
    unsigned open;
    unsigned cap;         /* its own cap from the latest exchange; 0: the client's */
    struct nc_conn *idle; /* most recently used first */
    struct nc_exchange *wait_head, *wait_tail; /* FIFO */
};

struct nc_client {
    struct loop *loop;
    unsigned max_per_node, max_total, open;
    long connect_timeout_ms;
    struct nc_node *nodes;
    struct nc_conn *connecting;
    /* Closed connections are freed by nc_release_closed, after the engine's event batch:
     * an event for one of them may still be waiting in that batch. */
    struct nc_conn *closed;
    char buf[NC_READ_BUFFER];
};

/* --- URLs ------------------------------------------------------------------------------ */

static bool nc_parse_port(const char *s, size_t n, uint16_t *port)
{
    uint64_t v;
    if (!http_parse_decimal(s, n, 5, &v) || v == 0 || v > 65535)
        return false;
    *port = (uint16_t)v;
    return true;
}

bool nc_target_of(const char *url, struct nc_target *t)
{
    static const char scheme[] = "http://";
    if (strncmp(url, scheme, sizeof scheme - 1) != 0)
        return false;
    const char *auth = url + sizeof scheme - 1;
    size_t auth_len = strcspn(auth, "/?#");
    if (auth_len == 0 || auth_len >= sizeof t->authority || memchr(auth, '@', auth_len))
        return false;
    if (auth[auth_len] != '\0' && auth[auth_len] != '/')
        return false;

    char host[NC_AUTHORITY_MAX];
    const char *port_at = NULL;
    bool v6 = auth[0] == '[';
    if (v6) {
        const char *close = memchr(auth, ']', auth_len);
        if (!close)
            return false;
        size_t hn = (size_t)(close - auth - 1);
        memcpy(host, auth + 1, hn);
        host[hn] = '\0';
        if (close + 1 < auth + auth_len) {
            if (close[1] != ':')
                return false;
            port_at = close + 2;
        }
    } else {
        const char *colon = memchr(auth, ':', auth_len);
        size_t hn = colon ? (size_t)(colon - auth) : auth_len;
        memcpy(host, auth, hn);
        host[hn] = '\0';
        port_at = colon ? colon + 1 : NULL;
    }
    uint16_t port = 80;
    if (port_at && !nc_parse_port(port_at, (size_t)(auth + auth_len - port_at), &port))
        return false;

    memset(&t->addr, 0, sizeof t->addr);
    if (v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&t->addr;
        if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
            return false;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        t->addr_len = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&t->addr;
        if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
            return false;
        a->sin_family = AF_INET;
        a->sin_port = htons(port);
        t->addr_len = sizeof *a;
    }
    memcpy(t->authority, auth, auth_len);
    t->authority[auth_len] = '\0';
    t->path = auth[auth_len] ? auth + auth_len : "/";
    return true;
}

/* --- lists ----------------------------------------------------------------------------- */

static void nc_conn_link(struct nc_conn **head, struct nc_conn *k)
{
    k->prev = NULL;
    k->next = *head;
    if (*head)
        (*head)->prev = k;
    *head = k;
}

static void nc_conn_unlink(struct nc_conn **head, struct nc_conn *k)
{
    if (k->prev)
        k->prev->next = k->next;
    else
        *head = k->next;
    if (k->next)
        k->next->prev = k->prev;
    k->next = k->prev = NULL;
}

static void nc_wait_push(struct nc_node *n, struct nc_exchange *x, bool front)
{
    x->wait_prev = x->wait_next = NULL;
    if (!n->wait_head) {
        n->wait_head = n->wait_tail = x;
    } else if (front) {
        x->wait_next = n->wait_head;
        n->wait_head->wait_prev = x;
        n->wait_head = x;
    } else {
        x->wait_prev = n->wait_tail;
        n->wait_tail->wait_next = x;
        n->wait_tail = x;
    }
}

static void nc_wait_unlink(struct nc_node *n, struct nc_exchange *x)
{
    if (x->wait_prev)
        x->wait_prev->wait_next = x->wait_next;
    else
        n->wait_head = x->wait_next;
    if (x->wait_next)
        x->wait_next->wait_prev = x->wait_prev;
    else
        n->wait_tail = x->wait_prev;
    x->wait_next = x->wait_prev = NULL;
}

/* --- connections ----------------------------------------------------------------------- */

static void nc_dispatch_all(struct nc_client *c);
static void nc_on_event(struct loop_watch *w, uint32_t events);

static void nc_conn_close(struct nc_client *c, struct nc_conn *k)
{
    if (k->state == NC_IDLE)
        nc_conn_unlink(&k->node->idle, k);
    else if (k->state == NC_CONNECTING)
        nc_conn_unlink(&c->connecting, k);
    close(k->fd); /* also leaves the epoll set */
    k->fd = -1;
    k->node->open--;
    c->open--;
    k->x = NULL;
    k->state = NC_CLOSED;
    nc_conn_link(&c->closed, k);
}

void nc_release_closed(struct nc_client *c)
{
    while (c->closed) {
        struct nc_conn *k = c->closed;
        c->closed = k->next;
        free(k);
    }
}

/* Closes n's idle connections: one of them was found closed by the node, the others are
 * as old and likely gone too (a restarted node). */
static void nc_close_idle(struct nc_client *c, struct nc_node *n)
{
    while (n->idle)
        nc_conn_close(c, n->idle);
}

static void nc_want_out(struct nc_client *c, struct nc_conn *k, bool want)
{
    if (k->want_out == want)
        return;
    loop_watch_change(c->loop, k->fd, EPOLLIN | (want ? EPOLLOUT : 0U), &k->watch);
    k->want_out = want;
}

/* Ends x (already detached from any connection and queue) and tells its owner. */
static void nc_end(struct nc_exchange *x, enum nc_end end, const char *error)
{
    x->conn = NULL;
    x->node = NULL;
    x->on_end(x, end, error);
}

/* The connection failed under x. A kept-alive connection the node closed before one byte
 * of the answer came gets x sent once more on a fresh connection. */
static void nc_conn_failed(struct nc_client *c, struct nc_conn *k, enum nc_end end,
                           const char *error)
{
    struct nc_exchange *x = k->x;
    struct nc_node *n = k->node;
    bool resend = k->reused && !x->resent && h1_nothing_received(&x->parser);
    nc_conn_close(c, k);
    if (resend) {
        nc_close_idle(c, n); /* the resend goes out on a new connection */
        x->resent = true;
        x->conn = NULL;
        x->sent = 0;
        nc_wait_push(n, x, true);
        nc_dispatch_all(c);
        return;
    }
    nc_end(x, end, error);
    nc_dispatch_all(c);
}

/* The answer on k is complete: keep the connection for the next request, or close it. */
static void nc_conn_answered(struct nc_client *c, struct nc_conn *k, bool reusable)
{
    struct nc_exchange *x = k->x;
    k->x = NULL;
    if (reusable) {
        k->state = NC_IDLE;
        k->reused = true;
        nc_conn_link(&k->node->idle, k);
    } else {
        nc_conn_close(c, k);
    }
    nc_end(x, NC_ANSWERED, NULL);
    nc_dispatch_all(c);
}

static void nc_send(struct nc_client *c, struct nc_conn *k)
{
    struct nc_exchange *x = k->x;
    while (x->sent < x->request_len) {
        ssize_t w = send(k->fd, x->request + x->sent, x->request_len - x->sent, MSG_NOSIGNAL);
        if (w > 0) {
            x->sent += (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            nc_want_out(c, k, true);
            return;
        } else {
            nc_conn_failed(c, k, NC_BROKEN, "the node closed the connection");
            return;
        }
    }
    nc_want_out(c, k, false);
}

/* Reads what the node sent on a busy connection and feeds x's parser. */
static void nc_receive(struct nc_client *c, struct nc_conn *k)
{
    struct nc_exchange *x = k->x;
    for (;;) {
        ssize_t r = recv(k->fd, c->buf, sizeof c->buf, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (r < 0) {
            nc_conn_failed(c, k, NC_BROKEN, "the node reset the connection");
            return;
        }
        if (r == 0) {
            if (h1_nothing_received(&x->parser))
                nc_conn_failed(c, k, NC_BROKEN, "the node closed the connection without an answer");
            else if (h1_parse_eof(&x->parser))
                nc_conn_answered(c, k, false);
            else
                nc_conn_failed(c, k, NC_BROKEN, x->parser.error);
            return;
        }
        size_t used = h1_parse(&x->parser, c->buf, (size_t)r, x->on_body, x->ctx);
        if (x->parser.phase == H1_FAILED) {
            k->reused = false; /* what the node sent is no clean close */
            nc_conn_failed(c, k, NC_BROKEN, x->parser.error);
            return;
        }
        if (x->parser.phase == H1_DONE) {
            /* Bytes after the answer were never asked for: the connection is not reused. */
            nc_conn_answered(c, k, x->parser.keep_alive && used == (size_t)r);
            return;
        }
        if ((size_t)r < sizeof c->buf)
            return; /* drained for now; level-triggered epoll calls again */
    }
}

static void nc_assign(struct nc_client *c, struct nc_conn *k, struct nc_exchange *x)
{
    k->x = x;
    x->conn = k;
    x->sent = 0;
    h1_parser_init(&x->parser);
    if (k->state == NC_CONNECTING)
        return; /* sent once connected */
    k->state = NC_BUSY;
    nc_send(c, k);
}

static void nc_set_socket_options(int fd)
{
    int one = 1, idle = NC_TCP_KEEPIDLE_S, intvl = NC_TCP_KEEPINTVL_S;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
}

/* Opens a connection for x; on failure x ends NC_CONNECT_FAILED. */
static void nc_connect(struct nc_client *c, struct nc_node *n, struct nc_exchange *x)
{
    struct nc_conn *k = calloc(1, sizeof *k);
    int fd = socket(n->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (!k || fd < 0) {
        free(k);
        if (fd >= 0)
            close(fd);
        nc_end(x, NC_CONNECT_FAILED, "cannot open a socket");
        return;
    }
    nc_set_socket_options(fd);
    k->watch.on_event = nc_on_event;
    k->client = c;
    k->fd = fd;
    k->node = n;
    n->open++;
    c->open++;
    int rc = connect(fd, (const struct sockaddr *)&n->addr, n->addr_len);
    if (rc != 0 && errno != EINPROGRESS) {
        k->state = NC_BUSY; /* on no list yet */
        nc_conn_close(c, k);
        nc_end(x, NC_CONNECT_FAILED, "the node refused the connection");
        return;
    }
    if (!loop_watch_add(c->loop, fd, EPOLLIN | EPOLLOUT, &k->watch)) {
        k->state = NC_BUSY;
        nc_conn_close(c, k);
        nc_end(x, NC_CONNECT_FAILED, "cannot watch the node's socket");
        return;
    }
    k->want_out = true;
    k->state = NC_CONNECTING;
    k->connect_deadline_ns =
        (uint64_t)xg_monotonic_ns() + (uint64_t)c->connect_timeout_ms * NC_NS_PER_MS;
    nc_conn_link(&c->connecting, k);
    nc_assign(c, k, x);
}

/* Under the total cap, an idle connection to another node gives way to a waiting job:
 * closes the least recently used one. Returns false when there is none. */
static bool nc_close_an_idle_elsewhere(struct nc_client *c, const struct nc_node *n)
{
    for (struct nc_node *o = c->nodes; o; o = o->next) {
        if (o == n || !o->idle)
            continue;
        struct nc_conn *lru = o->idle;
        while (lru->next)
            lru = lru->next;
        nc_conn_close(c, lru);
        return true;
    }
    return false;
}

static unsigned nc_node_cap(const struct nc_client *c, const struct nc_node *n)
{
    return n->cap && n->cap < c->max_per_node ? n->cap : c->max_per_node;
}

/* Starts as many waiting exchanges of n as idle connections and the caps allow. */
static void nc_dispatch(struct nc_client *c, struct nc_node *n)
{
    struct nc_exchange *x;
    while ((x = n->wait_head)) {
        if (n->idle) {
            struct nc_conn *k = n->idle;
            nc_wait_unlink(n, x);
            nc_conn_unlink(&n->idle, k);
            nc_assign(c, k, x);
        } else if (n->open < nc_node_cap(c, n) &&
                   (c->open < c->max_total || nc_close_an_idle_elsewhere(c, n))) {
            nc_wait_unlink(n, x);
            nc_connect(c, n, x);
        } else {
            return;
        }
    }
}

/* After a connection slot freed up or an answer came: every node's queue gets its turn
 * (a freed slot under the total cap may serve another node). */
static void nc_dispatch_all(struct nc_client *c)
{
    for (struct nc_node *n = c->nodes; n; n = n->next)
        if (n->wait_head)
            nc_dispatch(c, n);
}

static void nc_on_connected(struct nc_client *c, struct nc_conn *k)
{
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(k->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        nc_conn_failed(c, k, NC_CONNECT_FAILED,
                       err == ECONNREFUSED ? "the node refused the connection"
                                           : "cannot connect to the node");
        return;
    }
    nc_conn_unlink(&c->connecting, k);
    k->state = NC_BUSY;
    nc_send(c, k);
}

static void nc_on_event(struct loop_watch *w, uint32_t events)
{
    struct nc_conn *k = (struct nc_conn *)w;
    struct nc_client *c = k->client;
    switch (k->state) {
    case NC_CONNECTING:
        if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            nc_on_connected(c, k);
        return;
    case NC_IDLE: /* the node closed it, or sent what nobody asked for */
        nc_conn_close(c, k);
        nc_dispatch_all(c);
        return;
    case NC_CLOSED: /* an event from the same batch, for a connection closed since */
        return;
    case NC_BUSY:
        if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
            nc_receive(c, k);
            return;
        }
        if (events & EPOLLOUT)
            nc_send(c, k);
        return;
    }
}

uint64_t nc_expire_connects(struct nc_client *c, uint64_t now)
{
    /* One at a time from the head: failing one may open or close others. */
    for (bool again = true; again;) {
        again = false;
        for (struct nc_conn *k = c->connecting; k; k = k->next) {
            assert(k->state == NC_CONNECTING && k->x); /* what the list holds */
            if (k->connect_deadline_ns <= now) {
                nc_conn_failed(c, k, NC_CONNECT_FAILED, "the connect timeout passed");
                again = true;
                break;
            }
        }
    }
    uint64_t earliest = UINT64_MAX;
    for (struct nc_conn *k = c->connecting; k; k = k->next)
        if (k->connect_deadline_ns < earliest)
            earliest = k->connect_deadline_ns;
    return earliest;
}

/* --- the client ------------------------------------------------------------------------ */

static struct nc_node *nc_node_of(struct nc_client *c, const struct nc_target *t)
{
    for (struct nc_node *n = c->nodes; n; n = n->next)
        if (strcmp(n->authority, t->authority) == 0)
            return n;
    struct nc_node *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    memcpy(n->authority, t->authority, sizeof n->authority);
    n->addr = t->addr;
    n->addr_len = t->addr_len;
    n->next = c->nodes;
    c->nodes = n;
    return n;
}

void nc_start(struct nc_client *c, struct nc_exchange *x, const struct nc_target *t)
{
    struct nc_node *n = nc_node_of(c, t);
    if (!n) {
        nc_end(x, NC_CONNECT_FAILED, "out of memory");
        return;
    }
    n->cap = x->max_conns;
    x->node = n;
    x->conn = NULL;
    x->resent = false;
    h1_parser_init(&x->parser);
    nc_wait_push(n, x, false);
    nc_dispatch(c, n);
}

void nc_abandon(struct nc_client *c, struct nc_exchange *x)
{
    struct nc_node *n = x->node;
    if (!n)
        return; /* already ended */
    struct nc_conn *k = x->conn;
    if (k)
        nc_conn_close(c, k); /* its answer is still on the way */
    else
        nc_wait_unlink(n, x);
    x->conn = NULL;
    x->node = NULL;
    nc_dispatch_all(c);
}

struct nc_client *nc_client_new(struct loop *l, unsigned max_per_node, unsigned max_total,
                                long connect_timeout_ms)
{
    struct nc_client *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->loop = l;
    c->max_per_node = max_per_node;
    c->max_total = max_total;
    c->connect_timeout_ms = connect_timeout_ms;
    return c;
}

void nc_client_free(struct nc_client *c)
{
    if (!c)
        return;
    while (c->connecting)
        nc_conn_close(c, c->connecting);
    struct nc_node *n = c->nodes;
    while (n) {
        struct nc_node *next = n->next;
        nc_close_idle(c, n);
        free(n);
        n = next;
    }
    nc_release_closed(c);
    free(c);
}

unsigned nc_open_connections(const struct nc_client *c)
{
    return c->open;
}
