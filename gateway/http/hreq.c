/* hreq — see hreq.h. */
#include "http/hreq.h"

#include <string.h>

#include "core/http_text.h"
#include "xg_hex.h"

#define HREQ_LENGTH_DIGITS_MAX 18   /* Content-Length */
#define HREQ_SIZE_DIGITS_MAX   16   /* a chunk size: fits in 64 bits */
#define HREQ_CHUNK_LINE_MAX    4096 /* a chunk-size or trailer line, its CRLF not counted */

/* ---- characters ---- */

/* RFC 9110 tchar: the characters of a method or a field name. */
static bool hreq_is_tchar(char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* A byte of a request target: visible ASCII. */
static bool hreq_is_target_char(char c)
{
    return c > ' ' && c < 0x7f;
}

/* A byte of a field value: visible ASCII, space, tab, or obs-text (0x80 and above). */
static bool hreq_is_value_char(char c)
{
    unsigned char u = (unsigned char)c;
    return c == '\t' || (u >= 0x20 && u != 0x7f);
}

static char hreq_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* s[0..n) equals word, ignoring ASCII case. */
static bool hreq_equals_nocase(const char *s, size_t n, const char *word)
{
    for (size_t i = 0; i < n; i++) {
        if (word[i] == '\0' || hreq_lower(s[i]) != hreq_lower(word[i]))
            return false;
    }
    return word[n] == '\0';
}

/* How many bytes of s[0..n) are tchars, from the start. */
static size_t hreq_token_len(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && hreq_is_tchar(s[i]))
        i++;
    return i;
}

/* The next element of the comma-separated list at *list, trimmed and possibly empty, in
 * *elem and *n; false once the list is used up. */
static bool hreq_next_element(const char **list, const char **elem, size_t *n)
{
    const char *s = *list;
    if (s == NULL)
        return false;
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    *list = comma ? comma + 1 : NULL;
    *n = len;
    *elem = http_trim(s, n);
    return true;
}

/* ---- finding the head ---- */

/* Skips the empty lines (CRLF or LF) that may come before the request line. */
static size_t hreq_skip_empty_lines(const char *buf, size_t lim)
{
    size_t i = 0;
    while (i < lim) {
        if (buf[i] == '\n')
            i++;
        else if (buf[i] == '\r' && i + 1 < lim && buf[i + 1] == '\n')
            i += 2;
        else
            break;
    }
    return i;
}

/* The end of the head (just past its blank line) within buf[from..lim), or 0 when the
 * blank line is not there yet. Reads only. */
static size_t hreq_find_head_end(const char *buf, size_t from, size_t lim)
{
    for (size_t i = from; i < lim; i++) {
        if (buf[i] != '\n')
            continue;
        if (i + 1 < lim && buf[i + 1] == '\n')
            return i + 2;
        if (i + 2 < lim && buf[i + 1] == '\r' && buf[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/* ---- the request line ---- */

/* "HTTP/" DIGIT "." DIGIT, of which only 1.0 and 1.1 are served. */
static enum hreq_result hreq_parse_version(const char *s, size_t n, int *minor)
{
    if (n != 8 || memcmp(s, "HTTP/", 5) != 0 || s[5] < '0' || s[5] > '9' || s[6] != '.' ||
        s[7] < '0' || s[7] > '9')
        return HREQ_BAD_REQUEST;
    if (s[5] != '1' || (s[7] != '0' && s[7] != '1'))
        return HREQ_BAD_VERSION;
    *minor = s[7] - '0';
    return HREQ_OK;
}

/* Splits the NUL-terminated origin-form target at its first '?'. */
static void hreq_split_target(char *target, struct hreq *r)
{
    char *mark = strchr(target, '?');
    r->path = target;
    if (mark) {
        *mark = '\0';
        r->query = mark + 1;
    } else {
        r->query = target + strlen(target); /* its NUL: "" */
    }
}

/* Where the path starts in the target t[0..n): at 0 for origin-form ("/..."); after the
 * scheme and authority for absolute-form ("http://host/...", which a server must accept,
 * RFC 9112 section 3.2.2; the authority is not used). n when the target is neither, or
 * an absolute-form target has no path. */
static size_t hreq_path_offset(const char *t, size_t n)
{
    static const char *const schemes[] = {"http://", "https://"};
    if (n > 0 && t[0] == '/')
        return 0;
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
        size_t len = strlen(schemes[i]);
        if (n <= len || !hreq_equals_nocase(t, len, schemes[i]))
            continue;
        size_t at = len;
        while (at < n && t[at] != '/' && t[at] != '?' && t[at] != '#')
            at++;
        return at > len && at < n && t[at] == '/' ? at : n;
    }
    return n;
}

/* Where the parts of a request line are, once it checked out. */
struct hreq_line {
    size_t method_end, target, target_end, path;
    int minor;
};

/* method SP request-target SP HTTP-version, in s[0..n) (its line end excluded). Reads
 * only. */
static enum hreq_result hreq_check_request_line(const char *s, size_t n, struct hreq_line *l)
{
    l->method_end = hreq_token_len(s, n);
    if (l->method_end == 0 || l->method_end == n || s[l->method_end] != ' ')
        return HREQ_BAD_REQUEST;
    l->target = l->method_end + 1;
    l->target_end = l->target;
    while (l->target_end < n && hreq_is_target_char(s[l->target_end]))
        l->target_end++;
    if (l->target_end == l->target || l->target_end == n || s[l->target_end] != ' ')
        return HREQ_BAD_REQUEST;
    size_t target_len = l->target_end - l->target;
    l->path = hreq_path_offset(s + l->target, target_len);
    if (l->path == target_len)
        return HREQ_BAD_REQUEST;
    size_t version = l->target_end + 1;
    return hreq_parse_version(s + version, n - version, &l->minor);
}

/* The request line s[0..n), NUL-terminated: checked, then cut into its parts in place. */
static enum hreq_result hreq_parse_request_line(char *s, size_t n, struct hreq *r)
{
    struct hreq_line l;
    enum hreq_result res = hreq_check_request_line(s, n, &l);
    if (res != HREQ_OK)
        return res;
    s[l.method_end] = '\0';
    s[l.target_end] = '\0';
    r->method = s;
    r->minor = l.minor;
    hreq_split_target(s + l.target + l.path, r);
    return HREQ_OK;
}

/* A head that has not ended yet, s[0..n) after any leading empty lines: refused at once
 * when what arrived cannot begin a request (a TLS ClientHello on the plain port, say,
 * which would otherwise wait for a blank line that never comes); HREQ_INCOMPLETE while
 * it still can. Reads only. */
static enum hreq_result hreq_check_start(const char *s, size_t n)
{
    const char *lf = memchr(s, '\n', n);
    if (lf) { /* the request line is all there */
        size_t len = (size_t)(lf - s);
        if (len > 0 && s[len - 1] == '\r')
            len--;
        struct hreq_line l;
        enum hreq_result res = hreq_check_request_line(s, len, &l);
        return res == HREQ_OK ? HREQ_INCOMPLETE : res;
    }
    if (n == 1 && s[0] == '\r')
        return HREQ_INCOMPLETE; /* an empty line's CR */
    size_t method = hreq_token_len(s, n);
    if (method < n && (method == 0 || s[method] != ' '))
        return HREQ_BAD_REQUEST;
    return HREQ_INCOMPLETE;
}

/* ---- header lines ---- */

/* name ':' OWS value OWS, in the NUL-terminated line s[0..n). */
static enum hreq_result hreq_parse_header_line(char *s, size_t n, struct hreq *r)
{
    if (r->nheaders == HREQ_MAX_HEADERS)
        return HREQ_HEAD_TOO_LARGE;
    size_t name_end = hreq_token_len(s, n); /* 0 for a folded line: it starts with a blank */
    if (name_end == 0 || name_end == n || s[name_end] != ':')
        return HREQ_BAD_REQUEST;
    size_t value_len = n - name_end - 1;
    char *value = (char *)http_trim(s + name_end + 1, &value_len);
    for (size_t i = 0; i < value_len; i++) {
        if (!hreq_is_value_char(value[i]))
            return HREQ_BAD_REQUEST;
    }
    s[name_end] = '\0';
    value[value_len] = '\0';
    r->headers[r->nheaders++] = (struct hreq_header){.name = s, .value = value};
    return HREQ_OK;
}

/* The lines of the head in s[0..n), which ends with its blank line: each is
 * NUL-terminated in place (its CR and LF) and parsed. */
static enum hreq_result hreq_parse_lines(char *s, size_t n, struct hreq *r)
{
    size_t pos = 0;
    bool first = true;
    for (;;) {
        char *line = s + pos;
        char *lf = memchr(line, '\n', n - pos);
        size_t len = (size_t)(lf - line);
        pos += len + 1;
        if (len > 0 && line[len - 1] == '\r')
            len--;
        if (len == 0)
            return HREQ_OK; /* the blank line */
        line[len] = '\0';
        *lf = '\0';
        enum hreq_result res =
            first ? hreq_parse_request_line(line, len, r) : hreq_parse_header_line(line, len, r);
        if (res != HREQ_OK)
            return res;
        first = false;
    }
}

/* ---- what the headers mean ---- */

static bool hreq_parse_length(const char *s, uint64_t *out)
{
    return http_parse_decimal(s, strlen(s), HREQ_LENGTH_DIGITS_MAX, out);
}

/* Every Content-Length: a single number, the same in each copy. */
static enum hreq_result hreq_read_content_length(struct hreq *r)
{
    for (size_t i = 0; i < r->nheaders; i++) {
        const struct hreq_header *h = &r->headers[i];
        uint64_t len;
        if (!hreq_equals_nocase(h->name, strlen(h->name), "Content-Length"))
            continue;
        if (!hreq_parse_length(h->value, &len))
            return HREQ_BAD_REQUEST;
        if (r->has_length && len != r->content_length)
            return HREQ_BAD_REQUEST;
        r->has_length = true;
        r->content_length = len;
    }
    return HREQ_OK;
}

/* The one Transfer-Encoding value: exactly "chunked". */
static enum hreq_result hreq_read_codings(const char *list, struct hreq *r)
{
    size_t chunked = 0, others = 0;
    const char *coding;
    size_t n;
    while (hreq_next_element(&list, &coding, &n)) {
        if (hreq_equals_nocase(coding, n, "chunked"))
            chunked++;
        else if (n > 0)
            others++;
    }
    if (others > 0)
        return HREQ_NOT_IMPLEMENTED;
    if (chunked != 1)
        return HREQ_BAD_REQUEST; /* empty, or chunked twice */
    r->chunked = true;
    return HREQ_OK;
}

static enum hreq_result hreq_read_transfer_encoding(struct hreq *r)
{
    size_t count = hreq_header_count(r, "Transfer-Encoding");
    if (count == 0)
        return HREQ_OK;
    if (count > 1 || r->has_length || r->minor == 0)
        return HREQ_BAD_REQUEST;
    return hreq_read_codings(hreq_header(r, "Transfer-Encoding"), r);
}

/* The Connection tokens decide whether the connection stays open after the answer. */
static void hreq_read_connection(struct hreq *r)
{
    bool close = false, keep_alive = false;
    for (size_t i = 0; i < r->nheaders; i++) {
        const struct hreq_header *h = &r->headers[i];
        if (!hreq_equals_nocase(h->name, strlen(h->name), "Connection"))
            continue;
        const char *list = h->value, *option;
        size_t n;
        while (hreq_next_element(&list, &option, &n)) {
            close = close || hreq_equals_nocase(option, n, "close");
            keep_alive = keep_alive || hreq_equals_nocase(option, n, "keep-alive");
        }
    }
    r->keep_alive = r->minor == 1 ? !close : keep_alive && !close;
}

/* 100-continue is honoured in HTTP/1.1 and ignored in HTTP/1.0 (RFC 9110 section 10.1.1);
 * any other expectation is unsupported. */
static void hreq_read_expect(struct hreq *r)
{
    for (size_t i = 0; i < r->nheaders; i++) {
        const struct hreq_header *h = &r->headers[i];
        if (!hreq_equals_nocase(h->name, strlen(h->name), "Expect"))
            continue;
        const char *list = h->value, *expectation;
        size_t n;
        while (hreq_next_element(&list, &expectation, &n)) {
            if (hreq_equals_nocase(expectation, n, "100-continue"))
                r->expect_continue = r->expect_continue || r->minor == 1;
            else if (n > 0)
                r->expect_unsupported = true;
        }
    }
}

static enum hreq_result hreq_read_fields(struct hreq *r)
{
    if (hreq_header_count(r, "Host") > 1) /* none is fine: see hreq.h */
        return HREQ_BAD_REQUEST;
    enum hreq_result res = hreq_read_content_length(r);
    if (res != HREQ_OK)
        return res;
    res = hreq_read_transfer_encoding(r);
    if (res != HREQ_OK)
        return res;
    hreq_read_connection(r);
    hreq_read_expect(r);
    return HREQ_OK;
}

enum hreq_result hreq_parse(char *buf, size_t len, size_t max_head, struct hreq *out)
{
    *out = (struct hreq){.method = "", .path = "", .query = ""};
    size_t lim = len < max_head ? len : max_head;
    size_t start = hreq_skip_empty_lines(buf, lim);
    size_t end = hreq_find_head_end(buf, start, lim);
    if (end == 0)
        return len >= max_head ? HREQ_HEAD_TOO_LARGE : hreq_check_start(buf + start, lim - start);
    out->head_len = end;
    enum hreq_result res = hreq_parse_lines(buf + start, end - start, out);
    if (res != HREQ_OK)
        return res;
    return hreq_read_fields(out);
}

const char *hreq_header(const struct hreq *r, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < r->nheaders; i++) {
        if (hreq_equals_nocase(name, n, r->headers[i].name))
            return r->headers[i].value;
    }
    return NULL;
}

size_t hreq_header_count(const struct hreq *r, const char *name)
{
    size_t n = strlen(name), count = 0;
    for (size_t i = 0; i < r->nheaders; i++) {
        if (hreq_equals_nocase(name, n, r->headers[i].name))
            count++;
    }
    return count;
}

bool hreq_header_join(const struct hreq *r, const char *name, char *out, size_t outlen)
{
    size_t n = strlen(name), used = 0;
    if (outlen == 0)
        return false;
    out[0] = '\0';
    for (size_t i = 0; i < r->nheaders; i++) {
        if (!hreq_equals_nocase(name, n, r->headers[i].name))
            continue;
        size_t len = strlen(r->headers[i].value);
        if (used + len + 2 > outlen) {
            out[0] = '\0';
            return false;
        }
        if (used > 0)
            out[used++] = ',';
        memcpy(out + used, r->headers[i].value, len + 1);
        used += len;
    }
    return true;
}

/* ---- the query ---- */

/* No value to give: out is "" when it has room for that. */
static bool hreq_no_value(char *out, size_t outlen)
{
    if (outlen > 0)
        out[0] = '\0';
    return false;
}

static bool hreq_copy_value(const char *value, size_t n, char *out, size_t outlen)
{
    if (n >= outlen)
        return hreq_no_value(out, outlen);
    memcpy(out, value, n);
    out[n] = '\0';
    return true;
}

bool hreq_query_arg(const struct hreq *r, const char *name, char *out, size_t outlen)
{
    size_t name_len = strlen(name);
    const char *arg = r->query;
    while (arg != NULL) {
        const char *amp = strchr(arg, '&');
        size_t len = amp ? (size_t)(amp - arg) : strlen(arg);
        const char *eq = memchr(arg, '=', len);
        size_t key_len = eq ? (size_t)(eq - arg) : len;
        if (len > 0 && key_len == name_len && memcmp(arg, name, name_len) == 0)
            return eq ? hreq_copy_value(eq + 1, len - key_len - 1, out, outlen)
                      : hreq_copy_value("", 0, out, outlen); /* no '=': "" */
        arg = amp ? amp + 1 : NULL;
    }
    return hreq_no_value(out, outlen);
}

/* ---- chunked bodies ---- */

void hreq_chunked_init(struct hreq_chunked *c)
{
    *c = (struct hreq_chunked){.phase = HREQ_CHUNK_SIZE};
}

static void hreq_chunk_fail(struct hreq_chunked *c)
{
    c->phase = HREQ_CHUNK_FAILED;
}

/* The line_len-th byte of a size line: hex digits, then optionally ';' and extensions. */
static void hreq_chunk_size_byte(struct hreq_chunked *c, char b)
{
    if (c->in_ext)
        return; /* extensions are ignored */
    if (b == ';' && c->size_digits) {
        c->in_ext = true;
        return;
    }
    int digit = xg_hex_digit(b);
    if (digit < 0 || c->line_len > HREQ_SIZE_DIGITS_MAX) {
        hreq_chunk_fail(c);
        return;
    }
    c->size = c->size << 4 | (uint64_t)digit;
    c->size_digits = true;
}

/* The CRLF that ends a size line, the data's CRLF, or a trailer line. */
static void hreq_chunk_line_end(struct hreq_chunked *c)
{
    switch (c->phase) {
    case HREQ_CHUNK_SIZE:
        if (!c->size_digits) {
            hreq_chunk_fail(c);
            return;
        }
        c->left = c->size;
        c->phase = c->size > 0 ? HREQ_CHUNK_DATA : HREQ_CHUNK_TRAILER;
        break;
    case HREQ_CHUNK_CRLF:
        c->phase = HREQ_CHUNK_SIZE;
        break;
    case HREQ_CHUNK_TRAILER:
        if (c->line_len == 0)
            c->phase = HREQ_CHUNK_DONE;
        break;
    default:
        break;
    }
    c->line_len = 0;
    c->line_cr = false;
    c->size = 0;
    c->size_digits = c->in_ext = false;
}

/* One byte outside chunk data. Lines end with CRLF only: a bare CR or LF fails. */
static void hreq_chunk_line_byte(struct hreq_chunked *c, char b)
{
    if (c->line_cr) {
        if (b == '\n')
            hreq_chunk_line_end(c);
        else
            hreq_chunk_fail(c);
        return;
    }
    if (b == '\r') {
        c->line_cr = true;
        return;
    }
    if (b == '\n' || c->phase == HREQ_CHUNK_CRLF || c->line_len == HREQ_CHUNK_LINE_MAX) {
        hreq_chunk_fail(c);
        return;
    }
    c->line_len++;
    if (c->phase == HREQ_CHUNK_SIZE)
        hreq_chunk_size_byte(c, b);
}

/* Moves the current chunk's bytes from in[from..in_len) down to in[*out..). */
static size_t hreq_chunk_data(struct hreq_chunked *c, char *in, size_t from, size_t in_len,
                              size_t *out)
{
    size_t take = in_len - from;
    if (c->left < take)
        take = (size_t)c->left;
    if (*out != from)
        memmove(in + *out, in + from, take);
    *out += take;
    c->left -= take;
    if (c->left == 0)
        c->phase = HREQ_CHUNK_CRLF;
    return take;
}

size_t hreq_chunked_decode(struct hreq_chunked *c, char *in, size_t in_len, size_t *consumed)
{
    size_t read = 0, out = 0;
    while (read < in_len && c->phase != HREQ_CHUNK_DONE && c->phase != HREQ_CHUNK_FAILED) {
        if (c->phase == HREQ_CHUNK_DATA)
            read += hreq_chunk_data(c, in, read, in_len, &out);
        else
            hreq_chunk_line_byte(c, in[read++]);
    }
    *consumed = read;
    return out;
}
