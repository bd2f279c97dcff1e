/* Table tests for gateway/epee: varints of every size at their boundaries; bodies of every
 * type, of nested objects and arrays, each accepted body also refused at every proper
 * prefix and with a byte after it; every refusal (header, type codes, values, counts
 * larger than the data, nesting past EPEE_MAX_DEPTH, trailing bytes); every reader
 * against every type; the gateway's own reads (status and untrusted of an answer, the
 * largest of a request's heights, the outs of get_outs.bin); the strip of a top-level
 * field, into a fresh buffer and in place; and single-byte mutations of accepted bodies.
 * Every buffer handed to the code under test is allocated at its exact size, so a read
 * past its end shows under the sanitizers.
 *
 * Includes epee.c to reach its varint reader and writer. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/epee.c"
#include "test_bytes.h"

/* Bodies written out byte by byte, in octal escapes of three digits, which (unlike hex
 * escapes) cannot swallow the character after them. A count or length as a 1-byte varint is
 * 4 times its value: \004 is 1, \010 2, \014 3, \020 4. Types: \001 to \015 (int64 to
 * EPEE_ARRAY: \010 uint8, \012 string, \013 bool, \014 object); with the array flag, \205 is
 * an array of uint64, \212 of strings, \213 of bools, \214 of objects, \215 of arrays.
 * H is the 9-byte header. */
#define H     "\001\021\001\001\001\001\002\001\001"
#define U64Z  "\000\000\000\000\000\000\000\000"
#define IN(s) .in = (s), .in_len = sizeof(s) - 1

/* epee_open over an exact-size copy of in[0..len). */
static enum epee_status open_copy(const void *in, size_t len)
{
    uint8_t *buf = copy_of(in, len);
    struct epee_section root = {0};
    enum epee_status st = epee_open(buf, len, &root);
    if (st == EPEE_OK) {
        assert_ptr_equal(root.data, buf + 9);
        assert_int_equal(root.len, len - 9);
    }
    free(buf);
    return st;
}

/* ---- building bodies ---- */

struct body {
    uint8_t *b;
    size_t n, cap;
};

static struct body body_new(size_t cap)
{
    struct body b = {.b = malloc(cap), .cap = cap};
    assert_non_null(b.b);
    return b;
}

static void put(struct body *b, const void *p, size_t n)
{
    assert_true(b->n + n <= b->cap);
    memcpy(b->b + b->n, p, n);
    b->n += n;
}

static void put_byte(struct body *b, uint8_t v)
{
    put(b, &v, 1);
}

static void put_le(struct body *b, uint64_t v, size_t size)
{
    for (size_t i = 0; i < size; i++)
        put_byte(b, (uint8_t)(v >> (8 * i)));
}

/* The shortest varint, written here independently of epee_put_varint. */
static void put_varint(struct body *b, uint64_t v)
{
    if (v <= 63)
        put_le(b, v << 2, 1);
    else if (v <= 16383)
        put_le(b, v << 2 | 1, 2);
    else if (v <= 1073741823)
        put_le(b, v << 2 | 2, 4);
    else
        put_le(b, v << 2 | 3, 8);
}

static void put_header(struct body *b)
{
    put(b, H, 9);
}

/* An entry's name and type byte; its value follows. */
static void put_field(struct body *b, const char *name, uint8_t type)
{
    put_byte(b, (uint8_t)strlen(name));
    put(b, name, strlen(name));
    put_byte(b, type);
}

static void put_string(struct body *b, const void *s, size_t n)
{
    put_varint(b, n);
    put(b, s, n);
}

/* ---- varints ---- */

struct varint_case {
    const char *name;
    const char *in;
    size_t in_len;
    enum epee_status status;
    uint64_t value;
};

static const struct varint_case varints[] = {
    {"1 byte, 0", IN("\000"), EPEE_OK, 0},
    {"1 byte, 63", IN("\374"), EPEE_OK, 63},
    {"2 bytes, 64", IN("\001\001"), EPEE_OK, 64},
    {"2 bytes, 16383", IN("\375\377"), EPEE_OK, 16383},
    {"2 bytes, 0 (longer than needed)", IN("\001\000"), EPEE_OK, 0},
    {"4 bytes, 16384", IN("\002\000\001\000"), EPEE_OK, 16384},
    {"4 bytes, 2^30 - 1", IN("\376\377\377\377"), EPEE_OK, 1073741823},
    {"4 bytes, 63 (longer than needed)", IN("\376\000\000\000"), EPEE_OK, 63},
    {"8 bytes, 2^30", IN("\003\000\000\000\001\000\000\000"), EPEE_OK, 1073741824},
    {"8 bytes, 2^62 - 1", IN("\377\377\377\377\377\377\377\377"), EPEE_OK, 4611686018427387903u},
    {"8 bytes, 1 (longer than needed)", IN("\007\000\000\000\000\000\000\000"), EPEE_OK, 1},
    {"empty", IN(""), EPEE_TRUNCATED, 0},
    {"2 bytes, 1 there", IN("\001"), EPEE_TRUNCATED, 0},
    {"4 bytes, 3 there", IN("\002\000\001"), EPEE_TRUNCATED, 0},
    {"8 bytes, 7 there", IN("\003\000\000\000\000\000\000"), EPEE_TRUNCATED, 0},
};

static void test_varints(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof varints / sizeof varints[0]; i++) {
        const struct varint_case *c = &varints[i];
        uint8_t *buf = copy_of(c->in, c->in_len);
        struct epee_cursor cur = {buf, buf + c->in_len};
        uint64_t v = 0;
        enum epee_status st = epee_read_varint(&cur, &v);
        if (st != c->status || (st == EPEE_OK && (v != c->value || cur.at != cur.end)))
            fail_msg("%s: status %d value %llu", c->name, (int)st, (unsigned long long)v);
        if (st != EPEE_OK && cur.at != buf)
            fail_msg("%s: moved on a refusal", c->name);
        free(buf);
    }
}

/* The writer picks the shortest form at each boundary, and reads back. */
static void test_varint_writer(void **state)
{
    (void)state;
    static const struct {
        uint64_t value;
        size_t size;
    } cases[] = {
        {0, 1},     {63, 1},         {64, 2},         {16383, 2},
        {16384, 4}, {1073741823, 4}, {1073741824, 8}, {4611686018427387903u, 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t out[8];
        size_t n = epee_put_varint(out, cases[i].value);
        assert_int_equal(n, cases[i].size);
        struct body b = body_new(8);
        put_varint(&b, cases[i].value);
        assert_int_equal(b.n, n);
        assert_memory_equal(b.b, out, n);
        free(b.b);
        struct epee_cursor cur = {out, out + n};
        uint64_t v = 0;
        assert_int_equal(epee_read_varint(&cur, &v), EPEE_OK);
        assert_true(v == cases[i].value);
    }
}

/* ---- whole bodies ---- */

struct body_case {
    const char *name;
    const char *in;
    size_t in_len;
    enum epee_status status;
};

#define ONE_FIELD(type, value) H "\004\001a" type value

static const struct body_case bodies[] = {
    /* Accepted: every type. */
    {"empty root", IN(H "\000"), EPEE_OK},
    {"int64", IN(ONE_FIELD("\001", "\373\377\377\377\377\377\377\377")), EPEE_OK},
    {"int32", IN(ONE_FIELD("\002", "\000\000\000\200")), EPEE_OK},
    {"int16", IN(ONE_FIELD("\003", "\377\177")), EPEE_OK},
    {"int8", IN(ONE_FIELD("\004", "\200")), EPEE_OK},
    {"uint64", IN(ONE_FIELD("\005", "\377\377\377\377\377\377\377\377")), EPEE_OK},
    {"uint32", IN(ONE_FIELD("\006", "\001\002\003\004")), EPEE_OK},
    {"uint16", IN(ONE_FIELD("\007", "\001\002")), EPEE_OK},
    {"uint8", IN(ONE_FIELD("\010", "\000")), EPEE_OK},
    {"double", IN(ONE_FIELD("\011", "\000\000\000\000\000\000\360\077")), EPEE_OK},
    {"empty string", IN(ONE_FIELD("\012", "\000")), EPEE_OK},
    {"string", IN(ONE_FIELD("\012", "\010OK")), EPEE_OK},
    {"binary string", IN(ONE_FIELD("\012", "\020\000\377\012\200")), EPEE_OK},
    {"bool false", IN(ONE_FIELD("\013", "\000")), EPEE_OK},
    {"bool true", IN(ONE_FIELD("\013", "\001")), EPEE_OK},
    {"empty object", IN(ONE_FIELD("\014", "\000")), EPEE_OK},
    {"object", IN(ONE_FIELD("\014", "\010\001b\010\007\001c\012\000")), EPEE_OK},
    {"object in object", IN(ONE_FIELD("\014", "\004\001b\014\004\001c\013\001")), EPEE_OK},
    /* Accepted: arrays of every type. */
    {"int64 array", IN(ONE_FIELD("\201", "\010" U64Z "\377\377\377\377\377\377\377\377")), EPEE_OK},
    {"int32 array", IN(ONE_FIELD("\202", "\010\001\000\000\000\377\377\377\377")), EPEE_OK},
    {"int16 array", IN(ONE_FIELD("\203", "\014\001\000\002\000\377\377")), EPEE_OK},
    {"int8 array", IN(ONE_FIELD("\204", "\004\377")), EPEE_OK},
    {"uint64 array", IN(ONE_FIELD("\205", "\010" U64Z "\001\000\000\000\000\000\000\000")),
     EPEE_OK},
    {"uint32 array", IN(ONE_FIELD("\206", "\004\001\000\000\000")), EPEE_OK},
    {"uint16 array", IN(ONE_FIELD("\207", "\010\001\000\377\377")), EPEE_OK},
    {"uint8 array", IN(ONE_FIELD("\210", "\014\001\002\003")), EPEE_OK},
    {"double array", IN(ONE_FIELD("\211", "\004\000\000\000\000\000\000\360\077")), EPEE_OK},
    {"string array", IN(ONE_FIELD("\212", "\014\000\010xy\004\000")), EPEE_OK},
    {"bool array", IN(ONE_FIELD("\213", "\014\001\000\001")), EPEE_OK},
    {"object array", IN(ONE_FIELD("\214", "\010\000\004\001b\010\001")), EPEE_OK},
    {"array of arrays", IN(ONE_FIELD("\215", "\014\205\004" U64Z "\212\004\004z\214\000")),
     EPEE_OK},
    {"array of arrays of arrays", IN(ONE_FIELD("\215", "\004\215\004\210\004\007")), EPEE_OK},
    {"empty uint64 array", IN(ONE_FIELD("\205", "\000")), EPEE_OK},
    {"empty object array", IN(ONE_FIELD("\214", "\000")), EPEE_OK},
    {"empty array of arrays", IN(ONE_FIELD("\215", "\000")), EPEE_OK},
    {"array value (type 13)", IN(ONE_FIELD("\015", "\205\010" U64Z U64Z)), EPEE_OK},
    {"array value of arrays", IN(ONE_FIELD("\015", "\215\004\207\004\005\000")), EPEE_OK},
    /* Accepted: varints of every size, and the shapes monerod sends. */
    {"string length in 2 bytes", IN(ONE_FIELD("\012", "\011\000OK")), EPEE_OK},
    {"string length in 4 bytes", IN(ONE_FIELD("\012", "\012\000\000\000OK")), EPEE_OK},
    {"string length in 8 bytes", IN(ONE_FIELD("\012", "\013\000\000\000\000\000\000\000OK")),
     EPEE_OK},
    {"root count in 8 bytes", IN(H "\007\000\000\000\000\000\000\000\001a\010\001"), EPEE_OK},
    {"array count in 2 bytes", IN(ONE_FIELD("\210", "\005\000\011")), EPEE_OK},
    {"get_blocks_by_height.bin request",
     IN(H "\004\007heights\205\004\001\000\000\000\000\000\000\000"), EPEE_OK},
    {"several fields", IN(H "\014\006status\012\010OK\011untrusted\013\000\007credits\005" U64Z),
     EPEE_OK},
    {"a field named twice", IN(H "\010\001a\010\001\001a\010\002"), EPEE_OK},
    {"a name with a NUL byte", IN(H "\004\002a\000\010\001"), EPEE_OK},

    /* Refused: the header. */
    {"empty", IN(""), EPEE_TRUNCATED},
    {"not epee", IN("{\"jsonrpc\":\"2.0\"}"), EPEE_BAD_HEADER},
    {"signature A, byte 0", IN("\000\021\001\001\001\001\002\001\001\000"), EPEE_BAD_HEADER},
    {"signature A, byte 1", IN("\001\022\001\001\001\001\002\001\001\000"), EPEE_BAD_HEADER},
    {"signature A, byte 3", IN("\001\021\001\002\001\001\002\001\001\000"), EPEE_BAD_HEADER},
    {"signature B, byte 0", IN("\001\021\001\001\002\001\002\001\001\000"), EPEE_BAD_HEADER},
    {"signature B, byte 2", IN("\001\021\001\001\001\001\001\001\001\000"), EPEE_BAD_HEADER},
    {"signature B, byte 3", IN("\001\021\001\001\001\001\002\000\001\000"), EPEE_BAD_HEADER},
    {"version 0", IN("\001\021\001\001\001\001\002\001\000\000"), EPEE_BAD_HEADER},
    {"version 2", IN("\001\021\001\001\001\001\002\001\002\000"), EPEE_BAD_HEADER},
    {"short and wrong", IN("\001\021\002"), EPEE_BAD_HEADER},
    {"header alone", IN(H), EPEE_TRUNCATED},
    /* Refused: type codes. */
    {"type 0", IN(ONE_FIELD("\000", "\000")), EPEE_BAD_TYPE},
    {"type 14", IN(ONE_FIELD("\016", "\000")), EPEE_BAD_TYPE},
    {"type 0x7f", IN(ONE_FIELD("\177", "\000")), EPEE_BAD_TYPE},
    {"type 0x45", IN(ONE_FIELD("\105", "\000")), EPEE_BAD_TYPE},
    {"array of type 0", IN(ONE_FIELD("\200", "\000")), EPEE_BAD_TYPE},
    {"array of type 14", IN(ONE_FIELD("\216", "\000")), EPEE_BAD_TYPE},
    {"array of type 0x45", IN(ONE_FIELD("\305", "\000")), EPEE_BAD_TYPE},
    {"type 0xff", IN(ONE_FIELD("\377", "\000")), EPEE_BAD_TYPE},
    {"array value without the array flag", IN(ONE_FIELD("\015", "\005" U64Z)), EPEE_BAD_TYPE},
    {"array value of type 0", IN(ONE_FIELD("\015", "\200\000")), EPEE_BAD_TYPE},
    {"array value of type 14", IN(ONE_FIELD("\015", "\216\000")), EPEE_BAD_TYPE},
    {"array of arrays, element without the flag", IN(ONE_FIELD("\215", "\004\005" U64Z)),
     EPEE_BAD_TYPE},
    {"bad type in a nested object", IN(ONE_FIELD("\014", "\004\001b\016\000")), EPEE_BAD_TYPE},
    {"bad type in an object array", IN(ONE_FIELD("\214", "\010\000\004\001b\000\000")),
     EPEE_BAD_TYPE},
    /* Refused: values. */
    {"bool 2", IN(ONE_FIELD("\013", "\002")), EPEE_BAD_VALUE},
    {"bool 0xff", IN(ONE_FIELD("\013", "\377")), EPEE_BAD_VALUE},
    {"bool array holding 2", IN(ONE_FIELD("\213", "\010\001\002")), EPEE_BAD_VALUE},
    {"empty name", IN(H "\004\000\012\004x"), EPEE_BAD_VALUE},
    {"empty name in an object", IN(ONE_FIELD("\014", "\004\000\012\004x")), EPEE_BAD_VALUE},
    /* Refused: counts and lengths larger than the data. */
    {"root count 2, one entry", IN(H "\010\001a\010\001"), EPEE_TRUNCATED},
    {"root count 2^62 - 1", IN(H "\377\377\377\377\377\377\377\377\001a\010\001"), EPEE_TRUNCATED},
    {"root count 2, room for more", IN(H "\010\001a\012\020xxxx"), EPEE_TRUNCATED},
    {"name past the end", IN(H "\004\005ab"), EPEE_TRUNCATED},
    /* ... refused before the first element is looked at (it is malformed too). */
    {"root count 63, a bad entry", IN(H "\374\001a\016\000"), EPEE_TRUNCATED},
    {"object array count 6, a bad object", IN(ONE_FIELD("\214", "\030\004\001b\016\000")),
     EPEE_TRUNCATED},
    {"bool array count 2, a bad bool", IN(ONE_FIELD("\213", "\010\002")), EPEE_TRUNCATED},
    {"uint64 array count 3, two there", IN(ONE_FIELD("\205", "\014" U64Z U64Z)), EPEE_TRUNCATED},
    {"uint64 array count 2^62 - 1", IN(ONE_FIELD("\205", "\377\377\377\377\377\377\377\377" U64Z)),
     EPEE_TRUNCATED},
    {"object array count 2^30", IN(ONE_FIELD("\214", "\003\000\000\000\001\000\000\000\000")),
     EPEE_TRUNCATED},
    {"string array count 2^30 - 1", IN(ONE_FIELD("\212", "\376\377\377\377\000\000")),
     EPEE_TRUNCATED},
    {"array of arrays count 2, one there", IN(ONE_FIELD("\215", "\010\205\000\000")),
     EPEE_TRUNCATED},
    {"string length past the end", IN(ONE_FIELD("\012", "\024abcd")), EPEE_TRUNCATED},
    {"string length 2^62 - 1", IN(ONE_FIELD("\012", "\377\377\377\377\377\377\377\377ab")),
     EPEE_TRUNCATED},
    {"object count past the end", IN(ONE_FIELD("\014", "\010\001b\010\001")), EPEE_TRUNCATED},
    /* Refused: bytes after the root section. */
    {"a byte after an empty root", IN(H "\000\000"), EPEE_TRAILING},
    {"a field after the root", IN(H "\004\001a\010\001\001b\010\002"), EPEE_TRAILING},
};

/* Every proper prefix of an accepted body is truncated; a byte after it is trailing. */
static void check_prefixes(const char *name, const uint8_t *in, size_t len)
{
    for (size_t k = 0; k < len; k++) {
        enum epee_status st = open_copy(in, k);
        if (st != EPEE_TRUNCATED)
            fail_msg("%s: the prefix of %zu bytes gave %s", name, k, epee_status_text(st));
    }
    uint8_t *longer = malloc(len + 1);
    assert_non_null(longer);
    memcpy(longer, in, len);
    for (int extra = 0; extra < 256; extra += 51) {
        longer[len] = (uint8_t)extra;
        if (open_copy(longer, len + 1) != EPEE_TRAILING)
            fail_msg("%s: a byte %d after it is not trailing", name, extra);
        /* epee_measure finds the body's own end before the byte, as monerod reads it. */
        size_t used = 0;
        if (epee_measure(longer, len + 1, &used) != EPEE_OK || used != len)
            fail_msg("%s: with a byte %d after it, measured %zu of %zu", name, extra, used, len);
    }
    free(longer);
}

/* epee_measure agrees with epee_open but for trailing bytes: the same status, and on a
 * whole body its whole length; *used untouched when refused. */
static void check_measure(const struct body_case *c, enum epee_status opened)
{
    size_t used = 12345;
    enum epee_status st = epee_measure(c->in, c->in_len, &used);
    enum epee_status want = opened == EPEE_TRAILING ? EPEE_OK : opened;
    if (st != want)
        fail_msg("%s: measured %s, opened %s", c->name, epee_status_text(st),
                 epee_status_text(opened));
    if (opened == EPEE_OK)
        assert_int_equal(used, c->in_len);
    else if (opened == EPEE_TRAILING)
        assert_true(used < c->in_len);
    else
        assert_int_equal(used, 12345);
}

static void test_bodies(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        const struct body_case *c = &bodies[i];
        enum epee_status st = open_copy(c->in, c->in_len);
        if (st != c->status)
            fail_msg("%s: %s, expected %s", c->name, epee_status_text(st),
                     epee_status_text(c->status));
        check_measure(c, st);
        if (st == EPEE_OK)
            check_prefixes(c->name, (const uint8_t *)c->in, c->in_len);
    }
}

static void test_status_text(void **state)
{
    (void)state;
    for (int a = EPEE_OK; a <= EPEE_TRAILING; a++) {
        assert_non_null(epee_status_text((enum epee_status)a));
        for (int b = EPEE_OK; b < a; b++)
            assert_string_not_equal(epee_status_text((enum epee_status)a),
                                    epee_status_text((enum epee_status)b));
    }
}

/* ---- nesting ---- */

enum nest_shape {
    NEST_OBJECTS,       /* an object in an object in ... */
    NEST_ARRAYS,        /* an array of arrays of ... */
    NEST_ARRAY_VALUES,  /* an EPEE_ARRAY value holding arrays of arrays of ... */
    NEST_OBJECT_ARRAYS, /* an array of objects each holding an array of objects ... */
};

/* A body nesting shape until depth sections and arrays are open, the root included. */
static struct body nested(enum nest_shape shape, size_t depth)
{
    struct body b = body_new(16 + 6 * depth);
    put_header(&b);
    switch (shape) {
    case NEST_OBJECTS: /* root, depth - 1 objects */
        for (size_t d = 1; d < depth; d++)
            put(&b, "\004\001o\014", 4);
        put_byte(&b, 0x00);
        break;
    case NEST_ARRAYS: /* root, depth - 2 arrays of arrays, a uint64 array */
    case NEST_ARRAY_VALUES:
        put(&b, "\004\001a", 3);
        if (shape == NEST_ARRAY_VALUES)
            put_byte(&b, 0x0d); /* then the array's own flagged type byte */
        put_byte(&b, 0x8d);
        for (size_t d = 2; d < depth - 1; d++)
            put(&b, "\004\215", 2);
        put(&b, "\004\205\000", 3);
        break;
    case NEST_OBJECT_ARRAYS: /* root, (depth - 2) / 2 pairs of array and object, an array */
        for (size_t d = 1; d + 1 < depth; d += 2)
            put(&b, "\004\001a\214\004", 5);
        put(&b, "\004\001a\205\000", 5);
        break;
    }
    return b;
}

static void test_nesting(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        enum nest_shape shape;
        size_t depth;
        enum epee_status status;
    } cases[] = {
        {"objects, 2 deep", NEST_OBJECTS, 2, EPEE_OK},
        {"objects, at the bound", NEST_OBJECTS, EPEE_MAX_DEPTH, EPEE_OK},
        {"objects, past the bound", NEST_OBJECTS, EPEE_MAX_DEPTH + 1, EPEE_TOO_DEEP},
        {"objects, far past the bound", NEST_OBJECTS, 100000, EPEE_TOO_DEEP},
        {"arrays, 3 deep", NEST_ARRAYS, 3, EPEE_OK},
        {"arrays, at the bound", NEST_ARRAYS, EPEE_MAX_DEPTH, EPEE_OK},
        {"arrays, past the bound", NEST_ARRAYS, EPEE_MAX_DEPTH + 1, EPEE_TOO_DEEP},
        {"arrays, far past the bound", NEST_ARRAYS, 100000, EPEE_TOO_DEEP},
        {"array values, 3 deep", NEST_ARRAY_VALUES, 3, EPEE_OK},
        {"array values, at the bound", NEST_ARRAY_VALUES, EPEE_MAX_DEPTH, EPEE_OK},
        {"array values, past the bound", NEST_ARRAY_VALUES, EPEE_MAX_DEPTH + 1, EPEE_TOO_DEEP},
        {"object arrays, at the bound", NEST_OBJECT_ARRAYS, EPEE_MAX_DEPTH, EPEE_OK},
        {"object arrays, past the bound", NEST_OBJECT_ARRAYS, EPEE_MAX_DEPTH + 2, EPEE_TOO_DEEP},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct body b = nested(cases[i].shape, cases[i].depth);
        enum epee_status st = open_copy(b.b, b.n);
        if (st != cases[i].status)
            fail_msg("%s: %s", cases[i].name, epee_status_text(st));
        if (st == EPEE_OK)
            check_prefixes(cases[i].name, b.b, b.n);
        free(b.b);
    }
}

/* The objects nested to the bound can be walked down to the innermost, which is empty. */
static void test_nesting_read(void **state)
{
    (void)state;
    struct body b = nested(NEST_OBJECTS, EPEE_MAX_DEPTH);
    uint8_t *buf = copy_of(b.b, b.n);
    struct epee_section s = {0};
    assert_int_equal(epee_open(buf, b.n, &s), EPEE_OK);
    for (int d = 1; d < EPEE_MAX_DEPTH; d++) {
        struct epee_value v = {0};
        assert_true(epee_find(&s, "o", &v));
        assert_true(epee_get_object(&v, &s));
    }
    struct epee_value v = {0};
    assert_int_equal(s.len, 1);
    assert_false(epee_find(&s, "o", &v));
    free(buf);
    free(b.b);
}

/* ---- sizes that need the longer varints ---- */

static void test_long_values(void **state)
{
    (void)state;
    static const size_t lens[] = {63, 64, 16383, 16384, 70000};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t n = lens[i];
        struct body b = body_new(n + 64);
        uint8_t *blob = malloc(n);
        assert_non_null(blob);
        for (size_t j = 0; j < n; j++)
            blob[j] = (uint8_t)(j * 7);
        put_header(&b);
        put_varint(&b, 2);
        put_field(&b, "blob", EPEE_STRING);
        put_string(&b, blob, n);
        put_field(&b, "after", EPEE_UINT8);
        put_byte(&b, 42);
        uint8_t *buf = copy_of(b.b, b.n);
        struct epee_section root = {0};
        struct epee_value v = {0};
        const char *data;
        size_t len = 0;
        uint64_t u = 0;
        assert_int_equal(epee_open(buf, b.n, &root), EPEE_OK);
        assert_true(epee_find(&root, "blob", &v));
        assert_true(epee_get_string(&v, &data, &len));
        assert_int_equal(len, n);
        assert_memory_equal(data, blob, n);
        assert_true(epee_find(&root, "after", &v));
        assert_true(epee_get_uint(&v, &u));
        assert_int_equal(u, 42);
        assert_int_equal(open_copy(b.b, b.n - 1), EPEE_TRUNCATED);
        free(buf);
        free(blob);
        free(b.b);
    }
}

/* A field with a 255-byte name (the longest) and an array of 64 elements (2-byte count). */
static void test_long_name_and_count(void **state)
{
    (void)state;
    char name[256];
    memset(name, 'n', 255);
    name[255] = '\0';
    struct body b = body_new(512);
    put_header(&b);
    put_varint(&b, 1);
    put_field(&b, name, EPEE_ARRAY_FLAG | EPEE_UINT8);
    put_varint(&b, 64);
    for (int i = 0; i < 64; i++)
        put_byte(&b, (uint8_t)i);
    uint8_t *buf = copy_of(b.b, b.n);
    struct epee_section root = {0};
    struct epee_value v = {0};
    struct epee_array a = {0};
    assert_int_equal(epee_open(buf, b.n, &root), EPEE_OK);
    assert_true(epee_find(&root, name, &v));
    name[254] = '\0';
    assert_false(epee_find(&root, name, &v));
    name[254] = 'n';
    assert_true(epee_find(&root, name, &v));
    assert_true(epee_get_array(&v, &a));
    assert_int_equal(a.type, EPEE_UINT8);
    assert_int_equal(a.count, 64);
    uint64_t sum = 0, u = 0;
    struct epee_value e = {0};
    while (epee_array_next(&a, &e)) {
        assert_true(epee_get_uint(&e, &u));
        sum += u;
    }
    assert_int_equal(sum, 63 * 64 / 2);
    check_prefixes("long name", b.b, b.n);
    free(buf);
    free(b.b);
}

/* ---- reading values ---- */

/* One field of each type, for the reader matrix. */
static struct body typed_fields(void)
{
    struct body b = body_new(1024);
    put_header(&b);
    put_varint(&b, 18);
    put_field(&b, "i64", EPEE_INT64), put_le(&b, (uint64_t)-5, 8);
    put_field(&b, "i64max", EPEE_INT64), put_le(&b, INT64_MAX, 8);
    put_field(&b, "i32", EPEE_INT32), put_le(&b, 7, 4);
    put_field(&b, "i32neg", EPEE_INT32), put_le(&b, 0xffffffff, 4);
    put_field(&b, "i16", EPEE_INT16), put_le(&b, 0x7fff, 2);
    put_field(&b, "i8neg", EPEE_INT8), put_le(&b, 0x80, 1);
    put_field(&b, "i8", EPEE_INT8), put_le(&b, 0, 1);
    put_field(&b, "u64", EPEE_UINT64), put_le(&b, UINT64_MAX, 8);
    put_field(&b, "u32", EPEE_UINT32), put_le(&b, 0xffffffff, 4);
    put_field(&b, "u16", EPEE_UINT16), put_le(&b, 0xffff, 2);
    put_field(&b, "u8", EPEE_UINT8), put_le(&b, 0xff, 1);
    put_field(&b, "dbl", EPEE_DOUBLE), put_le(&b, 0x3ff0000000000000, 8);
    put_field(&b, "str", EPEE_STRING), put_string(&b, "OK", 2);
    put_field(&b, "yes", EPEE_BOOL), put_byte(&b, 1);
    put_field(&b, "no", EPEE_BOOL), put_byte(&b, 0);
    put_field(&b, "obj", EPEE_OBJECT), put_varint(&b, 1);
    put_field(&b, "x", EPEE_UINT8), put_byte(&b, 9);
    put_field(&b, "arr", EPEE_ARRAY_FLAG | EPEE_UINT64), put_varint(&b, 3);
    put_le(&b, 1, 8), put_le(&b, 2, 8), put_le(&b, 3, 8);
    put_field(&b, "nest", EPEE_ARRAY), put_byte(&b, EPEE_ARRAY_FLAG | EPEE_UINT16);
    put_varint(&b, 2), put_le(&b, 5, 2), put_le(&b, 6, 2);
    return b;
}

struct read_case {
    const char *field;
    bool is_uint;
    uint64_t uint;
    bool is_bool, boolean;
    bool is_string, is_object, is_array;
    uint8_t array_type;
    size_t array_count;
};

#define NOT_READ       .is_uint = false /* by no reader: negative, or a double */
#define AS_UINT(v)     .is_uint = true, .uint = (v)
#define AS_BOOL(v)     .is_bool = true, .boolean = (v)
#define AS_ARRAY(t, n) .is_array = true, .array_type = (t), .array_count = (n)

static const struct read_case reads[] = {
    {"i64", NOT_READ},
    {"i64max", AS_UINT(INT64_MAX)},
    {"i32", AS_UINT(7)},
    {"i32neg", NOT_READ},
    {"i16", AS_UINT(0x7fff)},
    {"i8neg", NOT_READ},
    {"i8", AS_UINT(0)},
    {"u64", AS_UINT(UINT64_MAX)},
    {"u32", AS_UINT(0xffffffff)},
    {"u16", AS_UINT(0xffff)},
    {"u8", AS_UINT(0xff)},
    {"dbl", NOT_READ},
    {"str", .is_string = true},
    {"yes", AS_BOOL(true)},
    {"no", AS_BOOL(false)},
    {"obj", .is_object = true},
    {"arr", AS_ARRAY(EPEE_UINT64, 3)},
    {"nest", AS_ARRAY(EPEE_UINT16, 2)},
};

/* Each field read as each kind: only the right kind reads, and a refused read leaves its
 * outputs alone. */
static void test_read_matrix(void **state)
{
    (void)state;
    struct body b = typed_fields();
    uint8_t *buf = copy_of(b.b, b.n);
    struct epee_section root = {0};
    assert_int_equal(epee_open(buf, b.n, &root), EPEE_OK);
    for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        const struct read_case *c = &reads[i];
        struct epee_value v = {0};
        if (!epee_find(&root, c->field, &v))
            fail_msg("%s: not found", c->field);
        assert_true(v.data >= buf && v.data + v.len <= buf + b.n);

        uint64_t u = 12345;
        bool ok = epee_get_uint(&v, &u);
        if (ok != c->is_uint || (ok ? u != c->uint : u != 12345))
            fail_msg("%s: as uint: %d %llu", c->field, ok, (unsigned long long)u);

        bool flag = false, was = flag;
        ok = epee_get_bool(&v, &flag);
        if (ok != c->is_bool || (ok ? flag != c->boolean : flag != was))
            fail_msg("%s: as bool: %d", c->field, ok);

        const char *data = NULL;
        size_t len = 99;
        ok = epee_get_string(&v, &data, &len);
        if (ok != c->is_string ||
            (ok ? len != 2 || memcmp(data, "OK", 2) != 0 : data != NULL || len != 99))
            fail_msg("%s: as string: %d", c->field, ok);

        struct epee_section s = {NULL, 77};
        ok = epee_get_object(&v, &s);
        if (ok != c->is_object || (!ok && (s.data != NULL || s.len != 77)))
            fail_msg("%s: as object: %d", c->field, ok);

        struct epee_array a = {.count = 77};
        ok = epee_get_array(&v, &a);
        if (ok != c->is_array ||
            (ok ? a.type != c->array_type || a.count != c->array_count : a.count != 77))
            fail_msg("%s: as array: %d", c->field, ok);
    }
    free(buf);
    free(b.b);
}

/* Objects and arrays read through: obj.x, the uint64s of arr, the uint16s of nest. */
static void test_read_nested(void **state)
{
    (void)state;
    struct body b = typed_fields();
    uint8_t *buf = copy_of(b.b, b.n);
    struct epee_section root = {0}, obj = {0};
    struct epee_value v = {0}, e = {0};
    struct epee_array a = {0};
    uint64_t u = 0;
    assert_int_equal(epee_open(buf, b.n, &root), EPEE_OK);

    assert_true(epee_find(&root, "obj", &v));
    assert_true(epee_get_object(&v, &obj));
    assert_true(epee_find(&obj, "x", &v));
    assert_true(epee_get_uint(&v, &u));
    assert_int_equal(u, 9);
    assert_false(epee_find(&obj, "obj", &v));
    assert_false(epee_find(&root, "x", &v)); /* nested fields are not top-level */

    assert_true(epee_find(&root, "arr", &v));
    assert_true(epee_get_array(&v, &a));
    for (uint64_t want = 1; want <= 3; want++) {
        assert_true(epee_array_next(&a, &e));
        assert_int_equal(e.type, EPEE_UINT64);
        assert_true(epee_get_uint(&e, &u));
        assert_int_equal(u, want);
        assert_false(epee_get_bool(&e, &(bool){false}));
    }
    assert_false(epee_array_next(&a, &e));
    assert_false(epee_array_next(&a, &e)); /* stays done */

    assert_true(epee_find(&root, "nest", &v));
    assert_true(epee_get_array(&v, &a));
    assert_true(epee_array_next(&a, &e) && epee_get_uint(&e, &u) && u == 5);
    assert_true(epee_array_next(&a, &e) && epee_get_uint(&e, &u) && u == 6);
    assert_false(epee_array_next(&a, &e));
    free(buf);
    free(b.b);
}

/* Arrays of arrays, of strings and of objects, element by element. */
static void test_read_arrays(void **state)
{
    (void)state;
    static const char in[] =
        H "\014"
          "\002aa\215\010\205\010\001\000\000\000\000\000\000\000" U64Z "\212\004\004z"
          "\002ss\212\014\000\010xy\004\000"
          "\002oo\214\010\000\004\001b\013\001";
    uint8_t *buf = copy_of(in, sizeof in - 1);
    struct epee_section root = {0}, s = {0};
    struct epee_value v = {0}, e = {0}, inner = {0};
    struct epee_array a = {0}, ia = {0};
    const char *data = NULL;
    size_t len = 0;
    uint64_t u = 0;
    bool flag = false;
    assert_int_equal(epee_open(buf, sizeof in - 1, &root), EPEE_OK);

    assert_true(epee_find(&root, "aa", &v));
    assert_true(epee_get_array(&v, &a));
    assert_int_equal(a.type, EPEE_ARRAY);
    assert_int_equal(a.count, 2);
    assert_true(epee_array_next(&a, &e));
    assert_true(epee_get_array(&e, &ia));
    assert_int_equal(ia.type, EPEE_UINT64);
    assert_int_equal(ia.count, 2);
    assert_true(epee_array_next(&ia, &inner) && epee_get_uint(&inner, &u) && u == 1);
    assert_true(epee_array_next(&ia, &inner) && epee_get_uint(&inner, &u) && u == 0);
    assert_false(epee_array_next(&ia, &inner));
    assert_true(epee_array_next(&a, &e));
    assert_true(epee_get_array(&e, &ia));
    assert_int_equal(ia.type, EPEE_STRING);
    assert_true(epee_array_next(&ia, &inner) && epee_get_string(&inner, &data, &len));
    assert_int_equal(len, 1);
    assert_memory_equal(data, "z", 1);
    assert_false(epee_array_next(&a, &e));

    assert_true(epee_find(&root, "ss", &v));
    assert_true(epee_get_array(&v, &a));
    assert_int_equal(a.count, 3);
    static const char *const strings[] = {"", "xy", "\0"};
    static const size_t lens[] = {0, 2, 1};
    for (int i = 0; i < 3; i++) {
        assert_true(epee_array_next(&a, &e) && epee_get_string(&e, &data, &len));
        assert_int_equal(len, lens[i]);
        assert_memory_equal(data, strings[i], lens[i]);
    }

    assert_true(epee_find(&root, "oo", &v));
    assert_true(epee_get_array(&v, &a));
    assert_int_equal(a.type, EPEE_OBJECT);
    assert_true(epee_array_next(&a, &e) && epee_get_object(&e, &s));
    assert_false(epee_find(&s, "b", &v));
    assert_true(epee_array_next(&a, &e) && epee_get_object(&e, &s));
    assert_true(epee_find(&s, "b", &v) && epee_get_bool(&v, &flag) && flag);
    assert_false(epee_array_next(&a, &e));
    free(buf);
}

/* A name must match whole; a name given twice is not read; an empty name never matches. */
static void test_find(void **state)
{
    (void)state;
    static const char in[] = H "\024"
                               "\007heights\010\001"
                               "\006height\010\002"
                               "\003dup\010\003"
                               "\003dup\010\004"
                               "\002a\000\010\005";
    uint8_t *buf = copy_of(in, sizeof in - 1);
    struct epee_section root = {0};
    struct epee_value v = {.type = 0x42};
    uint64_t u = 0;
    assert_int_equal(epee_open(buf, sizeof in - 1, &root), EPEE_OK);
    assert_true(epee_find(&root, "heights", &v) && epee_get_uint(&v, &u) && u == 1);
    assert_true(epee_find(&root, "height", &v) && epee_get_uint(&v, &u) && u == 2);
    v.type = 0x42;
    assert_false(epee_find(&root, "heigh", &v));
    assert_false(epee_find(&root, "heightss", &v));
    assert_false(epee_find(&root, "Heights", &v));
    assert_false(epee_find(&root, "dup", &v));
    assert_false(epee_find(&root, "", &v));
    assert_false(epee_find(&root, "a", &v)); /* the name on the wire is "a\0" */
    assert_int_equal(v.type, 0x42);
    free(buf);
}

/* The entries of a section in wire order, duplicates and odd names included. */
static void test_entries(void **state)
{
    (void)state;
    static const char in[] = H ""
                               "heights"
                               "dup"
                               "dup"
                               "a\000\010\005";
    uint8_t *buf = copy_of(in, sizeof in - 1);
    struct epee_section root = {0};
    struct epee_entries e;
    const char *name;
    size_t len;
    struct epee_value v;
    uint64_t u = 0;
    assert_int_equal(epee_open(buf, sizeof in - 1, &root), EPEE_OK);
    assert_true(epee_entries_open(&root, &e));
    assert_int_equal(e.left, 4);
    static const struct {
        const char *name;
        size_t len;
        uint64_t value;
    } want[] = {{"heights", 7, 1}, {"dup", 3, 3}, {"dup", 3, 4}, {"a\0", 2, 5}};
    for (size_t i = 0; i < 4; i++) {
        assert_true(epee_entries_next(&e, &name, &len, &v));
        assert_int_equal(len, want[i].len);
        assert_memory_equal(name, want[i].name, len);
        assert_true(epee_get_uint(&v, &u));
        assert_int_equal(u, want[i].value);
    }
    assert_false(epee_entries_next(&e, &name, &len, &v));
    /* an empty section; a section whose count cannot be read */
    static const uint8_t empty_count[] = {0x00};
    struct epee_section empty = {empty_count, 1}, none = {empty_count, 0};
    assert_true(epee_entries_open(&empty, &e));
    assert_false(epee_entries_next(&e, &name, &len, &v));
    assert_false(epee_entries_open(&none, &e));
    free(buf);
}

/* ---- what the gateway reads ---- */

/* A node's answer: status and untrusted. */
static void test_node_status(void **state)
{
    (void)state;
    static const struct {
        const char *status;
        bool untrusted;
    } cases[] = {{"OK", false}, {"BUSY", true}, {"Failed", false}, {"", true}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct body b = body_new(256);
        put_header(&b);
        put_varint(&b, 3);
        put_field(&b, "credits", EPEE_UINT64), put_le(&b, 0, 8);
        put_field(&b, "status", EPEE_STRING);
        put_string(&b, cases[i].status, strlen(cases[i].status));
        put_field(&b, "untrusted", EPEE_BOOL), put_byte(&b, cases[i].untrusted);
        uint8_t *buf = copy_of(b.b, b.n);
        struct epee_section root = {0};
        struct epee_value v = {0};
        const char *status = NULL;
        size_t len = 0;
        bool untrusted = false;
        assert_int_equal(epee_open(buf, b.n, &root), EPEE_OK);
        assert_true(epee_find(&root, "status", &v) && epee_get_string(&v, &status, &len));
        assert_int_equal(len, strlen(cases[i].status));
        assert_memory_equal(status, cases[i].status, len);
        assert_true(epee_find(&root, "untrusted", &v) && epee_get_bool(&v, &untrusted));
        assert_true(untrusted == cases[i].untrusted);
        assert_false(epee_get_string(&v, &status, &len));
        free(buf);
        free(b.b);
    }
}

/* A get_blocks_by_height.bin request: the largest of its heights. */
static void test_request_heights(void **state)
{
    (void)state;
    static const struct {
        uint64_t heights[4];
        size_t n;
        uint64_t max;
    } cases[] = {
        {{1}, 1, 1},
        {{5, 3000000, 7, 2}, 4, 3000000},
        {{UINT64_MAX, 0}, 2, UINT64_MAX},
        {{0}, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct body b = body_new(256);
        put_header(&b);
        put_varint(&b, 3);
        put_field(&b, "client", EPEE_STRING), put_string(&b, "signature", 9);
        put_field(&b, "heights", EPEE_ARRAY_FLAG | EPEE_UINT64);
        put_varint(&b, cases[i].n);
        for (size_t j = 0; j < cases[i].n; j++)
            put_le(&b, cases[i].heights[j], 8);
        put_field(&b, "prune", EPEE_BOOL), put_byte(&b, 1);
        uint8_t *buf = copy_of(b.b, b.n);
        struct epee_section root = {0};
        struct epee_value v = {0}, e = {0};
        struct epee_array a = {0};
        assert_int_equal(epee_open(buf, b.n, &root), EPEE_OK);
        assert_true(epee_find(&root, "heights", &v) && epee_get_array(&v, &a));
        assert_int_equal(a.count, cases[i].n);
        uint64_t max = 0, h = 0;
        while (epee_array_next(&a, &e)) {
            assert_true(epee_get_uint(&e, &h));
            max = h > max ? h : max;
        }
        assert_true(max == cases[i].max);
        free(buf);
        free(b.b);
    }
}

/* A get_outs.bin answer: each out's height and unlocked. */
static void test_outs(void **state)
{
    (void)state;
    static const struct {
        uint64_t height;
        bool unlocked;
    } outs[] = {{100, true}, {3000000, false}, {0, true}};
    static const uint8_t key[32] = {1, 2, 3}, mask[32] = {4, 5, 6}, txid[32] = {7, 8, 9};
    const size_t n = sizeof outs / sizeof outs[0];
    struct body b = body_new(1024);
    put_header(&b);
    put_varint(&b, 5);
    put_field(&b, "credits", EPEE_UINT64), put_le(&b, 0, 8);
    put_field(&b, "outs", EPEE_ARRAY_FLAG | EPEE_OBJECT);
    put_varint(&b, n);
    for (size_t i = 0; i < n; i++) {
        put_varint(&b, 5);
        put_field(&b, "height", EPEE_UINT64), put_le(&b, outs[i].height, 8);
        put_field(&b, "key", EPEE_STRING), put_string(&b, key, 32);
        put_field(&b, "mask", EPEE_STRING), put_string(&b, mask, 32);
        put_field(&b, "txid", EPEE_STRING), put_string(&b, txid, 32);
        put_field(&b, "unlocked", EPEE_BOOL), put_byte(&b, outs[i].unlocked);
    }
    put_field(&b, "status", EPEE_STRING), put_string(&b, "OK", 2);
    put_field(&b, "top_hash", EPEE_STRING), put_string(&b, "", 0);
    put_field(&b, "untrusted", EPEE_BOOL), put_byte(&b, 0);

    uint8_t *buf = copy_of(b.b, b.n);
    struct epee_section root = {0}, out = {0};
    struct epee_value v = {0}, e = {0};
    struct epee_array a = {0};
    assert_int_equal(epee_open(buf, b.n, &root), EPEE_OK);
    assert_true(epee_find(&root, "outs", &v) && epee_get_array(&v, &a));
    assert_int_equal(a.type, EPEE_OBJECT);
    assert_int_equal(a.count, n);
    size_t i = 0;
    while (epee_array_next(&a, &e)) {
        uint64_t height = 0;
        bool unlocked = false;
        const char *k = NULL;
        size_t klen = 0;
        assert_true(i < n);
        assert_true(epee_get_object(&e, &out));
        assert_true(epee_find(&out, "height", &v) && epee_get_uint(&v, &height));
        assert_true(epee_find(&out, "unlocked", &v) && epee_get_bool(&v, &unlocked));
        assert_true(epee_find(&out, "key", &v) && epee_get_string(&v, &k, &klen));
        assert_true(height == outs[i].height);
        assert_true(unlocked == outs[i].unlocked);
        assert_int_equal(klen, 32);
        assert_memory_equal(k, key, 32);
        i++;
    }
    assert_int_equal(i, n);
    check_prefixes("get_outs.bin answer", b.b, b.n);
    free(buf);
    free(b.b);
}

/* ---- stripping a field ---- */

struct strip_case {
    const char *name;
    const char *in;
    size_t in_len;
    const char *field;
    enum epee_status status;
    bool removed;
    const char *out; /* EPEE_OK; NULL: the same as in */
    size_t out_len;
};

#define OUT(s)               .out = (s), .out_len = sizeof(s) - 1
#define CLIENT               "\006client\012\014sig"
#define FIELD_A              "\001a\010\001"
#define FIELD_B              "\001b\012\010xy"
#define FIELD_C              "\001c\014\004" CLIENT
#define STRIP(n, in_, f, rm) n, IN(in_), .field = (f), .status = EPEE_OK, .removed = (rm)

static const struct strip_case strips[] = {
    {STRIP("first", H "\014" CLIENT FIELD_A FIELD_B, "client", true),
     OUT(H "\010" FIELD_A FIELD_B)},
    {STRIP("middle", H "\014" FIELD_A CLIENT FIELD_B, "client", true),
     OUT(H "\010" FIELD_A FIELD_B)},
    {STRIP("last", H "\014" FIELD_A FIELD_B CLIENT, "client", true), OUT(H "\010" FIELD_A FIELD_B)},
    {STRIP("absent", H "\010" FIELD_A FIELD_B, "client", false)},
    {STRIP("the only field", H "\004" CLIENT, "client", true), OUT(H "\000")},
    {STRIP("twice", H "\020" CLIENT FIELD_A FIELD_B CLIENT, "client", true),
     OUT(H "\010" FIELD_A FIELD_B)},
    {STRIP("twice in a row", H "\020" FIELD_A CLIENT CLIENT FIELD_B, "client", true),
     OUT(H "\010" FIELD_A FIELD_B)},
    {STRIP("three times, nothing else", H "\014" CLIENT CLIENT CLIENT, "client", true),
     OUT(H "\000")},
    {STRIP("of another type", H "\010" FIELD_A "\006client\005" U64Z, "client", true),
     OUT(H "\004" FIELD_A)},
    {STRIP("nested ones kept", H "\014" CLIENT FIELD_C FIELD_A, "client", true),
     OUT(H "\010" FIELD_C FIELD_A)},
    {STRIP("only nested", H "\004" FIELD_C, "client", false)},
    {STRIP("longer and shorter names kept", H "\014\007clientx\010\001\005clien\010\001" CLIENT,
           "client", true),
     OUT(H "\010\007clientx\010\001\005clien\010\001")},
    {STRIP("empty root", H "\000", "client", false)},
    {STRIP("heights", H "\004\007heights\205\004\001\000\000\000\000\000\000\000", "heights", true),
     OUT(H "\000")},
    {STRIP("count in 8 bytes, removed", H "\017\000\000\000\000\000\000\000" CLIENT FIELD_A FIELD_B,
           "client", true),
     OUT(H "\010" FIELD_A FIELD_B)},
    {STRIP("count in 8 bytes, absent", H "\017\000\000\000\000\000\000\000" FIELD_A FIELD_B CLIENT,
           "z", false)},
    /* Refused as epee_open refuses them. */
    {"bad header", IN("\001\021\001\001\001\001\002\001\002\004" CLIENT), "client",
     EPEE_BAD_HEADER},
    {"truncated client", IN(H "\010" FIELD_A "\006client\012\014si"), "client", EPEE_TRUNCATED},
    {"trailing bytes", IN(H "\004" CLIENT FIELD_A), "client", EPEE_TRAILING},
    {"bad type after the client", IN(H "\010" CLIENT "\001a\016\000"), "client", EPEE_BAD_TYPE},
    {"bad bool", IN(H "\010" CLIENT "\001a\013\002"), "client", EPEE_BAD_VALUE},
};

/* epee_strip from an exact-size copy of in into an exact-size out, or in place. */
static enum epee_status strip_copy(const char *in, size_t in_len, const char *field, bool in_place,
                                   uint8_t **out, size_t *out_len, bool *removed)
{
    uint8_t *src = copy_of(in, in_len);
    uint8_t *dst = in_place ? src : malloc(in_len > 0 ? in_len : 1);
    assert_non_null(dst);
    if (!in_place)
        memset(dst, 0xaa, in_len);
    enum epee_status st = epee_strip(src, in_len, field, dst, in_len, out_len, removed);
    if (!in_place)
        free(src);
    *out = dst;
    return st;
}

static void check_strip(const struct strip_case *c, bool in_place)
{
    const char *how = in_place ? "in place" : "copied";
    uint8_t *out;
    size_t out_len = 4242;
    bool removed = !c->removed;
    enum epee_status st =
        strip_copy(c->in, c->in_len, c->field, in_place, &out, &out_len, &removed);
    if (st != c->status)
        fail_msg("%s [%s]: %s", c->name, how, epee_status_text(st));
    if (st != EPEE_OK) {
        if (out_len != 4242 || removed != !c->removed)
            fail_msg("%s [%s]: outputs set on a refusal", c->name, how);
        for (size_t i = 0; !in_place && i < c->in_len; i++) {
            if (out[i] != 0xaa)
                fail_msg("%s: out written on a refusal", c->name);
        }
        free(out);
        return;
    }
    const char *want = c->out ? c->out : c->in;
    size_t want_len = c->out ? c->out_len : c->in_len;
    if (removed != c->removed || out_len != want_len || memcmp(out, want, want_len) != 0)
        fail_msg("%s [%s]: removed %d, %zu bytes", c->name, how, removed, out_len);
    struct epee_section root = {0};
    struct epee_value v = {0};
    uint8_t *exact = copy_of(out, out_len);
    assert_int_equal(epee_open(exact, out_len, &root), EPEE_OK);
    if (epee_find(&root, c->field, &v))
        fail_msg("%s [%s]: still has the field", c->name, how);
    free(exact);
    free(out);
}

/* epee_patch_uint64: a top-level uint64 rewritten in place, nothing else touched; any
 * other type, a nested field, a missing or doubled field, or a bad body left alone. */
static void test_patch_uint64(void **state)
{
    (void)state;
    struct {
        const char *name, *in;
        size_t in_len;
        bool ok;
        const char *out;
    } rows[] = {
        {"a uint64 at the top", H "\010\001a\005" U64Z "\001b\013\001", 9 + 1 + 3 + 8 + 4, true,
         H "\010\001a\005\x2a\x01\000\000\000\000\000\000\001b\013\001"},
        {"a uint32 is not rewritten", H "\004\001a\006\000\000\000\000", 9 + 1 + 3 + 4, false,
         NULL},
        {"nested only", H "\004\001o\014\004\001a\005" U64Z, 9 + 1 + 3 + 1 + 3 + 8, false, NULL},
        {"missing", H "\004\001b\013\001", 9 + 1 + 3 + 1, false, NULL},
        {"named twice", H "\010\001a\005" U64Z "\001a\005" U64Z, 9 + 1 + 11 + 11, false, NULL},
        {"cut short", H "\004\001a\005\000\000", 9 + 1 + 3 + 2, false, NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uint8_t body[64];
        print_message("# %s\n", rows[i].name);
        memcpy(body, rows[i].in, rows[i].in_len);
        assert_int_equal(epee_patch_uint64(body, rows[i].in_len, "a", 0x12a), rows[i].ok);
        assert_memory_equal(body, rows[i].ok ? rows[i].out : rows[i].in, rows[i].in_len);
    }
}

static void test_strip(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof strips / sizeof strips[0]; i++) {
        const struct strip_case *c = &strips[i];
        check_strip(c, false);
        check_strip(c, true);
        if (c->status != EPEE_OK)
            continue;
        for (size_t k = 0; k < c->in_len; k++) {
            uint8_t *out;
            size_t out_len = 0;
            bool removed = false;
            if (strip_copy(c->in, k, c->field, false, &out, &out_len, &removed) != EPEE_TRUNCATED)
                fail_msg("%s: the prefix of %zu bytes was not refused", c->name, k);
            free(out);
        }
    }
}

/* 64 root entries (a 2-byte count) less the client: 63 (a 1-byte count). */
static void test_strip_count_shrinks(void **state)
{
    (void)state;
    for (size_t at = 0; at < 64; at += 21) { /* the client at 0, 21, 42, 63 */
        struct body in = body_new(1024), want = body_new(1024);
        put_header(&in);
        put_header(&want);
        put_varint(&in, 64);
        put_varint(&want, 63);
        assert_int_equal(in.n, 11);
        assert_int_equal(want.n, 10);
        for (size_t i = 0, other = 0; i < 64; i++) {
            if (i == at) {
                put_field(&in, "client", EPEE_STRING), put_string(&in, "sig", 3);
                continue;
            }
            char name[8];
            snprintf(name, sizeof name, "f%02zu", other);
            put_field(&in, name, EPEE_UINT8), put_byte(&in, (uint8_t)other);
            put_field(&want, name, EPEE_UINT8), put_byte(&want, (uint8_t)other);
            other++;
        }
        for (int in_place = 0; in_place <= 1; in_place++) {
            uint8_t *out;
            size_t out_len = 0;
            bool removed = false;
            assert_int_equal(
                strip_copy((const char *)in.b, in.n, "client", in_place, &out, &out_len, &removed),
                EPEE_OK);
            assert_true(removed);
            assert_int_equal(out_len, want.n);
            assert_memory_equal(out, want.b, want.n);
            assert_int_equal(out_len, in.n - 1 - (1 + 6 + 1 + 1 + 3));
            free(out);
        }
        /* The 63 left, stripped of a name none has: copied as they are. */
        uint8_t *out;
        size_t out_len = 0;
        bool removed = false;
        assert_int_equal(
            strip_copy((const char *)in.b, in.n, "f99", false, &out, &out_len, &removed), EPEE_OK);
        assert_false(removed);
        assert_int_equal(out_len, in.n);
        assert_memory_equal(out, in.b, in.n);
        free(out);
        free(in.b);
        free(want.b);
    }
}

/* ---- mutations ---- */

/* Every accepted body of the table with each byte replaced by a few others: whatever
 * epee_open says, nothing is read out of bounds, and an accepted mutant can be read and
 * stripped into a body that is accepted again. */
static void test_mutations(void **state)
{
    (void)state;
    static const uint8_t values[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x0d, 0x7f, 0x80, 0x8c, 0xff};
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        const struct body_case *c = &bodies[i];
        if (c->status != EPEE_OK)
            continue;
        for (size_t at = 0; at < c->in_len; at++) {
            for (size_t j = 0; j < sizeof values / sizeof values[0]; j++) {
                uint8_t *buf = copy_of(c->in, c->in_len);
                buf[at] = values[j];
                struct epee_section root = {0};
                struct epee_value v = {0}, e = {0};
                struct epee_array a = {0};
                if (epee_open(buf, c->in_len, &root) == EPEE_OK && epee_find(&root, "a", &v) &&
                    epee_get_array(&v, &a)) {
                    while (epee_array_next(&a, &e))
                        assert_true(e.data + e.len <= buf + c->in_len);
                }
                uint8_t *out = malloc(c->in_len);
                size_t out_len = 0;
                bool removed = false;
                assert_non_null(out);
                if (epee_strip(buf, c->in_len, "a", out, c->in_len, &out_len, &removed) ==
                    EPEE_OK) {
                    uint8_t *exact = copy_of(out, out_len);
                    assert_int_equal(epee_open(exact, out_len, &root), EPEE_OK);
                    free(exact);
                }
                free(out);
                free(buf);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varints),
        cmocka_unit_test(test_varint_writer),
        cmocka_unit_test(test_bodies),
        cmocka_unit_test(test_status_text),
        cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_nesting_read),
        cmocka_unit_test(test_long_values),
        cmocka_unit_test(test_long_name_and_count),
        cmocka_unit_test(test_read_matrix),
        cmocka_unit_test(test_read_nested),
        cmocka_unit_test(test_read_arrays),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_entries),
        cmocka_unit_test(test_patch_uint64),
        cmocka_unit_test(test_node_status),
        cmocka_unit_test(test_request_heights),
        cmocka_unit_test(test_outs),
        cmocka_unit_test(test_strip),
        cmocka_unit_test(test_strip_count_shrinks),
        cmocka_unit_test(test_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
