/* xg_str — see xg_str.h. */
#include "xg_str.h"

#include <string.h>

/* Appends src at dst[*used], within cap (one byte kept for the NUL); false when cut. */
static bool xg_str_append(char *dst, size_t cap, size_t *used, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    size_t room = cap - 1 - *used;
    bool whole = n <= room;
    if (!whole)
        n = room;
    if (n > 0)
        memcpy(dst + *used, src, n);
    *used += n;
    dst[*used] = '\0';
    return whole;
}

bool xg_str_copy(char *dst, size_t cap, const char *src)
{
    size_t used = 0;
    dst[0] = '\0';
    return xg_str_append(dst, cap, &used, src);
}

bool xg_str_join(char *dst, size_t cap, const char *a, const char *b)
{
    size_t used = 0;
    dst[0] = '\0';
    bool whole = xg_str_append(dst, cap, &used, a);
    return xg_str_append(dst, cap, &used, b) && whole;
}

size_t xg_str_u64(char *out, uint64_t v)
{
    char digits[XG_STR_INT_SIZE];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    for (size_t i = 0; i < n; i++)
        out[i] = digits[n - 1 - i];
    out[n] = '\0';
    return n;
}

size_t xg_str_i64(char *out, int64_t v)
{
    if (v >= 0)
        return xg_str_u64(out, (uint64_t)v);
    out[0] = '-';
    return 1 + xg_str_u64(out + 1, 0 - (uint64_t)v);
}

bool xg_str_is_uuid(const char *s)
{
    if (strlen(s) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        bool hex = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f');
        if (dash ? s[i] != '-' : !hex)
            return false;
    }
    return true;
}
