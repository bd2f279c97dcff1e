/* xg_proxy_admit — see the header. */
#include "xg_proxy_admit.h"

#include <errno.h>
#include <stdio.h>

struct xg_proxy_admit_limits xg_proxy_admit_resolve(const struct xg_proxy_admit_limits *l)
{
    struct xg_proxy_admit_limits r = *l;
    if (r.max_pending == 0)
        r.max_pending = XG_PROXY_PENDING_DEFAULT;
    if (r.reserve > r.max_pending)
        r.reserve = r.max_pending;
    if (r.header_timeout_ms <= 0)
        r.header_timeout_ms = XG_PROXY_HEADER_TIMEOUT_DEFAULT;
    if (r.ipv4_bits <= 0)
        r.ipv4_bits = XG_PROXY_IPV4_BITS_DEFAULT;
    if (r.ipv6_bits <= 0)
        r.ipv6_bits = XG_PROXY_IPV6_BITS_DEFAULT;
    return r;
}

enum xg_proxy_admit_verdict xg_proxy_admit(const struct xg_proxy_admit_limits *l, bool trusted,
                                           const struct xg_proxy_admit_state *s)
{
    if (s->pending >= l->max_pending)
        return XG_PROXY_ADMIT_FULL;
    if (trusted)
        return XG_PROXY_ADMIT_OK;
    if (s->untrusted >= l->max_pending - l->reserve)
        return XG_PROXY_ADMIT_FULL;
    if (l->per_network > 0 && s->network >= l->per_network)
        return XG_PROXY_ADMIT_NETWORK;
    return XG_PROXY_ADMIT_OK;
}

static void clear_past(uint8_t *a, int len, int bits)
{
    for (int i = 0; i < len; i++) {
        int keep = bits - i * 8;
        if (keep < 8)
            a[i] &= keep <= 0 ? 0 : (uint8_t)(0xff << (8 - keep));
    }
}

struct xg_proxy_ip xg_proxy_ip_network(const struct xg_proxy_ip *ip, int ipv4_bits, int ipv6_bits)
{
    struct xg_proxy_ip n = *ip;
    if (n.family == 4)
        clear_past(n.bytes, 4, ipv4_bits < 1 ? 1 : ipv4_bits > 32 ? 32 : ipv4_bits);
    else if (n.family == 6)
        clear_past(n.bytes, 16, ipv6_bits < 1 ? 1 : ipv6_bits > 128 ? 128 : ipv6_bits);
    return n;
}

enum xg_accept_step xg_accept_error(int err)
{
    switch (err) {
    case EINTR:
    case ECONNABORTED:
    case EPROTO:
        return XG_ACCEPT_RETRY;
    case EMFILE:
    case ENFILE:
    case ENOBUFS:
    case ENOMEM:
        return XG_ACCEPT_PAUSE;
    default:
        return XG_ACCEPT_IDLE;
    }
}

bool xg_proxy_settings_check(const char *trusted_proxies, int64_t proxy_reserve,
                             int64_t proxy_max_pending, bool proxy_protocol,
                             struct xg_proxy_trust *trust, char *err, size_t errlen)
{
    char why[160];
    if (!xg_proxy_trust_parse(trusted_proxies, trust, why, sizeof why)) {
        snprintf(err, errlen, "[server] trusted_proxies: %s", why);
        return false;
    }
    if (proxy_reserve >= proxy_max_pending) {
        snprintf(err, errlen, "[server] proxy_reserve: must be less than proxy_max_pending");
        return false;
    }
    if (proxy_protocol && trust->n == 0) {
        snprintf(err, errlen,
                 "[server] proxy_protocol: set trusted_proxies to the balancers "
                 "whose PROXY header is believed");
        return false;
    }
    return true;
}
