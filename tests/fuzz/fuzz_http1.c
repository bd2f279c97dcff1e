/* Fuzzes h1_parse (gateway/nodes/http1.h) on node answers, which are untrusted (public nodes):
 * the answer arrives in pieces (fuzz.h) as nodeconn reads it, and may end with the node
 * closing the connection (h1_parse_eof).
 *
 * Properties checked:
 *   - the pieces change nothing: parsing piece by piece and all at once end in the same
 *     phase, status, keep-alive, Content-Type and error, deliver the same body bytes and,
 *     once the answer is complete, consume the same number of bytes;
 *   - a complete answer has a final status (200..599) and never consumes more than it
 *     was given; the Content-Type handed on holds no control character (it goes into the
 *     client's answer head).
 * Flag bits (byte 0): 3, the body callback refuses a body over 64 bytes; 4, the node
 * closes the connection after the last byte. */
#include "fuzz.h"
#include "nodes/http1.h"
#include "core/http_text.h"

#define FUZZ_BODY_CAP_SMALL 64

struct sink {
    char *data;
    size_t len, cap;
    size_t limit;
    bool refused;
};

static bool on_body(void *ctx, const char *data, size_t len)
{
    struct sink *s = ctx;
    if (s->len + len > s->limit) {
        s->refused = true;
        return false;
    }
    FUZZ_CHECK(s->len + len <= s->cap);
    memcpy(s->data + s->len, data, len);
    s->len += len;
    return true;
}

struct parsed {
    struct h1_parser p;
    struct sink body;
    size_t used;
};

static void parsed_init(struct parsed *r, size_t cap, size_t limit)
{
    h1_parser_init(&r->p);
    r->body = (struct sink){.data = malloc(cap ? cap : 1), .cap = cap, .limit = limit};
    if (!r->body.data)
        abort();
    r->used = 0;
}

/* Feeds data[0..len) (an exact-size copy, so a read past it shows). */
static void feed(struct parsed *r, const uint8_t *data, size_t len)
{
    if (r->p.phase == H1_DONE || r->p.phase == H1_FAILED)
        return;
    char *copy = fuzz_cstr(data, len);
    size_t used = h1_parse(&r->p, copy, len, on_body, &r->body);
    free(copy);
    FUZZ_CHECK(used <= len);
    FUZZ_CHECK(used == len || r->p.phase == H1_DONE || r->p.phase == H1_FAILED);
    r->used += used;
}

static void finish(struct parsed *r, bool eof)
{
    if (eof && r->p.phase != H1_FAILED) {
        bool done = h1_parse_eof(&r->p);
        FUZZ_CHECK(done == (r->p.phase == H1_DONE));
    }
    if (r->p.phase == H1_DONE)
        FUZZ_CHECK(r->p.status >= 200 && r->p.status <= 599);
    if (r->p.phase == H1_FAILED)
        FUZZ_CHECK(r->p.error != NULL);
    size_t n = strlen(r->p.content_type);
    FUZZ_CHECK(n < H1_CONTENT_TYPE_MAX && http_field_value_ok(r->p.content_type, n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_split split;
    fuzz_split_init(&split, data, size);
    size_t limit = (split.flags & 0x08) ? FUZZ_BODY_CAP_SMALL : SIZE_MAX;
    bool eof = (split.flags & 0x10) != 0;

    struct parsed *pieces = malloc(sizeof *pieces), *whole = malloc(sizeof *whole);
    if (!pieces || !whole)
        abort();
    parsed_init(pieces, split.len, limit);
    parsed_init(whole, split.len, limit);
    const uint8_t *piece;
    size_t len;
    while (fuzz_split_next(&split, &piece, &len))
        feed(pieces, piece, len);
    finish(pieces, eof);
    feed(whole, split.data, split.len);
    finish(whole, eof);

    FUZZ_CHECK(pieces->p.phase == whole->p.phase);
    FUZZ_CHECK(pieces->body.refused == whole->body.refused);
    if (!whole->body.refused) {
        FUZZ_CHECK(pieces->p.status == whole->p.status);
        FUZZ_CHECK(pieces->p.keep_alive == whole->p.keep_alive);
        FUZZ_CHECK(strcmp(pieces->p.content_type, whole->p.content_type) == 0);
        FUZZ_CHECK(pieces->p.error == whole->p.error);
        FUZZ_CHECK(pieces->body.len == whole->body.len &&
                   memcmp(pieces->body.data, whole->body.data, whole->body.len) == 0);
        if (whole->p.phase == H1_DONE)
            FUZZ_CHECK(pieces->used == whole->used);
    }
    free(pieces->body.data);
    free(whole->body.data);
    free(pieces);
    free(whole);
    return 0;
}
