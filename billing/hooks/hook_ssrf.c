/* hook_ssrf — see hook_ssrf.h. */
#include "hooks/hook_ssrf.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct range {
    uint8_t family;
    uint8_t bytes[16];
    unsigned prefix;
    enum hook_ssrf_class cls;
};

#define V4(a, b, c, d, p, k)                                                                       \
    {                                                                                              \
        4, {a, b, c, d}, p, k                                                                      \
    }

/* The first range that contains an address decides its class; none: public. */
static const struct range v4_ranges[] = {
    V4(0, 0, 0, 0, 8, HOOK_SSRF_UNSPECIFIED),     /* "this network"           */
    V4(10, 0, 0, 0, 8, HOOK_SSRF_PRIVATE),        /* RFC 1918                 */
    V4(100, 64, 0, 0, 10, HOOK_SSRF_CGNAT),       /* RFC 6598                 */
    V4(127, 0, 0, 0, 8, HOOK_SSRF_LOOPBACK),      /*                          */
    V4(169, 254, 0, 0, 16, HOOK_SSRF_LINK_LOCAL), /* cloud metadata lives here */
    V4(172, 16, 0, 0, 12, HOOK_SSRF_PRIVATE),     /* RFC 1918                 */
    V4(192, 0, 0, 0, 24, HOOK_SSRF_RESERVED),     /* IETF protocol assignments */
    V4(192, 0, 2, 0, 24, HOOK_SSRF_RESERVED),     /* TEST-NET-1               */
    V4(192, 88, 99, 0, 24, HOOK_SSRF_RESERVED),   /* 6to4 relay anycast       */
    V4(192, 168, 0, 0, 16, HOOK_SSRF_PRIVATE),    /* RFC 1918                 */
    V4(198, 18, 0, 0, 15, HOOK_SSRF_RESERVED),    /* benchmarking             */
    V4(198, 51, 100, 0, 24, HOOK_SSRF_RESERVED),  /* TEST-NET-2               */
    V4(203, 0, 113, 0, 24, HOOK_SSRF_RESERVED),   /* TEST-NET-3               */
    V4(224, 0, 0, 0, 4, HOOK_SSRF_MULTICAST),     /*                          */
    V4(240, 0, 0, 0, 4, HOOK_SSRF_RESERVED),      /* and 255.255.255.255      */
};

static const struct range v6_ranges[] = {
    {6, {0}, 128, HOOK_SSRF_UNSPECIFIED},                             /* ::          */
    {6, {[15] = 1}, 128, HOOK_SSRF_LOOPBACK},                         /* ::1         */
    {6, {0}, 96, HOOK_SSRF_RESERVED},                                 /* ::/96 compat */
    {6, {0x01, 0x00}, 64, HOOK_SSRF_RESERVED},                        /* 100::/64    */
    {6, {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48, HOOK_SSRF_PRIVATE}, /* local NAT64 */
    {6, {0x20, 0x01, 0x00, 0x00}, 32, HOOK_SSRF_RESERVED},            /* Teredo      */
    {6, {0x20, 0x01, 0x0d, 0xb8}, 32, HOOK_SSRF_RESERVED},            /* documentation */
    {6, {0xfc}, 7, HOOK_SSRF_PRIVATE},                                /* unique-local */
    {6, {0xfe, 0x80}, 10, HOOK_SSRF_LINK_LOCAL},                      /*             */
    {6, {0xfe, 0xc0}, 10, HOOK_SSRF_PRIVATE},                         /* site-local  */
    {6, {0xff}, 8, HOOK_SSRF_MULTICAST},                              /*             */
};

static bool in_range(const struct xg_proxy_ip *ip, const struct range *r)
{
    unsigned full = r->prefix / 8, rest = r->prefix % 8;
    if (memcmp(ip->bytes, r->bytes, full) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (ip->bytes[full] & mask) == (r->bytes[full] & mask);
}

static enum hook_ssrf_class classify_in(const struct xg_proxy_ip *ip, const struct range *t,
                                        size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (in_range(ip, &t[i]))
            return t[i].cls;
    return HOOK_SSRF_PUBLIC;
}

/* The IPv4 address an IPv6 one carries as its destination (mapped ::ffff:0:0/96, translated
 * ::ffff:0:0:0/96 of SIIT, NAT64 64:ff9b::/96, 6to4 2002::/16); false when none. */
static bool embedded_v4(const struct xg_proxy_ip *ip, struct xg_proxy_ip *v4)
{
    static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
    static const uint8_t translated[12] = {[8] = 0xff, [9] = 0xff};
    static const uint8_t nat64[12] = {0x00, 0x64, 0xff, 0x9b};
    const uint8_t *src = NULL;
    if (memcmp(ip->bytes, mapped, 12) == 0 || memcmp(ip->bytes, translated, 12) == 0 ||
        memcmp(ip->bytes, nat64, 12) == 0)
        src = ip->bytes + 12;
    else if (ip->bytes[0] == 0x20 && ip->bytes[1] == 0x02)
        src = ip->bytes + 2;
    if (!src)
        return false;
    *v4 = (struct xg_proxy_ip){.family = 4};
    memcpy(v4->bytes, src, 4);
    return true;
}

/* The IPv4 tunnel end an ISATAP interface id names (<prefix>:0:5efe:a.b.c.d, or 200:5efe
 * with the universal bit); false when the id is no ISATAP one. */
static bool isatap_v4(const struct xg_proxy_ip *ip, struct xg_proxy_ip *v4)
{
    if ((ip->bytes[8] & ~0x02) != 0 || ip->bytes[9] != 0 || ip->bytes[10] != 0x5e ||
        ip->bytes[11] != 0xfe)
        return false;
    *v4 = (struct xg_proxy_ip){.family = 4};
    memcpy(v4->bytes, ip->bytes + 12, 4);
    return true;
}

enum hook_ssrf_class hook_ssrf_classify(const struct xg_proxy_ip *ip)
{
    static const size_t nv4 = sizeof v4_ranges / sizeof v4_ranges[0];
    if (ip->family == 4)
        return classify_in(ip, v4_ranges, nv4);
    if (ip->family != 6)
        return HOOK_SSRF_UNSPECIFIED;
    struct xg_proxy_ip v4;
    if (embedded_v4(ip, &v4))
        return classify_in(&v4, v4_ranges, nv4);
    enum hook_ssrf_class c = classify_in(ip, v6_ranges, sizeof v6_ranges / sizeof v6_ranges[0]);
    /* a public prefix does not make the IPv4 end of an ISATAP tunnel public */
    if (c == HOOK_SSRF_PUBLIC && isatap_v4(ip, &v4))
        return classify_in(&v4, v4_ranges, nv4);
    return c;
}

const char *hook_ssrf_class_name(enum hook_ssrf_class c)
{
    switch (c) {
    case HOOK_SSRF_PUBLIC:
        return "public";
    case HOOK_SSRF_LOOPBACK:
        return "loopback";
    case HOOK_SSRF_PRIVATE:
        return "private";
    case HOOK_SSRF_LINK_LOCAL:
        return "link-local";
    case HOOK_SSRF_CGNAT:
        return "CGNAT";
    case HOOK_SSRF_MULTICAST:
        return "multicast";
    case HOOK_SSRF_UNSPECIFIED:
        return "unspecified";
    case HOOK_SSRF_RESERVED:
        return "reserved";
    }
    return "unknown";
}

bool hook_ssrf_allowed(const struct xg_proxy_trust *allow, const struct xg_proxy_ip *ip,
                       const char **why)
{
    enum hook_ssrf_class c = hook_ssrf_classify(ip);
    if (why)
        *why = hook_ssrf_class_name(c);
    if (ip->family != 4 && ip->family != 6)
        return false;
    if (allow && xg_proxy_trusted(allow, ip))
        return true;
    return c == HOOK_SSRF_PUBLIC;
}

static bool fail(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "webhook_url %s", what);
    return false;
}

bool hook_ssrf_url_check(const char *url, char *host, size_t hostlen, char *err, size_t errlen)
{
    size_t n = strlen(url);
    if (n > HOOK_SSRF_URL_MAX)
        return fail(err, errlen, "is too long");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)url[i] <= 0x20 || (unsigned char)url[i] == 0x7f)
            return fail(err, errlen, "must not contain white space or control characters");
    const char *rest;
    if (strncasecmp(url, "https://", 8) == 0)
        rest = url + 8;
    else if (strncasecmp(url, "http://", 7) == 0)
        rest = url + 7;
    else
        return fail(err, errlen, "must be an http:// or https:// URL");
    size_t auth = strcspn(rest, "/?#");
    if (memchr(rest, '@', auth))
        return fail(err, errlen, "must not carry a user or password");
    const char *h = rest, *end;
    if (*h == '[') {
        end = memchr(h, ']', auth);
        if (!end)
            return fail(err, errlen, "has an unterminated IPv6 literal");
        h++;
        if (end[1] != ':' && end + 1 != rest + auth)
            return fail(err, errlen, "has junk after its IPv6 literal");
    } else {
        end = memchr(h, ':', auth);
        if (!end)
            end = rest + auth;
    }
    size_t hl = (size_t)(end - h);
    if (hl == 0)
        return fail(err, errlen, "has no host");
    if (hl >= hostlen || hl >= HOOK_SSRF_HOST_MAX)
        return fail(err, errlen, "has a host name that is too long");
    memcpy(host, h, hl);
    host[hl] = '\0';
    return true;
}

/* The address a host written as a number denotes, as a resolver would read it: an IP
 * literal, or the legacy IPv4 forms inet_aton takes ("2130706433", "0x7f.1", "127.1"). */
static bool host_literal(const char *host, struct xg_proxy_ip *ip)
{
    if (xg_proxy_ip_parse(host, strlen(host), ip))
        return true;
    struct in_addr a;
    if (inet_aton(host, &a) != 1)
        return false;
    *ip = (struct xg_proxy_ip){.family = 4};
    memcpy(ip->bytes, &a.s_addr, 4);
    return true;
}

/* "localhost" and names under it (RFC 6761: always loopback), with or without the root dot. */
static bool loopback_name(const char *host)
{
    size_t n = strlen(host);
    if (n > 0 && host[n - 1] == '.')
        n--;
    static const char name[] = "localhost";
    const size_t k = sizeof name - 1;
    if (n < k || strncasecmp(host + n - k, name, k) != 0)
        return false;
    return n == k || host[n - k - 1] == '.';
}

bool hook_ssrf_url_admit(const struct xg_proxy_trust *allow, const char *url, char *err,
                         size_t errlen)
{
    char host[HOOK_SSRF_HOST_MAX];
    if (!hook_ssrf_url_check(url, host, sizeof host, err, errlen))
        return false;
    struct xg_proxy_ip ip;
    const char *why;
    if (host_literal(host, &ip)) {
        if (hook_ssrf_allowed(allow, &ip, &why))
            return true;
        snprintf(err, errlen, "webhook_url points at a %s address", why);
        return false;
    }
    if (loopback_name(host)) {
        ip = (struct xg_proxy_ip){.family = 4, .bytes = {127, 0, 0, 1}};
        if (hook_ssrf_allowed(allow, &ip, &why))
            return true;
        snprintf(err, errlen, "webhook_url names a loopback host");
        return false;
    }
    return true; /* a name: judged by the addresses it has when a delivery connects */
}
