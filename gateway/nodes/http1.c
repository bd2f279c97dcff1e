/* http1 — see http1.h. */
#include "nodes/http1.h"

#include "core/http_text.h"
#include "xg_str.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

void h1_parser_init(struct h1_parser *p)
{
    p->phase = H1_STATUS_LINE;
    p->status = 0;
    p->keep_alive = false;
    p->content_type[0] = '\0';
    p->error = NULL;
    p->saw_interim = false;
    p->http10 = p->saw_close = p->saw_keep_alive = false;
    p->chunked = p->until_close = p->has_length = false;
    p->content_length = 0;
    p->left = 0;
    p->line_len = 0;
}

bool h1_nothing_received(const struct h1_parser *p)
{
    return p->phase == H1_STATUS_LINE && p->line_len == 0 && !p->saw_interim;
}

static void h1_fail(struct h1_parser *p, const char *why)
{
    p->phase = H1_FAILED;
    p->error = why;
}

static bool h1_token_equals(const char *s, size_t n, const char *token)
{
    return strlen(token) == n && strncasecmp(s, token, n) == 0;
}

/* Calls on_token for each comma-separated, trimmed, non-empty element of a list value. */
static void h1_each_list_token(struct h1_parser *p, const char *v, size_t n,
                               void (*on_token)(struct h1_parser *, const char *, size_t))
{
    while (n > 0) {
        const char *comma = memchr(v, ',', n);
        size_t len = comma ? (size_t)(comma - v) : n;
        size_t tn = len;
        const char *t = http_trim(v, &tn);
        if (tn > 0)
            on_token(p, t, tn);
        if (!comma)
            break;
        v += len + 1;
        n -= len + 1;
    }
}

static void h1_on_connection_token(struct h1_parser *p, const char *t, size_t n)
{
    if (h1_token_equals(t, n, "close"))
        p->saw_close = true;
    else if (h1_token_equals(t, n, "keep-alive"))
        p->saw_keep_alive = true;
}

/* The last transfer coding decides: chunked frames the body; any other coding leaves it
 * delimited by the connection's close. */
static void h1_on_coding_token(struct h1_parser *p, const char *t, size_t n)
{
    p->chunked = h1_token_equals(t, n, "chunked");
    p->until_close = !p->chunked;
}

static bool h1_parse_decimal(const char *s, size_t n, uint64_t *out)
{
    return http_parse_decimal(s, n, 19, out); /* 19 digits always fit in 64 bits */
}

static void h1_on_content_length(struct h1_parser *p, const char *v, size_t n)
{
    uint64_t len;
    if (!h1_parse_decimal(v, n, &len)) {
        h1_fail(p, "malformed Content-Length");
        return;
    }
    if (p->has_length && len != p->content_length) {
        h1_fail(p, "conflicting Content-Length headers");
        return;
    }
    p->has_length = true;
    p->content_length = len;
}

static void h1_on_status_line(struct h1_parser *p, const char *s, size_t n)
{
    /* "HTTP/1.x SSS[ reason]" */
    if (n < 12 || strncmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1') || s[8] != ' ' ||
        s[9] < '1' || s[9] > '5' || s[10] < '0' || s[10] > '9' || s[11] < '0' || s[11] > '9' ||
        (n > 12 && s[12] != ' ')) {
        h1_fail(p, "malformed status line");
        return;
    }
    p->http10 = s[7] == '0';
    p->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
    p->phase = H1_HEADER_LINE;
}

static void h1_on_header_line(struct h1_parser *p, const char *s, size_t n)
{
    if (http_is_blank(s[0]))
        return; /* an obsolete folded continuation: of no header we read */
    const char *colon = memchr(s, ':', n);
    if (!colon || colon == s) {
        h1_fail(p, "malformed header line");
        return;
    }
    size_t name_len = (size_t)(colon - s);
    size_t vn = n - name_len - 1;
    const char *v = http_trim(colon + 1, &vn);
    if (h1_token_equals(s, name_len, "Content-Length")) {
        h1_on_content_length(p, v, vn);
    } else if (h1_token_equals(s, name_len, "Transfer-Encoding")) {
        h1_each_list_token(p, v, vn, h1_on_coding_token);
    } else if (h1_token_equals(s, name_len, "Connection")) {
        h1_each_list_token(p, v, vn, h1_on_connection_token);
    } else if (h1_token_equals(s, name_len, "Content-Type")) {
        /* The value goes into the client's answer head: a control character there is a
         * broken (or hostile) node, and its whole answer is refused, never repaired. */
        if (!http_field_value_ok(v, vn)) {
            h1_fail(p, "malformed Content-Type");
            return;
        }
        if (vn < sizeof p->content_type) {
            memcpy(p->content_type, v, vn);
            p->content_type[vn] = '\0';
        }
    }
}

/* The blank line after the headers: decides how the body is delimited. */
static void h1_on_headers_end(struct h1_parser *p)
{
    if (p->status < 200) { /* an interim answer: the real one follows */
        h1_parser_init(p);
        p->saw_interim = true;
        return;
    }
    p->keep_alive = p->http10 ? p->saw_keep_alive && !p->saw_close : !p->saw_close;
    if (p->status == 204 || p->status == 304) {
        p->phase = H1_DONE;
    } else if (p->chunked) {
        p->phase = H1_CHUNK_SIZE_LINE;
    } else if (p->until_close || !p->has_length) {
        p->keep_alive = false;
        p->phase = H1_BODY_UNTIL_CLOSE;
    } else {
        p->left = p->content_length;
        p->phase = p->left > 0 ? H1_BODY_BY_LENGTH : H1_DONE;
    }
}

static void h1_on_chunk_size_line(struct h1_parser *p, const char *s, size_t n)
{
    uint64_t size = 0;
    size_t i = 0;
    for (; i < n; i++) {
        char c = s[i];
        int digit = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
        if (digit < 0)
            break;
        if (size > (UINT64_MAX >> 4)) {
            h1_fail(p, "chunk size overflows");
            return;
        }
        size = size << 4 | (uint64_t)digit;
    }
    while (i < n && http_is_blank(s[i]))
        i++;
    if (i == 0 || (i < n && s[i] != ';')) {
        h1_fail(p, "malformed chunk size");
        return;
    }
    p->left = size;
    p->phase = size > 0 ? H1_CHUNK_DATA : H1_TRAILER_LINE;
}

/* One complete line (without its CRLF or LF) in the current phase. */
static void h1_on_line(struct h1_parser *p, const char *s, size_t n)
{
    switch (p->phase) {
    case H1_STATUS_LINE:
        h1_on_status_line(p, s, n);
        break;
    case H1_HEADER_LINE:
        if (n == 0)
            h1_on_headers_end(p);
        else
            h1_on_header_line(p, s, n);
        break;
    case H1_CHUNK_SIZE_LINE:
        h1_on_chunk_size_line(p, s, n);
        break;
    case H1_CHUNK_DATA_END:
        if (n != 0)
            h1_fail(p, "chunk data longer than its size");
        else
            p->phase = H1_CHUNK_SIZE_LINE;
        break;
    case H1_TRAILER_LINE:
        if (n == 0)
            p->phase = H1_DONE;
        break;
    default:
        break;
    }
}

/* Collects bytes up to and including the next LF; returns how many were consumed. */
static size_t h1_take_line(struct h1_parser *p, const char *data, size_t len)
{
    const char *lf = memchr(data, '\n', len);
    size_t take = lf ? (size_t)(lf - data) + 1 : len;
    size_t keep = lf ? take - 1 : take;
    if (p->line_len + keep > sizeof p->line - 1) {
        h1_fail(p, "header or chunk line too long");
        return take;
    }
    memcpy(p->line + p->line_len, data, keep);
    p->line_len += keep;
    if (!lf)
        return take;
    size_t n = p->line_len;
    if (n > 0 && p->line[n - 1] == '\r')
        n--;
    p->line_len = 0;
    p->line[n] = '\0';
    h1_on_line(p, p->line, n);
    return take;
}

static size_t h1_take_body(struct h1_parser *p, const char *data, size_t len, h1_body_fn on_body,
                           void *ctx)
{
    size_t take = len;
    if (p->phase != H1_BODY_UNTIL_CLOSE && p->left < take)
        take = (size_t)p->left;
    if (take > 0 && !on_body(ctx, data, take)) {
        h1_fail(p, "the body was refused");
        return take;
    }
    if (p->phase == H1_BODY_UNTIL_CLOSE)
        return take;
    p->left -= take;
    if (p->left == 0)
        p->phase = p->phase == H1_BODY_BY_LENGTH ? H1_DONE : H1_CHUNK_DATA_END;
    return take;
}

size_t h1_parse(struct h1_parser *p, const char *data, size_t len, h1_body_fn on_body, void *ctx)
{
    size_t used = 0;
    while (used < len && p->phase != H1_DONE && p->phase != H1_FAILED) {
        switch (p->phase) {
        case H1_BODY_BY_LENGTH:
        case H1_BODY_UNTIL_CLOSE:
        case H1_CHUNK_DATA:
            used += h1_take_body(p, data + used, len - used, on_body, ctx);
            break;
        default:
            used += h1_take_line(p, data + used, len - used);
            break;
        }
    }
    return used;
}

bool h1_parse_eof(struct h1_parser *p)
{
    if (p->phase == H1_BODY_UNTIL_CLOSE) {
        p->phase = H1_DONE;
        return true;
    }
    if (p->phase == H1_DONE)
        return true;
    if (p->phase != H1_FAILED)
        h1_fail(p, h1_nothing_received(p) ? "closed without an answer"
                                          : "closed before the answer ended");
    return false;
}

size_t h1_request_head_size(const char *method, const char *target, const char *host,
                            const struct h1_header *headers, size_t nheaders, bool has_body,
                            size_t body_len)
{
    /* "M T HTTP/1.1\r\n" "Host: H\r\n" ... "\r\n" */
    size_t n = strlen(method) + 1 + strlen(target) + 11 + 6 + strlen(host) + 2 + 2;
    for (size_t i = 0; i < nheaders; i++)
        n += strlen(headers[i].name) + 2 + strlen(headers[i].value) + 2;
    if (has_body) {
        char digits[XG_STR_INT_SIZE];
        n += 16 + xg_str_u64(digits, body_len) + 2; /* "Content-Length: " */
    }
    return n;
}

static char *h1_put(char *out, const char *s)
{
    size_t n = strlen(s);
    memcpy(out, s, n);
    return out + n;
}

size_t h1_format_request_head(char *out, const char *method, const char *target, const char *host,
                              const struct h1_header *headers, size_t nheaders, bool has_body,
                              size_t body_len)
{
    char *p = out;
    p = h1_put(p, method);
    *p++ = ' ';
    p = h1_put(p, target);
    p = h1_put(p, " HTTP/1.1\r\nHost: ");
    p = h1_put(p, host);
    p = h1_put(p, "\r\n");
    for (size_t i = 0; i < nheaders; i++) {
        p = h1_put(p, headers[i].name);
        p = h1_put(p, ": ");
        p = h1_put(p, headers[i].value);
        p = h1_put(p, "\r\n");
    }
    if (has_body) {
        p = h1_put(p, "Content-Length: ");
        p += xg_str_u64(p, body_len); /* its NUL is overwritten next */
        p = h1_put(p, "\r\n");
    }
    p = h1_put(p, "\r\n");
    return (size_t)(p - out);
}
