/* epee — see epee.h.
 *
 * One bounded walker (epee_skip_*) checks a value and finds where it ends; epee_open runs
 * it over the whole body, and the readers run it again over the part they look at, so
 * each read is bounds-checked on its own even over bytes epee_open already accepted. */
#include "rpc/epee.h"

#include <assert.h>
#include <string.h>

#define EPEE_HEADER_LEN 9

/* Signature A 0x01011101 and B 0x01020101 little-endian, then format version 1. */
static const uint8_t epee_header[EPEE_HEADER_LEN] = {0x01, 0x11, 0x01, 0x01, 0x01,
                                                     0x01, 0x02, 0x01, 0x01};

/* The fewest bytes an entry takes: name length, one name byte, type byte, a 1-byte value. */
#define EPEE_MIN_ENTRY 4

/* ---- reading bytes ---- */

/* The bytes still to read: [at, end). */
struct epee_cursor {
    const uint8_t *at, *end;
};

static size_t epee_left(const struct epee_cursor *c)
{
    return (size_t)(c->end - c->at);
}

/* size bytes little-endian; the caller checked they are there. */
static uint64_t epee_load_le(const uint8_t *p, size_t size)
{
    uint64_t v = 0;
    for (size_t i = size; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static enum epee_status epee_take(struct epee_cursor *c, size_t n, const uint8_t **out)
{
    if (epee_left(c) < n)
        return EPEE_TRUNCATED;
    if (out)
        *out = c->at;
    c->at += n;
    return EPEE_OK;
}

static enum epee_status epee_read_byte(struct epee_cursor *c, uint8_t *out)
{
    const uint8_t *p;
    enum epee_status st = epee_take(c, 1, &p);
    if (st == EPEE_OK)
        *out = *p;
    return st;
}

/* A varint: 1, 2, 4 or 8 bytes, as the low two bits of the first say, little-endian, shifted
 * right by two. Encodings longer than needed are accepted, as monerod accepts them. */
static enum epee_status epee_read_varint(struct epee_cursor *c, uint64_t *out)
{
    if (epee_left(c) == 0)
        return EPEE_TRUNCATED;
    size_t size = (size_t)1 << (c->at[0] & 0x03);
    const uint8_t *p;
    enum epee_status st = epee_take(c, size, &p);
    if (st == EPEE_OK)
        *out = epee_load_le(p, size) >> 2;
    return st;
}

/* ---- types ---- */

/* The bytes of one value of type, for the fixed-size types; 0 for the others. */
static size_t epee_fixed_size(uint8_t type)
{
    switch (type) {
    case EPEE_INT64:
    case EPEE_UINT64:
    case EPEE_DOUBLE:
        return 8;
    case EPEE_INT32:
    case EPEE_UINT32:
        return 4;
    case EPEE_INT16:
    case EPEE_UINT16:
        return 2;
    case EPEE_INT8:
    case EPEE_UINT8:
    case EPEE_BOOL:
        return 1;
    default:
        return 0;
    }
}

/* The fewest bytes one value of type takes (an array element: no type byte of its own); 0
 * for an unknown type. */
static size_t epee_min_size(uint8_t type)
{
    switch (type) {
    case EPEE_STRING: /* an empty one: its length */
    case EPEE_OBJECT: /* an empty one: its count */
        return 1;
    case EPEE_ARRAY: /* a type byte and an empty count */
        return 2;
    default:
        return epee_fixed_size(type);
    }
}

/* A count of elements (or entries) of at least min bytes each: a count the bytes left cannot
 * hold is refused here, before any element is read. */
static enum epee_status epee_read_count(struct epee_cursor *c, size_t min, uint64_t *count)
{
    enum epee_status st = epee_read_varint(c, count);
    if (st != EPEE_OK)
        return st;
    return *count <= epee_left(c) / min ? EPEE_OK : EPEE_TRUNCATED;
}

/* Whether the entry name name_bytes[0..name_len) is the C string name of length want. */
static bool epee_name_is(const uint8_t *name_bytes, size_t name_len, const char *name, size_t want)
{
    return name_len == want && memcmp(name_bytes, name, want) == 0;
}

/* ---- the walker ---- */

static enum epee_status epee_skip_value(struct epee_cursor *c, uint8_t type, unsigned depth);

/* The elements of an array of type, after its type byte; depth counts the array. */
static enum epee_status epee_skip_array(struct epee_cursor *c, uint8_t type, unsigned depth)
{
    size_t min = epee_min_size(type);
    if (min == 0)
        return EPEE_BAD_TYPE;
    if (depth > EPEE_MAX_DEPTH)
        return EPEE_TOO_DEEP;
    uint64_t count = 0;
    enum epee_status st = epee_read_count(c, min, &count);
    if (st != EPEE_OK)
        return st;
    if (type != EPEE_BOOL && epee_fixed_size(type) == min)
        return epee_take(c, (size_t)count * min, NULL); /* fits: see epee_read_count */
    for (uint64_t i = 0; st == EPEE_OK && i < count; i++)
        st = epee_skip_value(c, type, depth);
    return st;
}

/* A value of type EPEE_ARRAY: a type byte with EPEE_ARRAY_FLAG, then that array. */
static enum epee_status epee_skip_inner_array(struct epee_cursor *c, unsigned depth)
{
    uint8_t type;
    enum epee_status st = epee_read_byte(c, &type);
    if (st != EPEE_OK)
        return st;
    if (!(type & EPEE_ARRAY_FLAG))
        return EPEE_BAD_TYPE;
    return epee_skip_array(c, (uint8_t)(type & ~EPEE_ARRAY_FLAG), depth + 1);
}

static enum epee_status epee_skip_string(struct epee_cursor *c)
{
    uint64_t len;
    enum epee_status st = epee_read_varint(c, &len);
    if (st != EPEE_OK)
        return st;
    return len <= epee_left(c) ? epee_take(c, (size_t)len, NULL) : EPEE_TRUNCATED;
}

static enum epee_status epee_skip_bool(struct epee_cursor *c)
{
    uint8_t b;
    enum epee_status st = epee_read_byte(c, &b);
    if (st != EPEE_OK)
        return st;
    return b <= 1 ? EPEE_OK : EPEE_BAD_VALUE;
}

/* One entry of a section at depth: its name in name[0..*name_len), its value in *value. */
static enum epee_status epee_read_entry(struct epee_cursor *c, unsigned depth, const uint8_t **name,
                                        size_t *name_len, struct epee_value *value)
{
    uint8_t len;
    enum epee_status st = epee_read_byte(c, &len);
    if (st != EPEE_OK)
        return st;
    if (len == 0)
        return EPEE_BAD_VALUE; /* monerod: "Section name is missing" */
    st = epee_take(c, len, name);
    if (st != EPEE_OK)
        return st;
    *name_len = len;
    st = epee_read_byte(c, &value->type);
    if (st != EPEE_OK)
        return st;
    value->data = c->at;
    st = epee_skip_value(c, value->type, depth);
    value->len = (size_t)(c->at - value->data);
    return st;
}

/* A section: its count and entries; depth counts the section. */
static enum epee_status epee_skip_section(struct epee_cursor *c, unsigned depth)
{
    if (depth > EPEE_MAX_DEPTH)
        return EPEE_TOO_DEEP;
    uint64_t count = 0;
    enum epee_status st = epee_read_count(c, EPEE_MIN_ENTRY, &count);
    for (uint64_t i = 0; st == EPEE_OK && i < count; i++) {
        const uint8_t *name;
        size_t name_len;
        struct epee_value value;
        st = epee_read_entry(c, depth, &name, &name_len, &value);
    }
    return st;
}

/* A value of type in a section or array at depth (whose own container it is). */
static enum epee_status epee_skip_value(struct epee_cursor *c, uint8_t type, unsigned depth)
{
    if (type & EPEE_ARRAY_FLAG)
        return epee_skip_array(c, (uint8_t)(type & ~EPEE_ARRAY_FLAG), depth + 1);
    switch (type) {
    case EPEE_STRING:
        return epee_skip_string(c);
    case EPEE_BOOL:
        return epee_skip_bool(c);
    case EPEE_OBJECT:
        return epee_skip_section(c, depth + 1);
    case EPEE_ARRAY:
        return epee_skip_inner_array(c, depth);
    default: {
        size_t size = epee_fixed_size(type);
        return size > 0 ? epee_take(c, size, NULL) : EPEE_BAD_TYPE;
    }
    }
}

/* ---- checking a body ---- */

enum epee_status epee_measure(const void *body, size_t len, size_t *used)
{
    const uint8_t *b = body;
    size_t head = len < EPEE_HEADER_LEN ? len : EPEE_HEADER_LEN;
    if (head > 0 && memcmp(b, epee_header, head) != 0)
        return EPEE_BAD_HEADER;
    if (len < EPEE_HEADER_LEN)
        return EPEE_TRUNCATED;
    struct epee_cursor c = {b + EPEE_HEADER_LEN, b + len};
    enum epee_status st = epee_skip_section(&c, 1);
    if (st != EPEE_OK)
        return st;
    *used = (size_t)(c.at - b);
    return EPEE_OK;
}

enum epee_status epee_open(const void *body, size_t len, struct epee_section *root)
{
    const uint8_t *b = body;
    size_t used;
    enum epee_status st = epee_measure(body, len, &used);
    if (st != EPEE_OK)
        return st;
    if (used != len)
        return EPEE_TRAILING;
    *root = (struct epee_section){.data = b + EPEE_HEADER_LEN, .len = len - EPEE_HEADER_LEN};
    return EPEE_OK;
}

const char *epee_status_text(enum epee_status st)
{
    switch (st) {
    case EPEE_OK:
        return "ok";
    case EPEE_BAD_HEADER:
        return "not a portable-storage body (bad signature or version)";
    case EPEE_TRUNCATED:
        return "truncated (a name, value, length or count runs past the end)";
    case EPEE_BAD_TYPE:
        return "unknown type code";
    case EPEE_BAD_VALUE:
        return "empty field name or bool other than 0 or 1";
    case EPEE_TOO_DEEP:
        return "nested too deep";
    case EPEE_TRAILING:
        return "bytes after the root section";
    }
    return "unknown status";
}

/* ---- reading fields ---- */

/* The walks below start at depth 1 wherever they are in the body: what they walk lies within
 * what epee_open checked within the bound from the root, so counting from 1 refuses nothing
 * it accepted, and still bounds a walk over bytes it never saw. */

bool epee_find(const struct epee_section *s, const char *name, struct epee_value *out)
{
    struct epee_cursor c = {s->data, s->data + s->len};
    size_t want = strlen(name), found = 0;
    struct epee_value match = {0};
    uint64_t count = 0;
    if (epee_read_count(&c, EPEE_MIN_ENTRY, &count) != EPEE_OK)
        return false;
    for (uint64_t i = 0; i < count; i++) {
        const uint8_t *entry_name;
        size_t name_len;
        struct epee_value value;
        if (epee_read_entry(&c, 1, &entry_name, &name_len, &value) != EPEE_OK)
            return false;
        if (epee_name_is(entry_name, name_len, name, want)) {
            match = value;
            found++;
        }
    }
    if (found != 1)
        return false;
    *out = match;
    return true;
}

bool epee_get_uint(const struct epee_value *v, uint64_t *out)
{
    size_t size = epee_fixed_size(v->type);
    if (size == 0 || v->type == EPEE_DOUBLE || v->type == EPEE_BOOL || v->len != size)
        return false;
    uint64_t u = epee_load_le(v->data, size);
    bool is_signed = v->type >= EPEE_INT64 && v->type <= EPEE_INT8;
    if (is_signed && (u >> (size * 8 - 1)) != 0)
        return false; /* negative */
    *out = u;
    return true;
}

bool epee_get_bool(const struct epee_value *v, bool *out)
{
    if (v->type != EPEE_BOOL || v->len != 1 || v->data[0] > 1)
        return false;
    *out = v->data[0] == 1;
    return true;
}

bool epee_get_string(const struct epee_value *v, const char **data, size_t *len)
{
    if (v->type != EPEE_STRING)
        return false;
    struct epee_cursor c = {v->data, v->data + v->len};
    uint64_t n;
    if (epee_read_varint(&c, &n) != EPEE_OK || n != epee_left(&c))
        return false;
    *data = (const char *)c.at;
    *len = (size_t)n;
    return true;
}

bool epee_get_object(const struct epee_value *v, struct epee_section *out)
{
    if (v->type != EPEE_OBJECT)
        return false;
    *out = (struct epee_section){.data = v->data, .len = v->len};
    return true;
}

bool epee_get_array(const struct epee_value *v, struct epee_array *out)
{
    struct epee_cursor c = {v->data, v->data + v->len};
    uint8_t type = v->type;
    if (type == EPEE_ARRAY && epee_read_byte(&c, &type) != EPEE_OK)
        return false;
    if (!(type & EPEE_ARRAY_FLAG))
        return false;
    type = (uint8_t)(type & ~EPEE_ARRAY_FLAG);
    size_t min = epee_min_size(type);
    uint64_t count = 0;
    if (min == 0 || epee_read_count(&c, min, &count) != EPEE_OK)
        return false;
    *out = (struct epee_array){.type = type, .count = (size_t)count, .at = c.at, .end = c.end};
    return true;
}

bool epee_array_next(struct epee_array *a, struct epee_value *elem)
{
    if (a->next >= a->count)
        return false;
    struct epee_cursor c = {a->at, a->end};
    if (epee_skip_value(&c, a->type, 1) != EPEE_OK) {
        a->next = a->count; /* not from a checked body: stop here */
        return false;
    }
    *elem = (struct epee_value){.type = a->type, .data = a->at, .len = (size_t)(c.at - a->at)};
    a->at = c.at;
    a->next++;
    return true;
}

bool epee_entries_open(const struct epee_section *s, struct epee_entries *out)
{
    struct epee_cursor c = {s->data, s->data + s->len};
    uint64_t count = 0;
    if (epee_read_count(&c, EPEE_MIN_ENTRY, &count) != EPEE_OK)
        return false;
    *out = (struct epee_entries){.left = count, .at = c.at, .end = c.end};
    return true;
}

bool epee_entries_next(struct epee_entries *e, const char **name, size_t *name_len,
                       struct epee_value *value)
{
    if (e->left == 0)
        return false;
    struct epee_cursor c = {e->at, e->end};
    const uint8_t *entry_name;
    if (epee_read_entry(&c, 1, &entry_name, name_len, value) != EPEE_OK) {
        e->left = 0; /* not from a checked body: stop here */
        return false;
    }
    *name = (const char *)entry_name;
    e->at = c.at;
    e->left--;
    return true;
}

/* ---- stripping a field ---- */

/* value as the shortest varint, at out; returns its bytes. */
static size_t epee_put_varint(uint8_t *out, uint64_t value)
{
    assert(value >> 62 == 0);
    size_t size = value < UINT64_C(1) << 6    ? 1
                  : value < UINT64_C(1) << 14 ? 2
                  : value < UINT64_C(1) << 30 ? 4
                                              : 8;
    uint64_t v = value << 2 | (size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3);
    for (size_t i = 0; i < size; i++)
        out[i] = (uint8_t)(v >> (8 * i));
    return size;
}

/* How many root entries of the checked body root are named name. */
static uint64_t epee_count_named(const struct epee_section *root, const char *name)
{
    struct epee_cursor c = {root->data, root->data + root->len};
    size_t want = strlen(name);
    uint64_t count = 0, named = 0;
    enum epee_status st = epee_read_count(&c, EPEE_MIN_ENTRY, &count);
    for (uint64_t i = 0; st == EPEE_OK && i < count; i++) {
        const uint8_t *entry_name;
        size_t name_len;
        struct epee_value value;
        st = epee_read_entry(&c, 1, &entry_name, &name_len, &value);
        if (st == EPEE_OK && epee_name_is(entry_name, name_len, name, want))
            named++;
    }
    assert(st == EPEE_OK); /* epee_open checked it */
    return named;
}

/* Writes the checked body's header, its root count less removed, and the root entries not
 * named name, to out; returns the bytes written. Each write lands at or before the bytes
 * it copies, all of which were read already, so out may be the body itself. */
static size_t epee_copy_without(const uint8_t *body, const struct epee_section *root,
                                const char *name, uint64_t removed, uint8_t *out)
{
    struct epee_cursor c = {root->data, root->data + root->len};
    size_t want = strlen(name);
    uint64_t count = 0;
    enum epee_status st = epee_read_count(&c, EPEE_MIN_ENTRY, &count);
    memmove(out, body, EPEE_HEADER_LEN);
    size_t w = EPEE_HEADER_LEN + epee_put_varint(out + EPEE_HEADER_LEN, count - removed);
    for (uint64_t i = 0; st == EPEE_OK && i < count; i++) {
        const uint8_t *start = c.at, *entry_name;
        size_t name_len;
        struct epee_value value;
        st = epee_read_entry(&c, 1, &entry_name, &name_len, &value);
        if (st != EPEE_OK || epee_name_is(entry_name, name_len, name, want))
            continue;
        size_t n = (size_t)(c.at - start);
        memmove(out + w, start, n);
        w += n;
    }
    assert(st == EPEE_OK); /* epee_open checked it */
    return w;
}

enum epee_status epee_strip(const void *in, size_t in_len, const char *name, void *out,
                            size_t out_size, size_t *out_len, bool *removed)
{
    assert(out_size >= in_len);
    struct epee_section root;
    enum epee_status st = epee_open(in, in_len, &root);
    if (st != EPEE_OK)
        return st;
    uint64_t named = epee_count_named(&root, name);
    if (named == 0) {
        if (out != in)
            memcpy(out, in, in_len);
        *out_len = in_len;
    } else {
        *out_len = epee_copy_without(in, &root, name, named, out);
    }
    *removed = named > 0;
    return EPEE_OK;
}

bool epee_patch_uint64(void *body, size_t len, const char *name, uint64_t value)
{
    struct epee_section root;
    struct epee_value v;
    if (epee_open(body, len, &root) != EPEE_OK || !epee_find(&root, name, &v) ||
        v.type != EPEE_UINT64 || v.len != 8)
        return false;
    uint8_t *at = (uint8_t *)body + (v.data - (const uint8_t *)body);
    for (size_t i = 0; i < 8; i++)
        at[i] = (uint8_t)(value >> (8 * i));
    return true;
}
