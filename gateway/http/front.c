/* front — the gateway's own HTTP/1.1 front end (see front.h for why and what).
 *
 * Longer than the ~700 lines a module should be, on purpose: it is one state machine per
 * connection (head, body by length or chunks, leftovers of pipelined requests, the
 * answer's partial writes, keep-alive, the hand-over to the lingering close), and its
 * states and buffers are read as a whole. The pure parts are apart already: hreq.c
 * parses, linger.c decides, front_native.c binds it to the request path. */
#include "http/front.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "xg_clock.h"
#include "xg_str.h"

#define FRONT_FIRST_IN_BUFFER   4096
#define FRONT_FIRST_BODY_BUFFER 16384 /* a body buffer starts here and doubles */
#define FRONT_ACCEPT_BURST      32
#define FRONT_LISTEN_BACKLOG    1024
#define FRONT_HEAD_RESERVE      512 /* status line, Date, Content-Length, Connection */
#define FRONT_ACCEPT_RETRY_MS   100 /* out of descriptors: try accepting again this soon */

enum fc_state {
    FC_READ_PROXY, /* proxy_protocol: waiting for (the rest of) the PROXY header */
    FC_READ_HEAD,  /* waiting for (the rest of) a request head */
    FC_READ_BODY,  /* reading the body the head announced */
    FC_HANDLER,    /* the handler has the request; no answer yet */
    FC_WRITE,      /* the answer is being sent */
    FC_STREAM,     /* a streamed answer: the handler holds the request and writes as it goes */
    FC_CLOSED,     /* socket closed; freed by front_run */
};

struct front_conn {
    struct loop_watch watch; /* first: the loop hands it back on events */
    struct front *f;
    int fd;
    enum fc_state state;
    bool readable, writable;
    bool gone;        /* the peer reset or closed both ways: drop the answer */
    bool peer_shut;   /* the peer sent all it will send (EPOLLRDHUP) */
    bool close_after; /* close once this answer is sent */
    bool resumed;     /* on the front's resumed list */
    bool stream_over; /* FC_STREAM: the handler ended the stream; close once it is sent */
    struct sockaddr_storage peer;

    /* Activity order for the idle timeout (only while reading or writing). */
    struct front_conn *older, *newer;
    bool timed;
    int64_t active_ms;

    /* Slow clients: where the connection is (xg_guard.h), and the place it holds in the
     * per-address cap. */
    struct xg_guard guard;
    struct xg_proxy_ip cap_key;
    bool capped;    /* holds a place of cap_key */
    bool cap_later; /* a trusted balancer: counted once its PROXY header named the client */

    /* Input: the request head and any bytes after it. */
    char *in;
    size_t in_len, in_cap;
    size_t consumed; /* bytes of in that belong to the current request */
    struct hreq head;
    void *req;

    /* The body being read. */
    char *body;
    size_t body_len, body_cap;
    uint64_t body_left; /* Content-Length bytes still to come */
    bool chunked;
    struct hreq_chunked chunk;
    size_t raw_len; /* chunked: undecoded bytes held after body_len */

    /* Output: the answer head and body. */
    char *out_head;
    size_t out_head_len, out_head_cap;
    const char *out_body;
    size_t out_body_len;
    bool out_body_owned;
    size_t out_sent;

    struct front_conn *next_resumed, *next_dead;
    struct front_conn *prev_live, *next_live; /* every open connection, for front_stop */
};

struct front {
    struct loop_watch watch; /* the listening socket */
    struct front_options opt;
    struct front_handler handler;
    struct loop *loop;
    int listen_fd;
    atomic_bool quiescing;
    bool accept_paused;      /* out of descriptors: the listener is not watched */
    int64_t accept_retry_ms; /* when to watch it again at the latest */
    size_t nconns;
    struct front_conn *oldest, *newest; /* idle-timeout order */
    int64_t guard_due_ms;               /* the slow-client rule is next due (INT64_MAX: none) */
    struct front_conn *resumed_head, *resumed_tail;
    struct front_conn *dead;
    struct front_conn *live;   /* connections not yet closed */
    struct linger_set *linger; /* closed after an answer, draining the client's input */
    time_t date_second;
    char date[64]; /* "Date: ...\r\n" for date_second */
};

/* ---- bookkeeping ----------------------------------------------------------------------- */

static void untime(struct front_conn *c)
{
    if (!c->timed)
        return;
    struct front *f = c->f;
    if (c->older)
        c->older->newer = c->newer;
    else
        f->oldest = c->newer;
    if (c->newer)
        c->newer->older = c->older;
    else
        f->newest = c->older;
    c->older = c->newer = NULL;
    c->timed = false;
}

/* Marks activity: c moves to the newest end of the idle-timeout order. */
static void touch(struct front_conn *c)
{
    struct front *f = c->f;
    untime(c);
    c->active_ms = xg_monotonic_coarse_ms();
    c->older = f->newest;
    if (f->newest)
        f->newest->newer = c;
    else
        f->oldest = c;
    f->newest = c;
    c->timed = true;
}

static void live_add(struct front *f, struct front_conn *c)
{
    c->prev_live = NULL;
    c->next_live = f->live;
    if (f->live)
        f->live->prev_live = c;
    f->live = c;
    f->nconns++;
}

static void live_remove(struct front *f, struct front_conn *c)
{
    if (c->prev_live)
        c->prev_live->next_live = c->next_live;
    else
        f->live = c->next_live;
    if (c->next_live)
        c->next_live->prev_live = c->prev_live;
    f->nconns--;
}

static void release_output(struct front_conn *c)
{
    if (c->out_body_owned)
        free((void *)c->out_body);
    c->out_body = NULL;
    c->out_body_len = 0;
    c->out_body_owned = false;
    c->out_head_len = 0;
    c->out_sent = 0;
}

static void end_request(struct front_conn *c)
{
    if (c->req) {
        void *req = c->req;
        c->req = NULL;
        c->f->handler.on_completed(c->f->handler.cls, req);
    }
    free(c->body);
    c->body = NULL;
    c->body_len = c->body_cap = c->raw_len = 0;
    release_output(c);
}

/* Closes the socket now; the memory goes after this batch of events (front_run). A
 * request the handler still holds keeps the connection until it answers. */
static void conn_close(struct front_conn *c)
{
    if (c->capped) {
        xg_addrcap_release(c->f->opt.addrcap, &c->cap_key);
        c->capped = false;
    }
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
    c->gone = true;
    untime(c);
    if (c->state == FC_HANDLER || c->state == FC_STREAM)
        return; /* freed once the handler answers (front_respond) or ends its stream */
    end_request(c);
    if (c->state == FC_CLOSED)
        return;
    c->state = FC_CLOSED;
    struct front *f = c->f;
    live_remove(f, c);
    c->next_dead = f->dead;
    f->dead = c;
    loop_host_due(f->loop);
}

/* Grows *buf (capacity *cap) to hold need bytes, doubling from first; false when memory
 * runs out (*buf is then unchanged). */
static bool grow(char **buf, size_t *cap, size_t need, size_t first)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : first;
    while (n < need)
        n *= 2;
    char *grown = realloc(*buf, n);
    if (!grown)
        return false;
    *buf = grown;
    *cap = n;
    return true;
}

static bool head_reserve(struct front_conn *c, size_t need)
{
    return grow(&c->out_head, &c->out_head_cap, need, 1024);
}

static bool in_reserve(struct front_conn *c, size_t need)
{
    return grow(&c->in, &c->in_cap, need, FRONT_FIRST_IN_BUFFER);
}

static bool body_reserve(struct front_conn *c, size_t need)
{
    return grow(&c->body, &c->body_cap, need, 1024);
}

/* A Content-Length body's buffer grows as its bytes arrive (xg_guard_body_cap), never
 * reserving the declared length up front: room for at least one more byte and the
 * terminator, up to the whole body. */
static bool body_room(struct front_conn *c)
{
    size_t need = c->body_len + (size_t)c->body_left + 1;
    if (c->body_cap > c->body_len + 1 || c->body_cap >= need)
        return true;
    size_t cap = xg_guard_body_cap(c->body_cap, need, FRONT_FIRST_BODY_BUFFER);
    char *grown = realloc(c->body, cap);
    if (!grown)
        return false;
    c->body = grown;
    c->body_cap = cap;
    return true;
}

/* ---- slow clients (xg_guard.h) --------------------------------------------------------- */

/* The rule is due for c by at (front_run sweeps then). */
static void guard_due(struct front *f, int64_t at)
{
    if (at < f->guard_due_ms)
        f->guard_due_ms = at;
}

/* Bytes of a head (or PROXY header) came: its clock starts with the first. */
static void guard_head(struct front_conn *c)
{
    if (c->guard.phase == XG_GUARD_HEAD)
        return;
    xg_guard_head(&c->guard, xg_monotonic_coarse_ms());
    guard_due(c->f, c->guard.since_ms + c->f->opt.guard.header_timeout_ms);
}

static void guard_body(struct front_conn *c, size_t already)
{
    int64_t now = xg_monotonic_coarse_ms(), due;
    xg_guard_body(&c->f->opt.guard, &c->guard, now);
    xg_guard_bytes(&c->f->opt.guard, &c->guard, already, now);
    xg_guard_check(&c->f->opt.guard, &c->guard, now, &due);
    guard_due(c->f, due);
}

/* Answer bytes wait for the client: the send rate is judged from the first wait. */
static void guard_send(struct front_conn *c)
{
    if (c->guard.phase == XG_GUARD_SEND)
        return;
    int64_t now = xg_monotonic_coarse_ms(), due;
    xg_guard_send(&c->f->opt.guard, &c->guard, now);
    xg_guard_check(&c->f->opt.guard, &c->guard, now, &due);
    guard_due(c->f, due);
}

/* ---- answers ------------------------------------------------------------------------- */

static const char *date_line(struct front *f)
{
    time_t now = time(NULL);
    if (now != f->date_second) {
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(f->date, sizeof f->date, "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
        f->date_second = now;
    }
    return f->date;
}

static size_t put(char *at, const char *s)
{
    size_t n = strlen(s);
    memcpy(at, s, n);
    return n;
}

/* Bytes a head needs: the reserve for the fixed lines, the reason and the headers. */
static size_t head_need(const char *reason, const struct front_header *headers, size_t nheaders)
{
    size_t need = FRONT_HEAD_RESERVE + strlen(reason);
    for (size_t i = 0; i < nheaders; i++)
        need += strlen(headers[i].name) + strlen(headers[i].value) + 4;
    return need;
}

/* Writes the status line, Date and the caller's headers at o; returns the end. The
 * caller reserved head_need bytes and adds its framing lines and the blank line. */
static char *put_status_headers(char *o, struct front *f, unsigned status, const char *reason,
                                const struct front_header *headers, size_t nheaders)
{
    char num[24];
    o += put(o, "HTTP/1.1 ");
    xg_str_u64(num, status);
    o += put(o, num);
    *o++ = ' ';
    o += put(o, reason);
    o += put(o, "\r\n");
    o += put(o, date_line(f));
    for (size_t i = 0; i < nheaders; i++) {
        o += put(o, headers[i].name);
        o += put(o, ": ");
        o += put(o, headers[i].value);
        o += put(o, "\r\n");
    }
    return o;
}

bool front_respond(struct front_conn *c, unsigned status, const struct front_header *headers,
                   size_t nheaders, const char *body, size_t len, bool body_owned)
{
    struct front *f = c->f;
    /* Never closes from here (the handler may still be on its way out): a connection to
     * drop is closed by advance(), which sees FC_WRITE and gone. */
    c->state = FC_WRITE;
    xg_guard_idle(&c->guard);
    if (c->gone) { /* the client left while it waited */
        if (body_owned)
            free((void *)body);
        return true;
    }
    if (!c->head.keep_alive || atomic_load(&f->quiescing))
        c->close_after = true;
    if (!body_owned && len > 0) { /* the caller's buffer is gone once this returns */
        char *copy = malloc(len);
        if (copy)
            memcpy(copy, body, len);
        body = copy;
        body_owned = true;
    }
    const char *reason = MHD_get_reason_phrase_for(status);
    size_t need = head_need(reason, headers, nheaders);
    if (!head_reserve(c, need) || (len > 0 && !body)) {
        if (body_owned)
            free((void *)body);
        c->gone = true; /* out of memory: drop the connection */
        return false;
    }
    char num[24];
    char *o = put_status_headers(c->out_head, f, status, reason, headers, nheaders);
    o += put(o, "Content-Length: ");
    xg_str_u64(num, len);
    o += put(o, num);
    o += put(o, "\r\n");
    if (c->close_after)
        o += put(o, "Connection: close\r\n");
    else if (c->head.minor == 0)
        o += put(o, "Connection: keep-alive\r\n");
    o += put(o, "\r\n");
    c->out_head_len = (size_t)(o - c->out_head);
    c->out_body = body;
    c->out_body_len = len;
    c->out_body_owned = body_owned;
    c->out_sent = 0;
    return true;
}

/* Appends to the output being sent; false when memory runs out. */
static bool out_append(struct front_conn *c, const char *data, size_t len)
{
    if (!grow(&c->out_head, &c->out_head_cap, c->out_head_len + len, FRONT_HEAD_RESERVE))
        return false;
    memcpy(c->out_head + c->out_head_len, data, len);
    c->out_head_len += len;
    return true;
}

/* Puts c on the resumed list so that front_run flushes its stream (or closes it). */
static void stream_kick(struct front_conn *c)
{
    front_resume(c);
}

bool front_stream_begin(struct front_conn *c, unsigned status, const struct front_header *headers,
                        size_t nheaders)
{
    struct front *f = c->f;
    if (c->gone || c->state != FC_HANDLER)
        return false;
    c->close_after = true;
    const char *reason = MHD_get_reason_phrase_for(status);
    size_t need = head_need(reason, headers, nheaders);
    if (!head_reserve(c, need)) {
        c->gone = true;
        return false;
    }
    release_output(c);
    char *o = put_status_headers(c->out_head, f, status, reason, headers, nheaders);
    /* no length: the stream's end is the connection's */
    o += put(o, "Cache-Control: no-cache\r\nConnection: close\r\n\r\n");
    c->out_head_len = (size_t)(o - c->out_head);
    c->state = FC_STREAM;
    c->stream_over = false;
    untime(c); /* a stream is not idle-timed: its handler bounds how long it lasts */
    stream_kick(c);
    return true;
}

bool front_stream_write(struct front_conn *c, const char *data, size_t len)
{
    /* a front end that stops takes no more: its streams end within their next write */
    if (c->state != FC_STREAM || c->stream_over || front_peer_left(c) ||
        atomic_load(&c->f->quiescing))
        return false;
    if (!out_append(c, data, len)) {
        c->gone = true; /* out of memory: the stream ends */
        stream_kick(c);
        return false;
    }
    stream_kick(c);
    return true;
}

void front_stream_end(struct front_conn *c)
{
    if (c->state != FC_STREAM)
        return;
    c->stream_over = true;
    stream_kick(c);
}

/* An answer of the front end's own (malformed or oversized request): sent, then closed. */
static void respond_plain(struct front_conn *c, unsigned status)
{
    c->close_after = true;
    if (!front_respond(c, status, NULL, 0, "", 0, false))
        return; /* out of memory: the connection closes without it */
}

void front_resume(struct front_conn *c)
{
    struct front *f = c->f;
    if (c->resumed)
        return;
    c->resumed = true;
    c->next_resumed = NULL;
    if (f->resumed_tail)
        f->resumed_tail->next_resumed = c;
    else
        f->resumed_head = c;
    f->resumed_tail = c;
    loop_host_due(f->loop);
}

bool front_peer_left(const struct front_conn *c)
{
    return c->gone || c->peer_shut;
}

void front_abandon(struct front_conn *c)
{
    c->gone = true; /* advance() sees FC_WRITE and gone, and closes */
    c->state = FC_WRITE;
}

void front_client_address(const struct front_conn *c, char *out, size_t outlen)
{
    out[0] = '\0';
    if (c->peer.ss_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)&c->peer)->sin_addr, out,
                  (socklen_t)outlen);
    else if (c->peer.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&c->peer)->sin6_addr, out,
                  (socklen_t)outlen);
}

/* ---- the connection's state machine --------------------------------------------------- */

/* Reads once into buf; returns bytes read, 0 when nothing is there now, -1 when the
 * connection ended. A short read means the socket is drained: the next bytes bring a new
 * edge-triggered event, so no read is spent on finding nothing. */
static ssize_t read_some(struct front_conn *c, char *buf, size_t space)
{
    if (!c->readable)
        return 0;
    ssize_t n = recv(c->fd, buf, space, 0);
    if (n > 0) {
        if ((size_t)n < space)
            c->readable = false;
        touch(c);
        return n;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        c->readable = false;
        return 0;
    }
    return -1; /* closed by the peer, or an error */
}

static unsigned refusal_status(enum hreq_result r)
{
    switch (r) {
    case HREQ_HEAD_TOO_LARGE:
        return MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE;
    case HREQ_BAD_VERSION:
        return MHD_HTTP_HTTP_VERSION_NOT_SUPPORTED;
    case HREQ_NOT_IMPLEMENTED:
        return MHD_HTTP_NOT_IMPLEMENTED;
    default:
        return MHD_HTTP_BAD_REQUEST;
    }
}

static void deliver_body(struct front_conn *c, bool too_large)
{
    struct front *f = c->f;
    char *body = NULL;
    size_t len = 0;
    if (!too_large && c->body_len > 0) {
        body = c->body;
        body[c->body_len] = '\0';
        len = c->body_len;
        c->body = NULL;
        c->body_len = c->body_cap = 0;
    }
    if (too_large)
        c->close_after = true; /* the rest of the body is never read */
    c->state = FC_HANDLER;
    xg_guard_idle(&c->guard);
    untime(c);
    f->handler.on_body(f->handler.cls, c, c->req, body, len, too_large);
}

/* Chunked: decodes what is held raw after the decoded part. Returns false on a framing
 * error (answered with 400). */
static bool decode_chunks(struct front_conn *c)
{
    size_t used = 0;
    size_t out = hreq_chunked_decode(&c->chunk, c->body + c->body_len, c->raw_len, &used);
    size_t rest = c->raw_len - used;
    memmove(c->body + c->body_len + out, c->body + c->body_len + used, rest);
    c->body_len += out;
    c->raw_len = rest;
    return c->chunk.phase != HREQ_CHUNK_FAILED;
}

/* Bytes after the last chunk belong to the next request: back to the input buffer. */
static bool return_leftover(struct front_conn *c)
{
    if (c->raw_len == 0)
        return true;
    if (!in_reserve(c, c->consumed + c->raw_len))
        return false;
    memcpy(c->in + c->consumed, c->body + c->body_len, c->raw_len);
    c->in_len = c->consumed + c->raw_len;
    c->raw_len = 0;
    return true;
}

/* Starts the body after the head: takes the bytes already read past the head. */
static void begin_body(struct front_conn *c)
{
    struct front *f = c->f;
    size_t extra = c->in_len - c->consumed;
    if (c->head.chunked) {
        c->chunked = true;
        hreq_chunked_init(&c->chunk);
        if (!body_reserve(c, extra + 1024)) {
            respond_plain(c, MHD_HTTP_INTERNAL_SERVER_ERROR);
            return;
        }
        memcpy(c->body, c->in + c->consumed, extra);
        c->raw_len = extra;
        c->in_len = c->consumed;
        guard_body(c, extra);
    } else {
        c->chunked = false;
        uint64_t want = c->head.content_length;
        if (want > f->opt.max_body) {
            deliver_body(c, true);
            return;
        }
        size_t take = extra < want ? extra : (size_t)want;
        if (!body_reserve(c, xg_guard_body_cap(0, (size_t)want + 1,
                                               take + 1 > FRONT_FIRST_BODY_BUFFER
                                                   ? take + 1
                                                   : FRONT_FIRST_BODY_BUFFER))) {
            respond_plain(c, MHD_HTTP_INTERNAL_SERVER_ERROR);
            return;
        }
        memcpy(c->body, c->in + c->consumed, take);
        c->body_len = take;
        c->body_left = want - take;
        c->consumed += take;
        guard_body(c, take);
    }
    if (c->head.expect_continue && extra == 0) {
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (send(c->fd, cont, sizeof cont - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof cont - 1)) {
            conn_close(c);
            return;
        }
    }
    c->state = FC_READ_BODY;
}

static void read_body(struct front_conn *c)
{
    struct front *f = c->f;
    for (;;) {
        if (!c->chunked && c->body_left == 0) {
            deliver_body(c, false);
            return;
        }
        if (c->chunked) {
            if (!decode_chunks(c)) {
                respond_plain(c, MHD_HTTP_BAD_REQUEST);
                return;
            }
            if (c->body_len > f->opt.max_body) {
                deliver_body(c, true);
                return;
            }
            if (c->chunk.phase == HREQ_CHUNK_DONE) {
                if (!return_leftover(c)) {
                    respond_plain(c, MHD_HTTP_INTERNAL_SERVER_ERROR);
                    return;
                }
                deliver_body(c, false);
                return;
            }
            if (!body_reserve(c, c->body_len + c->raw_len + 16384 + 1)) {
                respond_plain(c, MHD_HTTP_INTERNAL_SERVER_ERROR);
                return;
            }
        }
        if (!c->chunked && !body_room(c)) {
            respond_plain(c, MHD_HTTP_INTERNAL_SERVER_ERROR);
            return;
        }
        size_t at = c->chunked ? c->body_len + c->raw_len : c->body_len;
        size_t space = c->body_cap - at - 1;
        if (!c->chunked && space > c->body_left)
            space = (size_t)c->body_left;
        ssize_t n = read_some(c, c->body + at, space);
        if (n < 0) {
            conn_close(c);
            return;
        }
        if (n == 0)
            return;
        xg_guard_bytes(&c->f->opt.guard, &c->guard, (uint64_t)n, xg_monotonic_coarse_ms());
        if (c->chunked) {
            c->raw_len += (size_t)n;
        } else {
            c->body_len += (size_t)n;
            c->body_left -= (uint64_t)n;
        }
    }
}

/* The client a trusted balancer named takes the socket peer's place. */
static void set_peer(struct front_conn *c, const struct xg_proxy_ip *ip)
{
    memset(&c->peer, 0, sizeof c->peer);
    if (ip->family == 4) {
        struct sockaddr_in *v4 = (struct sockaddr_in *)&c->peer;
        v4->sin_family = AF_INET;
        memcpy(&v4->sin_addr, ip->bytes, 4);
    } else {
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&c->peer;
        v6->sin6_family = AF_INET6;
        memcpy(&v6->sin6_addr, ip->bytes, 16);
    }
}

/* Takes c's place in the per-address cap (xg_addrcap_key decides which address, or none):
 * named is NULL at accept, else the client a trusted balancer's PROXY header named
 * (family 0: none). False when the address is over its cap (counted). */
static bool cap_take(struct front_conn *c, const struct xg_proxy_ip *peer,
                     const struct xg_proxy_ip *named)
{
    struct front *f = c->f;
    static const struct xg_proxy_ip none;
    bool after_header = c->cap_later;
    c->cap_later = false;
    switch (xg_addrcap_key(&f->opt.trusted_proxies, peer, f->opt.proxy_protocol,
                           after_header ? (named ? named : &none) : NULL, &c->cap_key)) {
    case XG_ADDRCAP_EXEMPT:
        return true;
    case XG_ADDRCAP_LATER:
        c->cap_later = true;
        return true;
    case XG_ADDRCAP_COUNT:
        break;
    }
    c->capped = xg_addrcap_acquire(f->opt.addrcap, &c->cap_key);
    if (!c->capped && f->opt.counts)
        atomic_fetch_add(&f->opt.counts->refused_over_cap, 1);
    return c->capped;
}

/* The PROXY header before a connection's first request (front_options.proxy_protocol),
 * by the rule of every PROXY listener (xg_proxy_opening_read). Closed without an answer,
 * as the spec asks, when it is malformed or when an untrusted peer sends none; an
 * untrusted peer's header is read past and its addresses ignored. */
static void read_proxy(struct front_conn *c)
{
    struct front *f = c->f;
    struct xg_proxy_ip socket_peer;
    if (!xg_proxy_ip_from_sockaddr((const struct sockaddr *)&c->peer, &socket_peer))
        memset(&socket_peer, 0, sizeof socket_peer); /* not an IP socket: trusts nobody */
    for (;;) {
        struct xg_proxy_opening o;
        switch (xg_proxy_opening_read(&f->opt.trusted_proxies, &socket_peer, c->in, c->in_len,
                                      f->opt.max_head, &o)) {
        case XG_PROXY_OPENING_WAIT:
            break;
        case XG_PROXY_OPENING_REFUSE:
            conn_close(c);
            return;
        case XG_PROXY_OPENING_PASS:
            c->state = FC_READ_HEAD;
            if (o.version == 0) { /* the balancer itself, speaking HTTP: exempt */
                c->cap_later = false;
                return;
            }
            if (o.named.family != 0)
                set_peer(c, &o.named);
            memmove(c->in, c->in + o.skip, c->in_len - o.skip);
            c->in_len -= o.skip;
            if (c->cap_later && !cap_take(c, &socket_peer, &o.named))
                conn_close(c);
            return;
        }
        size_t want = c->in_len + 512;
        if (want > f->opt.max_head)
            want = f->opt.max_head;
        if (want <= c->in_len || !in_reserve(c, want)) {
            conn_close(c);
            return;
        }
        ssize_t n = read_some(c, c->in + c->in_len, want - c->in_len);
        if (n < 0) {
            conn_close(c);
            return;
        }
        if (n == 0)
            return;
        c->in_len += (size_t)n;
        guard_head(c);
    }
}

/* Parses a head from the input; reads more when it is incomplete. */
static void read_head(struct front_conn *c)
{
    struct front *f = c->f;
    for (;;) {
        if (c->in_len > 0) {
            enum hreq_result r = hreq_parse(c->in, c->in_len, f->opt.max_head, &c->head);
            if (r == HREQ_OK && c->head.expect_unsupported) {
                respond_plain(c, MHD_HTTP_EXPECTATION_FAILED);
                return;
            }
            if (r == HREQ_OK) {
                xg_guard_idle(&c->guard);
                c->consumed = c->head.head_len;
                c->close_after = false;
                c->state = FC_HANDLER; /* answers from on_head are allowed */
                c->req = f->handler.on_head(f->handler.cls, c, &c->head);
                if (!c->req) {
                    respond_plain(c, MHD_HTTP_INTERNAL_SERVER_ERROR);
                    return;
                }
                bool has_body = c->head.chunked || c->head.content_length > 0;
                if (c->state != FC_HANDLER) { /* answered already */
                    if (has_body)
                        c->close_after = true; /* its body is never read */
                    return;
                }
                if (!has_body) {
                    deliver_body(c, false);
                    return;
                }
                begin_body(c);
                return;
            }
            if (r != HREQ_INCOMPLETE) {
                c->head = (struct hreq){.minor = 1};
                respond_plain(c, refusal_status(r));
                return;
            }
        }
        size_t want = c->in_len + 2048;
        if (want > f->opt.max_head + 1)
            want = f->opt.max_head + 1;
        if (want <= c->in_len || !in_reserve(c, want)) {
            c->head = (struct hreq){.minor = 1};
            respond_plain(c, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE);
            return;
        }
        ssize_t n = read_some(c, c->in + c->in_len, c->in_cap - c->in_len);
        if (n < 0) {
            conn_close(c);
            return;
        }
        if (n == 0)
            return;
        c->in_len += (size_t)n;
        guard_head(c);
    }
}

/* Sends what is left of the answer; returns true once all of it is out. */
static bool write_answer(struct front_conn *c)
{
    while (c->out_sent < c->out_head_len + c->out_body_len) {
        if (!c->writable)
            return false;
        struct iovec iov[2];
        int n = 0;
        if (c->out_sent < c->out_head_len)
            iov[n++] = (struct iovec){c->out_head + c->out_sent, c->out_head_len - c->out_sent};
        size_t body_from = c->out_sent > c->out_head_len ? c->out_sent - c->out_head_len : 0;
        if (c->out_body_len > body_from)
            iov[n++] =
                (struct iovec){(void *)(c->out_body + body_from), c->out_body_len - body_from};
        struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t sent = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
        if (sent < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                c->writable = false;
                if (c->state == FC_WRITE)
                    guard_send(c);
                return false;
            }
            conn_close(c);
            return false;
        }
        c->out_sent += (size_t)sent;
        xg_guard_bytes(&c->f->opt.guard, &c->guard, (uint64_t)sent, xg_monotonic_coarse_ms());
        touch(c);
    }
    return true;
}

/* After an answer: the request is over; the connection closes or takes the next one. */
static void next_request(struct front_conn *c)
{
    /* A peer that shut its side gets what it asked for, then the connection closes. */
    bool close_now = c->close_after || (c->peer_shut && c->in_len == c->consumed);
    end_request(c);
    if (close_now) {
        /* The client may still be sending (a refused head, a body never read, requests
         * after this one): a close now would reset the connection, and the client could
         * lose this answer. The socket lingers instead, out of the connection count. */
        int fd = c->fd;
        c->fd = -1;
        conn_close(c);
        linger_take(c->f->linger, fd, true);
        return;
    }
    size_t rest = c->in_len - c->consumed;
    memmove(c->in, c->in + c->consumed, rest);
    c->in_len = rest;
    c->consumed = 0;
    c->state = FC_READ_HEAD;
    xg_guard_idle(&c->guard);
    if (rest > 0)
        guard_head(c); /* a pipelined head: its clock runs from the previous answer */
    touch(c);
}

/* A streamed answer: sends what the handler wrote so far. Once the handler ended the
 * stream and all of it is out, the connection closes (true: on to FC_WRITE's close). A
 * client that left is closed at once; the handler holds the request until it ends the
 * stream (it learns through front_stream_write or front_peer_left). */
static bool advance_stream(struct front_conn *c)
{
    if (front_peer_left(c) && c->fd >= 0)
        conn_close(c); /* keeps c (the handler holds it); gone from now on */
    if (c->stream_over) {
        c->state = FC_WRITE; /* sends the rest (or drops it when gone), then closes */
        return true;
    }
    if (c->gone)
        return false;
    bool all_out = c->out_sent == c->out_head_len || write_answer(c);
    untime(c); /* write_answer marked activity; streams are not idle-timed */
    if (all_out)
        c->out_sent = c->out_head_len = 0; /* all out: the buffer starts over */
    return false;
}

/* Moves c on as far as it can go without waiting. */
static void advance(struct front_conn *c)
{
    for (;;) {
        switch (c->state) {
        case FC_READ_PROXY:
            read_proxy(c);
            if (c->state == FC_READ_PROXY)
                return;
            break;
        case FC_READ_HEAD:
            read_head(c);
            if (c->state == FC_READ_HEAD)
                return;
            break;
        case FC_READ_BODY:
            read_body(c);
            if (c->state == FC_READ_BODY)
                return;
            break;
        case FC_HANDLER:
        case FC_CLOSED:
            return;
        case FC_STREAM:
            if (!advance_stream(c))
                return;
            break;
        case FC_WRITE:
            if (c->gone) {
                c->state = FC_READ_HEAD;
                conn_close(c);
                return;
            }
            if (!write_answer(c))
                return;
            next_request(c);
            break;
        }
    }
}

static void on_conn_event(struct loop_watch *w, uint32_t events)
{
    struct front_conn *c = (struct front_conn *)w;
    if (c->state == FC_CLOSED)
        return;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        c->readable = true;
    if (events & EPOLLRDHUP)
        c->peer_shut = true;
    if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
        c->writable = true;
    if ((events & (EPOLLHUP | EPOLLERR)) && c->state == FC_HANDLER) {
        conn_close(c); /* the handler's answer will be dropped */
        return;
    }
    if (c->state == FC_STREAM && (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
        /* a stream's client sends nothing more: its close (or reset) means it left */
        c->gone = true;
        conn_close(c);
        return;
    }
    advance(c);
}

/* ---- accepting ------------------------------------------------------------------------ */

/* Over its address's cap: a 503 that costs one send into an empty socket buffer, then
 * the close; nothing of the client's is read. */
static void refuse_over_cap(int fd)
{
    static const char over[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                               "Retry-After: 1\r\nConnection: close\r\n\r\n";
    ssize_t sent = send(fd, over, sizeof over - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)sent; /* best effort: the close says it anyway */
    close(fd);
}

static void accept_one(struct front *f, int fd, const struct sockaddr_storage *peer)
{
    struct front_conn *c = f->nconns < f->opt.max_connections ? calloc(1, sizeof *c) : NULL;
    if (!c) {
        close(fd);
        return;
    }
    c->f = f;
    struct xg_proxy_ip peer_ip;
    if (xg_proxy_ip_from_sockaddr((const struct sockaddr *)peer, &peer_ip) &&
        !cap_take(c, &peer_ip, NULL)) {
        free(c);
        refuse_over_cap(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (f->opt.send_buffer > 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &f->opt.send_buffer, sizeof f->opt.send_buffer);
    c->watch.on_event = on_conn_event;
    c->fd = fd;
    c->peer = *peer;
    c->state = f->opt.proxy_protocol ? FC_READ_PROXY : FC_READ_HEAD;
    c->writable = true;
    if (!loop_watch_add(f->loop, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, &c->watch)) {
        if (c->capped)
            xg_addrcap_release(f->opt.addrcap, &c->cap_key);
        close(fd);
        free(c);
        return;
    }
    live_add(f, c);
    touch(c);
}

static void on_listen_event(struct loop_watch *w, uint32_t events)
{
    (void)events;
    struct front *f = (struct front *)w;
    if (f->listen_fd < 0)
        return;
    if (atomic_load(&f->quiescing)) {
        close(f->listen_fd);
        f->listen_fd = -1;
        return;
    }
    for (int i = 0; i < FRONT_ACCEPT_BURST; i++) {
        struct sockaddr_storage peer = {0};
        socklen_t plen = sizeof peer;
        int fd =
            accept4(f->listen_fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EMFILE || errno == ENFILE) && linger_shed(f->linger))
            continue; /* a lingering socket gave its descriptor to the new connection */
        if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
            /* The listener stays readable: stop watching it until a connection closes
             * (or a moment passed), instead of spinning on it. */
            f->accept_paused = loop_watch_change(f->loop, f->listen_fd, 0, &f->watch);
            f->accept_retry_ms = xg_monotonic_coarse_ms() + FRONT_ACCEPT_RETRY_MS;
            return;
        }
        if (fd < 0)
            return; /* EAGAIN, or an error the next event retries */
        accept_one(f, fd, &peer);
    }
}

/* ---- the loop's host ------------------------------------------------------------------ */

static void expire_idle(struct front *f)
{
    int64_t now = xg_monotonic_coarse_ms();
    while (f->oldest && now - f->oldest->active_ms >= f->opt.idle_timeout_ms) {
        struct front_conn *c = f->oldest;
        if (c->state == FC_WRITE || c->state == FC_READ_BODY)
            c->state = FC_READ_HEAD; /* nothing more is sent or handed on */
        conn_close(c);
    }
}

/* A connection the slow-client rule condemned: 408 where the client reads HTTP, then the
 * lingering close; a PROXY header is closed unanswered. */
static void guard_close(struct front_conn *c, enum xg_guard_verdict v)
{
    xg_guard_count(c->f->opt.counts, v);
    if (v == XG_GUARD_SEND_TOO_SLOW) {
        /* Mid-answer: no 408. Reset, so that the kernel drops what the client left unread
         * instead of keeping it until the client takes it. */
        struct linger reset = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
        conn_close(c);
        return;
    }
    if (c->state == FC_READ_PROXY) {
        conn_close(c);
        return;
    }
    if (c->state == FC_READ_HEAD)
        c->head = (struct hreq){.minor = 1};
    respond_plain(c, MHD_HTTP_REQUEST_TIMEOUT);
    advance(c);
}

/* Applies the slow-client rule to the connections reading a head or a body, once due. */
static void guard_sweep(struct front *f)
{
    int64_t now = xg_monotonic_coarse_ms();
    if (now < f->guard_due_ms)
        return;
    f->guard_due_ms = INT64_MAX;
    struct front_conn *next;
    for (struct front_conn *c = f->live; c; c = next) {
        next = c->next_live; /* guard_close may take c off the list, nothing else */
        if (c->state != FC_READ_PROXY && c->state != FC_READ_HEAD && c->state != FC_READ_BODY &&
            !(c->state == FC_WRITE && c->guard.phase == XG_GUARD_SEND))
            continue;
        int64_t due;
        enum xg_guard_verdict v = xg_guard_check(&f->opt.guard, &c->guard, now, &due);
        if (v != XG_GUARD_OK)
            guard_close(c, v);
        else
            guard_due(f, due);
    }
}

void front_run(void *front)
{
    struct front *f = front;
    while (f->resumed_head) {
        struct front_conn *c = f->resumed_head;
        f->resumed_head = c->next_resumed;
        if (!f->resumed_head)
            f->resumed_tail = NULL;
        c->resumed = false;
        if (c->state == FC_STREAM) {
            advance(c);
            continue;
        }
        if (c->state != FC_HANDLER)
            continue;
        f->handler.on_resume(f->handler.cls, c, c->req);
        if (c->state != FC_CLOSED)
            advance(c);
    }
    expire_idle(f);
    guard_sweep(f);
    linger_run(f->linger);
    bool freed = f->dead != NULL;
    while (f->dead) {
        struct front_conn *c = f->dead;
        f->dead = c->next_dead;
        free(c->in);
        free(c->out_head);
        free(c);
    }
    if (f->accept_paused && f->listen_fd >= 0 &&
        (freed || xg_monotonic_coarse_ms() >= f->accept_retry_ms) &&
        loop_watch_change(f->loop, f->listen_fd, EPOLLIN, &f->watch))
        f->accept_paused = false;
}

long front_timeout_ms(void *front)
{
    struct front *f = front;
    int64_t now = xg_monotonic_coarse_ms();
    int64_t due = f->accept_paused ? f->accept_retry_ms : INT64_MAX;
    if (f->guard_due_ms < due)
        due = f->guard_due_ms;
    if (f->oldest && f->oldest->active_ms + f->opt.idle_timeout_ms < due)
        due = f->oldest->active_ms + f->opt.idle_timeout_ms;
    long ms = due == INT64_MAX ? -1 : due > now ? (long)(due - now) : 0;
    long linger_ms = linger_timeout_ms(f->linger);
    if (linger_ms >= 0 && (ms < 0 || linger_ms < ms))
        ms = linger_ms;
    return ms;
}

/* ---- life cycle ----------------------------------------------------------------------- */

/* One family per listener, as billing's (xg_bind_addr_parse): an IPv6 one takes IPv6 alone. */
static int listen_socket(const struct sockaddr_storage *addr, char *err, size_t errlen)
{
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
        (addr->ss_family == AF_INET6 &&
         setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) ||
        bind(fd, (const struct sockaddr *)addr, xg_sockaddr_len(addr)) != 0 ||
        listen(fd, FRONT_LISTEN_BACKLOG) != 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

struct front *front_start(const struct front_options *opt, const struct front_handler *handler,
                          struct loop *l, char *err, size_t errlen)
{
    struct front *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    f->watch.on_event = on_listen_event;
    f->opt = *opt;
    if (f->opt.guard.header_timeout_ms <= 0)
        f->opt.guard = (struct xg_guard_limits){.header_timeout_ms = XG_GUARD_HEADER_TIMEOUT_MS,
                                                .body_grace_ms = XG_GUARD_BODY_GRACE_MS,
                                                .body_min_rate = XG_GUARD_BODY_MIN_RATE,
                                                .body_window_ms = XG_GUARD_BODY_WINDOW_MS,
                                                .body_timeout_ms = XG_GUARD_BODY_TIMEOUT_MS,
                                                .send_min_rate = XG_GUARD_SEND_MIN_RATE};
    f->guard_due_ms = INT64_MAX;
    f->handler = *handler;
    f->loop = l;
    atomic_init(&f->quiescing, false);
    f->linger = linger_new(l, &opt->linger, opt->max_lingering);
    if (!f->linger) {
        snprintf(err, errlen, "out of memory");
        free(f);
        return NULL;
    }
    f->listen_fd = listen_socket(&opt->addr, err, errlen);
    if (f->listen_fd < 0)
        goto fail;
    if (!loop_watch_add(l, f->listen_fd, EPOLLIN, &f->watch)) {
        snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
        close(f->listen_fd);
        goto fail;
    }
    return f;
fail:
    linger_free(f->linger);
    free(f);
    return NULL;
}

uint16_t front_port(const struct front *f)
{
    struct sockaddr_storage a;
    memset(&a, 0, sizeof a); /* getsockname fills it; zeroed for the analyzer */
    socklen_t len = sizeof a;
    if (f->listen_fd < 0 || getsockname(f->listen_fd, (struct sockaddr *)&a, &len) != 0)
        return 0;
    return xg_sockaddr_port(&a);
}

void front_quiesce(struct front *f)
{
    /* Shutting the socket down stops new connections and wakes the listener's watch,
     * which closes it on the engine thread (only once quiescing is set, so the
     * descriptor read here is still ours). */
    int fd = f->listen_fd;
    if (fd >= 0)
        shutdown(fd, SHUT_RDWR);
    atomic_store(&f->quiescing, true);
}

void front_stop(struct front *f)
{
    if (!f)
        return;
    if (f->listen_fd >= 0)
        close(f->listen_fd);
    while (f->live) {
        struct front_conn *c = f->live;
        f->live = c->next_live;
        if (c->capped)
            xg_addrcap_release(f->opt.addrcap, &c->cap_key);
        if (c->fd >= 0)
            close(c->fd);
        if (c->req)
            f->handler.on_completed(f->handler.cls, c->req);
        free(c->body);
        release_output(c);
        free(c->in);
        free(c->out_head);
        free(c);
    }
    while (f->dead) {
        struct front_conn *c = f->dead;
        f->dead = c->next_dead;
        free(c->in);
        free(c->out_head);
        free(c);
    }
    linger_free(f->linger);
    free(f);
}

const struct hreq *front_request_head(const struct front_conn *c)
{
    return &c->head;
}
