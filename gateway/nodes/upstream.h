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
 * nodeconn (our own HTTP/1.1 client; up_nc.h, nodeconn.h); https:// nodes, nodes with a
 * login in the URL (`user:pass@`, answered with HTTP Digest: node_url.h) and host names
 * through curl (TLS, Digest, asynchronous resolution; up_curl.h). Both share the caps' meaning,
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
#include "nodes/up_job.h"

struct up_engine;

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

#endif
