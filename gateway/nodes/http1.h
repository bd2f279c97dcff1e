/* http1 — the HTTP/1.1 a node connection speaks: request framing and an incremental
 * response parser, pure (no I/O), for the upstream engine's own node client.
 *
 * The parser reads one answer: status line, headers, then a body delimited by
 * Content-Length, by chunked transfer coding, or by the connection's close. It keeps only
 * what the engine needs (status, Content-Type, whether the connection may be reused) and
 * hands body bytes to a callback as they arrive, so a body is copied exactly once, into
 * the caller's buffer. Interim 1xx answers are skipped. Anything malformed ends in
 * H1_FAILED with a reason, a Content-Type with a control character included (it would be
 * copied into the client's answer head); the parser never reads past the end of the
 * answer. */
#ifndef HTTP1_H
#define HTTP1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define H1_LINE_MAX         8192 /* status, header, chunk-size and trailer lines */
#define H1_CONTENT_TYPE_MAX 128  /* longer Content-Type values are not reported */

enum h1_phase {
    H1_STATUS_LINE,
    H1_HEADER_LINE,
    H1_BODY_BY_LENGTH,
    H1_BODY_UNTIL_CLOSE,
    H1_CHUNK_SIZE_LINE,
    H1_CHUNK_DATA,
    H1_CHUNK_DATA_END,
    H1_TRAILER_LINE,
    H1_DONE,
    H1_FAILED,
};

struct h1_parser {
    enum h1_phase phase;
    long status;
    bool keep_alive; /* the connection may carry another request after this answer */
    char content_type[H1_CONTENT_TYPE_MAX]; /* "" when absent or too long */
    const char *error;                      /* why, in H1_FAILED */

    /* Parser state. */
    bool saw_interim; /* a 1xx answer came first: the node has the request */
    bool http10, saw_close, saw_keep_alive, chunked, until_close, has_length;
    uint64_t content_length;
    uint64_t left; /* body or chunk bytes still to come */
    size_t line_len;
    char line[H1_LINE_MAX];
};

/* Receives body bytes in order; returns false to stop (the parser then fails with
 * "the body was refused", e.g. too large for the caller). */
typedef bool (*h1_body_fn)(void *ctx, const char *data, size_t len);

void h1_parser_init(struct h1_parser *p);

/* Feeds the next bytes from the connection. Returns how many were consumed: all of them,
 * unless the answer ended (H1_DONE) or failed (H1_FAILED) inside this buffer; bytes left
 * over after H1_DONE are not part of this answer. */
size_t h1_parse(struct h1_parser *p, const char *data, size_t len, h1_body_fn on_body, void *ctx);

/* The connection was closed by the node. Returns true when that completes the answer (a
 * body delimited by the close); otherwise the parser fails ("closed before the answer
 * ended") and false is returned. */
bool h1_parse_eof(struct h1_parser *p);

/* True while not one byte of the answer has been consumed. */
bool h1_nothing_received(const struct h1_parser *p);

struct h1_header {
    const char *name;
    const char *value;
};

/* The exact size of the request head h1_format_request_head writes. */
size_t h1_request_head_size(const char *method, const char *target, const char *host,
                            const struct h1_header *headers, size_t nheaders, bool has_body,
                            size_t body_len);

/* Writes the request head: "<method> <target> HTTP/1.1", Host, the given headers (names
 * and values already checked free of CR and LF), Content-Length when has_body, and the
 * blank line; no NUL. out must hold h1_request_head_size(...) bytes; returns that many. */
size_t h1_format_request_head(char *out, const char *method, const char *target, const char *host,
                              const struct h1_header *headers, size_t nheaders, bool has_body,
                              size_t body_len);

#endif
