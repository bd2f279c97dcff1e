/* agree — see agree.h. */
#include "rpc/agree.h"

#include "rpc/epee.h"

#include <jansson.h>
#include <string.h>

static const char *const masked[] = {"credits", "top_hash", "untrusted"};

static bool is_masked(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof masked / sizeof masked[0]; i++)
        if (strlen(masked[i]) == len && memcmp(masked[i], name, len) == 0)
            return true;
    return false;
}

/* ---- JSON ---- */

/* Numbers by value: an integer and a real that hold the same number are equal (json_equal
 * alone tells 1 and 1.0 apart). */
static bool json_same(const json_t *a, const json_t *b);

static bool json_same_object(const json_t *a, const json_t *b, bool top)
{
    size_t na = 0, nb = 0;
    const char *key;
    const json_t *va;
    json_object_foreach((json_t *)a, key, va)
    {
        if (top && is_masked(key, strlen(key)))
            continue;
        na++;
        const json_t *vb = json_object_get(b, key);
        if (!vb || !json_same(va, vb))
            return false;
    }
    json_object_foreach((json_t *)b, key, va) if (!(top && is_masked(key, strlen(key)))) nb++;
    return na == nb;
}

static bool json_same(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        return json_number_value(a) == json_number_value(b);
    }
    if (json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_object(a))
        return json_same_object(a, b, false);
    if (json_is_array(a)) {
        size_t n = json_array_size(a);
        if (n != json_array_size(b))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!json_same(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    return json_equal((json_t *)a, (json_t *)b);
}

/* The object compared: a JSON-RPC answer's "result" or "error", a plain answer itself. */
static const json_t *json_subject(const json_t *root, enum agree_body kind)
{
    if (!json_is_object(root))
        return NULL;
    if (kind != AGREE_JSON_RPC)
        return root;
    const json_t *r = json_object_get(root, "result");
    return r ? r : json_object_get(root, "error");
}

static enum agree_verdict agree_json(enum agree_body kind, const char *a, size_t alen,
                                     const char *b, size_t blen)
{
    /* monerod ends its answers with a newline at most; nothing of a node's is after them */
    json_t *ra = json_loadb(a, alen, JSON_DISABLE_EOF_CHECK, NULL);
    json_t *rb = json_loadb(b, blen, JSON_DISABLE_EOF_CHECK, NULL);
    const json_t *sa = json_subject(ra, kind), *sb = json_subject(rb, kind);
    enum agree_verdict v = AGREE_UNREADABLE;
    if (sa && sb) {
        bool both_results = kind != AGREE_JSON_RPC || (json_object_get(ra, "result") != NULL) ==
                                                          (json_object_get(rb, "result") != NULL);
        bool same = both_results && json_is_object(sa) && json_is_object(sb)
                        ? json_same_object(sa, sb, true)
                        : both_results && json_same(sa, sb);
        v = same ? AGREE_SAME : AGREE_DIFFERENT;
    }
    json_decref(ra);
    json_decref(rb);
    return v;
}

/* ---- epee ---- */

static bool is_integer_type(uint8_t t)
{
    return t >= EPEE_INT64 && t <= EPEE_UINT8;
}

static bool bin_same_section(const struct epee_section *a, const struct epee_section *b, bool top);

/* Two values of element type t (no array flag), or of their own types for entries. */
static bool bin_same_value(const struct epee_value *a, const struct epee_value *b)
{
    if (is_integer_type(a->type) && is_integer_type(b->type) && a->type != b->type) {
        /* another width of the same number; a negative value is read by neither */
        uint64_t x, y;
        return epee_get_uint(a, &x) && epee_get_uint(b, &y) && x == y;
    }
    if (a->type != b->type)
        return false;
    if (a->type == EPEE_OBJECT) {
        struct epee_section sa, sb;
        return epee_get_object(a, &sa) && epee_get_object(b, &sb) &&
               bin_same_section(&sa, &sb, false);
    }
    if ((a->type & EPEE_ARRAY_FLAG) || a->type == EPEE_ARRAY) {
        struct epee_array xa, xb;
        if (!epee_get_array(a, &xa) || !epee_get_array(b, &xb) || xa.type != xb.type ||
            xa.count != xb.count)
            return false;
        struct epee_value ea, eb;
        while (epee_array_next(&xa, &ea))
            if (!epee_array_next(&xb, &eb) || !bin_same_value(&ea, &eb))
                return false;
        return xa.next == xa.count;
    }
    /* integers of one width, doubles, strings and bools: one encoding each */
    return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* The value of the only entry of s named name[0..len), in *out. */
static bool bin_find(const struct epee_section *s, const char *name, size_t len,
                     struct epee_value *out)
{
    struct epee_entries e;
    if (!epee_entries_open(s, &e))
        return false;
    const char *n;
    size_t nlen;
    struct epee_value v;
    unsigned found = 0;
    while (epee_entries_next(&e, &n, &nlen, &v))
        if (nlen == len && memcmp(n, name, len) == 0) {
            *out = v;
            found++;
        }
    return found == 1;
}

static size_t bin_count(const struct epee_section *s, bool top, bool *ok)
{
    struct epee_entries e;
    size_t n = 0;
    *ok = epee_entries_open(s, &e);
    const char *name;
    size_t len;
    struct epee_value v;
    while (*ok && epee_entries_next(&e, &name, &len, &v))
        n += !(top && is_masked(name, len));
    return n;
}

static bool bin_same_section(const struct epee_section *a, const struct epee_section *b, bool top)
{
    bool oka, okb;
    if (bin_count(a, top, &oka) != bin_count(b, top, &okb) || !oka || !okb)
        return false;
    struct epee_entries e;
    if (!epee_entries_open(a, &e))
        return false;
    const char *name;
    size_t len;
    struct epee_value va, vb;
    while (epee_entries_next(&e, &name, &len, &va)) {
        if (top && is_masked(name, len))
            continue;
        if (!bin_find(b, name, len, &vb) || !bin_same_value(&va, &vb))
            return false;
    }
    return true;
}

static enum agree_verdict agree_bin(const char *a, size_t alen, const char *b, size_t blen)
{
    struct epee_section ra, rb;
    if (epee_open(a, alen, &ra) != EPEE_OK || epee_open(b, blen, &rb) != EPEE_OK)
        return AGREE_UNREADABLE;
    return bin_same_section(&ra, &rb, true) ? AGREE_SAME : AGREE_DIFFERENT;
}

enum agree_verdict agree_compare(enum agree_body kind, const char *a, size_t alen, const char *b,
                                 size_t blen)
{
    if (!a || !b)
        return AGREE_UNREADABLE;
    return kind == AGREE_BIN ? agree_bin(a, alen, b, blen) : agree_json(kind, a, alen, b, blen);
}

const char *agree_verdict_name(enum agree_verdict v)
{
    switch (v) {
    case AGREE_SAME:
        return "same";
    case AGREE_DIFFERENT:
        return "different";
    case AGREE_UNREADABLE:
        return "unreadable";
    }
    return "?";
}

static bool pair(const bool same[AGREE_MAX_ANSWERS][AGREE_MAX_ANSWERS], unsigned a, unsigned b)
{
    return a < b ? same[a][b] : same[b][a];
}

struct agree_decision agree_decide(unsigned n,
                                   const bool same[AGREE_MAX_ANSWERS][AGREE_MAX_ANSWERS],
                                   bool can_ask, bool serve_unverified)
{
    struct agree_decision d = {.step = AGREE_STEP_ASK, .outcome = AGREE_PENDING};
    /* the first pair that agrees decides; with three, the one left out is the odd one */
    for (unsigned i = 0; i < n && i < AGREE_MAX_ANSWERS; i++)
        for (unsigned j = i + 1; j < n && j < AGREE_MAX_ANSWERS; j++)
            if (same[i][j]) {
                d.step = AGREE_STEP_SERVE;
                d.outcome = n > 2 ? AGREE_MAJORITY : AGREE_AGREED;
                d.serve = i;
                d.agreed = 1u << i | 1u << j;
                for (unsigned k = 0; k < n && k < AGREE_MAX_ANSWERS; k++)
                    if (k != i && k != j && !pair(same, i, k) && !pair(same, j, k))
                        d.odd |= 1u << k;
                return d;
            }
    if (n >= 1 && n < AGREE_MAX_ANSWERS && can_ask)
        return d;
    if (n == 1) {
        d.outcome = AGREE_UNVERIFIED;
        d.step = serve_unverified ? AGREE_STEP_UNVERIFIED : AGREE_STEP_REFUSE;
        return d;
    }
    d.step = AGREE_STEP_REFUSE;
    d.outcome = AGREE_DISAGREED;
    return d;
}
