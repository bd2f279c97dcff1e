/* xg_str — bounded string copies for the request path (pure), where snprintf's format
 * parsing costs more than the copy itself. */
#ifndef XG_STR_H
#define XG_STR_H

#include <stdbool.h>
#include <stddef.h>

/* Copies src (NULL: "") into dst of cap > 0 bytes, cut to fit, always NUL-terminated.
 * Returns false when it was cut. */
bool xg_str_copy(char *dst, size_t cap, const char *src);

/* dst = a followed by b, as xg_str_copy would; false when cut. */
bool xg_str_join(char *dst, size_t cap, const char *a, const char *b);

#endif
