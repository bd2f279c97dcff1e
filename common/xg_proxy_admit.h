/* xg_proxy_admit — who takes a place in a PROXY-protocol reader (xg_mhd_proxy.h), and
 * what an accept error means for its listener. Pure: no I/O, no allocation.
 *
 * A connection waits in the reader from accept until its PROXY header is read, at most
 * header_timeout_ms (short: a balancer sends the header at connect). The places are
 * shared so that nobody can fill them:
 *   - a peer in trusted_proxies (the balancer) may take any of max_pending places;
 *   - other peers together take at most max_pending - reserve: the reserve stays free for
 *     the balancer whatever they do;
 *   - one untrusted network (its address cut to ipv4_bits or ipv6_bits, the [clients]
 *     rule: an IPv4 address, an IPv6 /64) holds at most per_network of them.
 * The balancer is not counted by network: it carries everybody's connections, and each
 * one counts against the client its header names once libmicrohttpd has it
 * (xg_mhd_guard.h). */
#ifndef XG_PROXY_ADMIT_H
#define XG_PROXY_ADMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xg_proxy_addr.h"

#define XG_PROXY_PENDING_DEFAULT        1024
#define XG_PROXY_RESERVE_DEFAULT        128
#define XG_PROXY_HEADER_TIMEOUT_DEFAULT 2000 /* ms */
#define XG_PROXY_IPV4_BITS_DEFAULT      32
#define XG_PROXY_IPV6_BITS_DEFAULT      64

struct xg_proxy_admit_limits {
    size_t max_pending;        /* places in the reader; 0: XG_PROXY_PENDING_DEFAULT */
    size_t reserve;            /* of those, kept for trusted peers (at most max_pending) */
    size_t per_network;        /* places one untrusted network holds; 0: no such cap */
    int64_t header_timeout_ms; /* a header complete this long after accept; 0: default */
    int ipv4_bits, ipv6_bits;  /* an untrusted peer's network; 0: 32 and 64 */
};

/* The limits with every 0 replaced by its default (and reserve cut to max_pending). */
struct xg_proxy_admit_limits xg_proxy_admit_resolve(const struct xg_proxy_admit_limits *l);

/* What the reader holds when a connection arrives: every pending connection, the
 * untrusted ones, and the ones of the newcomer's network (untrusted only). */
struct xg_proxy_admit_state {
    size_t pending, untrusted, network;
};

enum xg_proxy_admit_verdict {
    XG_PROXY_ADMIT_OK,
    XG_PROXY_ADMIT_FULL,    /* no place left for this kind of peer: close it */
    XG_PROXY_ADMIT_NETWORK, /* its network holds per_network already: close it */
};

/* The verdict for a newcomer (trusted: its peer is in trusted_proxies), l resolved. */
enum xg_proxy_admit_verdict xg_proxy_admit(const struct xg_proxy_admit_limits *l, bool trusted,
                                           const struct xg_proxy_admit_state *s);

/* The network an address counts as: ip with every bit past ipv4_bits (an IPv4 address,
 * 1..32) or ipv6_bits (1..128) cleared; bits out of range are clamped. */
struct xg_proxy_ip xg_proxy_ip_network(const struct xg_proxy_ip *ip, int ipv4_bits, int ipv6_bits);

enum xg_accept_step {
    XG_ACCEPT_RETRY, /* the call was interrupted or the peer gave up: accept again now */
    XG_ACCEPT_IDLE,  /* nothing is waiting (or an error the next readiness retries) */
    XG_ACCEPT_PAUSE, /* out of descriptors or memory: the listener stays readable, so stop
                      * watching it for XG_ACCEPT_PAUSE_MS or until a connection closes */
};
#define XG_ACCEPT_PAUSE_MS 100

/* What accept4's errno means for a level-triggered listener. */
enum xg_accept_step xg_accept_error(int err);

/* The [server] PROXY settings both daemons share, checked together: trusted_proxies parsed
 * into *trust, proxy_reserve below proxy_max_pending, and proxy_protocol only with a trusted
 * balancer. On false, err names the key and what is wrong. */
__attribute__((warn_unused_result)) bool
xg_proxy_settings_check(const char *trusted_proxies, int64_t proxy_reserve,
                        int64_t proxy_max_pending, bool proxy_protocol,
                        struct xg_proxy_trust *trust, char *err, size_t errlen);

#endif
