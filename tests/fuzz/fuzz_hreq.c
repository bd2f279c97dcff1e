/* Fuzzes hreq_parse (gateway/http/hreq.h) as the front end calls it: the client's bytes arrive
 * in pieces (fuzz.h: the input's first bytes choose them) and the head is parsed again
 * from its start after each one. Pipelined requests follow one another: a Content-Length
 * body is skipped, a chunked one decoded (hreq_chunked_decode) to find where the next
 * request begins.
 *
 * Properties checked:
 *   - an incomplete head leaves the buffer unchanged;
 *   - the verdict does not depend on the pieces: a head accepted from a prefix is
 *     accepted, field for field, from all the bytes at once; a head refused from a
 *     prefix is refused from all of them (the status may differ: a request line refused
 *     early may be a head too large later);
 *   - an accepted head keeps the promises of hreq.h (framing, separators, trimmed
 *     values, no request-smuggling combination).
 * Flag bit 3 (byte 0): max_head 256 instead of the front end's 16384. */
#include "fuzz.h"
#include "http/hreq.h"

#define FUZZ_MAX_HEAD_SMALL 256
#define FUZZ_MAX_HEAD       16384
#define FUZZ_MAX_REQUESTS   64

static bool is_refusal(enum hreq_result r)
{
    return r != HREQ_OK && r != HREQ_INCOMPLETE;
}

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

static void check_head(const struct hreq *r, size_t len)
{
    FUZZ_CHECK(r->head_len > 0 && r->head_len <= len);
    FUZZ_CHECK(r->minor == 0 || r->minor == 1);
    FUZZ_CHECK(!(r->has_length && r->chunked));
    FUZZ_CHECK(!(r->minor == 0 && r->chunked));
    FUZZ_CHECK(r->has_length || r->content_length == 0);
    FUZZ_CHECK(r->content_length < 1000000000000000000ULL);
    FUZZ_CHECK(r->method[0] != '\0' && r->path[0] == '/');
    FUZZ_CHECK(!strchr(r->path, '?') && !strchr(r->path, ' '));
    FUZZ_CHECK(r->nheaders <= HREQ_MAX_HEADERS);
    for (size_t i = 0; i < r->nheaders; i++) {
        const char *name = r->headers[i].name, *value = r->headers[i].value;
        size_t vlen = strlen(value);
        FUZZ_CHECK(name[0] != '\0' && !strpbrk(name, ": \t\r\n"));
        FUZZ_CHECK(!strpbrk(value, "\r\n"));
        FUZZ_CHECK(vlen == 0 || (!is_ows(value[0]) && !is_ows(value[vlen - 1])));
        FUZZ_CHECK(hreq_header(r, name) != NULL && hreq_header_count(r, name) >= 1);
    }
    FUZZ_CHECK(hreq_header_count(r, "host") <= 1);
    FUZZ_CHECK(!r->chunked || hreq_header_count(r, "content-length") == 0);
    char arg[16];
    static const char *const names[] = {"a", "n", "id", ""};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (hreq_query_arg(r, names[i], arg, sizeof arg))
            FUZZ_CHECK(strlen(arg) < sizeof arg);
}

static void check_same_head(const struct hreq *a, const struct hreq *b)
{
    FUZZ_CHECK(a->head_len == b->head_len && a->minor == b->minor);
    FUZZ_CHECK(strcmp(a->method, b->method) == 0 && strcmp(a->path, b->path) == 0 &&
               strcmp(a->query, b->query) == 0);
    FUZZ_CHECK(a->nheaders == b->nheaders);
    for (size_t i = 0; i < a->nheaders; i++)
        FUZZ_CHECK(strcmp(a->headers[i].name, b->headers[i].name) == 0 &&
                   strcmp(a->headers[i].value, b->headers[i].value) == 0);
    FUZZ_CHECK(a->has_length == b->has_length && a->content_length == b->content_length &&
               a->chunked == b->chunked && a->keep_alive == b->keep_alive &&
               a->expect_continue == b->expect_continue &&
               a->expect_unsupported == b->expect_unsupported);
}

/* hreq_parse over an exact-size copy of in[0..len); *copy receives the copy (free it). */
static enum hreq_result parse_copy(const uint8_t *in, size_t len, size_t max_head, struct hreq *r,
                                   char **copy)
{
    *copy = malloc(len ? len : 1);
    if (!*copy)
        abort();
    memcpy(*copy, in, len);
    return hreq_parse(*copy, len, max_head, r);
}

enum stage { AT_HEAD, IN_BODY, IN_CHUNKS, STOPPED };

struct stream {
    const uint8_t *data;
    size_t received; /* bytes of data arrived so far */
    size_t total;
    size_t base; /* where the current request (or its body) starts */
    size_t max_head;
    enum stage stage;
    uint64_t body_left;
    struct hreq_chunked chunk;
    int requests;
};

static void on_head(struct stream *s)
{
    const uint8_t *at = s->data + s->base;
    struct hreq part, whole;
    char *part_buf, *whole_buf;
    enum hreq_result r = parse_copy(at, s->received - s->base, s->max_head, &part, &part_buf);
    if (r == HREQ_INCOMPLETE) {
        FUZZ_CHECK(memcmp(part_buf, at, s->received - s->base) == 0);
        free(part_buf);
        return;
    }
    enum hreq_result rw = parse_copy(at, s->total - s->base, s->max_head, &whole, &whole_buf);
    if (is_refusal(r)) {
        FUZZ_CHECK(is_refusal(rw));
        s->stage = STOPPED;
    } else {
        FUZZ_CHECK(rw == HREQ_OK);
        check_head(&part, s->received - s->base);
        check_same_head(&part, &whole);
        s->base += part.head_len;
        if (part.chunked) {
            hreq_chunked_init(&s->chunk);
            s->stage = IN_CHUNKS;
        } else if (part.content_length > 0) {
            s->body_left = part.content_length;
            s->stage = IN_BODY;
        }
        if (++s->requests == FUZZ_MAX_REQUESTS)
            s->stage = STOPPED;
    }
    free(part_buf);
    free(whole_buf);
}

static void in_chunks(struct stream *s)
{
    size_t n = s->received - s->base, used = 0;
    char *buf = fuzz_cstr(s->data + s->base, n);
    size_t out = hreq_chunked_decode(&s->chunk, buf, n, &used);
    free(buf);
    FUZZ_CHECK(used <= n && out <= used);
    s->base += used;
    if (s->chunk.phase == HREQ_CHUNK_DONE)
        s->stage = AT_HEAD;
    else if (s->chunk.phase == HREQ_CHUNK_FAILED)
        s->stage = STOPPED;
    else
        FUZZ_CHECK(used == n);
}

/* Moves s on as far as the bytes received allow. */
static void advance(struct stream *s)
{
    for (;;) {
        size_t base = s->base;
        enum stage stage = s->stage;
        switch (s->stage) {
        case AT_HEAD:
            if (s->received > s->base)
                on_head(s);
            break;
        case IN_BODY: {
            size_t have = s->received - s->base;
            size_t take = s->body_left < have ? (size_t)s->body_left : have;
            s->base += take;
            s->body_left -= take;
            if (s->body_left == 0)
                s->stage = AT_HEAD;
            break;
        }
        case IN_CHUNKS:
            in_chunks(s);
            break;
        case STOPPED:
            return;
        }
        if (s->base == base && s->stage == stage)
            return; /* waits for more bytes */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_split split;
    fuzz_split_init(&split, data, size);
    struct stream s = {
        .data = split.data,
        .total = split.len,
        .max_head = (split.flags & 0x08) ? FUZZ_MAX_HEAD_SMALL : FUZZ_MAX_HEAD,
        .stage = AT_HEAD,
    };
    const uint8_t *piece;
    size_t len;
    while (s.stage != STOPPED && fuzz_split_next(&split, &piece, &len)) {
        s.received += len;
        advance(&s);
    }
    return 0;
}
