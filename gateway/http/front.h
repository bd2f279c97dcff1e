/* front — the gateway's own HTTP/1.1 front end for plain-HTTP clients: one listening
 * socket (SO_REUSEPORT, shared by the loops) and its client connections, run by one
 * event loop's thread (loop.h) beside the node sockets.
 *
 * Why not libmicrohttpd here (it still serves TLS, see server.c): a request that waits on
 * a node must leave libmicrohttpd's event loop (MHD_suspend_connection), and libmicrohttpd
 * 0.9.75 takes the connection out of its epoll set then and puts it back later, and reads
 * speculatively after each answer: two epoll_ctl calls and a recv that finds nothing, on
 * every proxied request, plus a second epoll_wait per wake-up for its nested epoll set.
 * Measured here, that was ~2 µs of the gateway's ~21 µs per request and kept the uncached
 * pass-through below HAProxy's throughput. This front end registers each client socket
 * once (edge-triggered), reads only when told there is data, and answers with one
 * sendmsg: two recv and two send per proxied request, as HAProxy.
 *
 * What it speaks: HTTP/1.0 and 1.1, keep-alive and pipelining (one request at a time per
 * connection, in order), Content-Length and chunked request bodies, Expect:
 * 100-continue, strict parsing (hreq.h). Limits: the request head (431), the body
 * (declared or received beyond the limit: the handler is told and answers 413; the
 * connection then closes), idle connections (closed after the idle timeout without
 * activity; a request waiting on its handler, or a streamed answer, is not timed out
 * here), slow ones (a head not complete within the header timeout of its first byte, a
 * body under the minimum rate: 408, xg_guard.h), connections per client address
 * (xg_addrcap.h: 503 at accept), a connection count (further connections are accepted
 * and closed at once), and the
 * process's descriptors (when they run out, lingering sockets are given up first, then
 * the listener pauses instead of spinning).
 *
 * Closing: a connection that closes after an answer (a refusal, a body never read,
 * Connection: close) lingers (linger.h): the write side is shut once the answer is
 * written and the client's further input is read and dropped until it closes, within a
 * budget, so that it can read the answer instead of being reset. Lingering sockets are no
 * longer connections: they leave the connection count and have their own bound.
 *
 * Threads: everything runs on the engine's thread, except front_start, front_quiesce
 * (safe from any thread) and front_stop (after the engine stopped).
 *
 * Both front ends: the request path (server.c) sees a client only through the second half
 * of this header: a struct front_client (a connection and its front end's operations) and
 * the struct front_app callbacks, whose results say what the front end does next. This
 * front end's operations are front_native_ops; libmicrohttpd's, for TLS, are in
 * mhd_front.h. */
#ifndef FRONT_H
#define FRONT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http/hreq.h"
#include "http/linger.h"
#include "xg_addrcap.h"
#include "xg_guard.h"
#include "xg_proxy_addr.h"
#include "core/loop.h"

struct front;
struct front_conn;

struct front_header {
    const char *name;
    const char *value;
};

struct front_handler {
    void *cls;
    /* A request head arrived; the body (if any) is not read yet. Returns the handler's
     * request state (kept until on_completed), or NULL to refuse with 500. It may answer
     * at once (front_respond); the body is then not read and, if one was announced, the
     * connection closes after the answer. head stays valid until on_completed. */
    void *(*on_head)(void *cls, struct front_conn *c, const struct hreq *head);
    /* The body arrived (malloc'd, NUL-terminated, owned by the handler; NULL when empty),
     * or too_large when it passed the limit (body NULL). The handler answers now or, after
     * front_resume, from on_resume. */
    void (*on_body)(void *cls, struct front_conn *c, void *req, char *body, size_t len,
                    bool too_large);
    /* front_resume was called for c: answer now. */
    void (*on_resume)(void *cls, struct front_conn *c, void *req);
    /* The request is over: its answer was sent, or the connection ended first. */
    void (*on_completed)(void *cls, void *req);
};

struct front_options {
    struct sockaddr_storage addr; /* IPv4 or IPv6 (xg_bind_addr_parse): one family */
    size_t max_head;              /* request head bytes [16384] */
    size_t max_body;              /* request body bytes */
    long idle_timeout_ms;         /* no activity for this long closes the connection */
    size_t max_connections;       /* per front */
    struct linger_budget linger;  /* for each closing connection */
    size_t max_lingering;         /* sockets lingering at once (> 0) */
    int send_buffer;              /* SO_SNDBUF of each connection; 0: the kernel's autotuning
                                     (which may hold megabytes of an answer unread, out of
                                     reach of guard.send_min_rate) */
    /* A PROXY protocol header (v1 or v2) starts each connection: one from a peer in
     * trusted_proxies names the client (front_client_address); a trusted peer may send
     * none (the balancer's own health check). A connection whose header is malformed, or
     * from an untrusted peer without one, is closed unanswered. */
    bool proxy_protocol;
    struct xg_proxy_trust trusted_proxies; /* copied */
    /* Slow clients (xg_guard.h): a head (and a PROXY header) must complete within
     * guard.header_timeout_ms of its first byte, a body keep guard.body_min_rate; either
     * is answered 408 (a PROXY header is closed unanswered) and counted in counts. */
    struct xg_guard_limits guard;
    /* Connections per client address (xg_addrcap.h; borrowed, shared by the loops; NULL:
     * no cap): one over it is answered 503 at accept, without a read, and counted. */
    struct xg_addrcap *addrcap;
    struct xg_guard_counts *counts; /* borrowed; NULL: not counted */
};

/* Opens the listening socket (SO_REUSEADDR, SO_REUSEPORT) and watches it on loop l.
 * Returns NULL with a message in err. */
__attribute__((warn_unused_result)) struct front *front_start(const struct front_options *opt,
                                                              const struct front_handler *handler,
                                                              struct loop *l, char *err,
                                                              size_t errlen);

/* The host functions the loop runs (loop_attach_host with fd -1). */
void front_run(void *front);
long front_timeout_ms(void *front);

uint16_t front_port(const struct front *f);

/* Stops accepting: the listening socket closes on the engine thread; connections go on. */
void front_quiesce(struct front *f);

/* Closes every connection (on_completed for requests still open) and frees f. Call after
 * the engine thread stopped. NULL is fine. */
void front_stop(struct front *f);

/* Queues the answer to c's current request: status, headers (Content-Length, Date and
 * Connection are added), and body (taken when body_owned: freed with free()). Called from
 * on_head, on_body or on_resume, or at any time on the engine thread after front_resume.
 * Returns false when the answer cannot be built (the connection then closes). */
__attribute__((warn_unused_result)) bool front_respond(struct front_conn *c, unsigned status,
                                                       const struct front_header *headers,
                                                       size_t nheaders, const char *body,
                                                       size_t len, bool body_owned);

/* A streamed answer (text/event-stream): the head goes out now with status and headers,
 * no length and Connection: close; the handler keeps the request and writes to it with
 * front_stream_write until front_stream_end, after which the rest is sent and the
 * connection closes (then on_completed). A client that closes or shuts its side has left:
 * writes fail and front_peer_left says so; the handler still ends the stream. Same
 * calling rules as front_respond; false when c cannot stream now (its client left, out of
 * memory). */
__attribute__((warn_unused_result)) bool front_stream_begin(struct front_conn *c, unsigned status,
                                                            const struct front_header *headers,
                                                            size_t nheaders);
/* Queues len bytes of the stream (copied); false when the client left, the front end is
 * stopping (front_quiesce) or memory ran out: the stream is then over, end it. Engine
 * thread only. */
bool front_stream_write(struct front_conn *c, const char *data, size_t len);
/* Ends the stream: what was written is sent, then the connection closes. */
void front_stream_end(struct front_conn *c);

/* The request's answer is ready: on_resume runs from the engine loop, after the current
 * batch of events (never inside this call). Engine thread only. */
void front_resume(struct front_conn *c);

/* True when c's client closed or shut its side (EOF, reset) since its request came: for a
 * handler that held the request and wonders whether anyone still waits for it. */
bool front_peer_left(const struct front_conn *c);

/* The handler gives up c's current request without an answer (its client left): the
 * connection closes and on_completed runs, from the loop. Same calling rules as
 * front_respond. */
void front_abandon(struct front_conn *c);

/* The peer's IPv4/IPv6 address as text, "" when unknown: the socket's, or the source a
 * trusted balancer's PROXY header named. */
void front_client_address(const struct front_conn *c, char *out, size_t outlen);

/* c's current request head (valid from on_head until on_completed). */
const struct hreq *front_request_head(const struct front_conn *c);

/* ---- either front end, as the request path sees it ------------------------------------ */

/* What a handler did with the request; the front end acts on it. */
enum front_result {
    FRONT_QUEUED, /* an answer was handed to the front end (front_client respond) */
    FRONT_DONE,   /* nothing to send now: the request waits to be resumed, or was a spurious
                   * wake-up */
    FRONT_CLOSE,  /* drop the connection without (more of) an answer */
};

/* The request line and framing, whichever front end parsed them. */
struct front_head {
    const char *path;   /* as sent, not decoded */
    const char *query;  /* after '?', as sent (libmicrohttpd: rebuilt in order); "" if none */
    const char *method; /* e.g. "POST" */
    bool has_length;    /* Content-Length was sent */
    uint64_t content_length;
    bool chunked;         /* Transfer-Encoding: chunked */
    bool expect_continue; /* Expect: 100-continue */
};

/* The operations of one front end on one of its client connections (conn). All on the
 * engine thread, from the app's callbacks or after a resume. */
struct front_ops {
    /* as front_respond; false when the answer could not be built (the connection closes) */
    bool (*respond)(void *conn, unsigned status, const struct front_header *headers,
                    size_t nheaders, const char *body, size_t len, bool body_owned);
    void (*suspend)(void *conn);         /* the request waits: nothing more is read or answered */
    void (*resume)(void *conn);          /* its answer is ready: the app's on_resume runs soon */
    bool (*peer_left)(const void *conn); /* as front_peer_left */
    void (*client_address)(const void *conn, char *out, size_t outlen);
    const char *(*header)(const void *conn, const char *name); /* NULL when absent */
    size_t (*header_count)(const void *conn, const char *name);
    /* every copy of header name joined with ',' (hreq_header_join); false when too long */
    bool (*header_join)(const void *conn, const char *name, char *out, size_t outlen);
    bool (*query_arg)(const void *conn, const char *name, char *out, size_t outlen);
    /* A streamed answer, as front_stream_begin, _write and _end; NULL when this front end
     * cannot stream (the request path then never offers one). */
    bool (*stream_begin)(void *conn, unsigned status, const struct front_header *headers,
                         size_t nheaders);
    bool (*stream_write)(void *conn, const char *data, size_t len);
    void (*stream_end)(void *conn);
};

/* A client connection of either front end. */
struct front_client {
    const struct front_ops *ops;
    void *conn;
};

/* The request path behind a front end. req is the app's request state, from on_head until
 * on_completed. */
struct front_app {
    void *cls;
    /* A head arrived: *req is set to the app's state (NULL: refuse with 500 / close). The
     * app may answer at once (FRONT_QUEUED); the body is then not read. */
    enum front_result (*on_head)(void *cls, struct front_client client,
                                 const struct front_head *head, void **req);
    /* The body arrived (malloc'd, NUL-terminated, taken; NULL when empty), or too_large. */
    enum front_result (*on_body)(void *cls, void *req, char *body, size_t len, bool too_large);
    /* The request was resumed. */
    enum front_result (*on_resume)(void *cls, void *req);
    /* The request is over: answered, or its connection ended first. */
    void (*on_completed)(void *cls, void *req);
};

/* This front end's connections (conn is a struct front_conn), front_native.c. */
extern const struct front_ops front_native_ops;

/* Runs app behind this front end: the front_handler for front_start, its cls being app
 * (which must outlive the front). */
struct front_handler front_native_handler(const struct front_app *app);

#endif
