/* xg_addrcap — the per-address connection cap: how many connections one client address
 * may hold open at once on a listener, and which address a connection counts against.
 *
 * The rule (xg_addrcap_key, pure): a peer outside trusted_proxies counts as itself. A
 * trusted peer (a load balancer) stands for many clients: with the PROXY protocol it
 * counts as the client its header names, once the header is read, and as nobody when the
 * header names none (the balancer's own health check); without the PROXY protocol it is
 * exempt (its requests name their clients in X-Forwarded-For, one request at a time, not
 * per connection).
 *
 * The table (xg_addrcap_new): counts per address, shared by every thread of a daemon's
 * listener (the gateway's loops, libmicrohttpd's workers) under one mutex held for a hash
 * lookup. Each entry lives while its address holds a connection. */
#ifndef XG_ADDRCAP_H
#define XG_ADDRCAP_H

#include <stdbool.h>
#include <stddef.h>

#include "xg_proxy_addr.h"

#define XG_ADDRCAP_DEFAULT 64

enum xg_addrcap_key_kind {
    XG_ADDRCAP_COUNT,  /* counts against *key */
    XG_ADDRCAP_EXEMPT, /* counts against nobody */
    XG_ADDRCAP_LATER,  /* a trusted peer's PROXY header will say (ask again with it) */
};

/* Which address a connection counts against. peer: the socket's. proxy_protocol: the
 * listener expects a PROXY header. named: NULL while that header is not read; then the
 * source it gave (family 0: none). */
enum xg_addrcap_key_kind xg_addrcap_key(const struct xg_proxy_trust *trust,
                                        const struct xg_proxy_ip *peer, bool proxy_protocol,
                                        const struct xg_proxy_ip *named, struct xg_proxy_ip *key);

struct xg_addrcap;

/* A table allowing cap connections per address (cap 0: no cap; xg_addrcap_acquire then
 * always succeeds). NULL when out of memory. */
struct xg_addrcap *xg_addrcap_new(size_t cap);
void xg_addrcap_free(struct xg_addrcap *t);

/* Takes one of ip's places: false when ip holds cap already (or memory ran out), and then
 * nothing is taken. Thread-safe. t NULL: always true. */
__attribute__((warn_unused_result)) bool xg_addrcap_acquire(struct xg_addrcap *t,
                                                            const struct xg_proxy_ip *ip);

/* True when ip holds fewer than cap: a cheap look before a connection is set up (the
 * acquire still decides). */
bool xg_addrcap_has_room(struct xg_addrcap *t, const struct xg_proxy_ip *ip);

/* Gives back a place xg_addrcap_acquire took. Thread-safe. */
void xg_addrcap_release(struct xg_addrcap *t, const struct xg_proxy_ip *ip);

/* Connections ip holds now (for tests and the admin view). */
size_t xg_addrcap_held(struct xg_addrcap *t, const struct xg_proxy_ip *ip);

#endif
