/* fuzz_json_variants — one JSON document written in other ways, for the drivers whose
 * property is that the writing does not matter (fuzz_cache_key.c, fuzz_api_invoice.c).
 * Pure; every text returned is malloc'd (free() it). */
#ifndef FUZZ_JSON_VARIANTS_H
#define FUZZ_JSON_VARIANTS_H

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_JSON_VARIANTS 5

/* A deep copy of v whose objects list their keys in reverse order (new reference). */
static inline json_t *fuzz_json_reversed(const json_t *v)
{
    if (json_is_array(v)) {
        json_t *a = json_array();
        for (size_t i = 0; i < json_array_size(v); i++)
            json_array_append_new(a, fuzz_json_reversed(json_array_get(v, i)));
        return a;
    }
    if (!json_is_object(v))
        return json_deep_copy(v);
    size_t n = json_object_size(v), i = 0;
    const char **keys = calloc(n ? n : 1, sizeof *keys);
    if (!keys)
        abort();
    for (void *it = json_object_iter((json_t *)v); it; it = json_object_iter_next((json_t *)v, it))
        keys[i++] = json_object_iter_key(it);
    json_t *o = json_object();
    while (i > 0) {
        i--;
        json_object_set_new(o, keys[i], fuzz_json_reversed(json_object_get(v, keys[i])));
    }
    free(keys);
    return o;
}

/* Variant i (0 .. FUZZ_JSON_VARIANTS - 1) of doc: indented; ASCII-escaped with escaped
 * slashes; keys sorted, indented, ASCII-escaped; keys reversed, compact; compact inside
 * white space. NULL only when memory runs out. */
static inline char *fuzz_json_variant(const json_t *doc, int i)
{
    switch (i) {
    case 0:
        return json_dumps(doc, JSON_INDENT(2));
    case 1:
        return json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH);
    case 2:
        return json_dumps(doc, JSON_SORT_KEYS | JSON_INDENT(1) | JSON_ENSURE_ASCII);
    case 3: {
        json_t *rev = fuzz_json_reversed(doc);
        char *text = json_dumps(rev, JSON_COMPACT);
        json_decref(rev);
        return text;
    }
    default: {
        char *text = json_dumps(doc, JSON_COMPACT);
        size_t n = text ? strlen(text) : 0;
        char *padded = text ? malloc(n + 7) : NULL;
        if (padded) {
            memcpy(padded, " \n\t", 3);
            memcpy(padded + 3, text, n);
            memcpy(padded + 3 + n, "\r\n ", 4);
        }
        free(text);
        return padded;
    }
    }
}

#endif
