/* mhd_front — libmicrohttpd as a front end for the request path (front.h): the gateway's
 * HTTPS listener, and plain HTTP with [server] front_end = libmicrohttpd. It is the only
 * file of the request path that speaks libmicrohttpd: it runs a daemon in external-loop
 * mode on one event loop's thread (its epoll descriptor in the loop's set,
 * loop_attach_host), turns libmicrohttpd's access and completion callbacks into the
 * struct front_app calls, and offers its connections as struct front_ops.
 *
 * Why the plain-HTTP mode stays: the integration tests hold this adapter to the own front
 * end's answers byte by byte (tests/integration/test_gateway_front.sh) and run held
 * requests through it (test_limits_burst.sh); their raw-socket clients cannot speak TLS,
 * and without it what HTTPS clients get would be tested only through curl.
 *
 * What it adds to libmicrohttpd: the body is gathered up to max_body (beyond: too_large);
 * a waiting request suspends its connection (MHD_suspend_connection) and a resume takes it
 * back on the next run; the request target is matched as sent (no percent-decoding, as
 * monerod); and a lingering close (linger.h) of every socket libmicrohttpd closes, on a
 * duplicate of its descriptor, so that a client still sending can read its answer; and
 * the slow-client rule and the per-address cap (xg_mhd_guard.h: a slow head or body is
 * closed without a 408, which libmicrohttpd cannot send from outside its callbacks).
 *
 * Threads: the app's callbacks and every front_ops call run on the loop's thread;
 * mhd_front_start and mhd_front_quiesce from any thread; mhd_front_stop after the loop
 * stopped. */
#ifndef MHD_FRONT_H
#define MHD_FRONT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/loop.h"
#include "http/front.h"
#include "http/tls_cert.h"
#include "xg_proxy_admit.h"

struct mhd_front;

struct mhd_front_options {
    struct sockaddr_storage addr; /* IPv4 or IPv6 (xg_bind_addr_parse): one family */
    const char *name;             /* addr as the operator wrote it, for the error message */
    /* HTTPS with the certificate in service (tls_cert.h), borrowed while the daemon runs;
     * NULL: plain HTTP */
    const struct tls_cert *tls;
    long connection_timeout_s;
    unsigned max_connections;
    size_t max_head; /* libmicrohttpd's connection memory: the request head */
    size_t max_body;
    struct xg_guard_limits guard;       /* as front_options.guard */
    struct xg_addrcap *addrcap;         /* as front_options.addrcap */
    struct xg_guard_counts *counts;     /* as front_options.counts */
    const struct xg_proxy_trust *trust; /* trusted_proxies (copied) */
    /* Each connection starts with a PROXY header (before TLS), read by xg_mhd_proxy.h on a
     * thread of its own; the socket then reaches the daemon on the loop's thread with the
     * client's address. */
    bool proxy_protocol;
    struct xg_proxy_admit_limits proxy; /* its places and header deadline (0s: defaults) */
};

/* Starts the daemon on addr (SO_REUSEPORT) and hands it to loop l; app (copied) gets the
 * requests. Returns NULL with a message in err. */
__attribute__((warn_unused_result)) struct mhd_front *
mhd_front_start(const struct mhd_front_options *opt, const struct front_app *app, struct loop *l,
                char *err, size_t errlen);

uint16_t mhd_front_port(const struct mhd_front *m);

/* Stops accepting; connections go on. */
void mhd_front_quiesce(struct mhd_front *m);

/* Stops the daemon (libmicrohttpd must not stop with suspended connections: resume every
 * waiting request first) and frees m. Call after the engine stopped. NULL is fine. */
void mhd_front_stop(struct mhd_front *m);

#endif
