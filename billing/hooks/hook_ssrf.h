/* hook_ssrf — which webhook targets billing may connect to, pure: no I/O, no allocation.
 *
 * A webhook URL is chosen by whoever creates an invoice, so without a rule it would let
 * anyone make billing send requests into the operator's own network. The rule, applied to
 * the address a delivery actually connects to (hook_sender checks it in libcurl's
 * open-socket callback, after name resolution on the sender's thread, so a name that
 * resolves to 127.0.0.1 at delivery is refused whatever it resolved to before) and, as an
 * early answer with no resolver call, to a host written as an address at creation
 * (hook_ssrf_url_admit):
 *
 *   an address is refused when it is loopback, private (RFC 1918, IPv6 unique-local and
 *   site-local), link-local, CGNAT (100.64.0.0/10), multicast, unspecified ("this
 *   network" 0.0.0.0/8, ::), broadcast or otherwise reserved (documentation, benchmarking,
 *   IETF protocol assignments, 240.0.0.0/4, IPv4-compatible ::/96, discard 100::/64,
 *   Teredo), unless the operator's allow list ([webhooks] allow, CIDRs) contains it.
 *   IPv4 inside IPv6 is judged as the IPv4 it carries: IPv4-mapped ::ffff:0:0/96 (the
 *   parser maps it already), IPv4-translated ::ffff:0:0:0/96 (SIIT), NAT64 64:ff9b::/96
 *   and 6to4 2002::/16; an ISATAP interface id (…:0:5efe:a.b.c.d, …:200:5efe:…) under an
 *   otherwise public prefix by its IPv4 end when that is not public.
 *
 * The URL's shape (hook_ssrf_url_check): http or https, at most HOOK_SSRF_URL_MAX bytes, a
 * host, no user or password, no white space or control characters. Redirects are never
 * followed, so the rule holds for every request billing sends. */
#ifndef HOOK_SSRF_H
#define HOOK_SSRF_H

#include "xg_proxy_addr.h"

#include <stdbool.h>
#include <stddef.h>

#define HOOK_SSRF_URL_MAX  2048
#define HOOK_SSRF_HOST_MAX 256

enum hook_ssrf_class {
    HOOK_SSRF_PUBLIC,
    HOOK_SSRF_LOOPBACK,
    HOOK_SSRF_PRIVATE,
    HOOK_SSRF_LINK_LOCAL,
    HOOK_SSRF_CGNAT,
    HOOK_SSRF_MULTICAST,
    HOOK_SSRF_UNSPECIFIED,
    HOOK_SSRF_RESERVED,
};

/* The class of an address (family 4 or 6; anything else is HOOK_SSRF_UNSPECIFIED). */
enum hook_ssrf_class hook_ssrf_classify(const struct xg_proxy_ip *ip);

/* "public", "loopback", … for errors and logs. */
const char *hook_ssrf_class_name(enum hook_ssrf_class c);

/* True when a delivery may connect to ip: it is public or the allow list contains it.
 * *why (when not NULL) is set to its class name. */
bool hook_ssrf_allowed(const struct xg_proxy_trust *allow, const struct xg_proxy_ip *ip,
                       const char **why);

/* Checks a webhook URL's shape and copies its host (brackets of an IPv6 literal removed)
 * into host. On false, err says what is wrong. */
__attribute__((warn_unused_result)) bool
hook_ssrf_url_check(const char *url, char *host, size_t hostlen, char *err, size_t errlen);

/* At invoice creation, pure (no resolver call: a name server that never answers must not
 * hold the API): the URL's shape (hook_ssrf_url_check), then a host written as an address
 * (an IP literal, or a legacy IPv4 number such as "2130706433" or "0x7f.1", read as a
 * resolver reads it) must be allowed (hook_ssrf_allowed), and "localhost" or a name under it
 * is loopback. Any other name passes here: its addresses are judged at each delivery, on
 * the address connected to (hook_sender's open-socket check). On false, err says why. */
__attribute__((warn_unused_result)) bool
hook_ssrf_url_admit(const struct xg_proxy_trust *allow, const char *url, char *err, size_t errlen);

#endif
