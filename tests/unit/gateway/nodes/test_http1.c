/* Table tests for gateway/http1: the response parser (Content-Length, chunked and
 * until-close bodies, keep-alive, interim answers, Content-Type, every failure), each
 * answer fed whole, one byte at a time and split in two at every offset; and the request
 * head's size and bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/http1.h"
#include "test_bytes.h"

struct answer_case {
    const char *name;
    const char *in;
    size_t in_len;
    bool eof;    /* the node closes the connection after the input */
    bool refuse; /* the body callback returns false (the body is then not compared) */
    enum h1_phase phase;
    long status;
    bool keep_alive;          /* compared unless H1_FAILED */
    const char *content_type; /* NULL: "" (compared unless H1_FAILED) */
    const char *body;         /* NULL: none */
    size_t body_len;
    const char *error; /* a substring of the reason, in H1_FAILED */
};

#define IN(s)          .in = (s), .in_len = sizeof(s) - 1
#define BODY(s)        .body = (s), .body_len = sizeof(s) - 1
#define DONE(st, ka)   .phase = H1_DONE, .status = (st), .keep_alive = (ka)
#define FAILS(st, why) .phase = H1_FAILED, .status = (st), .error = (why)
#define OK_CL          "HTTP/1.1 200 OK\r\nContent-Length: "
#define OK_CHUNKED     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
#define ENDED          "closed before the answer ended"

static const struct answer_case cases[] = {
    /* Content-Length bodies and statuses. */
    {"200 json", IN(OK_CL "5\r\nContent-Type: application/json\r\n\r\nhello"), DONE(200, true),
     .content_type = "application/json", BODY("hello")},
    {"length 0", IN(OK_CL "0\r\n\r\n"), DONE(200, true)},
    {"binary body", IN(OK_CL "7\r\n\r\na\0b\0\r\n\n"), DONE(200, true), BODY("a\0b\0\r\n\n")},
    {"404 no reason", IN("HTTP/1.1 404\r\nContent-Length: 3\r\n\r\nnop"), DONE(404, true),
     BODY("nop")},
    {"500 reason", IN("HTTP/1.1 500 Internal Server Error\r\ncontent-length:  2 \r\n\r\n{}"),
     DONE(500, true), BODY("{}")},
    {"content type trimmed", IN(OK_CL "0\r\nContent-Type: \t text/plain; charset=utf-8 \t\r\n\r\n"),
     DONE(200, true), .content_type = "text/plain; charset=utf-8"},
    {"same length twice", IN(OK_CL "2\r\nContent-Length: 2\r\n\r\nok"), DONE(200, true),
     BODY("ok")},
    {"folded line ignored", IN(OK_CL "2\r\nX-A: b\r\n  c\r\n\r\nok"), DONE(200, true), BODY("ok")},
    /* Chunked bodies. */
    {"chunked upper hex",
     IN(OK_CHUNKED "A\r\n0123456789\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n"),
     DONE(200, true), BODY("0123456789abcdefghijklmnopqrstuvwxyz")},
    {"chunked lower hex", IN(OK_CHUNKED "1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n"),
     DONE(200, true), BODY("abcdefghijklmnopqrstuvwxyz")},
    {"chunk extensions", IN(OK_CHUNKED "5;x=y\r\nhello\r\n6 ; n=\"v\"\r\n world\r\n0;last\r\n\r\n"),
     DONE(200, true), BODY("hello world")},
    {"trailers", IN(OK_CHUNKED "3\r\nabc\r\n0\r\nX-Trailer: 1\r\nOther: 2\r\n\r\n"),
     DONE(200, true), BODY("abc")},
    {"LF only",
     IN("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\nContent-Type: a/b\n\n3\nabc\n0\n\n"),
     DONE(200, true), .content_type = "a/b", BODY("abc")},
    {"chunked beats length",
     IN(OK_CL "100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"), DONE(200, true),
     BODY("abc")},
    {"gzip, chunked",
     IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nzz\r\n0\r\n\r\n"),
     DONE(200, true), BODY("zz")},
    {"gzip until close",
     IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nabcdef"),
     .eof = true, DONE(200, false), BODY("abcdef")},
    {"chunked, gzip until close",
     IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n3\r\n"), .eof = true,
     DONE(200, false), BODY("3\r\n")},
    {"gzip before close", IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nab"),
     .phase = H1_BODY_UNTIL_CLOSE, .status = 200, BODY("ab")},
    /* Neither length nor chunked: the body ends with the connection. */
    {"until close", IN("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome\0body"),
     .eof = true, DONE(200, false), .content_type = "text/plain", BODY("some\0body")},
    {"until close, empty", IN("HTTP/1.1 200 OK\r\n\r\n"), .eof = true, DONE(200, false)},
    {"until close, HTTP/1.0 keep-alive", IN("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nx"),
     .eof = true, DONE(200, false), BODY("x")},
    /* Keep-alive. */
    {"close", IN(OK_CL "2\r\nConnection: close\r\n\r\nok"), DONE(200, false), BODY("ok")},
    {"close in a list", IN(OK_CL "2\r\nConnection: foo, close\r\n\r\nok"), DONE(200, false),
     BODY("ok")},
    {"close, any case", IN(OK_CL "2\r\nconnection: Keep-Alive ,CLOSE\r\n\r\nok"), DONE(200, false),
     BODY("ok")},
    {"not quite close", IN(OK_CL "2\r\nConnection: closed, xclose\r\n\r\nok"), DONE(200, true),
     BODY("ok")},
    {"HTTP/1.0 default", IN("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"), DONE(200, false),
     BODY("ok")},
    {"HTTP/1.0 keep-alive",
     IN("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok"),
     DONE(200, true), BODY("ok")},
    {"HTTP/1.0 keep-alive, close",
     IN("HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n"),
     DONE(200, false)},
    /* No body; interim answers. */
    {"204", IN("HTTP/1.1 204 No Content\r\n\r\n"), DONE(204, true)},
    {"304 with length", IN("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n"),
     DONE(304, true)},
    {"204 chunked", IN("HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n"),
     DONE(204, true)},
    {"100 then 200",
     IN("HTTP/1.1 100 Continue\r\nContent-Type: x/y\r\nConnection: close\r\n\r\n" OK_CL
        "2\r\n\r\nok"),
     DONE(200, true), BODY("ok")},
    {"102 twice then 200",
     IN("HTTP/1.1 102\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n" OK_CHUNKED "0\r\n\r\n"),
     DONE(200, true)},
    /* Malformed status lines. */
    {"HTTP/2", IN("HTTP/2 200\r\n\r\n"), FAILS(0, "malformed status line")},
    {"HTP/1.1", IN("HTP/1.1 200 OK\r\n\r\n"), FAILS(0, "malformed status line")},
    {"two digits", IN("HTTP/1.1 20 OK\r\n\r\n"), FAILS(0, "malformed status line")},
    {"no space after code", IN("HTTP/1.1 200OK\r\n\r\n"), FAILS(0, "malformed status line")},
    {"HTTP/1.2", IN("HTTP/1.2 200 OK\r\n\r\n"), FAILS(0, "malformed status line")},
    {"code 600", IN("HTTP/1.1 600 Odd\r\n\r\n"), FAILS(0, "malformed status line")},
    {"code 099", IN("HTTP/1.1 099 Odd\r\n\r\n"), FAILS(0, "malformed status line")},
    {"blank first line", IN("\r\nHTTP/1.1 200 OK\r\n\r\n"), FAILS(0, "malformed status line")},
    /* Malformed headers. */
    {"length abc", IN(OK_CL "abc\r\n\r\n"), FAILS(200, "malformed Content-Length")},
    {"length negative", IN(OK_CL "-1\r\n\r\n"), FAILS(200, "malformed Content-Length")},
    {"length plus", IN(OK_CL "+1\r\n\r\n"), FAILS(200, "malformed Content-Length")},
    {"length empty", IN(OK_CL "\r\n\r\n"), FAILS(200, "malformed Content-Length")},
    {"length two numbers", IN(OK_CL "1 2\r\n\r\n"), FAILS(200, "malformed Content-Length")},
    {"length overflow", IN(OK_CL "18446744073709551616\r\n\r\n"),
     FAILS(200, "malformed Content-Length")},
    {"length conflict", IN(OK_CL "2\r\nContent-Length: 3\r\n\r\nok"),
     FAILS(200, "conflicting Content-Length")},
    {"no colon", IN("HTTP/1.1 200 OK\r\nBogus header\r\n\r\n"),
     FAILS(200, "malformed header line")},
    {"empty name", IN("HTTP/1.1 200 OK\r\n: value\r\n\r\n"), FAILS(200, "malformed header line")},
    /* A Content-Type is copied into the client's answer head: a control character in it
     * (a bare CR splitting that head, say) makes the answer malformed. */
    {"type with bare CR", IN(OK_CL "2\r\nContent-Type: a/b\rSet-Cookie: x=1\r\n\r\nok"),
     FAILS(200, "malformed Content-Type")},
    {"type with NUL", IN(OK_CL "2\r\nContent-Type: a/b\0x\r\n\r\nok"),
     FAILS(200, "malformed Content-Type")},
    {"type with DEL", IN(OK_CL "2\r\nContent-Type: a/\x7f\r\n\r\nok"),
     FAILS(200, "malformed Content-Type")},
    {"type with VT", IN(OK_CL "2\r\nContent-Type: a/b\v\r\n\r\nok"),
     FAILS(200, "malformed Content-Type")},
    {"type with inner tab", IN(OK_CL "0\r\nContent-Type: a/b;\tq=1\r\n\r\n"), DONE(200, true),
     .content_type = "a/b;\tq=1"},
    /* Malformed chunks. */
    {"chunk size xyz", IN(OK_CHUNKED "xyz\r\n"), FAILS(200, "malformed chunk size")},
    {"chunk size empty", IN(OK_CHUNKED "\r\n"), FAILS(200, "malformed chunk size")},
    {"chunk size junk", IN(OK_CHUNKED "5 x\r\nhello\r\n0\r\n\r\n"),
     FAILS(200, "malformed chunk size")},
    {"chunk size 0x", IN(OK_CHUNKED "0x5\r\nhello\r\n0\r\n\r\n"),
     FAILS(200, "malformed chunk size")},
    {"chunk size overflow", IN(OK_CHUNKED "10000000000000000\r\n"), FAILS(200, "overflows")},
    {"chunk too long", IN(OK_CHUNKED "3\r\nabcd\r\n0\r\n\r\n"), FAILS(200, "longer than its size"),
     BODY("abc")},
    /* The node closes early. */
    {"eof in status line", IN("HTTP/1."), .eof = true, FAILS(0, ENDED)},
    {"eof in headers", IN(OK_CL "5\r\nContent-Le"), .eof = true, FAILS(200, ENDED)},
    {"eof before blank line", IN(OK_CL "5\r\n"), .eof = true, FAILS(200, ENDED)},
    {"eof in body", IN(OK_CL "5\r\n\r\nhel"), .eof = true, FAILS(200, ENDED), BODY("hel")},
    {"eof in chunk", IN(OK_CHUNKED "5\r\nhel"), .eof = true, FAILS(200, ENDED), BODY("hel")},
    {"eof after chunk", IN(OK_CHUNKED "3\r\nabc\r\n"), .eof = true, FAILS(200, ENDED), BODY("abc")},
    {"eof in trailers", IN(OK_CHUNKED "0\r\nX: 1\r\n"), .eof = true, FAILS(200, ENDED)},
    /* The caller refuses the body. */
    {"refused by length", IN(OK_CL "5\r\n\r\nhello"), .refuse = true,
     FAILS(200, "the body was refused")},
    {"refused chunk", IN(OK_CHUNKED "5\r\nhello\r\n0\r\n\r\n"), .refuse = true,
     FAILS(200, "the body was refused")},
    {"refused until close", IN("HTTP/1.1 200 OK\r\n\r\nhello"), .refuse = true,
     FAILS(200, "the body was refused")},
};

struct sink {
    char data[512];
    size_t len;
    bool refuse;
};

static bool on_body(void *ctx, const char *data, size_t len)
{
    struct sink *s = ctx;
    assert_true(len > 0);
    assert_true(s->len + len <= sizeof s->data);
    memcpy(s->data + s->len, data, len);
    s->len += len;
    return !s->refuse;
}

/* Feeds data in pieces of step bytes (0: all at once) until it is used up or the parser
 * stops taking it; returns how many bytes were consumed. */
static size_t feed(struct h1_parser *p, struct sink *s, const char *data, size_t len, size_t step)
{
    size_t used = 0;
    while (used < len) {
        size_t piece = step > 0 && step < len - used ? step : len - used;
        size_t n = h1_parse(p, data + used, piece, on_body, s);
        assert_true(n <= piece);
        used += n;
        if (n < piece) {
            assert_true(p->phase == H1_DONE || p->phase == H1_FAILED);
            break;
        }
    }
    return used;
}

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_msg("%s [step %zu, split %lld]: %s", c->name, step,                               \
                     split == SIZE_MAX ? -1LL : (long long)split, #cond);                          \
    } while (0)

/* One run of a case: in pieces of step bytes or, when split <= in_len, in two pieces. */
static void run_case(const struct answer_case *c, size_t step, size_t split)
{
    struct h1_parser p;
    struct sink s = {.len = 0, .refuse = c->refuse};
    h1_parser_init(&p);
    EXPECT(h1_nothing_received(&p));
    size_t used;
    if (split <= c->in_len) {
        used = feed(&p, &s, c->in, split, 0);
        if (used == split)
            used += feed(&p, &s, c->in + split, c->in_len - split, 0);
    } else {
        used = feed(&p, &s, c->in, c->in_len, step);
    }
    if (c->eof)
        EXPECT(h1_parse_eof(&p) == (c->phase == H1_DONE));
    EXPECT(p.phase == c->phase);
    EXPECT(p.status == c->status);
    if (c->phase == H1_FAILED) {
        EXPECT(p.error != NULL && strstr(p.error, c->error) != NULL);
    } else {
        EXPECT(p.error == NULL);
        EXPECT(used == c->in_len);
        EXPECT(p.keep_alive == c->keep_alive);
        EXPECT(strcmp(p.content_type, c->content_type ? c->content_type : "") == 0);
    }
    if (!c->refuse) {
        EXPECT(s.len == c->body_len);
        EXPECT(s.len == 0 || memcmp(s.data, c->body, s.len) == 0);
    }
    if (p.phase == H1_DONE) { /* the answer is over: nothing more is taken */
        EXPECT(h1_parse(&p, "HTTP/1.1 200 OK\r\n", 17, on_body, &s) == 0);
        EXPECT(h1_parse_eof(&p) && p.phase == H1_DONE);
    }
}

/* Whole, byte by byte, and in two pieces at every offset: always the same outcome. */
static void check_case(const struct answer_case *c)
{
    run_case(c, 0, SIZE_MAX);
    run_case(c, 1, SIZE_MAX);
    for (size_t split = 0; split <= c->in_len; split++)
        run_case(c, 0, split);
}

static void test_answers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
}

/* A complete answer followed by the next one's bytes: only the answer is consumed. */
static void test_stops_at_end(void **state)
{
    (void)state;
    static const char next[] = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct answer_case *c = &cases[i];
        if (c->phase != H1_DONE || c->eof)
            continue;
        char *buf = malloc(c->in_len + sizeof next);
        assert_non_null(buf);
        memcpy(buf, c->in, c->in_len);
        memcpy(buf + c->in_len, next, sizeof next);
        struct h1_parser p;
        struct sink s = {.len = 0, .refuse = false};
        h1_parser_init(&p);
        size_t used = h1_parse(&p, buf, c->in_len + sizeof next - 1, on_body, &s);
        if (used != c->in_len || p.phase != H1_DONE || s.len != c->body_len)
            fail_msg("%s: consumed %zu of an answer of %zu bytes", c->name, used, c->in_len);
        free(buf);
    }
}

static void test_content_type_max(void **state)
{
    (void)state;
    static char in[512], type[H1_CONTENT_TYPE_MAX];
    const char *prefix = "HTTP/1.1 204 No Content\r\nContent-Type:  ";
    /* H1_CONTENT_TYPE_MAX - 1 bytes (trimmed) are kept. */
    struct answer_case c = {"type at max", in, 0, DONE(204, true), .content_type = type};
    memset(type, 't', sizeof type - 1);
    type[sizeof type - 1] = '\0';
    c.in_len = build(in, sizeof in, prefix, 't', H1_CONTENT_TYPE_MAX - 1, " \r\n\r\n");
    check_case(&c);
    /* One more is not reported at all. */
    struct answer_case over = {"type over max", in, 0, DONE(204, true), .content_type = ""};
    over.in_len = build(in, sizeof in, prefix, 't', H1_CONTENT_TYPE_MAX, "\r\n\r\n");
    check_case(&over);
}

/* A line may be H1_LINE_MAX bytes with its CRLF or LF, not one more. */
static void test_line_max(void **state)
{
    (void)state;
    static char in[H1_LINE_MAX + 256];
    const char *status = "HTTP/1.1 200 OK\r\n";
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%sX-Pad: ", status); /* the line's first 7 bytes */
    struct answer_case c = {"header line at max", in, 0, DONE(200, true)};
    c.in_len = build(in, sizeof in, prefix, 'a', H1_LINE_MAX - 9, "\r\nContent-Length: 0\r\n\r\n");
    check_case(&c);
    c.name = "LF header line at max";
    c.in_len = build(in, sizeof in, prefix, 'a', H1_LINE_MAX - 8, "\nContent-Length: 0\r\n\r\n");
    check_case(&c);

    struct answer_case over = {"header line over max", in, 0,
                               FAILS(200, "header or chunk line too long")};
    over.in_len =
        build(in, sizeof in, prefix, 'a', H1_LINE_MAX - 8, "\r\nContent-Length: 0\r\n\r\n");
    check_case(&over);
    over.name = "LF header line over max";
    over.in_len = build(in, sizeof in, prefix, 'a', H1_LINE_MAX - 7, "\nContent-Length: 0\r\n\r\n");
    check_case(&over);
    over.name = "chunk extension over max";
    over.in_len = build(in, sizeof in, OK_CHUNKED "1;", 'e', H1_LINE_MAX - 3, "\r\nx\r\n0\r\n\r\n");
    check_case(&over);
    over.name = "status line over max";
    over.status = 0;
    over.in_len = build(in, sizeof in, "HTTP/1.1 200 ", 'r', H1_LINE_MAX - 14, "\r\n\r\n");
    check_case(&over);
    over.name = "no line end";
    over.in_len = build(in, sizeof in, "", 'H', H1_LINE_MAX, "");
    check_case(&over);
}

static void test_nothing_received(void **state)
{
    (void)state;
    struct h1_parser p;
    struct sink s = {.len = 0, .refuse = false};
    h1_parser_init(&p);
    assert_true(h1_nothing_received(&p));
    assert_int_equal(h1_parse(&p, "", 0, on_body, &s), 0);
    assert_true(h1_nothing_received(&p));
    assert_false(h1_parse_eof(&p));
    assert_int_equal(p.phase, H1_FAILED);
    assert_string_equal(p.error, "closed without an answer");
    assert_false(h1_parse_eof(&p)); /* a second close changes nothing */
    assert_string_equal(p.error, "closed without an answer");

    h1_parser_init(&p);
    assert_int_equal(h1_parse(&p, "H", 1, on_body, &s), 1);
    assert_false(h1_nothing_received(&p));
    assert_false(h1_parse_eof(&p));
    assert_string_equal(p.error, ENDED);

    /* An interim answer says the node has the request: the close is no clean one. */
    static const char interim[] = "HTTP/1.1 100 Continue\r\n\r\n";
    h1_parser_init(&p);
    assert_int_equal(h1_parse(&p, interim, sizeof interim - 1, on_body, &s), sizeof interim - 1);
    assert_false(h1_nothing_received(&p));
    assert_false(h1_parse_eof(&p));
    assert_string_equal(p.error, ENDED);
}

struct head_case {
    const char *method, *target, *host;
    const struct h1_header *headers;
    size_t nheaders;
    bool has_body;
    size_t body_len;
    const char *expected;
};

static void test_request_head(void **state)
{
    (void)state;
    static const struct h1_header json[] = {{"Content-Type", "application/json"},
                                            {"Accept", "*/*"}};
    static const struct h1_header empty[] = {{"X-Empty", ""}};
    static const struct head_case heads[] = {
        {"POST", "/json_rpc", "node:18081", json, 2, true, 42,
         "POST /json_rpc HTTP/1.1\r\nHost: node:18081\r\nContent-Type: application/json\r\n"
         "Accept: */*\r\nContent-Length: 42\r\n\r\n"},
        {"GET", "/get_info", "127.0.0.1", NULL, 0, false, 0,
         "GET /get_info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
        {"GET", "/", "h", empty, 1, false, 99, "GET / HTTP/1.1\r\nHost: h\r\nX-Empty: \r\n\r\n"},
        {"POST", "/", "h", NULL, 0, true, 0,
         "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"},
        {"POST", "/x", "h", empty, 1, true, 1234567,
         "POST /x HTTP/1.1\r\nHost: h\r\nX-Empty: \r\nContent-Length: 1234567\r\n\r\n"},
        {"PUT", "/", "h", NULL, 0, true, 10,
         "PUT / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n"},
    };
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        const struct head_case *h = &heads[i];
        size_t want = strlen(h->expected);
        size_t size = h1_request_head_size(h->method, h->target, h->host, h->headers, h->nheaders,
                                           h->has_body, h->body_len);
        assert_int_equal(size, want);
        char out[256];
        memset(out, '#', sizeof out);
        size_t n = h1_format_request_head(out, h->method, h->target, h->host, h->headers,
                                          h->nheaders, h->has_body, h->body_len);
        assert_int_equal(n, want);
        assert_memory_equal(out, h->expected, want);
        assert_int_equal(out[want], '#'); /* nothing written past the head, not even a NUL */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answers),          cmocka_unit_test(test_stops_at_end),
        cmocka_unit_test(test_content_type_max), cmocka_unit_test(test_line_max),
        cmocka_unit_test(test_nothing_received), cmocka_unit_test(test_request_head),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
