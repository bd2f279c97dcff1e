/* xg_mhd_guard — the slow-client rule (xg_guard.h) and the per-address cap (xg_addrcap.h)
 * on a libmicrohttpd daemon: the gateway's TLS front end (mhd_front.c) and billing's API
 * (xg_httpd.c).
 *
 * libmicrohttpd resets its own connection timeout on every byte and has no header
 * timeout, and it owns its sockets. So this module keeps a record per connection
 * (libmicrohttpd's socket context), is told where the connection is from the daemon's
 * callbacks, and closes an offender by shutting its socket down (libmicrohttpd then reads
 * the end and closes it itself; its closing notification removes the record first, so a
 * descriptor is never touched after libmicrohttpd closed it). No 408 is sent here: the
 * daemon answers only from its own callbacks.
 *
 * libmicrohttpd does not tell when a head's first byte arrives: the head's clock starts
 * at accept, and on a kept-alive connection after the previous request with the idle
 * timeout added (the idle timeout itself is libmicrohttpd's, unchanged).
 *
 * The cap: libmicrohttpd's accept policy refuses an address that holds its cap already,
 * before any memory is spent; the connection's start takes the place (and shuts a
 * connection that lost a race for the last one); its close gives it back. A
 * trusted_proxies peer is exempt; with proxy_protocol (xg_mhd_proxy.h) libmicrohttpd
 * reports the client a balancer's PROXY header named instead of the balancer, and that
 * client counts (a header naming none leaves the balancer, exempt).
 *
 * Threads: every entry point is thread-safe (one mutex, held for a list walk at most);
 * xg_mhd_guard_sweep runs on whichever thread the caller ticks it from. */
#ifndef XG_MHD_GUARD_H
#define XG_MHD_GUARD_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "xg_addrcap.h"
#include "xg_guard.h"
#include "xg_proxy_addr.h"

struct xg_mhd_guard_options {
    struct xg_guard_limits limits;
    int64_t idle_timeout_ms;            /* libmicrohttpd's connection timeout */
    struct xg_addrcap *addrcap;         /* borrowed; NULL: no cap */
    const struct xg_proxy_trust *trust; /* copied; NULL: nobody is trusted */
    struct xg_guard_counts *counts;     /* borrowed; NULL: not counted */
};

struct xg_mhd_guard;

/* NULL when out of memory. */
struct xg_mhd_guard *xg_mhd_guard_new(const struct xg_mhd_guard_options *opt);

/* After MHD_stop_daemon (every connection closed). NULL is fine. */
void xg_mhd_guard_free(struct xg_mhd_guard *g);

/* libmicrohttpd's MHD_AcceptPolicyCallback, cls the guard. */
enum MHD_Result xg_mhd_guard_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen);

/* From the daemon's MHD_OPTION_NOTIFY_CONNECTION callback. */
void xg_mhd_guard_connection(struct xg_mhd_guard *g, struct MHD_Connection *conn,
                             void **socket_context, enum MHD_ConnectionNotificationCode code);

/* From the access handler: the head arrived (its body follows when body), n body bytes
 * came, the body is complete (the handler has the request), the request is over
 * (MHD_OPTION_NOTIFY_COMPLETED: the next head's clock starts). */
void xg_mhd_guard_head(struct xg_mhd_guard *g, struct MHD_Connection *conn, bool body);
void xg_mhd_guard_body(struct xg_mhd_guard *g, struct MHD_Connection *conn, size_t n);
void xg_mhd_guard_handled(struct xg_mhd_guard *g, struct MHD_Connection *conn);
void xg_mhd_guard_completed(struct xg_mhd_guard *g, struct MHD_Connection *conn);

/* Closes the connections the rule condemns now; returns the milliseconds until the next
 * is due (-1: none is being timed). */
long xg_mhd_guard_sweep(struct xg_mhd_guard *g);

/* True when the request head on conn says a body follows (Content-Length > 0 or
 * Transfer-Encoding). */
bool xg_mhd_guard_expects_body(struct MHD_Connection *conn);

#endif
