/* xg_str — bounded string copies for the request path (pure), where snprintf's format
 * parsing costs more than the copy itself, and the shape checks of identifiers. */
#ifndef XG_STR_H
#define XG_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XG_STR_INT_SIZE 21 /* any int64_t or uint64_t in decimal, and the NUL */

/* Copies src (NULL: "") into dst of cap > 0 bytes, cut to fit, always NUL-terminated.
 * Returns false when it was cut. */
bool xg_str_copy(char *dst, size_t cap, const char *src);

/* dst = a followed by b, as xg_str_copy would; false when cut. */
__attribute__((warn_unused_result)) bool xg_str_join(char *dst, size_t cap, const char *a,
                                                     const char *b);

/* v in decimal and a NUL into out (XG_STR_INT_SIZE bytes hold any value); returns the number of
 * characters before the NUL. */
size_t xg_str_u64(char *out, uint64_t v);
size_t xg_str_i64(char *out, int64_t v);

/* Whether s is a UUID as PostgreSQL prints it: 36 characters, lowercase hex digits in groups
 * of 8-4-4-4-12 separated by '-' (invoice ids). */
bool xg_str_is_uuid(const char *s);

#endif
