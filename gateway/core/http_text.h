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

/* s[0..n) is a field value that may be copied into another message's head: no control
 * character but HTAB (RFC 9110 §5.5), so no CR, LF or NUL that would split or cut it. */
static inline bool http_field_value_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return false;
    }
    return true;
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
