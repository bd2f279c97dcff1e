/* Fuzzes what a load balancer, or someone pretending to be one, sends the daemons
 * (common/xg_proxy_addr.h): xg_proxy_header_parse over the first bytes of a connection,
 * xg_proxy_client_addr over an X-Forwarded-For value, and xg_proxy_trust_parse over a
 * trusted_proxies value. Byte 0 chooses (its value mod 3); the rest is the input, as is
 * for the header, a NUL-terminated copy for the others.
 *
 * Properties checked:
 *   - a header is never longer than the bytes given or than max_len, a version 1 header
 *     never longer than 107 bytes; every prefix of it is INCOMPLETE and bytes after it do
 *     not change it; INCOMPLETE is never answered for more bytes than a header may have,
 *     so a peer cannot make the front end buffer without bound;
 *   - the client address is the peer itself when the peer is untrusted, and always an
 *     address that parses back to itself;
 *   - an accepted trusted_proxies list has no bits set past any prefix, and each of its
 *     networks is trusted. */
#include "fuzz.h"
#include "xg_proxy_addr.h"

#define FUZZ_MAX_LEN 600

static void check_header(const uint8_t *data, size_t size)
{
    struct xg_proxy_header h;
    enum xg_proxy_header_result r = xg_proxy_header_parse(data, size, FUZZ_MAX_LEN, &h);
    if (r == XG_PROXY_HEADER_INCOMPLETE) {
        FUZZ_CHECK(size < FUZZ_MAX_LEN);
        FUZZ_CHECK(size < XG_PROXY_V1_MAX || (size > 0 && data[0] == '\r'));
        return;
    }
    if (r != XG_PROXY_HEADER_OK)
        return;
    FUZZ_CHECK(h.len > 0 && h.len <= size && h.len <= FUZZ_MAX_LEN);
    FUZZ_CHECK(h.version == 1 || h.version == 2);
    FUZZ_CHECK(h.version != 1 || h.len <= XG_PROXY_V1_MAX);
    FUZZ_CHECK(h.source.family == 0 || h.source.family == 4 || h.source.family == 6);
    struct xg_proxy_header again;
    FUZZ_CHECK(xg_proxy_header_parse(data, h.len, FUZZ_MAX_LEN, &again) == XG_PROXY_HEADER_OK);
    FUZZ_CHECK(again.len == h.len && memcmp(&again.source, &h.source, sizeof h.source) == 0);
    size_t cuts[] = {0, 1, h.len / 2, h.len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        struct xg_proxy_header p;
        FUZZ_CHECK(xg_proxy_header_parse(data, cuts[i], FUZZ_MAX_LEN, &p) ==
                   XG_PROXY_HEADER_INCOMPLETE);
    }
}

static void check_client(const char *xff)
{
    struct xg_proxy_trust t;
    char err[128];
    FUZZ_CHECK(xg_proxy_trust_parse("127.0.0.0/8 10.0.0.0/8 ::1 fd00::/8", &t, err, sizeof err));
    static const char *peers[] = {"127.0.0.1", "203.0.113.7", "::1", "2001:db8::1"};
    for (size_t i = 0; i < sizeof peers / sizeof peers[0]; i++) {
        struct xg_proxy_ip peer;
        FUZZ_CHECK(xg_proxy_ip_parse(peers[i], strlen(peers[i]), &peer));
        char out[XG_PROXY_ADDR_TEXT];
        FUZZ_CHECK(xg_proxy_client_addr(&t, &peer, xff, out, sizeof out));
        struct xg_proxy_ip back;
        FUZZ_CHECK(xg_proxy_ip_parse(out, strlen(out), &back));
        char again[XG_PROXY_ADDR_TEXT];
        xg_proxy_ip_format(&back, again, sizeof again);
        FUZZ_CHECK(strcmp(out, again) == 0);
        if (!xg_proxy_trusted(&t, &peer))
            FUZZ_CHECK(strcmp(out, peers[i]) == 0);
    }
}

static void check_trust(const char *text)
{
    struct xg_proxy_trust t;
    char err[128];
    if (!xg_proxy_trust_parse(text, &t, err, sizeof err)) {
        FUZZ_CHECK(t.n == 0 && err[0] != '\0');
        return;
    }
    FUZZ_CHECK(t.n <= XG_PROXY_MAX_CIDRS);
    for (size_t i = 0; i < t.n; i++) {
        const struct xg_proxy_cidr *c = &t.cidr[i];
        FUZZ_CHECK(c->net.family == 4 || c->net.family == 6);
        FUZZ_CHECK(c->prefix <= (c->net.family == 4 ? 32u : 128u));
        for (unsigned bit = c->prefix; bit < 128; bit++)
            FUZZ_CHECK(!(c->net.bytes[bit / 8] & (0x80 >> (bit % 8))));
        FUZZ_CHECK(xg_proxy_trusted(&t, &c->net));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned mode = data[0] % 3;
    data++;
    size--;
    if (mode == 0) {
        check_header(data, size);
        return 0;
    }
    char *text = fuzz_cstr(data, size);
    if (mode == 1)
        check_client(text);
    else
        check_trust(text);
    free(text);
    return 0;
}
