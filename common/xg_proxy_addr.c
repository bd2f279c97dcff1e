/* xg_proxy_addr — trusted proxies, the PROXY protocol header and the client address rule;
 * see xg_proxy_addr.h. */
#include "xg_proxy_addr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdio.h>
#include <string.h>

static const uint8_t v2_signature[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
                                         0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
static const char v1_prefix[] = "PROXY ";

/* ---- addresses ------------------------------------------------------------------------ */

static bool ip_from_v6(const uint8_t b[16], struct xg_proxy_ip *out)
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memset(out, 0, sizeof *out);
    if (memcmp(b, mapped, sizeof mapped) == 0) {
        out->family = 4;
        memcpy(out->bytes, b + 12, 4);
    } else {
        out->family = 6;
        memcpy(out->bytes, b, 16);
    }
    return true;
}

bool xg_proxy_ip_parse(const char *text, size_t len, struct xg_proxy_ip *out)
{
    char buf[64];
    memset(out, 0, sizeof *out);
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, text, len);
    buf[len] = '\0';
    uint8_t b[16];
    if (memchr(buf, ':', len) == NULL) {
        if (inet_pton(AF_INET, buf, b) != 1)
            return false;
        out->family = 4;
        memcpy(out->bytes, b, 4);
        return true;
    }
    if (inet_pton(AF_INET6, buf, b) != 1)
        return false;
    return ip_from_v6(b, out);
}

bool xg_proxy_ip_from_sockaddr(const struct sockaddr *sa, struct xg_proxy_ip *out)
{
    memset(out, 0, sizeof *out);
    if (sa && sa->sa_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)(const void *)sa;
        out->family = 4;
        memcpy(out->bytes, &v4->sin_addr, 4);
        return true;
    }
    if (sa && sa->sa_family == AF_INET6)
        return ip_from_v6(((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr, out);
    return false;
}

unsigned xg_bind_addr_parse(const char *text, uint16_t port, struct sockaddr_storage *out)
{
    memset(out, 0, sizeof *out);
    struct sockaddr_in *v4 = (struct sockaddr_in *)out;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)out;
    if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        return sizeof *v4;
    }
    if (inet_pton(AF_INET6, text, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        return sizeof *v6;
    }
    return 0;
}

unsigned xg_sockaddr_len(const struct sockaddr_storage *a)
{
    return a->ss_family == AF_INET    ? sizeof(struct sockaddr_in)
           : a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                      : 0;
}

uint16_t xg_sockaddr_port(const struct sockaddr_storage *a)
{
    if (a->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)a)->sin_port);
    if (a->ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
    return 0;
}

void xg_proxy_ip_format(const struct xg_proxy_ip *ip, char *out, size_t outlen)
{
    if (outlen == 0)
        return;
    out[0] = '\0';
    if (ip->family == 4)
        inet_ntop(AF_INET, ip->bytes, out, (socklen_t)outlen);
    else if (ip->family == 6)
        inet_ntop(AF_INET6, ip->bytes, out, (socklen_t)outlen);
}

static unsigned family_bits(uint8_t family)
{
    return family == 4 ? 32 : 128;
}

static bool prefix_matches(const uint8_t *a, const uint8_t *b, unsigned prefix)
{
    unsigned whole = prefix / 8, rest = prefix % 8;
    if (memcmp(a, b, whole) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (a[whole] & mask) == (b[whole] & mask);
}

/* ---- trusted_proxies ------------------------------------------------------------------ */

static bool is_separator(char c)
{
    return c == ',' || c == ' ' || c == '\t';
}

static bool parse_cidr(const char *s, size_t len, struct xg_proxy_cidr *out)
{
    const char *slash = memchr(s, '/', len);
    size_t addr_len = slash ? (size_t)(slash - s) : len;
    if (!xg_proxy_ip_parse(s, addr_len, &out->net))
        return false;
    unsigned bits = family_bits(out->net.family);
    out->prefix = bits;
    if (slash) {
        size_t digits = len - addr_len - 1;
        if (digits == 0 || digits > 3)
            return false;
        unsigned p = 0;
        for (size_t i = 0; i < digits; i++) {
            char c = slash[1 + i];
            if (c < '0' || c > '9')
                return false;
            p = p * 10 + (unsigned)(c - '0');
        }
        if (digits > 1 && slash[1] == '0')
            return false;
        /* "::ffff:10.0.0.0/104" names IPv4 space: its prefix counts the mapped bits. */
        if (out->net.family == 4 && memchr(s, ':', addr_len)) {
            if (p < 96)
                return false;
            p -= 96;
        }
        if (p > bits)
            return false;
        out->prefix = p;
    }
    struct xg_proxy_ip masked = out->net;
    unsigned whole = out->prefix / 8, rest = out->prefix % 8;
    if (rest)
        masked.bytes[whole++] &= (uint8_t)(0xff << (8 - rest));
    memset(masked.bytes + whole, 0, 16 - whole);
    return memcmp(masked.bytes, out->net.bytes, 16) == 0;
}

bool xg_proxy_trust_parse(const char *text, struct xg_proxy_trust *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *p = text ? text : "";
    for (;;) {
        while (*p && is_separator(*p))
            p++;
        if (!*p)
            return true;
        const char *start = p;
        while (*p && !is_separator(*p))
            p++;
        size_t len = (size_t)(p - start);
        if (out->n == XG_PROXY_MAX_CIDRS) {
            snprintf(err, errlen, "more than %d entries", XG_PROXY_MAX_CIDRS);
            memset(out, 0, sizeof *out);
            return false;
        }
        if (!parse_cidr(start, len, &out->cidr[out->n])) {
            snprintf(err, errlen, "\"%.*s\" is not an address or CIDR (bits set past the prefix?)",
                     (int)(len > 60 ? 60 : len), start);
            memset(out, 0, sizeof *out);
            return false;
        }
        out->n++;
    }
}

bool xg_proxy_trusted(const struct xg_proxy_trust *t, const struct xg_proxy_ip *ip)
{
    if (!t || ip->family == 0)
        return false;
    for (size_t i = 0; i < t->n; i++) {
        const struct xg_proxy_cidr *c = &t->cidr[i];
        if (c->net.family == ip->family && prefix_matches(c->net.bytes, ip->bytes, c->prefix))
            return true;
    }
    return false;
}

/* ---- the PROXY header ----------------------------------------------------------------- */

/* A decimal port, 0..65535, no leading zero. */
static bool v1_port(const char *s, size_t len)
{
    if (len == 0 || len > 5 || (len > 1 && s[0] == '0'))
        return false;
    unsigned v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    return v <= 65535;
}

/* The line between "PROXY " and "\r\n": "TCP4 src dst sport dport" or "UNKNOWN...". */
static bool v1_fields(const char *s, size_t len, struct xg_proxy_ip *source)
{
    if (len >= 7 && memcmp(s, "UNKNOWN", 7) == 0)
        return true; /* the rest is to be ignored, per the spec */
    const char *field[5];
    size_t flen[5];
    size_t n = 0, at = 0;
    while (n < 5) {
        size_t end = at;
        while (end < len && s[end] != ' ')
            end++;
        field[n] = s + at;
        flen[n] = end - at;
        n++;
        if (end == len)
            break;
        at = end + 1;
    }
    if (n != 5 || field[4] + flen[4] != s + len)
        return false;
    uint8_t want;
    if (flen[0] == 4 && memcmp(field[0], "TCP4", 4) == 0)
        want = 4;
    else if (flen[0] == 4 && memcmp(field[0], "TCP6", 4) == 0)
        want = 6;
    else
        return false;
    struct xg_proxy_ip src, dst;
    /* The family is the one named: a TCP6 line with "::ffff:a.b.c.d" is still TCP6. */
    bool src_ok = xg_proxy_ip_parse(field[1], flen[1], &src) &&
                  (memchr(field[1], ':', flen[1]) != NULL) == (want == 6);
    bool dst_ok = xg_proxy_ip_parse(field[2], flen[2], &dst) &&
                  (memchr(field[2], ':', flen[2]) != NULL) == (want == 6);
    if (!src_ok || !dst_ok || !v1_port(field[3], flen[3]) || !v1_port(field[4], flen[4]))
        return false;
    *source = src;
    return true;
}

static enum xg_proxy_header_result parse_v1(const char *buf, size_t len,
                                            struct xg_proxy_header *out)
{
    size_t limit = len < XG_PROXY_V1_MAX ? len : XG_PROXY_V1_MAX;
    for (size_t i = sizeof v1_prefix - 1; i < limit; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c == '\r') {
            /* too long even if the LF comes: refused now, not after one more byte */
            if (i + 2 > XG_PROXY_V1_MAX)
                return XG_PROXY_HEADER_INVALID;
            if (i + 1 == len)
                return XG_PROXY_HEADER_INCOMPLETE;
            if (buf[i + 1] != '\n')
                return XG_PROXY_HEADER_INVALID;
            size_t at = sizeof v1_prefix - 1;
            if (!v1_fields(buf + at, i - at, &out->source))
                return XG_PROXY_HEADER_INVALID;
            out->len = i + 2;
            out->version = 1;
            return XG_PROXY_HEADER_OK;
        }
        if (c < 0x20 || c > 0x7e)
            return XG_PROXY_HEADER_INVALID;
    }
    return len < XG_PROXY_V1_MAX ? XG_PROXY_HEADER_INCOMPLETE : XG_PROXY_HEADER_INVALID;
}

static enum xg_proxy_header_result parse_v2(const uint8_t *b, size_t len, size_t max_len,
                                            struct xg_proxy_header *out)
{
    if (len >= 13 && (b[12] >> 4) != 2)
        return XG_PROXY_HEADER_INVALID;
    if (len >= 13 && (b[12] & 0x0f) > 1)
        return XG_PROXY_HEADER_INVALID; /* only LOCAL (0) and PROXY (1) are defined */
    if (len < XG_PROXY_V2_FIXED)
        return XG_PROXY_HEADER_INCOMPLETE;
    size_t body = (size_t)b[14] << 8 | b[15];
    size_t total = XG_PROXY_V2_FIXED + body;
    if (total > max_len)
        return XG_PROXY_HEADER_INVALID;
    unsigned family = b[13] >> 4, transport = b[13] & 0x0f;
    if (family > 3 || transport > 2 || (family == 0) != (transport == 0))
        return XG_PROXY_HEADER_INVALID;
    if ((family == 1 && body < 12) || (family == 2 && body < 36) || (family == 3 && body < 216))
        return XG_PROXY_HEADER_INVALID;
    if (len < total)
        return XG_PROXY_HEADER_INCOMPLETE;
    bool proxy = (b[12] & 0x0f) == 1;
    const uint8_t *addr = b + XG_PROXY_V2_FIXED;
    if (proxy && family == 1) {
        out->source.family = 4;
        memcpy(out->source.bytes, addr, 4);
    } else if (proxy && family == 2) {
        (void)ip_from_v6(addr, &out->source);
    }
    out->len = total;
    out->version = 2;
    return XG_PROXY_HEADER_OK;
}

enum xg_proxy_header_result xg_proxy_header_parse(const void *buf, size_t len, size_t max_len,
                                                  struct xg_proxy_header *out)
{
    const uint8_t *b = buf;
    memset(out, 0, sizeof *out);
    if (len == 0)
        return XG_PROXY_HEADER_INCOMPLETE;
    size_t v2n = len < sizeof v2_signature ? len : sizeof v2_signature;
    if (memcmp(b, v2_signature, v2n) == 0) {
        if (len < sizeof v2_signature)
            return XG_PROXY_HEADER_INCOMPLETE;
        enum xg_proxy_header_result r = parse_v2(b, len, max_len, out);
        out->signature = true;
        return r;
    }
    size_t v1n = len < sizeof v1_prefix - 1 ? len : sizeof v1_prefix - 1;
    if (memcmp(b, v1_prefix, v1n) == 0) {
        if (len < sizeof v1_prefix - 1)
            return XG_PROXY_HEADER_INCOMPLETE;
        enum xg_proxy_header_result r = parse_v1((const char *)b, len, out);
        out->signature = true;
        return r;
    }
    return XG_PROXY_HEADER_INVALID;
}

/* ---- the client address --------------------------------------------------------------- */

/* One X-Forwarded-For entry, trimmed: an address, "[v6]" or "[v6]:port", or "v4:port". */
static bool xff_entry(const char *s, size_t len, struct xg_proxy_ip *out)
{
    while (len > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        len--;
    }
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (len > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close)
            return false;
        size_t after = len - (size_t)(close - s) - 1;
        if (after > 0 && (close[1] != ':' || !v1_port(close + 2, after - 1)))
            return false;
        return xg_proxy_ip_parse(s + 1, (size_t)(close - s) - 1, out) && out->family == 6;
    }
    const char *colon = memchr(s, ':', len);
    if (colon && memchr(colon + 1, ':', len - (size_t)(colon - s) - 1) == NULL) {
        size_t port_len = len - (size_t)(colon - s) - 1;
        return v1_port(colon + 1, port_len) && xg_proxy_ip_parse(s, (size_t)(colon - s), out) &&
               out->family == 4;
    }
    return xg_proxy_ip_parse(s, len, out);
}

bool xg_proxy_client_addr(const struct xg_proxy_trust *t, const struct xg_proxy_ip *peer,
                          const char *xff, char *out, size_t outlen)
{
    if (outlen > 0)
        out[0] = '\0';
    if (peer->family == 0)
        return false;
    struct xg_proxy_ip client = *peer;
    if (xff && xg_proxy_trusted(t, &client)) {
        size_t end = strlen(xff);
        for (;;) {
            size_t start = end;
            while (start > 0 && xff[start - 1] != ',')
                start--;
            struct xg_proxy_ip hop;
            bool blank = strspn(xff + start, " \t") >= end - start;
            if (!blank) {
                if (!xff_entry(xff + start, end - start, &hop))
                    break; /* garbage: the trusted hop that passed it on is the client */
                client = hop;
                if (!xg_proxy_trusted(t, &client))
                    break;
            }
            if (start == 0)
                break;
            end = start - 1;
        }
    }
    xg_proxy_ip_format(&client, out, outlen);
    return true;
}

/* Drops out's first entry, the separator after it included; none left without one. */
static size_t drop_first_entry(char *out, size_t len)
{
    const char *comma = memchr(out, ',', len);
    size_t drop = comma ? (size_t)(comma + 1 - out) : len;
    memmove(out, out + drop, len - drop);
    out[len - drop] = '\0';
    return len - drop;
}

bool xg_proxy_list_append(char *out, size_t cap, size_t *len, const char *value, size_t n)
{
    size_t sep = *len > 0 ? 1 : 0;
    if (*len + sep + n < cap) {
        if (sep)
            out[(*len)++] = ',';
        memcpy(out + *len, value, n);
        *len += n;
        out[*len] = '\0';
        return true;
    }
    /* the last cap - 1 bytes of the list with value, less the entry the cut fell in */
    size_t room = cap - 1;
    if (n >= room) {
        memcpy(out, value + (n - room), room);
    } else {
        size_t keep = room - n - 1; /* of the list's end; then "," + value */
        memmove(out, out + (*len - keep), keep);
        out[keep] = ',';
        memcpy(out + keep + 1, value, n);
    }
    *len = drop_first_entry(out, room);
    return false;
}

enum xg_proxy_opening_verdict xg_proxy_opening_read(const struct xg_proxy_trust *t,
                                                    const struct xg_proxy_ip *peer, const void *buf,
                                                    size_t len, size_t max_len,
                                                    struct xg_proxy_opening *out)
{
    memset(out, 0, sizeof *out);
    out->client = *peer;
    if (len == 0)
        return XG_PROXY_OPENING_WAIT;
    bool trusted = t && xg_proxy_trusted(t, peer);
    struct xg_proxy_header h;
    switch (xg_proxy_header_parse(buf, len, max_len, &h)) {
    case XG_PROXY_HEADER_OK:
        out->skip = h.len;
        out->version = h.version;
        if (trusted && h.source.family != 0)
            out->client = out->named = h.source;
        return XG_PROXY_OPENING_PASS;
    case XG_PROXY_HEADER_INCOMPLETE:
        return len >= max_len ? XG_PROXY_OPENING_REFUSE : XG_PROXY_OPENING_WAIT;
    case XG_PROXY_HEADER_INVALID:
        break;
    }
    /* no header at all from the balancer itself (it speaks HTTP): it stands for itself */
    return trusted && !h.signature ? XG_PROXY_OPENING_PASS : XG_PROXY_OPENING_REFUSE;
}
