/* test_bytes — building test inputs byte by byte, and exact-size copies of them, for the
 * parser tests (include after cmocka.h). */
#ifndef TEST_BYTES_H
#define TEST_BYTES_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A heap copy of s[0..n) of exactly n bytes (so ASan sees a read past the end); free it. */
static inline void *copy_of(const void *s, size_t n)
{
    void *buf = malloc(n > 0 ? n : 1);
    assert_non_null(buf);
    if (n > 0)
        memcpy(buf, s, n);
    return buf;
}

/* prefix, then pad filler bytes, then suffix, into buf (no NUL); returns the length. */
static inline size_t build(char *buf, size_t size, const char *prefix, char filler, size_t pad,
                           const char *suffix)
{
    size_t a = strlen(prefix), b = strlen(suffix);
    assert_true(a + pad + b <= size);
    memcpy(buf, prefix, a);
    memset(buf + a, filler, pad);
    memcpy(buf + a + pad, suffix, b);
    return a + pad + b;
}

#endif
