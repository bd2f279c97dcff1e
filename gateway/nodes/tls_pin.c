/* tls_pin — certificate fingerprint lists; see tls_pin.h. */
#include "nodes/tls_pin.h"

#include <stdio.h>
#include <string.h>

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool is_separator(char c)
{
    return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* One fingerprint of n characters at s into out. */
static bool parse_one(const char *s, size_t n, unsigned char *out)
{
    size_t bytes = 0, i = 0;
    while (i < n) {
        if (bytes == TLS_PIN_LEN || i + 1 >= n)
            return false;
        int hi = hex_value(s[i]), lo = hex_value(s[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[bytes++] = (unsigned char)(hi << 4 | lo);
        i += 2;
        /* A colon only between byte pairs, never first, last or doubled. */
        if (i < n && s[i] == ':') {
            i++;
            if (i == n)
                return false;
        }
    }
    return bytes == TLS_PIN_LEN;
}

bool tls_pin_parse(const char *text, struct tls_pins *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *s = text ? text : "";
    size_t index = 0;
    while (*s) {
        while (*s && is_separator(*s))
            s++;
        if (!*s)
            break;
        size_t n = 0;
        while (s[n] && !is_separator(s[n]))
            n++;
        index++;
        if (out->count == TLS_PIN_MAX) {
            snprintf(err, errlen, "more than %d fingerprints", TLS_PIN_MAX);
            goto bad;
        }
        if (!parse_one(s, n, out->sha256[out->count])) {
            snprintf(err, errlen,
                     "fingerprint %zu: expected a SHA-256 fingerprint (64 hex digits, "
                     "':' between pairs allowed)",
                     index);
            goto bad;
        }
        out->count++;
        s += n;
    }
    return true;
bad:
    memset(out, 0, sizeof *out);
    return false;
}

bool tls_pin_match(const struct tls_pins *pins, const unsigned char *digest)
{
    for (size_t i = 0; i < pins->count; i++)
        if (memcmp(pins->sha256[i], digest, TLS_PIN_LEN) == 0)
            return true;
    return false;
}
