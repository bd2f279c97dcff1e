/* sse — see sse.h. */
#include "http/sse.h"

#include <stdlib.h>
#include <string.h>

static char *put(char *o, const char *s, size_t n)
{
    memcpy(o, s, n);
    return o + n;
}

/* Bytes of data as data lines: each line costs "data: " and "\n". */
static size_t data_size(const char *data)
{
    size_t n = strlen("data: \n");
    for (const char *p = data; *p; p++) {
        if (*p == '\r' && p[1] == '\n')
            p++;
        n += (*p == '\r' || *p == '\n') ? strlen("\ndata: ") : 1;
    }
    return n;
}

static char *put_data(char *o, const char *data)
{
    o = put(o, "data: ", 6);
    for (const char *p = data; *p; p++) {
        if (*p == '\r' && p[1] == '\n')
            p++;
        if (*p == '\r' || *p == '\n')
            o = put(o, "\ndata: ", 7);
        else
            *o++ = *p;
    }
    return put(o, "\n", 1);
}

char *sse_event(const char *name, const char *data, size_t *len)
{
    size_t name_len = name ? strlen(name) : 0;
    if (name && strpbrk(name, "\r\n"))
        return NULL;
    size_t need = (name_len ? strlen("event: \n") + name_len : 0) + (data ? data_size(data) : 0) +
                  strlen("\n") + 1;
    char *out = malloc(need);
    if (!out)
        return NULL;
    char *o = out;
    if (name_len) {
        o = put(o, "event: ", 7);
        o = put(o, name, name_len);
        o = put(o, "\n", 1);
    }
    if (data)
        o = put_data(o, data);
    o = put(o, "\n", 1);
    *o = '\0';
    *len = (size_t)(o - out);
    return out;
}

char *sse_comment(const char *text, size_t *len)
{
    if (strpbrk(text, "\r\n"))
        return NULL;
    size_t n = strlen(text);
    char *out = malloc(n + 5);
    if (!out)
        return NULL;
    char *o = put(out, ": ", 2);
    o = put(o, text, n);
    o = put(o, "\n\n", 2);
    *o = '\0';
    *len = (size_t)(o - out);
    return out;
}
