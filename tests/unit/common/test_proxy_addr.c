/* Table tests for common/xg_proxy_addr: trusted_proxies, the PROXY protocol header (v1
 * and v2, HAProxy's proxy-protocol.txt) and the client address behind a balancer. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "xg_proxy_addr.h"

static struct xg_proxy_ip ip(const char *text)
{
    struct xg_proxy_ip out;
    assert_true(xg_proxy_ip_parse(text, strlen(text), &out));
    return out;
}

static void test_ip_parse(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want; /* want NULL: refused */
    } cases[] = {
        {"192.0.2.1", "192.0.2.1"},
        {"2001:db8::1", "2001:db8::1"},
        {"::ffff:192.0.2.7", "192.0.2.7"}, /* mapped: one bucket with the IPv4 address */
        {"::1", "::1"},
        {"", NULL},
        {" 192.0.2.1", NULL},
        {"192.0.2.256", NULL},
        {"192.0.2", NULL},
        {"01.2.3.4", NULL},
        {"2001:db8::g", NULL},
        {"unknown", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct xg_proxy_ip a;
        bool ok = xg_proxy_ip_parse(cases[i].text, strlen(cases[i].text), &a);
        assert_int_equal(ok, cases[i].want != NULL);
        if (ok) {
            char buf[XG_PROXY_ADDR_TEXT];
            xg_proxy_ip_format(&a, buf, sizeof buf);
            assert_string_equal(buf, cases[i].want);
        }
    }
}

static void test_trust_parse(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool ok;
        size_t n;
    } cases[] = {
        {"", true, 0},
        {"10.0.0.0/8", true, 1},
        {"10.0.0.0/8, 127.0.0.1 ::1,fd00::/8", true, 4},
        {"  192.0.2.1  ", true, 1},
        {"0.0.0.0/0", true, 1},
        {"::/0", true, 1},
        {"::ffff:10.0.0.0/104", true, 1},
        {"10.0.0.1/8", false, 0}, /* bits past the prefix */
        {"10.0.0.0/33", false, 0},
        {"fd00::/129", false, 0},
        {"10.0.0.0/", false, 0},
        {"10.0.0.0/08", false, 0},
        {"10.0.0.0/8x", false, 0},
        {"::ffff:10.0.0.0/8", false, 0},
        {"example.com", false, 0},
        {"10.0.0.0/8;", false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct xg_proxy_trust t;
        char err[128] = "";
        bool ok = xg_proxy_trust_parse(cases[i].text, &t, err, sizeof err);
        assert_int_equal(ok, cases[i].ok);
        assert_int_equal(t.n, cases[i].n);
        if (!ok)
            assert_true(err[0] != '\0');
    }
    char many[1024] = "";
    for (int i = 0; i <= XG_PROXY_MAX_CIDRS; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "10.0.%d.0/24 ", i);
    struct xg_proxy_trust t;
    char err[128];
    assert_false(xg_proxy_trust_parse(many, &t, err, sizeof err));
    assert_int_equal(t.n, 0); /* refused whole: nobody trusted */
}

static void test_trusted(void **state)
{
    (void)state;
    struct xg_proxy_trust t;
    char err[128];
    assert_true(xg_proxy_trust_parse("10.0.0.0/8 192.0.2.128/25 fd00::/8 127.0.0.1 ::1/128", &t,
                                     err, sizeof err));
    static const struct {
        const char *addr;
        bool trusted;
    } cases[] = {
        {"10.1.2.3", true},
        {"11.0.0.1", false},
        {"192.0.2.128", true},
        {"192.0.2.255", true},
        {"192.0.2.127", false},
        {"fd12::5", true},
        {"fe00::1", false},
        {"127.0.0.1", true},
        {"127.0.0.2", false},
        {"::1", true},
        {"::2", false},
        {"::ffff:10.9.9.9", true}, /* mapped: the IPv4 rule */
        {"::ffff:127.0.0.2", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct xg_proxy_ip a = ip(cases[i].addr);
        assert_int_equal(xg_proxy_trusted(&t, &a), cases[i].trusted);
    }
    struct xg_proxy_ip none = {0};
    assert_false(xg_proxy_trusted(&t, &none));
    struct xg_proxy_trust all;
    assert_true(xg_proxy_trust_parse("0.0.0.0/0", &all, err, sizeof err));
    struct xg_proxy_ip v6 = ip("2001:db8::1"), v4 = ip("203.0.113.9");
    assert_false(xg_proxy_trusted(&all, &v6)); /* an IPv4 CIDR never covers IPv6 */
    assert_true(xg_proxy_trusted(&all, &v4));
}

struct header_case {
    const char *name;
    const char *bytes;
    size_t len; /* 0: strlen(bytes) */
    enum xg_proxy_header_result want;
    size_t want_len;
    const char *source; /* NULL: no source (LOCAL, UNKNOWN, ...) */
};

#define V2SIG "\r\n\r\n\0\r\nQUIT\n"

static const struct header_case header_cases[] = {
    {"v1 tcp4", "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET / HTTP/1.1\r\n", 0,
     XG_PROXY_HEADER_OK, 45, "192.0.2.1"},
    {"v1 tcp6", "PROXY TCP6 2001:db8::1 2001:db8::2 1 65535\r\n", 0, XG_PROXY_HEADER_OK, 44,
     "2001:db8::1"},
    {"v1 unknown", "PROXY UNKNOWN\r\n", 0, XG_PROXY_HEADER_OK, 15, NULL},
    {"v1 unknown with addresses", "PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n", 0, XG_PROXY_HEADER_OK,
     35, NULL},
    {"v1 prefix", "PRO", 0, XG_PROXY_HEADER_INCOMPLETE, 0, NULL},
    {"v1 no end yet", "PROXY TCP4 192.0.2.1 198.51.100.2 5", 0, XG_PROXY_HEADER_INCOMPLETE, 0,
     NULL},
    {"v1 cr at the end", "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r", 0,
     XG_PROXY_HEADER_INCOMPLETE, 0, NULL},
    {"v1 bare lf", "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\n", 0, XG_PROXY_HEADER_INVALID, 0,
     NULL},
    {"v1 cr not lf", "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\rX", 0, XG_PROXY_HEADER_INVALID,
     0, NULL},
    {"v1 family mismatch", "PROXY TCP4 2001:db8::1 192.0.2.2 1 2\r\n", 0, XG_PROXY_HEADER_INVALID,
     0, NULL},
    {"v1 tcp6 with v4", "PROXY TCP6 192.0.2.1 192.0.2.2 1 2\r\n", 0, XG_PROXY_HEADER_INVALID, 0,
     NULL},
    {"v1 udp", "PROXY UDP4 192.0.2.1 192.0.2.2 1 2\r\n", 0, XG_PROXY_HEADER_INVALID, 0, NULL},
    {"v1 port too big", "PROXY TCP4 192.0.2.1 192.0.2.2 65536 2\r\n", 0, XG_PROXY_HEADER_INVALID, 0,
     NULL},
    {"v1 port leading zero", "PROXY TCP4 192.0.2.1 192.0.2.2 080 2\r\n", 0, XG_PROXY_HEADER_INVALID,
     0, NULL},
    {"v1 two spaces", "PROXY TCP4  192.0.2.1 192.0.2.2 1 2\r\n", 0, XG_PROXY_HEADER_INVALID, 0,
     NULL},
    {"v1 extra field", "PROXY TCP4 192.0.2.1 192.0.2.2 1 2 3\r\n", 0, XG_PROXY_HEADER_INVALID, 0,
     NULL},
    {"v1 missing field", "PROXY TCP4 192.0.2.1 192.0.2.2 1\r\n", 0, XG_PROXY_HEADER_INVALID, 0,
     NULL},
    {"v1 trailing space", "PROXY TCP4 192.0.2.1 192.0.2.2 1 2 \r\n", 0, XG_PROXY_HEADER_INVALID, 0,
     NULL},
    {"v1 control byte", "PROXY TCP4 192.0.2.1\t192.0.2.2 1 2\r\n", 0, XG_PROXY_HEADER_INVALID, 0,
     NULL},
    {"v1 lower case", "proxy TCP4 192.0.2.1 192.0.2.2 1 2\r\n", 0, XG_PROXY_HEADER_INVALID, 0,
     NULL},
    {"plain http", "GET / HTTP/1.1\r\n\r\n", 0, XG_PROXY_HEADER_INVALID, 0, NULL},
    {"tls hello", "\x16\x03\x01\x02\x00", 0, XG_PROXY_HEADER_INVALID, 0, NULL},
    {"empty", "", 0, XG_PROXY_HEADER_INCOMPLETE, 0, NULL},
    {"v2 tcp4", V2SIG "\x21\x11\x00\x0c\xc0\x00\x02\x01\xc6\x33\x64\x02\xdc\x04\x01\xbb", 28,
     XG_PROXY_HEADER_OK, 28, "192.0.2.1"},
    {"v2 tcp4 then http",
     V2SIG "\x21\x11\x00\x0c\x7f\x00\x00\x02\x7f\x00\x00\x01\x00\x01\x00\x02GET", 31,
     XG_PROXY_HEADER_OK, 28, "127.0.0.2"},
    {"v2 tcp4 with tlvs",
     V2SIG "\x21\x11\x00\x14\xc0\x00\x02\x09\xc6\x33\x64\x02\x00\x01\x00\x02"
           "\x04\x00\x01\x00\xee\x00\x01\x01",
     36, XG_PROXY_HEADER_OK, 36, "192.0.2.9"},
    {"v2 tcp6",
     V2SIG "\x21\x21\x00\x24"
           "\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x07"
           "\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x08"
           "\x00\x01\x00\x02",
     52, XG_PROXY_HEADER_OK, 52, "2001:db8::7"},
    {"v2 udp4", V2SIG "\x21\x12\x00\x0c\xc0\x00\x02\x01\xc6\x33\x64\x02\xdc\x04\x01\xbb", 28,
     XG_PROXY_HEADER_OK, 28, "192.0.2.1"},
    {"v2 local", V2SIG "\x20\x00\x00\x00", 16, XG_PROXY_HEADER_OK, 16, NULL},
    {"v2 local with addresses",
     V2SIG "\x20\x11\x00\x0c\xc0\x00\x02\x01\xc6\x33\x64\x02\xdc\x04\x01\xbb", 28,
     XG_PROXY_HEADER_OK, 28, NULL},
    {"v2 unspec", V2SIG "\x21\x00\x00\x03xyz", 19, XG_PROXY_HEADER_OK, 19, NULL},
    {"v2 signature prefix", V2SIG, 7, XG_PROXY_HEADER_INCOMPLETE, 0, NULL},
    {"v2 fixed part short", V2SIG "\x21\x11\x00", 15, XG_PROXY_HEADER_INCOMPLETE, 0, NULL},
    {"v2 addresses short", V2SIG "\x21\x11\x00\x0c\xc0\x00\x02", 19, XG_PROXY_HEADER_INCOMPLETE, 0,
     NULL},
    {"v2 version 1", V2SIG "\x11\x11\x00\x0c", 16, XG_PROXY_HEADER_INVALID, 0, NULL},
    {"v2 command 2", V2SIG "\x22\x11\x00\x0c", 16, XG_PROXY_HEADER_INVALID, 0, NULL},
    {"v2 family 4", V2SIG "\x21\x41\x00\x0c", 16, XG_PROXY_HEADER_INVALID, 0, NULL},
    {"v2 transport 3", V2SIG "\x21\x13\x00\x0c", 16, XG_PROXY_HEADER_INVALID, 0, NULL},
    {"v2 tcp4 too short", V2SIG "\x21\x11\x00\x08\xc0\x00\x02\x01\xc6\x33\x64\x02", 24,
     XG_PROXY_HEADER_INVALID, 0, NULL},
    {"v2 tcp6 too short", V2SIG "\x21\x21\x00\x0c\xc0\x00\x02\x01\xc6\x33\x64\x02\x00\x01\x00\x02",
     28, XG_PROXY_HEADER_INVALID, 0, NULL},
    {"v2 past max_len", V2SIG "\x21\x11\x01\x00", 16, XG_PROXY_HEADER_INVALID, 0, NULL},
    {"v2 bad signature", "\r\n\r\n\0\r\nQUIT\r", 12, XG_PROXY_HEADER_INVALID, 0, NULL},
};

static void test_header_parse(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof header_cases / sizeof header_cases[0]; i++) {
        const struct header_case *c = &header_cases[i];
        size_t len = c->len ? c->len : strlen(c->bytes);
        struct xg_proxy_header h;
        enum xg_proxy_header_result r = xg_proxy_header_parse(c->bytes, len, 128, &h);
        if (r != c->want)
            fail_msg("%s: got %d, want %d", c->name, (int)r, (int)c->want);
        if (r != XG_PROXY_HEADER_OK)
            continue;
        assert_int_equal(h.len, c->want_len);
        char src[XG_PROXY_ADDR_TEXT];
        xg_proxy_ip_format(&h.source, src, sizeof src);
        assert_string_equal(src, c->source ? c->source : "");
        /* Every shorter prefix of a whole header asks for more bytes. */
        for (size_t cut = 0; cut < h.len; cut++) {
            struct xg_proxy_header p;
            if (xg_proxy_header_parse(c->bytes, cut, 128, &p) != XG_PROXY_HEADER_INCOMPLETE)
                fail_msg("%s: prefix of %zu bytes not incomplete", c->name, cut);
        }
    }
}

static void test_header_v1_bound(void **state)
{
    (void)state;
    /* 107 bytes, CRLF included, is the longest v1 line: one byte more is refused. */
    char line[200];
    memcpy(line, "PROXY UNKNOWN ", 14);
    memset(line + 14, 'x', 91);
    memcpy(line + 105, "\r\n", 2);
    struct xg_proxy_header h;
    assert_int_equal(xg_proxy_header_parse(line, 107, 128, &h), XG_PROXY_HEADER_OK);
    assert_int_equal(h.len, 107);
    memset(line + 14, 'x', 92);
    memcpy(line + 106, "\r\n", 2);
    assert_int_equal(xg_proxy_header_parse(line, 108, 128, &h), XG_PROXY_HEADER_INVALID);
    /* the CR at the last byte a header may have: no LF can make it fit, so no waiting
     * for one (the fuzzer's find, tests/fuzz/regress/proxy_addr/v1-cr-at-the-limit) */
    assert_int_equal(xg_proxy_header_parse(line, 107, 128, &h), XG_PROXY_HEADER_INVALID);
    memset(line, 0, sizeof line);
    memcpy(line, "PROXY ", 6);
    memset(line + 6, 'x', 150);
    assert_int_equal(xg_proxy_header_parse(line, 107, 128, &h), XG_PROXY_HEADER_INVALID);
    assert_int_equal(xg_proxy_header_parse(line, 106, 128, &h), XG_PROXY_HEADER_INCOMPLETE);
}

static void test_client_addr(void **state)
{
    (void)state;
    struct xg_proxy_trust t;
    char err[128];
    assert_true(xg_proxy_trust_parse("10.0.0.0/8 127.0.0.1 ::1", &t, err, sizeof err));
    static const struct {
        const char *peer, *xff, *want;
    } cases[] = {
        {"203.0.113.5", NULL, "203.0.113.5"},
        /* an untrusted peer's X-Forwarded-For is ignored: it could say anything */
        {"203.0.113.5", "198.51.100.1", "203.0.113.5"},
        {"127.0.0.2", "198.51.100.1", "127.0.0.2"},
        /* a trusted peer: the rightmost untrusted address */
        {"127.0.0.1", "198.51.100.1", "198.51.100.1"},
        {"127.0.0.1", "6.6.6.6, 198.51.100.1", "198.51.100.1"}, /* the client's own lie left */
        {"127.0.0.1", "6.6.6.6, 198.51.100.1, 10.0.0.7", "198.51.100.1"}, /* two balancers */
        {"127.0.0.1", "6.6.6.6,198.51.100.1,10.0.0.7,", "198.51.100.1"},  /* empty entries */
        {"127.0.0.1", "10.0.0.9, 10.0.0.7", "10.0.0.9"}, /* all trusted: the leftmost */
        {"127.0.0.1", "", "127.0.0.1"},
        {"127.0.0.1", " , ", "127.0.0.1"},
        {"127.0.0.1", "garbage, 198.51.100.1", "198.51.100.1"},
        {"127.0.0.1", "198.51.100.1, garbage", "127.0.0.1"}, /* the hop that passed it on */
        {"127.0.0.1", "6.6.6.6, garbage, 10.0.0.7", "10.0.0.7"},
        {"127.0.0.1", "unknown", "127.0.0.1"},
        {"127.0.0.1", "198.51.100.1:4711", "198.51.100.1"},
        {"127.0.0.1", "[2001:db8::5]:4711", "2001:db8::5"},
        {"127.0.0.1", "[2001:db8::5]", "2001:db8::5"},
        {"127.0.0.1", "2001:db8::5", "2001:db8::5"},
        {"127.0.0.1", "::ffff:198.51.100.3", "198.51.100.3"},
        {"127.0.0.1", "[198.51.100.1]", "127.0.0.1"}, /* brackets are for IPv6 */
        {"127.0.0.1", "198.51.100.1:99999", "127.0.0.1"},
        {"::1", "\t198.51.100.1 ", "198.51.100.1"},
        {"::ffff:10.1.1.1", "198.51.100.1", "198.51.100.1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct xg_proxy_ip peer = ip(cases[i].peer);
        char out[XG_PROXY_ADDR_TEXT];
        assert_true(xg_proxy_client_addr(&t, &peer, cases[i].xff, out, sizeof out));
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("peer %s xff \"%s\": got %s, want %s", cases[i].peer,
                     cases[i].xff ? cases[i].xff : "(none)", out, cases[i].want);
    }
    struct xg_proxy_ip none = {0};
    char out[XG_PROXY_ADDR_TEXT] = "x";
    assert_false(xg_proxy_client_addr(&t, &none, "198.51.100.1", out, sizeof out));
    assert_string_equal(out, "");
    struct xg_proxy_trust empty = {0};
    struct xg_proxy_ip lo = ip("127.0.0.1");
    assert_true(xg_proxy_client_addr(&empty, &lo, "198.51.100.1", out, sizeof out));
    assert_string_equal(out, "127.0.0.1"); /* nobody trusted: X-Forwarded-For never read */
}

/* Joins values into a list of cap bytes; the list and whether nothing was dropped. */
static bool join(size_t cap, const char *const *values, char *out)
{
    size_t len = 0;
    bool whole = true;
    out[0] = '\0';
    for (size_t i = 0; values[i]; i++)
        whole &= xg_proxy_list_append(out, cap, &len, values[i], strlen(values[i]));
    assert_int_equal(len, strlen(out));
    assert_true(len < cap);
    return whole;
}

static void test_list_append(void **state)
{
    (void)state;
    static const struct {
        size_t cap;
        const char *values[4];
        const char *want;
        bool whole;
    } cases[] = {
        {64, {"198.51.100.1", NULL}, "198.51.100.1", true},
        {64, {"6.6.6.6", "198.51.100.1", NULL}, "6.6.6.6,198.51.100.1", true},
        {21, {"6.6.6.6", "198.51.100.1", NULL}, "6.6.6.6,198.51.100.1", true}, /* just fits */
        {20, {"6.6.6.6", "198.51.100.1", NULL}, "198.51.100.1", false},        /* cut: the tail */
        {20, {"1.1.1.1, 2.2.2.2, 3.3.3.3", "4.4.4.4", NULL}, " 3.3.3.3,4.4.4.4", false},
        {14, {"1.1.1.1, 2.2.2.2", "198.51.100.1", NULL}, "198.51.100.1", false}, /* value whole */
        {12, {"1.1.1.1", "198.51.100.1", NULL}, "", false}, /* the last alone is too long */
        {12, {"aaaaaaaaaaaaaaaaaaaa,5.5.5.5", NULL}, "5.5.5.5", false}, /* one long value */
        {12, {"1.1.1.1", "2.2.2.2", "3.3.3.3", NULL}, "3.3.3.3", false},
        {2, {"x", NULL}, "x", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        print_message("case %zu\n", i);
        assert_int_equal(join(cases[i].cap, cases[i].values, out), cases[i].whole);
        assert_string_equal(out, cases[i].want);
    }
}

/* A client padding X-Forwarded-For past the buffer is still the address the balancer
 * appended, never the balancer (issue #30: 4 KiB of padding made it 127.0.0.1). */
static void test_padded_forwarded_for(void **state)
{
    (void)state;
    struct xg_proxy_trust t;
    char err[128];
    assert_true(xg_proxy_trust_parse("127.0.0.1", &t, err, sizeof err));
    static char pad[6000];
    for (size_t i = 0; i + 8 < sizeof pad; i += 8)
        memcpy(pad + i, "6.6.6.6,", 8);
    pad[sizeof pad - 9] = '\0';
    static const char *const padded[][3] = {
        {pad, "203.0.113.9", NULL},          /* the client's padding, then what the balancer saw */
        {"6.6.6.6, 203.0.113.9", pad, NULL}, /* padding in a second header */
    };
    static const char *const want[] = {"203.0.113.9", "6.6.6.6"};
    for (size_t i = 0; i < 2; i++) {
        char xff[4096], out[XG_PROXY_ADDR_TEXT];
        assert_false(join(sizeof xff, padded[i], xff));
        struct xg_proxy_ip lo = ip("127.0.0.1");
        assert_true(xg_proxy_client_addr(&t, &lo, xff, out, sizeof out));
        assert_string_equal(out, want[i]);
    }
}

static void test_opening(void **state)
{
    (void)state;
    struct xg_proxy_trust t;
    char err[64];
    assert_true(xg_proxy_trust_parse("127.0.0.1", &t, err, sizeof err));
    static const uint8_t v2_local[16] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51,
                                         0x55, 0x49, 0x54, 0x0a, 0x20, 0x00, 0x00, 0x00};
    static const struct {
        const char *peer;
        const char *bytes;
        size_t len; /* 0: strlen(bytes) */
        enum xg_proxy_opening_verdict want;
        size_t skip;
        const char *client;
    } cases[] = {
        /* a trusted balancer's header names the client */
        {"127.0.0.1", "PROXY TCP4 192.0.2.9 127.0.0.1 5000 80\r\nGET /", 0, XG_PROXY_OPENING_PASS,
         40, "192.0.2.9"},
        /* an untrusted peer must send one, and is itself whatever it names */
        {"198.51.100.4", "PROXY TCP4 192.0.2.9 127.0.0.1 5000 80\r\n", 0, XG_PROXY_OPENING_PASS, 40,
         "198.51.100.4"},
        {"198.51.100.4", "GET / HTTP/1.1\r\n", 0, XG_PROXY_OPENING_REFUSE, 0, NULL},
        /* the balancer's own health check may omit it */
        {"127.0.0.1", "GET /healthz HTTP/1.1\r\n", 0, XG_PROXY_OPENING_PASS, 0, "127.0.0.1"},
        /* v1 UNKNOWN and v2 LOCAL name nobody: the balancer stands for itself */
        {"127.0.0.1", "PROXY UNKNOWN\r\n", 0, XG_PROXY_OPENING_PASS, 15, "127.0.0.1"},
        {"127.0.0.1", (const char *)v2_local, sizeof v2_local, XG_PROXY_OPENING_PASS, 16,
         "127.0.0.1"},
        /* a prefix waits; a malformed header is refused, trusted or not */
        {"127.0.0.1", "PROXY TCP4 192.0", 0, XG_PROXY_OPENING_WAIT, 0, NULL},
        {"127.0.0.1", "P", 0, XG_PROXY_OPENING_WAIT, 0, NULL},
        {"127.0.0.1", "", 0, XG_PROXY_OPENING_WAIT, 0, NULL},
        {"127.0.0.1", "PROXY TCP4 nonsense\r\n", 0, XG_PROXY_OPENING_REFUSE, 0, NULL},
        {"198.51.100.4", "PROXY TCP9 1 2 3 4\r\n", 0, XG_PROXY_OPENING_REFUSE, 0, NULL},
        /* a header still incomplete at the bound is refused */
        {"127.0.0.1", "PROXY TCP4 192.0.2.9 127.0.0.1 50", 20, XG_PROXY_OPENING_REFUSE, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct xg_proxy_ip peer = ip(cases[i].peer);
        size_t len = cases[i].len ? cases[i].len : strlen(cases[i].bytes);
        size_t max = i == sizeof cases / sizeof cases[0] - 1 ? 20 : 4096;
        struct xg_proxy_opening o;
        enum xg_proxy_opening_verdict v =
            xg_proxy_opening_read(&t, &peer, cases[i].bytes, len, max, &o);
        if (v != cases[i].want)
            fail_msg("case %zu: verdict %d, want %d", i, (int)v, (int)cases[i].want);
        if (v != XG_PROXY_OPENING_PASS)
            continue;
        assert_int_equal(o.skip, cases[i].skip);
        char text[XG_PROXY_ADDR_TEXT];
        xg_proxy_ip_format(&o.client, text, sizeof text);
        assert_string_equal(text, cases[i].client);
        /* only a header from a trusted peer names anyone (the cap counts that one) */
        xg_proxy_ip_format(&o.named, text, sizeof text);
        bool names = o.version != 0 && strcmp(cases[i].peer, "127.0.0.1") == 0 &&
                     strcmp(cases[i].client, "127.0.0.1") != 0;
        assert_string_equal(text, names ? cases[i].client : "");
    }
}

/* [server] bind: an IPv4 or IPv6 literal, nothing else, with the port in network order. */
static void test_bind_addr(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int family; /* 0: refused */
    } cases[] = {
        {"127.0.0.1", AF_INET},
        {"0.0.0.0", AF_INET},
        {"::1", AF_INET6},
        {"::", AF_INET6},
        {"fd78:6700::1", AF_INET6},
        {"::ffff:192.0.2.1", AF_INET6},
        {"localhost", 0},
        {"", 0},
        {"[::1]", 0},
        {"127.0.0.1:80", 0},
        {"1.2.3", 0},
        {"::1%lo", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sockaddr_storage a;
        unsigned len = xg_bind_addr_parse(cases[i].text, 18089, &a);
        if (cases[i].family == 0) {
            assert_int_equal(len, 0);
            continue;
        }
        assert_int_equal(a.ss_family, cases[i].family);
        assert_int_equal(len, xg_sockaddr_len(&a));
        uint16_t port = a.ss_family == AF_INET ? ((struct sockaddr_in *)&a)->sin_port
                                               : ((struct sockaddr_in6 *)&a)->sin6_port;
        assert_int_equal(ntohs(port), 18089);
        assert_int_equal(xg_sockaddr_port(&a), 18089);
    }
    struct sockaddr_storage none = {.ss_family = AF_UNIX};
    assert_int_equal(xg_sockaddr_len(&none), 0);
    assert_int_equal(xg_sockaddr_port(&none), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ip_parse),
        cmocka_unit_test(test_trust_parse),
        cmocka_unit_test(test_trusted),
        cmocka_unit_test(test_header_parse),
        cmocka_unit_test(test_header_v1_bound),
        cmocka_unit_test(test_client_addr),
        cmocka_unit_test(test_opening),
        cmocka_unit_test(test_list_append),
        cmocka_unit_test(test_padded_forwarded_for),
        cmocka_unit_test(test_bind_addr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
