/* hreq — the HTTP/1.x request a client sends to the gateway's own front end (front.c):
 * the request head parsed in place, and a chunked request body decoded incrementally.
 * Pure: no I/O, no allocation.
 *
 * Strict on purpose (the gateway sits in front of money): a request line or header that
 * does not follow RFC 9112 is refused rather than guessed at, which also closes the
 * request-smuggling doors (Content-Length together with Transfer-Encoding, two different
 * Content-Lengths, a transfer coding other than chunked, obsolete line folding, white
 * space before the colon, a bare CR). A bare LF ends a line, as RFC 9112 allows. */
#ifndef HREQ_H
#define HREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HREQ_MAX_HEADERS 64

enum hreq_result {
    HREQ_INCOMPLETE,      /* the head has not ended yet within the bytes given */
    HREQ_OK,              /* a whole head; hreq.head_len bytes of the buffer are the head */
    HREQ_BAD_REQUEST,     /* 400: malformed request line or header */
    HREQ_HEAD_TOO_LARGE,  /* 431: the head did not end within max_head bytes, or has more
                             than HREQ_MAX_HEADERS header lines */
    HREQ_BAD_VERSION,     /* 505: not HTTP/1.0 or HTTP/1.1 */
    HREQ_NOT_IMPLEMENTED, /* 501: a transfer coding other than chunked */
};

struct hreq_header {
    const char *name;  /* NUL-terminated, as sent (case kept) */
    const char *value; /* NUL-terminated, leading and trailing spaces and tabs trimmed */
};

struct hreq {
    const char *method; /* NUL-terminated token, e.g. "POST" */
    const char *path;   /* the target's path (up to '?'), NUL-terminated, not decoded */
    const char *query;  /* after '?', NUL-terminated, not decoded; "" when none */
    int minor;          /* HTTP/1.<minor>: 0 or 1 */
    struct hreq_header headers[HREQ_MAX_HEADERS];
    size_t nheaders;
    size_t head_len; /* bytes of the head, the blank line included */

    /* Framing and connection handling, from the headers. */
    bool has_length;         /* Content-Length was sent */
    uint64_t content_length; /* its value */
    bool chunked;            /* Transfer-Encoding: chunked (never with has_length) */
    bool keep_alive;         /* HTTP/1.1 without "Connection: close", or HTTP/1.0 with
                                "Connection: keep-alive" (tokens, any case) */
    bool expect_continue;    /* HTTP/1.1 with "Expect: 100-continue" (any case) */
    bool expect_unsupported; /* an Expect other than 100-continue (417) */
};

/* Parses the head at the start of buf[0..len). On HREQ_OK the strings in *out point into
 * buf, whose CR/LF/':'/' '/'?' separators were overwritten with NULs; buf must outlive
 * *out. On HREQ_INCOMPLETE nothing in buf was changed and the caller calls again with
 * more bytes (the same start). max_head bounds the head, blank line included: a head
 * not ended within max_head bytes is HREQ_HEAD_TOO_LARGE even when incomplete. An
 * unfinished head is refused as soon as it cannot become a request: bytes that are no
 * method, or a complete request line that is malformed (HREQ_BAD_REQUEST or
 * HREQ_BAD_VERSION), so a client speaking something else (TLS, say) is told at once.
 *
 * Request line: method (RFC 9110 token chars) SP request-target SP "HTTP/1." DIGIT, single
 * spaces. The target is origin-form ("/..."), or absolute-form with an http or https
 * scheme ("http://host/...": path and query are taken from it, the authority is
 * ignored); "*", authority-form, other schemes and an absolute-form target without a path
 * are HREQ_BAD_REQUEST. The target may not hold control characters, spaces or bytes >= 0x7f.
 * Empty lines before the request line (CRLF or LF) are skipped, as RFC 9112 allows.
 *
 * Header lines: name (token chars, at least one) ':' optional spaces/tabs value. Values
 * may not hold NUL, CR (except before LF) or other control characters but tab; bytes >=
 * 0x80 are allowed. A line starting with space or tab (obsolete folding) is
 * HREQ_BAD_REQUEST.
 *
 * Content-Length: digits only (at most 18); repeated copies must agree (a list
 * "5, 5" is refused: HREQ_BAD_REQUEST). Transfer-Encoding: only "chunked" (any case),
 * once; with Content-Length as well, HREQ_BAD_REQUEST; any other coding,
 * HREQ_NOT_IMPLEMENTED. HTTP/1.0 with Transfer-Encoding is HREQ_BAD_REQUEST.
 * Host: at most one (two are HREQ_BAD_REQUEST). An HTTP/1.1 request without one is
 * accepted, unlike RFC 9112 section 3.2 asks: monerod and libmicrohttpd accept it, some
 * scripts rely on that, and the gateway routes nothing by Host. */
enum hreq_result hreq_parse(char *buf, size_t len, size_t max_head, struct hreq *out);

/* The value of the first header named name (ASCII case-insensitive), or NULL. */
const char *hreq_header(const struct hreq *r, const char *name);

/* How many headers are named name (ASCII case-insensitive). */
size_t hreq_header_count(const struct hreq *r, const char *name);

/* The values of every header named name, in the order they came, joined with ',' into
 * out (X-Forwarded-For may come as several lines: a balancer adds its own). False, out
 * "", when they do not fit in outlen. */
bool hreq_header_join(const struct hreq *r, const char *name, char *out, size_t outlen);

/* The value of query argument name in r->query ("a=1&b=2"), copied undecoded into out
 * (NUL-terminated), or false when absent or longer than outlen - 1. An argument without
 * '=' has the value "". */
bool hreq_query_arg(const struct hreq *r, const char *name, char *out, size_t outlen);

/* ---- chunked request bodies ---- */

enum hreq_chunk_phase {
    HREQ_CHUNK_SIZE,    /* reading a chunk-size line (extensions ignored) */
    HREQ_CHUNK_DATA,    /* chunk bytes */
    HREQ_CHUNK_CRLF,    /* the CRLF after chunk data */
    HREQ_CHUNK_TRAILER, /* trailer lines up to the blank line (ignored) */
    HREQ_CHUNK_DONE,
    HREQ_CHUNK_FAILED,
};

struct hreq_chunked {
    enum hreq_chunk_phase phase;
    uint64_t left;    /* bytes left in the current chunk */
    size_t line_len;  /* bytes of the current size or trailer line seen so far */
    bool line_cr;     /* the current line's last byte was CR */
    uint64_t size;    /* the size being read */
    bool size_digits; /* at least one hex digit seen */
    bool in_ext;      /* past ';' in a size line */
};

void hreq_chunked_init(struct hreq_chunked *c);

/* Decodes in[0..in_len) in place: chunk data is moved to the front of in (data never
 * moves right, so the same buffer serves as output). Sets *consumed to the bytes of in
 * read and returns the number of decoded data bytes now at in[0..). Stops right after the
 * last chunk's trailer (phase HREQ_CHUNK_DONE; bytes after it belong to the next request)
 * or at an error (HREQ_CHUNK_FAILED: a size line without hex digits, more than 16 hex
 * digits, a line over 4096 bytes, a missing CRLF after data). */
size_t hreq_chunked_decode(struct hreq_chunked *c, char *in, size_t in_len, size_t *consumed);

#endif
