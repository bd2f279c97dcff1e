/* Table tests for gateway/hreq: request heads (request line, query split, keep-alive,
 * Expect, framing, line ends, every refusal), each accepted head also cut at every proper
 * prefix (incomplete, the buffer left as it was) and held against max_head; header
 * lookup; query arguments; and the chunked body decoder, each body fed whole, one byte at
 * a time and split in two at every offset. Every buffer handed to the code under test is
 * allocated at its exact size, so a read past its end shows under the sanitizers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/hreq.h"
#include "test_bytes.h"

#define BIG_HEAD ((size_t)1 << 20)

/* ---- request heads ---- */

struct head_case {
    const char *name;
    const char *in;
    size_t in_len;
    enum hreq_result result;
    size_t head_len; /* HREQ_OK; 0: all of in */
    const char *method, *path, *query;
    int minor;
    size_t nheaders;
    bool has_length;
    uint64_t content_length;
    bool chunked, keep_alive, expect_continue, expect_unsupported;
};

#define IN(s) .in = (s), .in_len = sizeof(s) - 1
#define HEAD_OK(m, p, q, mi)                                                                       \
    .result = HREQ_OK, .method = (m), .path = (p), .query = (q), .minor = (mi)
#define GET11(nh, ka) HEAD_OK("GET", "/", "", 1), .nheaders = (nh), .keep_alive = (ka)
#define GET10(nh, ka) HEAD_OK("GET", "/", "", 0), .nheaders = (nh), .keep_alive = (ka)
#define LENGTH(n)     .has_length = true, .content_length = (n)
#define REFUSED(r)    .result = (r)
#define BAD           REFUSED(HREQ_BAD_REQUEST)

/* "GET / HTTP/1.1" with a Host and then the given header lines. */
#define REQ11(hdrs) "GET / HTTP/1.1\r\nHost: gw\r\n" hdrs "\r\n"
#define REQ10(hdrs) "GET / HTTP/1.0\r\n" hdrs "\r\n"
#define POST_HEAD                                                                                  \
    "POST /json_rpc HTTP/1.1\r\nHost: gw\r\nContent-Type: a/b\r\nContent-Length: 5\r\n\r\n"
#define NEXT_REQUEST     "GET /next HTTP/1.1\r\nHost: gw\r\n\r\n"
#define LINE(method, tg) method " " tg " HTTP/1.1\r\nHost: gw\r\n\r\n"

static const struct head_case heads[] = {
    /* Request lines. */
    {"simple GET", IN("GET /get_info HTTP/1.1\r\nHost: node:18089\r\n\r\n"),
     HEAD_OK("GET", "/get_info", "", 1), .nheaders = 1, .keep_alive = true},
    {"POST with length", IN(POST_HEAD "hello"), .head_len = sizeof(POST_HEAD) - 1,
     HEAD_OK("POST", "/json_rpc", "", 1), .nheaders = 3, LENGTH(5), .keep_alive = true},
    {"query split", IN(LINE("GET", "/x/y?a=1&b=%20?c")), HEAD_OK("GET", "/x/y", "a=1&b=%20?c", 1),
     .nheaders = 1, .keep_alive = true},
    {"empty query", IN(LINE("GET", "/p?")), HEAD_OK("GET", "/p", "", 1), .nheaders = 1,
     .keep_alive = true},
    {"query only", IN(LINE("GET", "/?x")), HEAD_OK("GET", "/", "x", 1), .nheaders = 1,
     .keep_alive = true},
    {"pchar target", IN(LINE("GET", "/a!$&'()*+,;=:@-._~%41/")),
     HEAD_OK("GET", "/a!$&'()*+,;=:@-._~%41/", "", 1), .nheaders = 1, .keep_alive = true},
    {"method with a dash", IN(LINE("M-SEARCH", "/")), HEAD_OK("M-SEARCH", "/", "", 1),
     .nheaders = 1, .keep_alive = true},
    {"every tchar in the method", IN(LINE("!#$%&'*+-.^_`|~09azAZ", "/")),
     HEAD_OK("!#$%&'*+-.^_`|~09azAZ", "/", "", 1), .nheaders = 1, .keep_alive = true},
    /* Keep-alive. */
    {"HTTP/1.0 closes by default", IN(REQ10("")), GET10(0, false)},
    {"HTTP/1.0 keep-alive", IN(REQ10("Connection: keep-alive\r\n")), GET10(1, true)},
    {"HTTP/1.0 Keep-Alive, any case", IN(REQ10("connection: Keep-Alive\r\n")), GET10(1, true)},
    {"HTTP/1.0 keep-alive, close", IN(REQ10("Connection: keep-alive, close\r\n")), GET10(1, false)},
    {"HTTP/1.0 with a Host", IN(REQ10("Host: gw\r\n")), GET10(1, false)},
    {"HTTP/1.1 keeps by default", IN(REQ11("")), GET11(1, true)},
    {"HTTP/1.1 close", IN(REQ11("Connection: close\r\n")), GET11(2, false)},
    {"close in a list", IN(REQ11("Connection: foo, close\r\n")), GET11(2, false)},
    {"close, any case", IN(REQ11("Connection: Keep-Alive ,CLOSE\r\n")), GET11(2, false)},
    {"close in a second header", IN(REQ11("Connection: foo\r\nConnection: close\r\n")),
     GET11(3, false)},
    {"not quite close", IN(REQ11("Connection: closed, xclose, close-ish\r\n")), GET11(2, true)},
    /* Expect. */
    {"Expect: 100-continue",
     IN("POST / HTTP/1.1\r\nHost: gw\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"),
     HEAD_OK("POST", "/", "", 1), .nheaders = 3, LENGTH(3), .keep_alive = true,
     .expect_continue = true},
    {"Expect, any case", IN(REQ11("expect: 100-Continue\r\n")), GET11(2, true),
     .expect_continue = true},
    {"Expect unknown", IN(REQ11("Expect: 200-ok\r\n")), GET11(2, true), .expect_unsupported = true},
    {"Expect 100-continue and more", IN(REQ11("Expect: 100-continue, foo\r\n")), GET11(2, true),
     .expect_continue = true, .expect_unsupported = true},
    {"Expect ignored in HTTP/1.0", IN(REQ10("Expect: 100-continue\r\n")), GET10(1, false)},
    {"Expect unknown in HTTP/1.0", IN(REQ10("Expect: x\r\n")), GET10(1, false),
     .expect_unsupported = true},
    {"Expect empty", IN(REQ11("Expect:\r\n")), GET11(2, true)},
    /* Framing. */
    {"chunked", IN("POST / HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\n"),
     HEAD_OK("POST", "/", "", 1), .nheaders = 2, .chunked = true, .keep_alive = true},
    {"CHUNKED, blanks", IN(REQ11("Transfer-Encoding: \t CHUNKED \t\r\n")), GET11(2, true),
     .chunked = true},
    {"chunked, empty list elements", IN(REQ11("Transfer-Encoding: , chunked ,\r\n")),
     GET11(2, true), .chunked = true},
    {"same length twice", IN(REQ11("Content-Length: 5\r\ncontent-length: 5\r\n")), GET11(3, true),
     LENGTH(5)},
    {"length equal in value", IN(REQ11("Content-Length: 5\r\nContent-Length: 005\r\n")),
     GET11(3, true), LENGTH(5)},
    {"length 0", IN(REQ11("Content-Length: 0\r\n")), GET11(2, true), LENGTH(0)},
    {"length 18 digits", IN(REQ11("Content-Length: 999999999999999999\r\n")), GET11(2, true),
     LENGTH(999999999999999999u)},
    {"length trimmed", IN(REQ11("Content-Length: \t 12 \t\r\n")), GET11(2, true), LENGTH(12)},
    /* Line ends. */
    {"bare LF", IN("GET / HTTP/1.1\nHost: gw\nX-A: b\n\n"), GET11(2, true)},
    {"CRLF then LF", IN("GET / HTTP/1.1\r\nHost: gw\r\n\n"), GET11(1, true)},
    {"LF then CRLF", IN("GET / HTTP/1.1\nHost: gw\n\r\n"), GET11(1, true)},
    {"mixed", IN("GET / HTTP/1.1\nHost: gw\r\nX-A: b\n\r\n"), GET11(2, true)},
    {"leading blank lines", IN("\r\n\n\r\n" REQ11("")), GET11(1, true)},
    {"leading blank line, LF", IN("\nGET / HTTP/1.1\nHost: gw\n\n"), GET11(1, true)},
    {"next request behind", IN(REQ11("") NEXT_REQUEST), .head_len = sizeof(REQ11("")) - 1,
     GET11(1, true)},
    /* Values. */
    {"values", IN(REQ11("X-Empty:\r\nX-Blank: \t \r\nX-Obs: caf\xc3\xa9\r\nX-In: a \t b\r\n")),
     GET11(5, true)},

    /* Malformed request lines. */
    {"no version", IN("GET /\r\nHost: gw\r\n\r\n"), BAD},
    {"lowercase version", IN("GET / http/1.1\r\nHost: gw\r\n\r\n"), BAD},
    {"HTTPS/1.1", IN("GET / HTTPS/1.1\r\nHost: gw\r\n\r\n"), BAD},
    {"HTTP/1.10", IN("GET / HTTP/1.10\r\nHost: gw\r\n\r\n"), BAD},
    {"HTTP/1.", IN("GET / HTTP/1.\r\nHost: gw\r\n\r\n"), BAD},
    {"HTTP/1", IN("GET / HTTP/1\r\nHost: gw\r\n\r\n"), BAD},
    {"HTTP/2", IN("GET / HTTP/2\r\nHost: gw\r\n\r\n"), BAD},
    {"HTTP/1.x", IN("GET / HTTP/1.x\r\nHost: gw\r\n\r\n"), BAD},
    {"HTTP/1.2", IN("GET / HTTP/1.2\r\nHost: gw\r\n\r\n"), REFUSED(HREQ_BAD_VERSION)},
    {"HTTP/2.0", IN("GET / HTTP/2.0\r\nHost: gw\r\n\r\n"), REFUSED(HREQ_BAD_VERSION)},
    {"HTTP/0.9", IN("GET / HTTP/0.9\r\n\r\n"), REFUSED(HREQ_BAD_VERSION)},
    {"HTTP/3.1", IN("GET / HTTP/3.1\r\n\r\n"), REFUSED(HREQ_BAD_VERSION)},
    {"two spaces after the method", IN("GET  / HTTP/1.1\r\nHost: gw\r\n\r\n"), BAD},
    {"two spaces before the version", IN("GET /  HTTP/1.1\r\nHost: gw\r\n\r\n"), BAD},
    {"space after the version", IN("GET / HTTP/1.1 \r\nHost: gw\r\n\r\n"), BAD},
    {"tab after the method", IN("GET\t/ HTTP/1.1\r\nHost: gw\r\n\r\n"), BAD},
    {"tab before the version", IN("GET /\tHTTP/1.1\r\nHost: gw\r\n\r\n"), BAD},
    {"space before the method", IN(" GET / HTTP/1.1\r\nHost: gw\r\n\r\n"), BAD},
    {"no target", IN("GET HTTP/1.1\r\nHost: gw\r\n\r\n"), BAD},
    {"method not a token", IN(LINE("GE(T", "/")), BAD},
    {"method with obs-text", IN(LINE("G\xc3\x89T", "/")), BAD},
    {"asterisk form", IN(LINE("OPTIONS", "*")), BAD},
    {"absolute form", IN(LINE("GET", "http://gw/x")), HEAD_OK("GET", "/x", "", 1), .nheaders = 1,
     .keep_alive = true},
    {"absolute form, https, any case, query", IN(LINE("GET", "HTTPS://gw:443/a/b?c=d")),
     HEAD_OK("GET", "/a/b", "c=d", 1), .nheaders = 1, .keep_alive = true},
    {"absolute form without a path", IN(LINE("GET", "http://gw")), BAD},
    {"absolute form, query right after the host", IN(LINE("GET", "http://gw?x=/y")), BAD},
    {"absolute form without a host", IN(LINE("GET", "http:///x")), BAD},
    {"absolute form, other scheme", IN(LINE("GET", "ftp://gw/x")), BAD},
    {"authority form", IN(LINE("CONNECT", "gw:443")), BAD},
    {"target with a control byte", IN(LINE("GET", "/a\x01z")), BAD},
    {"target with DEL", IN(LINE("GET", "/a\x7f")), BAD},
    {"target with obs-text", IN(LINE("GET", "/caf\xc3\xa9")), BAD},
    {"target with NUL", IN(LINE("GET", "/a\0z")), BAD},
    {"bare CR in the request line", IN("GET / HTTP/1.1\rHost: gw\r\n\r\n"), BAD},
    {"CR CR LF after the request line", IN("GET / HTTP/1.1\r\r\nHost: gw\r\n\r\n"), BAD},
    {"bare CR before the request line", IN("\rGET / HTTP/1.1\r\nHost: gw\r\n\r\n"), BAD},
    /* Malformed header lines. */
    {"folded with a space", IN(REQ11("X-A: b\r\n c\r\n")), BAD},
    {"folded with a tab", IN(REQ11("X-A: b\r\n\tc\r\n")), BAD},
    {"folded first header", IN("GET / HTTP/1.1\r\n Host: gw\r\n\r\n"), BAD},
    {"space before the colon", IN(REQ11("X-A : b\r\n")), BAD},
    {"tab before the colon", IN(REQ11("X-A\t: b\r\n")), BAD},
    {"empty name", IN(REQ11(": b\r\n")), BAD},
    {"no colon", IN(REQ11("X-A b\r\n")), BAD},
    {"name not a token", IN(REQ11("X(A): b\r\n")), BAD},
    {"space in the name", IN(REQ11("X A: b\r\n")), BAD},
    {"NUL in a value", IN(REQ11("X-A: b\0c\r\n")), BAD},
    {"control byte in a value", IN(REQ11("X-A: b\x01\r\n")), BAD},
    {"DEL in a value", IN(REQ11("X-A: b\x7f\r\n")), BAD},
    {"ESC in a value", IN(REQ11("X-A: \x1b[0m\r\n")), BAD},
    {"bare CR in a value", IN(REQ11("X-A: b\rc\r\n")), BAD},
    {"CR CR LF after a value", IN(REQ11("X-A: b\r\r\n")), BAD},
    {"bare CR ends a header", IN(REQ11("X-A: b\rX-B: c\r\n")), BAD},
    /* Content-Length. */
    {"length abc", IN(REQ11("Content-Length: abc\r\n")), BAD},
    {"length empty", IN(REQ11("Content-Length:\r\n")), BAD},
    {"length negative", IN(REQ11("Content-Length: -1\r\n")), BAD},
    {"length plus", IN(REQ11("Content-Length: +1\r\n")), BAD},
    {"length hex", IN(REQ11("Content-Length: 0x5\r\n")), BAD},
    {"length two numbers", IN(REQ11("Content-Length: 1 2\r\n")), BAD},
    {"length list", IN(REQ11("Content-Length: 5, 5\r\n")), BAD},
    {"length 19 digits", IN(REQ11("Content-Length: 1000000000000000000\r\n")), BAD},
    {"lengths differ", IN(REQ11("Content-Length: 5\r\nContent-Length: 6\r\n")), BAD},
    {"one length malformed", IN(REQ11("Content-Length: 5\r\nContent-Length: 5x\r\n")), BAD},
    /* Transfer-Encoding. */
    {"length then chunked", IN(REQ11("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n")), BAD},
    {"chunked then length", IN(REQ11("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n")), BAD},
    {"length 0 and chunked", IN(REQ11("Content-Length: 0\r\nTransfer-Encoding: chunked\r\n")), BAD},
    {"gzip and length", IN(REQ11("Transfer-Encoding: gzip\r\nContent-Length: 5\r\n")), BAD},
    {"gzip", IN(REQ11("Transfer-Encoding: gzip\r\n")), REFUSED(HREQ_NOT_IMPLEMENTED)},
    {"identity", IN(REQ11("Transfer-Encoding: identity\r\n")), REFUSED(HREQ_NOT_IMPLEMENTED)},
    {"gzip, chunked", IN(REQ11("Transfer-Encoding: gzip, chunked\r\n")),
     REFUSED(HREQ_NOT_IMPLEMENTED)},
    {"chunked, gzip", IN(REQ11("Transfer-Encoding: chunked, gzip\r\n")),
     REFUSED(HREQ_NOT_IMPLEMENTED)},
    {"chunked with a parameter", IN(REQ11("Transfer-Encoding: chunked;q=1\r\n")),
     REFUSED(HREQ_NOT_IMPLEMENTED)},
    {"chunked twice in a list", IN(REQ11("Transfer-Encoding: chunked, chunked\r\n")), BAD},
    {"chunked in two headers",
     IN(REQ11("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n")), BAD},
    {"empty coding", IN(REQ11("Transfer-Encoding: \r\n")), BAD},
    {"HTTP/1.0 chunked", IN(REQ10("Transfer-Encoding: chunked\r\n")), BAD},
    {"HTTP/1.0 gzip", IN(REQ10("Transfer-Encoding: gzip\r\n")), BAD},
    /* Host. */
    {"HTTP/1.1 without Host", IN("GET / HTTP/1.1\r\nX-A: b\r\n\r\n"), GET11(1, true)},
    {"two Hosts", IN(REQ11("Host: other\r\n")), BAD},
    {"two Hosts, any case", IN(REQ11("HOST: gw\r\n")), BAD},
};

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_msg("%s [%s]: %s", c->name, how, #cond);                                          \
    } while (0)

static bool points_into(const char *p, const char *buf, size_t len)
{
    return p >= buf && p < buf + len;
}

/* The fields of an accepted head, each string inside the head in buf. */
static void check_fields(const struct head_case *c, const struct hreq *r, const char *buf,
                         size_t head_len, const char *how)
{
    EXPECT(r->head_len == head_len);
    EXPECT(strcmp(r->method, c->method) == 0 && points_into(r->method, buf, head_len));
    EXPECT(strcmp(r->path, c->path) == 0 && points_into(r->path, buf, head_len));
    EXPECT(strcmp(r->query, c->query) == 0 && points_into(r->query, buf, head_len));
    EXPECT(r->minor == c->minor);
    EXPECT(r->nheaders == c->nheaders);
    for (size_t i = 0; i < r->nheaders; i++) {
        EXPECT(points_into(r->headers[i].name, buf, head_len));
        EXPECT(points_into(r->headers[i].value, buf, head_len));
    }
    EXPECT(r->has_length == c->has_length);
    EXPECT(r->content_length == c->content_length);
    EXPECT(r->chunked == c->chunked);
    EXPECT(r->keep_alive == c->keep_alive);
    EXPECT(r->expect_continue == c->expect_continue);
    EXPECT(r->expect_unsupported == c->expect_unsupported);
}

/* Parses in[0..len) from a buffer of exactly len bytes; when the answer is
 * HREQ_INCOMPLETE, the buffer must hold in[0..len) still. */
static enum hreq_result parse_copy(const char *in, size_t len, size_t max_head, struct hreq *r,
                                   char **kept)
{
    char *buf = copy_of(in, len);
    enum hreq_result res = hreq_parse(buf, len, max_head, r);
    if (res == HREQ_INCOMPLETE && len > 0)
        assert_memory_equal(buf, in, len);
    if (kept)
        *kept = buf;
    else
        free(buf);
    return res;
}

/* Every proper prefix of an accepted head is incomplete; max_head is met exactly. */
static void check_prefixes(const struct head_case *c, size_t head_len)
{
    struct hreq r;
    const char *how = "prefix";
    for (size_t k = 0; k < head_len; k++) {
        if (parse_copy(c->in, k, BIG_HEAD, &r, NULL) != HREQ_INCOMPLETE)
            fail_msg("%s: the prefix of %zu bytes is not incomplete", c->name, k);
    }
    how = "max_head = head";
    EXPECT(parse_copy(c->in, c->in_len, head_len, &r, NULL) == HREQ_OK);
    EXPECT(parse_copy(c->in, head_len, head_len, &r, NULL) == HREQ_OK);
    EXPECT(parse_copy(c->in, head_len - 1, head_len, &r, NULL) == HREQ_INCOMPLETE);
    how = "max_head = head - 1";
    EXPECT(parse_copy(c->in, c->in_len, head_len - 1, &r, NULL) == HREQ_HEAD_TOO_LARGE);
    EXPECT(parse_copy(c->in, head_len, head_len - 1, &r, NULL) == HREQ_HEAD_TOO_LARGE);
    EXPECT(parse_copy(c->in, head_len - 1, head_len - 1, &r, NULL) == HREQ_HEAD_TOO_LARGE);
    EXPECT(parse_copy(c->in, head_len - 2, head_len - 1, &r, NULL) == HREQ_INCOMPLETE);
}

static void check_head(const struct head_case *c)
{
    struct hreq r;
    char *buf;
    const char *how = "whole";
    enum hreq_result res = parse_copy(c->in, c->in_len, BIG_HEAD, &r, &buf);
    if (res != c->result)
        fail_msg("%s: result %d, expected %d", c->name, (int)res, (int)c->result);
    if (res == HREQ_OK) {
        size_t head_len = c->head_len ? c->head_len : c->in_len;
        check_fields(c, &r, buf, head_len, how);
        EXPECT(memcmp(buf + head_len, c->in + head_len, c->in_len - head_len) == 0);
        check_prefixes(c, head_len);
    }
    free(buf);
}

static void test_heads(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
        check_head(&heads[i]);
}

/* The strings sit in the buffer, their separators overwritten; the body is untouched. */
static void test_in_place(void **state)
{
    (void)state;
    static const char in[] = "POST /json_rpc?id=7 HTTP/1.1\r\nHost:  gw \r\nX-Empty:\r\n"
                             "X-Blank: \t \r\nX-Obs: caf\xc3\xa9\r\nx-in:\ta \t b\t\r\n"
                             "Content-Length: 2\r\n\r\nok";
    char buf[sizeof in];
    memcpy(buf, in, sizeof in);
    struct hreq r;
    assert_int_equal(hreq_parse(buf, sizeof in - 1, BIG_HEAD, &r), HREQ_OK);
    assert_int_equal(r.head_len, sizeof in - 3);
    assert_ptr_equal(r.method, buf);
    assert_string_equal(r.method, "POST");
    assert_ptr_equal(r.path, buf + 5);
    assert_string_equal(r.path, "/json_rpc");
    assert_ptr_equal(r.query, buf + 15);
    assert_string_equal(r.query, "id=7");
    assert_int_equal(r.nheaders, 6);
    static const char *const want[][2] = {
        {"Host", "gw"},           {"X-Empty", ""},    {"X-Blank", ""},
        {"X-Obs", "caf\xc3\xa9"}, {"x-in", "a \t b"}, {"Content-Length", "2"},
    };
    for (size_t i = 0; i < 6; i++) {
        assert_string_equal(r.headers[i].name, want[i][0]);
        assert_string_equal(r.headers[i].value, want[i][1]);
    }
    assert_memory_equal(buf + r.head_len, "ok", 3);
}

/* A request with Host and then extra header lines "X-<i>: <i>". */
static size_t build_headers(char *buf, size_t size, size_t extra)
{
    size_t n = (size_t)snprintf(buf, size, "GET / HTTP/1.1\r\nHost: gw\r\n");
    for (size_t i = 0; i < extra; i++)
        n += (size_t)snprintf(buf + n, size - n, "X-%zu: %zu\r\n", i, i);
    n += (size_t)snprintf(buf + n, size - n, "\r\n");
    assert_true(n < size);
    return n;
}

static void test_header_limit(void **state)
{
    (void)state;
    static char in[4096];
    struct hreq r;
    char *buf;
    size_t n = build_headers(in, sizeof in, HREQ_MAX_HEADERS - 1);
    assert_int_equal(parse_copy(in, n, BIG_HEAD, &r, &buf), HREQ_OK);
    assert_int_equal(r.nheaders, HREQ_MAX_HEADERS);
    assert_string_equal(hreq_header(&r, "X-62"), "62");
    free(buf);
    n = build_headers(in, sizeof in, HREQ_MAX_HEADERS);
    assert_int_equal(parse_copy(in, n, BIG_HEAD, &r, NULL), HREQ_HEAD_TOO_LARGE);
}

static void test_head_too_large(void **state)
{
    (void)state;
    static char in[4096];
    struct hreq r;
    /* Blank lines before the request line count. */
    memset(in, '\n', 100);
    assert_int_equal(parse_copy(in, 100, 100, &r, NULL), HREQ_HEAD_TOO_LARGE);
    assert_int_equal(parse_copy(in, 100, 101, &r, NULL), HREQ_INCOMPLETE);
    assert_int_equal(parse_copy(in, 100, 1000, &r, NULL), HREQ_INCOMPLETE);
    static const char get[] = "GET / HTTP/1.1\r\nHost: gw\r\n\r\n";
    memcpy(in + 100, get, sizeof get);
    assert_int_equal(parse_copy(in, 100 + sizeof get - 1, 100 + sizeof get - 1, &r, NULL), HREQ_OK);
    assert_int_equal(r.head_len, 100 + sizeof get - 1);
    assert_int_equal(parse_copy(in, 100 + sizeof get - 1, 100 + sizeof get - 2, &r, NULL),
                     HREQ_HEAD_TOO_LARGE);
    /* A header line that never ends. */
    size_t n = (size_t)snprintf(in, sizeof in, "GET / HTTP/1.1\r\nX-Pad: ");
    memset(in + n, 'a', sizeof in - n);
    assert_int_equal(parse_copy(in, sizeof in, 1024, &r, NULL), HREQ_HEAD_TOO_LARGE);
    assert_int_equal(parse_copy(in, sizeof in, sizeof in, &r, NULL), HREQ_HEAD_TOO_LARGE);
    assert_int_equal(parse_copy(in, sizeof in, sizeof in + 1, &r, NULL), HREQ_INCOMPLETE);
    /* A malformed head is judged only once it has ended within max_head. */
    static const char bad[] = "GET / HTTP/1.1\r\nHost: gw\r\nX-A : b\r\n\r\n";
    assert_int_equal(parse_copy(bad, sizeof bad - 1, BIG_HEAD, &r, NULL), HREQ_BAD_REQUEST);
    assert_int_equal(parse_copy(bad, sizeof bad - 1, 8, &r, NULL), HREQ_HEAD_TOO_LARGE);
}

/* An unfinished head that can no longer become a request is refused at once. */
static void test_early_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t len;
        enum hreq_result result;
    } cases[] = {
#define EARLY(s, r) {(s), sizeof(s) - 1, (r)}
        EARLY("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", HREQ_BAD_REQUEST), /* TLS */
        EARLY("GARBAGE\r\n", HREQ_BAD_REQUEST),
        EARLY("GET / HTTP/2.0\r\n", HREQ_BAD_VERSION),
        EARLY("GET  / HTTP/1.1\r\n", HREQ_BAD_REQUEST),
        EARLY("GET / HTTP/1.1 \n", HREQ_BAD_REQUEST),
        EARLY("G\tET", HREQ_BAD_REQUEST),
        EARLY(" GET", HREQ_BAD_REQUEST),
        EARLY("\r\n\x16\x03", HREQ_BAD_REQUEST),
        EARLY("GET / HTTP/1.1\r\n", HREQ_INCOMPLETE),
        EARLY("GET / HTTP/1.1\n", HREQ_INCOMPLETE),
        EARLY("GET / HTTP/1.1\r\nHost: gw\r\n", HREQ_INCOMPLETE),
        EARLY("GET / HTTP/1.1\r\nHost : gw\r\n", HREQ_INCOMPLETE), /* headers: at the end */
        EARLY("GET /x", HREQ_INCOMPLETE),
        EARLY("GE", HREQ_INCOMPLETE),
        EARLY("\r", HREQ_INCOMPLETE),
        EARLY("\r\n\r\nGET", HREQ_INCOMPLETE),
#undef EARLY
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hreq r;
        enum hreq_result res = parse_copy(cases[i].in, cases[i].len, BIG_HEAD, &r, NULL);
        if (res != cases[i].result)
            fail_msg("case %zu: result %d, expected %d", i, (int)res, (int)cases[i].result);
    }
}

static void test_header_lookup(void **state)
{
    (void)state;
    static const char in[] = "GET / HTTP/1.1\r\nHost: gw\r\nX-Dup: 1\r\nx-dup: 2\r\nX-DUP:3\r\n"
                             "X-Dupe: 4\r\n\r\n";
    char *buf;
    struct hreq r;
    assert_int_equal(parse_copy(in, sizeof in - 1, BIG_HEAD, &r, &buf), HREQ_OK);
    assert_string_equal(hreq_header(&r, "x-DuP"), "1");
    assert_int_equal(hreq_header_count(&r, "X-DUP"), 3);
    assert_int_equal(hreq_header_count(&r, "x-dup"), 3);
    assert_string_equal(hreq_header(&r, "x-dupe"), "4");
    assert_int_equal(hreq_header_count(&r, "X-Dupe"), 1);
    assert_string_equal(hreq_header(&r, "HOST"), "gw");
    assert_int_equal(hreq_header_count(&r, "host"), 1);
    assert_null(hreq_header(&r, "X-Du"));
    assert_int_equal(hreq_header_count(&r, "X-Du"), 0);
    assert_null(hreq_header(&r, "X-Dupes"));
    assert_null(hreq_header(&r, "X-Missing"));
    assert_int_equal(hreq_header_count(&r, "X-Missing"), 0);
    assert_null(hreq_header(&r, ""));
    assert_int_equal(hreq_header_count(&r, ""), 0);
    /* Every copy, in order (X-Forwarded-For from a client and from its balancer). */
    char joined[16];
    assert_true(hreq_header_join(&r, "x-dup", joined, sizeof joined));
    assert_string_equal(joined, "1,2,3");
    assert_true(hreq_header_join(&r, "X-Missing", joined, sizeof joined));
    assert_string_equal(joined, "");
    assert_false(hreq_header_join(&r, "x-dup", joined, 5)); /* "1,2,3" needs 6 */
    assert_string_equal(joined, "");
    assert_true(hreq_header_join(&r, "x-dup", joined, 6));
    free(buf);
}

struct query_case {
    const char *name;
    size_t outlen;
    bool found;
    const char *value; /* when found */
};

static void check_query(const char *in, const struct query_case *cases, size_t ncases)
{
    char *buf;
    struct hreq r;
    assert_int_equal(parse_copy(in, strlen(in), BIG_HEAD, &r, &buf), HREQ_OK);
    for (size_t i = 0; i < ncases; i++) {
        const struct query_case *q = &cases[i];
        char out[64];
        memset(out, '#', sizeof out);
        assert_true(q->outlen <= sizeof out);
        bool found = hreq_query_arg(&r, q->name, out, q->outlen);
        if (found != q->found)
            fail_msg("query %s, arg \"%s\" (out %zu): found %d", r.query, q->name, q->outlen,
                     found);
        if (found && strcmp(out, q->value) != 0)
            fail_msg("query %s, arg \"%s\": \"%s\", expected \"%s\"", r.query, q->name, out,
                     q->value);
        if (q->outlen < sizeof out)
            assert_int_equal(out[q->outlen], '#'); /* nothing written past out */
    }
    free(buf);
}

static void test_query_args(void **state)
{
    (void)state;
    static const struct query_case cases[] = {
        {"tier", 64, true, "gold"},       {"ti", 64, true, "7"},      {"t", 64, false, NULL},
        {"tie", 64, false, NULL},         {"tiers", 64, false, NULL}, {"TIER", 64, false, NULL},
        {"flag", 64, true, ""},           {"flag", 1, true, ""},      {"empty", 64, true, ""},
        {"a", 64, true, "1=2"}, /* the first of two */
        {"long", 11, true, "0123456789"}, {"long", 10, false, NULL},  {"long", 1, false, NULL},
        {"tier", 0, false, NULL},         {"x", 64, true, "%20y"},    {"", 64, true, "anon"},
        {"missing", 64, false, NULL},
    };
    check_query("GET /q?tier=gold&ti=7&flag&empty=&a=1=2&long=0123456789&&x=%20y&a=2&=anon "
                "HTTP/1.1\r\nHost: gw\r\n\r\n",
                cases, sizeof cases / sizeof cases[0]);

    static const char in2[] = "GET /q?ti=7&tier=gold HTTP/1.1\r\nHost: gw\r\n\r\n";
    static const struct query_case reversed[] = {
        {"tier", 64, true, "gold"},
        {"ti", 64, true, "7"},
        {"", 64, false, NULL},
    };
    check_query(in2, reversed, sizeof reversed / sizeof reversed[0]);

    static const struct query_case none[] = {{"q", 64, false, NULL}, {"", 64, false, NULL}};
    check_query("GET /q HTTP/1.1\r\nHost: gw\r\n\r\n", none, 2);
    check_query("GET /q? HTTP/1.1\r\nHost: gw\r\n\r\n", none, 2);

    /* A failed lookup leaves out empty. */
    char *buf;
    struct hreq r;
    char out[4] = "abc";
    assert_int_equal(parse_copy(in2, sizeof in2 - 1, BIG_HEAD, &r, &buf), HREQ_OK);
    assert_false(hreq_query_arg(&r, "tier", out, sizeof out));
    assert_string_equal(out, "");
    free(buf);
}

/* ---- chunked bodies ---- */

struct chunk_case {
    const char *name;
    const char *in;
    size_t in_len;
    enum hreq_chunk_phase phase;
    const char *data; /* decoded; compared unless HREQ_CHUNK_FAILED */
    size_t data_len;
    size_t rest; /* bytes after the body, left unconsumed */
};

#define DATA(s)   .data = (s), .data_len = sizeof(s) - 1
#define DONE      .phase = HREQ_CHUNK_DONE
#define FAILED    .phase = HREQ_CHUNK_FAILED
#define AFTER     "POST / HTTP/1.1\r\n"
#define ALPHABET  "abcdefghijklmnopqrstuvwxyz"
#define BIN_CHUNK "a\0b\r\n\n\r0\r\n\r\n"

static const struct chunk_case chunks[] = {
    {"one chunk", IN("5\r\nhello\r\n0\r\n\r\n"), DONE, DATA("hello")},
    {"hex sizes", IN("A\r\n0123456789\r\n1a\r\n" ALPHABET "\r\n1A\r\n" ALPHABET "\r\n0\r\n\r\n"),
     DONE, DATA("0123456789" ALPHABET ALPHABET)},
    {"no data", IN("0\r\n\r\n"), DONE, DATA("")},
    {"leading zeros", IN("0005\r\nhello\r\n000\r\n\r\n"), DONE, DATA("hello")},
    {"16 digits", IN("0000000000000003\r\nabc\r\n0000000000000000\r\n\r\n"), DONE, DATA("abc")},
    {"one-byte chunks", IN("1\r\na\r\n1\r\nb\r\n1\r\nc\r\n0\r\n\r\n"), DONE, DATA("abc")},
    {"binary data", IN("c\r\n" BIN_CHUNK "\r\n0\r\n\r\n"), DONE, DATA(BIN_CHUNK)},
    {"extensions", IN("5;x=y\r\nhello\r\n6;n=\"v; w\\\"\";m\r\n world\r\n0;last=1\r\n\r\n"), DONE,
     DATA("hello world")},
    {"trailers", IN("3\r\nabc\r\n0\r\nX-Trailer: 1\r\nOther: 2\r\n\r\n"), DONE, DATA("abc")},
    {"next request behind", IN("3\r\nabc\r\n0\r\n\r\n" AFTER), DONE, DATA("abc"),
     .rest = sizeof(AFTER) - 1},
    {"next request behind trailers", IN("3\r\nabc\r\n0\r\nX: 1\r\n\r\n" AFTER), DONE, DATA("abc"),
     .rest = sizeof(AFTER) - 1},
    /* Not over yet. */
    {"nothing", IN(""), .phase = HREQ_CHUNK_SIZE},
    {"in a size line", IN("5\r\nhello\r\n1"), .phase = HREQ_CHUNK_SIZE, DATA("hello")},
    {"in an extension", IN("5;ext"), .phase = HREQ_CHUNK_SIZE},
    {"before the size line's LF", IN("5\r"), .phase = HREQ_CHUNK_SIZE},
    {"in data", IN("5\r\nhel"), .phase = HREQ_CHUNK_DATA, DATA("hel")},
    {"before the data's CRLF", IN("5\r\nhello"), .phase = HREQ_CHUNK_CRLF, DATA("hello")},
    {"in the data's CRLF", IN("5\r\nhello\r"), .phase = HREQ_CHUNK_CRLF, DATA("hello")},
    {"in trailers", IN("0\r\nX: 1\r\n"), .phase = HREQ_CHUNK_TRAILER},
    {"before the last LF", IN("2\r\nab\r\n0\r\n\r"), .phase = HREQ_CHUNK_TRAILER, DATA("ab")},
    {"largest size", IN("ffffffffffffffff\r\nab"), .phase = HREQ_CHUNK_DATA, DATA("ab")},
    /* A size line without hex digits. */
    {"empty size line", IN("\r\nhello\r\n0\r\n\r\n"), FAILED},
    {"size x", IN("x\r\n"), FAILED},
    {"size g", IN("g\r\n"), FAILED},
    {"extension without a size", IN(";x\r\n"), FAILED},
    {"size after data", IN("3\r\nabc\r\n\r\n"), FAILED, DATA("abc")},
    {"signed size", IN("+5\r\nhello\r\n"), FAILED},
    /* Other malformed size lines. */
    {"17 digits", IN("00000000000000005\r\nhello\r\n0\r\n\r\n"), FAILED},
    {"size overflows", IN("10000000000000000\r\n"), FAILED},
    {"0x prefix", IN("0x5\r\nhello\r\n0\r\n\r\n"), FAILED},
    {"junk after the size", IN("5x\r\nhello\r\n0\r\n\r\n"), FAILED},
    {"space after the size", IN("5 \r\nhello\r\n0\r\n\r\n"), FAILED},
    {"space before the size", IN(" 5\r\nhello\r\n0\r\n\r\n"), FAILED},
    {"two sizes", IN("5 5\r\nhello\r\n0\r\n\r\n"), FAILED},
    {"bare LF after the size", IN("5\nhello\r\n0\r\n\r\n"), FAILED},
    {"bare CR after the size", IN("5\rhello\r\n0\r\n\r\n"), FAILED},
    {"bare CR in an extension", IN("5;a\rb\r\nhello\r\n0\r\n\r\n"), FAILED},
    {"bare LF in an extension", IN("5;a\nhello\r\n0\r\n\r\n"), FAILED},
    /* A missing CRLF after data. */
    {"data longer than its size", IN("3\r\nabcd\r\n0\r\n\r\n"), FAILED, DATA("abc")},
    {"bare LF after data", IN("3\r\nabc\n0\r\n\r\n"), FAILED, DATA("abc")},
    {"bare CR after data", IN("3\r\nabc\r0\r\n\r\n"), FAILED, DATA("abc")},
    {"LF CR after data", IN("3\r\nabc\n\r0\r\n\r\n"), FAILED, DATA("abc")},
    /* Trailers end with CRLF too. */
    {"bare LF ends the body", IN("0\r\n\n"), FAILED},
    {"bare LF ends a trailer", IN("0\r\nX: 1\n\r\n"), FAILED},
    {"bare CR in a trailer", IN("0\r\nX: 1\r2\r\n\r\n"), FAILED},
};

struct decoded {
    char data[256];
    size_t len;
    size_t consumed;
};

/* Decodes one piece from a buffer of exactly its size; keeps the decoded bytes. Returns
 * false once the decoder has stopped (done or failed). */
static bool decode_piece(struct hreq_chunked *c, struct decoded *d, const char *piece, size_t n)
{
    char *buf = copy_of(piece, n);
    size_t used = SIZE_MAX;
    size_t out = hreq_chunked_decode(c, buf, n, &used);
    assert_true(used <= n);
    assert_true(out <= used); /* data only ever moves left */
    assert_true(d->len + out <= sizeof d->data);
    memcpy(d->data + d->len, buf, out);
    d->len += out;
    d->consumed += used;
    free(buf);
    if (used < n)
        assert_true(c->phase == HREQ_CHUNK_DONE || c->phase == HREQ_CHUNK_FAILED);
    return used == n;
}

#define CHUNK_EXPECT(cond)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_msg("%s [step %zu, split %lld]: %s", k->name, step,                               \
                     split == SIZE_MAX ? -1LL : (long long)split, #cond);                          \
    } while (0)

/* One run: in pieces of step bytes or, when split <= in_len, in two pieces. */
static void run_chunks(const struct chunk_case *k, size_t step, size_t split)
{
    struct hreq_chunked c;
    struct decoded d = {.len = 0, .consumed = 0};
    hreq_chunked_init(&c);
    if (split <= k->in_len) {
        if (decode_piece(&c, &d, k->in, split))
            decode_piece(&c, &d, k->in + split, k->in_len - split);
    } else {
        size_t at = 0;
        do {
            size_t piece = step > 0 && step < k->in_len - at ? step : k->in_len - at;
            if (!decode_piece(&c, &d, k->in + at, piece))
                break;
            at += piece;
        } while (at < k->in_len);
    }
    CHUNK_EXPECT(c.phase == k->phase);
    if (k->phase != HREQ_CHUNK_FAILED) {
        CHUNK_EXPECT(d.consumed == k->in_len - k->rest);
        CHUNK_EXPECT(d.len == k->data_len);
        CHUNK_EXPECT(d.len == 0 || memcmp(d.data, k->data, d.len) == 0);
    } else {
        CHUNK_EXPECT(d.len <= k->data_len && (d.len == 0 || memcmp(d.data, k->data, d.len) == 0));
    }
    if (c.phase == HREQ_CHUNK_DONE || c.phase == HREQ_CHUNK_FAILED) { /* it stays stopped */
        char more[] = "5\r\nhello\r\n";
        size_t used = SIZE_MAX;
        CHUNK_EXPECT(hreq_chunked_decode(&c, more, sizeof more - 1, &used) == 0);
        CHUNK_EXPECT(used == 0);
        CHUNK_EXPECT(c.phase == k->phase);
    }
}

/* Whole, byte by byte, and in two pieces at every offset: always the same outcome. */
static void check_chunks(const struct chunk_case *k)
{
    run_chunks(k, 0, SIZE_MAX);
    run_chunks(k, 1, SIZE_MAX);
    for (size_t split = 0; split <= k->in_len; split++)
        run_chunks(k, 0, split);
}

static void test_chunks(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++)
        check_chunks(&chunks[i]);
}

/* A size or trailer line may hold 4096 bytes before its CRLF, not one more. */
static void test_chunk_line_max(void **state)
{
    (void)state;
    static char in[4096 + 64];
    struct chunk_case k = {"extension at max", in, 0, DONE, DATA("x")};
    k.in_len = build(in, sizeof in, "1;", 'e', 4096 - 2, "\r\nx\r\n0\r\n\r\n");
    check_chunks(&k);
    k.name = "trailer at max";
    k.in_len = build(in, sizeof in, "1\r\nx\r\n0\r\nX:", 't', 4096 - 2, "\r\n\r\n");
    check_chunks(&k);

    struct chunk_case over = {"extension over max", in, 0, FAILED};
    over.in_len = build(in, sizeof in, "1;", 'e', 4096 - 1, "\r\nx\r\n0\r\n\r\n");
    check_chunks(&over);
    over.name = "trailer over max";
    over.in_len = build(in, sizeof in, "0\r\nX:", 't', 4096 - 1, "\r\n\r\n");
    check_chunks(&over);
    over.name = "zeros over max";
    over.in_len = build(in, sizeof in, "", '0', 4096 + 1, "\r\n\r\n");
    check_chunks(&over);
}

/* A long chunk, decoded in place, arriving in uneven reads into the same buffer. */
static void test_chunk_in_place(void **state)
{
    (void)state;
    static char body[3000], in[3100], want[3000];
    for (size_t i = 0; i < sizeof body; i++)
        body[i] = (char)('a' + i % 26);
    size_t n = (size_t)snprintf(in, sizeof in, "%zx\r\n", sizeof body);
    memcpy(in + n, body, sizeof body);
    n += sizeof body;
    n += (size_t)snprintf(in + n, sizeof in - n, "\r\n0\r\n\r\n");
    memcpy(want, body, sizeof body);

    /* The caller's buffer: decoded bytes at the front, raw bytes after them. */
    struct hreq_chunked c;
    hreq_chunked_init(&c);
    static char buf[3100];
    size_t decoded = 0, raw = 0, fed = 0;
    while (c.phase != HREQ_CHUNK_DONE) {
        size_t piece = fed + 7 < n ? 7 : n - fed;
        memcpy(buf + decoded + raw, in + fed, piece);
        fed += piece;
        raw += piece;
        size_t used;
        size_t out = hreq_chunked_decode(&c, buf + decoded, raw, &used);
        memmove(buf + decoded + out, buf + decoded + used, raw - used);
        decoded += out;
        raw -= used;
        assert_int_not_equal(c.phase, HREQ_CHUNK_FAILED);
    }
    assert_int_equal(fed, n);
    assert_int_equal(raw, 0);
    assert_int_equal(decoded, sizeof body);
    assert_memory_equal(buf, want, sizeof body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heads),          cmocka_unit_test(test_early_refusals),
        cmocka_unit_test(test_in_place),       cmocka_unit_test(test_header_limit),
        cmocka_unit_test(test_head_too_large), cmocka_unit_test(test_header_lookup),
        cmocka_unit_test(test_query_args),     cmocka_unit_test(test_chunks),
        cmocka_unit_test(test_chunk_line_max), cmocka_unit_test(test_chunk_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
