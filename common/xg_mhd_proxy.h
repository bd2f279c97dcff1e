/* xg_mhd_proxy — the PROXY protocol (v1 and v2) in front of a libmicrohttpd daemon:
 * billing's API (xg_httpd.c) and the gateway's TLS front end (mhd_front.c).
 *
 * libmicrohttpd reads its connections itself and knows no PROXY header, so with
 * proxy_protocol on the daemon runs without a listening socket of its own and this module
 * owns it: a thread accepts, reads the opening bytes without consuming them, applies the
 * one rule every PROXY listener follows (xg_proxy_opening_read: a trusted balancer's
 * header names the client, a trusted peer may omit it, an untrusted peer must send one, a
 * malformed one is refused), skips the header and hands the socket to its owner with the
 * client's address, which libmicrohttpd then reports as the connection's (so
 * X-Forwarded-For handling, the per-client limits and the address cap all see the real
 * client). A refused connection is closed unanswered, as the spec asks; one whose header
 * is not complete within limits.header_timeout_ms likewise (counted as a header timeout).
 *
 * Hostile peers (xg_proxy_admit.h): at accept, an untrusted peer takes a place only if
 * its network holds fewer than limits.per_network and the untrusted places
 * (max_pending - reserve) are not all taken, so the balancer always finds room (a refusal
 * is counted as over_address_cap or proxy_full). When accept4 runs out of descriptors
 * (EMFILE, ENFILE) or memory, the listener is left unwatched for XG_ACCEPT_PAUSE_MS, or
 * until a waiting connection goes, instead of waking the thread again at once.
 *
 * Threads: one of its own; hand runs on it (MHD_add_connection is safe there for a daemon
 * with an internal thread and MHD_USE_ITC; an externally run daemon queues the socket to
 * its own thread). */
#ifndef XG_MHD_PROXY_H
#define XG_MHD_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "xg_guard.h"
#include "xg_proxy_addr.h"
#include "xg_proxy_admit.h"

/* The socket (non-blocking, header skipped) and the client's address, owned by the callee
 * from now on. */
typedef void (*xg_mhd_proxy_hand_fn)(void *ctx, int fd, const struct sockaddr *addr,
                                     socklen_t addrlen);

struct xg_mhd_proxy_options {
    const struct sockaddr *addr; /* where to listen */
    socklen_t addrlen;
    bool reuse_port;                     /* SO_REUSEPORT: several listeners on one port */
    const struct xg_proxy_trust *trust;  /* copied */
    struct xg_proxy_admit_limits limits; /* 0s: the defaults (xg_proxy_admit_resolve) */
    struct xg_guard_counts *counts;      /* borrowed; NULL: not counted */
    xg_mhd_proxy_hand_fn hand;
    void *ctx;
};

struct xg_mhd_proxy;

/* Listens and starts the thread; NULL with err filled on failure. */
struct xg_mhd_proxy *xg_mhd_proxy_start(const struct xg_mhd_proxy_options *opt, char *err,
                                        size_t errlen);
uint16_t xg_mhd_proxy_port(const struct xg_mhd_proxy *p);
/* Stops accepting at once (the listening socket refuses new clients); connections still
 * reading their header finish or time out. */
void xg_mhd_proxy_quiesce(struct xg_mhd_proxy *p);
/* Joins the thread and closes what it still holds. NULL is fine. */
void xg_mhd_proxy_stop(struct xg_mhd_proxy *p);

#endif
