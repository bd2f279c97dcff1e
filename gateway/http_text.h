/* http_text — the character rules the HTTP/1.1 code shares: http1.c (node answers),
 * hreq.c (client requests) and nodeconn.c (node URLs). Pure, inline. */
#ifndef HTTP_TEXT_H
#define HTTP_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Optional white space (RFC 9110 OWS): space or tab. */
static inline bool http_is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* s[0..*n) without leading and trailing blanks: returns the new start, shortens *n. */
static inline const char *http_trim(const char *s, size_t *n)
{
    while (*n > 0 && http_is_blank(s[0])) {
        s++;
        (*n)--;
    }
    while (*n > 0 && http_is_blank(s[*n - 1]))
        (*n)--;
    return s;
}

/* s[0..n): 1 to max_digits decimal digits and nothing else, into *out. */
static inline bool http_parse_decimal(const char *s, size_t n, size_t max_digits, uint64_t *out)
{
    if (n == 0 || n > max_digits)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

#endif
