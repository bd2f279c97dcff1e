/* Fuzzes hreq_chunked_decode (gateway/http/hreq.h) as the front end drives it: a chunked body
 * arriving in pieces (fuzz.h), decoded in place with the decoded data gathered at the
 * front of one buffer and the undecoded rest held after it (front.c, decode_chunks).
 *
 * Property checked: the pieces change nothing. Decoding piece by piece and decoding all
 * the bytes at once end in the same phase, with the same decoded bytes, and, once the
 * last chunk's trailer ended (HREQ_CHUNK_DONE), after the same number of bytes (the rest
 * belongs to the next request). Every call reads within its bytes and decodes no more
 * than it read. */
#include "fuzz.h"
#include "http/hreq.h"

struct decoded {
    enum hreq_chunk_phase phase;
    char *body; /* decoded bytes at the front, undecoded ones after them */
    size_t body_len, raw_len;
    size_t consumed; /* bytes of the input the decoder read */
};

/* Decodes the raw bytes held after the decoded ones; false once the decoder stopped. */
static bool decode_held(struct hreq_chunked *c, struct decoded *d)
{
    size_t used = 0;
    size_t out = hreq_chunked_decode(c, d->body + d->body_len, d->raw_len, &used);
    FUZZ_CHECK(used <= d->raw_len && out <= used);
    size_t rest = d->raw_len - used;
    memmove(d->body + d->body_len + out, d->body + d->body_len + used, rest);
    d->body_len += out;
    d->raw_len = rest;
    d->consumed += used;
    if (c->phase == HREQ_CHUNK_DONE || c->phase == HREQ_CHUNK_FAILED)
        return false;
    FUZZ_CHECK(rest == 0); /* it stops early only when done or failed */
    return true;
}

static void decode_in_pieces(struct fuzz_split *split, struct decoded *d)
{
    struct hreq_chunked c;
    hreq_chunked_init(&c);
    d->body = malloc(split->len ? split->len : 1);
    if (!d->body)
        abort();
    const uint8_t *piece;
    size_t len;
    while (fuzz_split_next(split, &piece, &len)) {
        memcpy(d->body + d->body_len + d->raw_len, piece, len);
        d->raw_len += len;
        if (!decode_held(&c, d))
            break;
    }
    d->phase = c.phase;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_split split;
    fuzz_split_init(&split, data, size);

    struct decoded pieces = {0};
    decode_in_pieces(&split, &pieces);

    struct hreq_chunked c;
    hreq_chunked_init(&c);
    char *whole = fuzz_cstr(split.data, split.len);
    size_t used = 0;
    size_t out = hreq_chunked_decode(&c, whole, split.len, &used);
    FUZZ_CHECK(used <= split.len && out <= used);

    FUZZ_CHECK(c.phase == pieces.phase);
    FUZZ_CHECK(out == pieces.body_len && memcmp(whole, pieces.body, out) == 0);
    if (c.phase == HREQ_CHUNK_DONE) {
        FUZZ_CHECK(used == pieces.consumed);
        FUZZ_CHECK(memcmp(pieces.body + pieces.body_len, split.data + used, pieces.raw_len) == 0);
    } else if (c.phase != HREQ_CHUNK_FAILED) {
        FUZZ_CHECK(used == split.len);
    }
    free(whole);
    free(pieces.body);
    return 0;
}
