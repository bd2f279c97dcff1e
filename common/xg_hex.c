/* xg_hex — hex encoding and validation. */
#include "xg_hex.h"

#include <string.h>

int xg_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool xg_hex_ok(const char *text, size_t bytes)
{
    size_t len = strlen(text);
    if (bytes ? len != 2 * bytes : (len < 32 || len % 2 != 0))
        return false;
    for (size_t i = 0; i < len; i++)
        if (xg_hex_digit(text[i]) < 0)
            return false;
    return true;
}

bool xg_hex_decode(const char *text, uint8_t *out, size_t bytes)
{
    if (strlen(text) != 2 * bytes)
        return false;
    for (size_t i = 0; i < bytes; i++) {
        int hi = xg_hex_digit(text[2 * i]), lo = xg_hex_digit(text[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

void xg_hex_encode(const uint8_t *in, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * len] = '\0';
}
