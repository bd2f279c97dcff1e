/* xg_proxy_addr — which address a request comes from when the daemons sit behind a load
 * balancer: the trusted_proxies list (IPv4 and IPv6 CIDRs), the PROXY protocol header a
 * balancer sends before the HTTP bytes (HAProxy's proxy-protocol.txt, versions 1 and 2),
 * and the client address chosen from the socket peer and X-Forwarded-For. Pure: no I/O,
 * no allocation; both daemons' front ends call it and answer per-client limits with what
 * it returns.
 *
 * The rule: an address is believed only from a peer in trusted_proxies. A PROXY header's
 * source replaces the socket peer when the socket peer is trusted; X-Forwarded-For is then
 * read from the right, skipping trusted hops, and its rightmost untrusted address is the
 * client (every hop in it trusted: its leftmost). A peer outside the list is the client,
 * whatever it sends. */
#ifndef XG_PROXY_ADDR_H
#define XG_PROXY_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XG_PROXY_MAX_CIDRS 32
/* Text of an address (INET6_ADDRSTRLEN, plus room for what a caller writes itself). */
#define XG_PROXY_ADDR_TEXT 48
/* A version 1 header, "PROXY ... \r\n" included, is at most this long (the spec's bound). */
#define XG_PROXY_V1_MAX 107
/* Version 2: the 16-byte fixed part, then up to 65535 bytes of addresses and TLVs. */
#define XG_PROXY_V2_FIXED 16

/* An IPv4 (family 4, bytes[0..4)) or IPv6 (family 6, bytes[0..16)) address. An IPv4-mapped
 * IPv6 address (::ffff:a.b.c.d) is kept as the IPv4 address it maps. */
struct xg_proxy_ip {
    uint8_t family; /* 0 = none, 4, 6 */
    uint8_t bytes[16];
};

struct xg_proxy_cidr {
    struct xg_proxy_ip net;
    unsigned prefix; /* 0..32 or 0..128 */
};

/* The trusted_proxies list, parsed. Empty: nobody is trusted (the socket peer is the
 * client). */
struct xg_proxy_trust {
    size_t n;
    struct xg_proxy_cidr cidr[XG_PROXY_MAX_CIDRS];
};

/* Parses an address literal ("192.0.2.1", "2001:db8::1", "::ffff:192.0.2.1"); surrounding
 * spaces are not allowed. */
__attribute__((warn_unused_result)) bool xg_proxy_ip_parse(const char *text, size_t len,
                                                           struct xg_proxy_ip *out);
struct sockaddr;
/* The address of an AF_INET or AF_INET6 socket address (false, family 0, for others). */
bool xg_proxy_ip_from_sockaddr(const struct sockaddr *sa, struct xg_proxy_ip *out);

struct sockaddr_storage;
/* The socket address a listener binds to, from its [server] bind text ("127.0.0.1",
 * "::1", "::") and port; returns its length, 0 when text is no IPv4 or IPv6 literal. Both
 * daemons listen on one family per listener: an IPv6 address (:: too) on IPv6 alone. */
unsigned xg_bind_addr_parse(const char *text, uint16_t port, struct sockaddr_storage *out);
/* The length of an AF_INET or AF_INET6 socket address (0 for another family). */
unsigned xg_sockaddr_len(const struct sockaddr_storage *a);
/* Its port, in host order (0 for another family). */
uint16_t xg_sockaddr_port(const struct sockaddr_storage *a);

/* The address as text into out (at least XG_PROXY_ADDR_TEXT bytes); "" when none. */
void xg_proxy_ip_format(const struct xg_proxy_ip *ip, char *out, size_t outlen);

/* Parses a trusted_proxies value: CIDRs or bare addresses (a host), separated by commas
 * and/or spaces; "" is the empty list; at most XG_PROXY_MAX_CIDRS entries. A CIDR with bits
 * set past its prefix ("10.0.0.1/8") is refused, as it is most likely a typo. On false,
 * err says which entry and *out is the empty list. */
__attribute__((warn_unused_result)) bool
xg_proxy_trust_parse(const char *text, struct xg_proxy_trust *out, char *err, size_t errlen);
bool xg_proxy_trusted(const struct xg_proxy_trust *t, const struct xg_proxy_ip *ip);

enum xg_proxy_header_result {
    XG_PROXY_HEADER_INCOMPLETE, /* the bytes so far can still become a header: read more */
    XG_PROXY_HEADER_OK,         /* a whole header of header.len bytes */
    XG_PROXY_HEADER_INVALID,    /* not a PROXY header, or a malformed one: refuse the peer */
};

struct xg_proxy_header {
    bool signature; /* a whole signature ("PROXY " or v2's 12 bytes) came, even if INVALID
                     * follows: a malformed header, not another protocol */
    size_t len;     /* bytes of the header, to skip before the HTTP request */
    int version;    /* 1 or 2 */
    /* The balancer's client: set for a PROXY command over TCP or UDP on IPv4 or IPv6.
     * Unset (family 0) for v2 LOCAL (the balancer's own health check), v1 UNKNOWN and the
     * v2 families the gateway has no use for (AF_UNIX, AF_UNSPEC): the socket peer then
     * stands for itself. */
    struct xg_proxy_ip source;
};

/* Reads a PROXY header at the start of buf[0..len). Version 1: "PROXY TCP4|TCP6 src dst
 * sport dport\r\n" (single spaces, addresses of the named family, ports 0..65535 without
 * leading zeros) or "PROXY UNKNOWN...\r\n", at most XG_PROXY_V1_MAX bytes. Version 2: the
 * 12-byte signature, version 2, command LOCAL or PROXY, a family byte, the length; an
 * IPv4 or IPv6 block shorter than its addresses is invalid; TLVs after the addresses are
 * skipped unread. max_len bounds a version 2 header (its length field allows 65551
 * bytes): a longer one is INVALID. A prefix of either signature is INCOMPLETE; anything
 * else INVALID at once. */
enum xg_proxy_header_result xg_proxy_header_parse(const void *buf, size_t len, size_t max_len,
                                                  struct xg_proxy_header *out);

/* What a listener with the PROXY protocol does with the bytes a connection opened with
 * (buf[0..len), read without consuming them): the rule of every such listener. peer is the
 * socket's. */
enum xg_proxy_opening_verdict {
    XG_PROXY_OPENING_WAIT,   /* too few bytes yet: wait for more (within header_timeout) */
    XG_PROXY_OPENING_PASS,   /* skip `skip` bytes; the connection is from `client` */
    XG_PROXY_OPENING_REFUSE, /* close unanswered: malformed, too long, or an untrusted peer
                              * without a header */
};
struct xg_proxy_opening {
    size_t skip;               /* the header's bytes (0: a trusted peer speaking HTTP) */
    struct xg_proxy_ip client; /* a trusted peer's named client, else the peer itself */
    struct xg_proxy_ip named;  /* what a trusted peer's header named (family 0: none) */
    int version;               /* 1, 2, or 0 when there was no header */
};
/* A trusted peer's header names the client (v2 LOCAL and v1 UNKNOWN name none: the peer
 * stands for itself); a trusted peer may omit the header (a balancer's health check); an
 * untrusted peer must send one, whose addresses are ignored. max_len bounds a header. */
enum xg_proxy_opening_verdict xg_proxy_opening_read(const struct xg_proxy_trust *t,
                                                    const struct xg_proxy_ip *peer, const void *buf,
                                                    size_t len, size_t max_len,
                                                    struct xg_proxy_opening *out);

/* The client address of a request into out (XG_PROXY_ADDR_TEXT bytes): peer is the
 * connection's peer (the socket's, or a trusted PROXY header's source), xff the request's
 * X-Forwarded-For values joined with ',' in the order they came (NULL or "" when none).
 * An entry of xff that is no address ends the walk: the hop to its right is the client.
 * Returns false (out "") when peer is unset. */
bool xg_proxy_client_addr(const struct xg_proxy_trust *t, const struct xg_proxy_ip *peer,
                          const char *xff, char *out, size_t outlen);

/* Appends value (n bytes) to the ','-joined list in out (cap >= 2 bytes, *len its length,
 * NUL-terminated), as X-Forwarded-For values are joined for xg_proxy_client_addr. A list
 * too long for out keeps its tail: the hops nearest us, which the balancers wrote and the
 * walk reads first; its leftmost entries go, the first one kept too (the cut may fall in
 * it), so what is left holds only whole entries (none when the last entry alone is too
 * long). Dropping the left can only
 * stop the walk earlier at an entry the client wrote, never make the client a balancer.
 * Returns false when something was dropped. */
bool xg_proxy_list_append(char *out, size_t cap, size_t *len, const char *value, size_t n);

#endif
