/* fuzz — what the libFuzzer drivers under tests/fuzz/ share: the input's split points,
 * NUL-terminated copies, and the check that turns a broken property into a crash.
 *
 * Split points. Drivers of incremental parsers (hreq, hreq_chunked, http1, front) read
 * their input as a prefix that chooses how the rest arrives, then the bytes:
 *     byte 0        low 3 bits: n, the number of piece sizes that follow (0..7); the
 *                   other bits are the driver's own flags
 *     bytes 1..n    piece sizes: piece i is sizes[i % n] + 1 bytes (the last one shorter)
 *     bytes n+1..   the bytes fed, in those pieces; with n = 0, all at once; after
 *                   FUZZ_SPLIT_MAX_PIECES pieces the rest comes at once, which bounds the
 *                   work per input (each piece is a parse from the start, or a read)
 * so a seed is "\0" followed by a request, and the fuzzer mutates the split points and the
 * bytes alike.
 *
 * Ownership: fuzz_cstr returns malloc'd memory of exactly len + 1 bytes (free() it), so a
 * read past the string's end shows under ASan; nothing else allocates. */
#ifndef FUZZ_H
#define FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the code under test promises, broken: a crash libFuzzer records. */
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: property broken: %s\n", __FILE__, __LINE__, #cond);            \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define FUZZ_SPLIT_MAX_SIZES  7
#define FUZZ_SPLIT_MAX_PIECES 64

struct fuzz_split {
    uint8_t flags; /* byte 0 without its low 3 bits */
    const uint8_t *sizes;
    size_t nsizes;
    const uint8_t *data; /* the bytes fed */
    size_t len;
    size_t at;    /* bytes handed out so far */
    size_t piece; /* pieces handed out so far */
};

/* Reads the prefix; an input too short for its prefix gives no bytes at all. */
static inline void fuzz_split_init(struct fuzz_split *s, const uint8_t *in, size_t n)
{
    memset(s, 0, sizeof *s);
    if (n == 0)
        return;
    s->flags = in[0] & (uint8_t)~FUZZ_SPLIT_MAX_SIZES;
    s->nsizes = in[0] & FUZZ_SPLIT_MAX_SIZES;
    if (n < 1 + s->nsizes) {
        s->nsizes = 0;
        return;
    }
    s->sizes = in + 1;
    s->data = in + 1 + s->nsizes;
    s->len = n - 1 - s->nsizes;
}

/* The next piece; false once every byte was handed out. */
static inline bool fuzz_split_next(struct fuzz_split *s, const uint8_t **piece, size_t *len)
{
    if (s->at >= s->len)
        return false;
    size_t left = s->len - s->at;
    size_t want = s->nsizes && s->piece + 1 < FUZZ_SPLIT_MAX_PIECES
                      ? (size_t)s->sizes[s->piece % s->nsizes] + 1
                      : left;
    *piece = s->data + s->at;
    *len = want < left ? want : left;
    s->at += *len;
    s->piece++;
    return true;
}

/* A NUL-terminated copy of data[0..len) in a buffer of exactly len + 1 bytes. */
static inline char *fuzz_cstr(const void *data, size_t len)
{
    char *s = malloc(len + 1);
    if (!s)
        abort();
    if (len)
        memcpy(s, data, len);
    s[len] = '\0';
    return s;
}

/* Cuts data at its first n - 1 newlines into n NUL-terminated fields (fields[i] "" when
 * the input has fewer lines); the last field holds the rest, newlines included. The
 * fields live in one buffer, returned for free(). */
static inline char *fuzz_fields(const uint8_t *data, size_t len, const char **fields, size_t n)
{
    char *buf = fuzz_cstr(data, len);
    char *p = buf;
    for (size_t i = 0; i < n; i++) {
        fields[i] = p;
        if (i + 1 == n)
            break;
        char *nl = strchr(p, '\n');
        if (nl) {
            *nl = '\0';
            p = nl + 1;
        } else {
            p += strlen(p);
        }
    }
    return buf;
}

#endif
