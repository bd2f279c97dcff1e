/* upstream — the gateway's engine for calls to monerod nodes (and to billing, for the
 * XMR402 flow): jobs with deadlines, run on one event loop (loop.h) beside the client
 * connections that wait for them.
 *
 * Why this shape. A client request that needs a node is set aside by its front end (a
 * connection waiting on its handler costs one socket and a little request state, not a
 * thread and its stack) and submits a job here; nothing blocks while the node works. The
 * node side is bounded by a per-node connection cap (monerod accepts and then resets
 * connections above its per-IP cap, 25 in Debian's build), and jobs above the cap wait in
 * the engine for a free connection instead of failing. A thread per client connection
 * would instead hold a blocked thread for every in-flight request and open a node
 * connection per thread. Kept-alive connections are reused.
 *
 * Two clients under one interface: nodes over plain HTTP at a numeric address go through
 * nodeconn (our own HTTP/1.1 client; up_nc.h, nodeconn.h); https:// nodes and host names
 * through curl (TLS, asynchronous resolution; up_curl.h). Both share the caps' meaning,
 * the deadlines and the result shape below.
 *
 * Threads. Each engine starts and owns one loop, and so one thread. up_submit may be
 * called from any thread. Every completion callback runs on that loop's thread, one at a
 * time; it must be quick (copy or take the body, wake the client's request) and may call
 * up_submit (a retry on another node), but never up_engine_stop or up_engine_free.
 *
 * Ownership. up_submit copies everything the job points to; the caller may free it as
 * soon as up_submit returns. A result and everything it points to belong to the engine
 * and are valid only during the callback, except a body taken with up_result_take_body,
 * which the caller then owns and frees with free().
 *
 * Requests carry exactly the job's headers plus what HTTP/1.1 framing requires (Host,
 * and Content-Length for POST): no User-Agent, Accept, Expect: 100-continue or form
 * Content-Type of a client library's own, and no Accept-Encoding. Environment proxies
 * are ignored. Redirects are not followed. */
#ifndef UPSTREAM_H
#define UPSTREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "core/loop.h"

struct up_engine;

/* A zero field takes the default in brackets. */
struct up_engine_options {
    /* Connections per node (host:port as spelled in the URL); jobs above it queue inside
     * the engine until one is free [24]. */
    unsigned max_connections_per_node;
    /* Connections to all nodes together, open or idle in the keep-alive cache [256]. */
    unsigned max_total_connections;
    long connect_timeout_ms;   /* TCP (and TLS) connect [3000] */
    const char *ca_file;       /* PEM CAs for https:// nodes; NULL or "": the system's */
    size_t max_response_bytes; /* larger answers fail with UP_TOO_LARGE [64 MiB] */
};

struct up_header {
    const char *name;
    const char *value; /* "" sends the header with an empty value */
};

struct up_result;

/* Built with up_job_init (then up_job_post, up_job_headers); the fields are what
 * up_submit reads. */
struct up_job {
    const char *url;    /* node base URL + path: http://127.0.0.1:18081/json_rpc */
    const char *method; /* "GET" or "POST" */
    const void *body;   /* POST body (binary-safe); may be NULL when body_len is 0 */
    size_t body_len;
    const struct up_header *headers; /* the complete allow-listed set sent to the node */
    size_t nheaders;
    long timeout_ms; /* whole-job deadline from submission, queueing included; > 0 */
    bool verify_tls; /* for https nodes: check certificate and host name */
    void (*on_done)(const struct up_result *res, void *arg);
    void *arg;
};

/* A GET of base + path, joined into url (url_cap bytes, the caller's, valid until
 * up_submit returns), with no body and no headers, TLS verified, timed out after
 * timeout_ms, reported to on_done(res, arg). Returns false when base and path do not fit
 * in url together: a URL cut short is never sent (up_submit refuses that job), the caller
 * answers the failure. */
__attribute__((warn_unused_result)) bool
up_job_init(struct up_job *job, char *url, size_t url_cap, const char *base, const char *path,
            long timeout_ms, void (*on_done)(const struct up_result *, void *), void *arg);

/* Makes job a POST of body (len bytes, binary-safe; NULL when len is 0). */
void up_job_post(struct up_job *job, const void *body, size_t len);

/* The headers sent with job (n of them; the array is the caller's until up_submit). */
void up_job_headers(struct up_job *job, const struct up_header *headers, size_t n);

/* Pure: a job's timeout when its client has left_ms until its own deadline and the call
 * may take cap_ms (> 0) at most: the smaller, and at least 1 ms (a deadline that passed
 * still gets the shortest try, whose failure the caller answers). */
long up_timeout_within(int64_t left_ms, long cap_ms);

enum up_outcome {
    UP_OK,             /* an HTTP answer arrived (any status) */
    UP_CONNECT_ERROR,  /* refused, unreachable, unresolvable, TLS handshake failed */
    UP_TIMEOUT,        /* the job's deadline (or the connect timeout) passed */
    UP_TOO_LARGE,      /* the answer exceeded max_response_bytes */
    UP_PROTOCOL_ERROR, /* reset or closed mid-answer, malformed HTTP, ... */
    UP_CANCELLED,      /* the engine stopped before the job finished */
    UP_INTERNAL_ERROR, /* the engine could not run the job (out of memory) */
};

struct up_result {
    enum up_outcome outcome;
    long http_status; /* 0 when no status line arrived */
    /* Byte-for-byte what the node sent, followed by a NUL not counted in body_len;
     * NULL with body_len 0 unless outcome is UP_OK. */
    const char *body;
    size_t body_len;
    const char *content_type; /* the node's Content-Type (no control characters), or NULL */
    double seconds;           /* from up_submit to completion, queueing included */
    const char *error;        /* why, when outcome != UP_OK; NULL otherwise */
};

/* Starts the engine and its loop's thread. Returns NULL with a message in err on
 * failure. */
struct up_engine *up_engine_start(const struct up_engine_options *opt, char *err, size_t errlen);

/* The engine's loop: where the listener, its sockets and timers that share the engine's
 * thread are watched (loop.h). Valid until up_engine_free. */
struct loop *up_engine_loop(struct up_engine *e);

/* Queues a job (see struct up_job). Returns false, without calling on_done, when the
 * engine is stopping or stopped, when memory runs out, or when the job is malformed
 * (a caller bug: no URL or callback, a method other than GET/POST, timeout_ms <= 0, a
 * CR or LF in a header). Returns true when on_done will be called exactly once. */
__attribute__((warn_unused_result)) bool up_submit(struct up_engine *e, const struct up_job *job);

/* Takes ownership of the result's body (NUL-terminated; free() it), so a large answer
 * can be handed to the client without a copy. Returns NULL when the body is empty or
 * was already taken. Only valid inside on_done. */
char *up_result_take_body(const struct up_result *res);

/* Stops the engine: every job not yet finished gets its callback with UP_CANCELLED, on
 * the loop's thread, then the thread is joined. Later up_submit calls return false.
 * Idempotent. Call it before tearing down the listener whose requests wait on jobs. */
void up_engine_stop(struct up_engine *e);

/* Stops the engine if needed and frees it and its loop. No up_submit may run
 * concurrently. */
void up_engine_free(struct up_engine *e);

/* A short English name of an outcome ("ok", "timeout", ...), for logs and metrics. */
const char *up_outcome_name(enum up_outcome outcome);

#endif
