/* xg_hex — lower-level text helpers for keys and hashes (pure). */
#ifndef XG_HEX_H
#define XG_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value of one hex digit (either case), or -1. */
int xg_hex_digit(char c);

/* True when text is hex digits encoding exactly `bytes` bytes (bytes 0: any even
 * length of at least 32 digits, i.e. 128 bits or more). */
bool xg_hex_ok(const char *text, size_t bytes);

/* Decodes exactly `bytes` bytes of hex (either case); false on any other input. */
__attribute__((warn_unused_result)) bool xg_hex_decode(const char *text, uint8_t *out,
                                                       size_t bytes);

/* Writes 2*len lower-case hex digits and a NUL into out. */
void xg_hex_encode(const uint8_t *in, size_t len, char *out);

#endif
