/* epee — monerod's "portable storage" binary format (contrib/epee, storages/
 * portable_storage_from_bin.h), the body of its .bin RPC endpoints (/get_blocks.bin,
 * /get_blocks_by_height.bin, /get_outs.bin, ...): a whole body checked, its fields read,
 * one top-level field stripped from it, and one top-level integer rewritten in place. Pure:
 * no I/O, no allocation.
 *
 * Ownership: nothing is allocated and nothing is to be freed. Every section, value, array
 * and string handed out points into the body the caller passed to epee_open, which must
 * outlive them and stay unchanged while they are used.
 *
 * The format: a 9-byte header (signature bytes 01 11 01 01 01 01 02 01, then version 01),
 * then the root section. A section is a varint entry count and that many entries; an entry
 * is a name (a length byte, 1..255, then the bytes), a type byte and a value. A varint's low
 * two bits give its size (0: 1 byte, 1: 2, 2: 4, 3: 8), its bytes read little-endian and
 * shifted right by 2 give its value. Integers and doubles are little-endian; a string is a
 * varint length and that many bytes (hashes, blobs and whole blocks are strings); a bool
 * is one byte, 0 or 1; an object is a nested section. EPEE_ARRAY_FLAG on a type makes an
 * array of that type: a varint count, then the elements back to back without type bytes.
 * A value of type EPEE_ARRAY is one array whose flagged type byte comes first; an array of
 * EPEE_ARRAY holds such values.
 *
 * Refused as monerod refuses them: an empty field name, a bool other than 0 or 1, an
 * unknown type code, an EPEE_ARRAY value whose type byte lacks EPEE_ARRAY_FLAG. Refused
 * by epee_open although monerod ignores them: bytes after the root section; epee_measure
 * finds where the root section ends, so that a caller can drop them first. Accepted
 * although monerod refuses them: a field named twice in one section (refused since
 * v0.18.0.0; epee_find will not read such a field, and epee_strip removes every copy), and
 * an array of EPEE_ARRAY with elements (monerod writes them so, but its reader reads only
 * empty ones). Nothing the gateway reads or forwards depends on either. */
#ifndef EPEE_H
#define EPEE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EPEE_WUR __attribute__((warn_unused_result))

/* Sections and arrays open at once, the root section included. monerod bounds its reader's
 * call depth at 100, which it reaches at about 30 nested sections. */
#define EPEE_MAX_DEPTH 32

/* Type codes, as on the wire. */
enum epee_type {
    EPEE_INT64 = 1,
    EPEE_INT32 = 2,
    EPEE_INT16 = 3,
    EPEE_INT8 = 4,
    EPEE_UINT64 = 5,
    EPEE_UINT32 = 6,
    EPEE_UINT16 = 7,
    EPEE_UINT8 = 8,
    EPEE_DOUBLE = 9,
    EPEE_STRING = 10,
    EPEE_BOOL = 11,
    EPEE_OBJECT = 12,
    EPEE_ARRAY = 13,
};
#define EPEE_ARRAY_FLAG 0x80

enum epee_status {
    EPEE_OK,
    EPEE_BAD_HEADER, /* not the portable-storage signature, or a version other than 1 */
    EPEE_TRUNCATED,  /* the body ends early: a name, value, length or count runs past its end
                        (a count too large for the bytes left is refused before any element
                        is read) */
    EPEE_BAD_TYPE,   /* an unknown type code, or an EPEE_ARRAY without EPEE_ARRAY_FLAG inside */
    EPEE_BAD_VALUE,  /* an empty field name, or a bool byte other than 0 or 1 */
    EPEE_TOO_DEEP,   /* more than EPEE_MAX_DEPTH sections and arrays open at once */
    EPEE_TRAILING,   /* bytes after the root section */
};

/* A section: from epee_open, epee_get_object or an array of objects. */
struct epee_section {
    const uint8_t *data; /* its entry count, then its entries */
    size_t len;          /* exactly the section's bytes */
};

/* A field's value or an array's element: from epee_find or epee_array_next. */
struct epee_value {
    uint8_t type;        /* as on the wire: an enum epee_type, or EPEE_ARRAY_FLAG | one */
    const uint8_t *data; /* the encoded value, after its type byte */
    size_t len;          /* exactly the value's bytes */
};

/* An array, walked with epee_array_next. */
struct epee_array {
    uint8_t type; /* the elements' enum epee_type, without EPEE_ARRAY_FLAG */
    size_t count; /* how many elements */
    /* Where the walk is: only epee_array_next reads or changes these. */
    size_t next;
    const uint8_t *at, *end;
};

/* Checks that body[0..len) is one whole portable-storage body: the header, then a root
 * section every entry of which (nested ones included) is well formed and within the body,
 * at most EPEE_MAX_DEPTH deep, then nothing. Reads nothing outside body[0..len), and takes
 * time linear in len. On EPEE_OK sets *root to the root section; otherwise *root is
 * unchanged.
 *
 * Bytes after the root section are EPEE_TRAILING, where monerod (load_from_binary) ignores
 * them: no client or node sends them, and a body the gateway forwards or reads is then
 * exactly the bytes it checked, with nothing after them that it did not. */
EPEE_WUR enum epee_status epee_open(const void *body, size_t len, struct epee_section *root);

/* As epee_open, but for bytes after the root section, which monerod's reader
 * (load_from_binary) ignores: on EPEE_OK, *used is the length of the whole body before them
 * (len when there are none), and body[0..*used) is one epee_open accepts; otherwise *used is
 * unchanged. */
EPEE_WUR enum epee_status epee_measure(const void *body, size_t len, size_t *used);

/* A short English description of st, for logs ("ok", "truncated", ...). Static storage. */
const char *epee_status_text(enum epee_status st);

/* The field of section s named name (compared byte for byte, whole), in *out. False, *out
 * unchanged, when s has no field of that name or more than one: monerod refuses a section
 * that names a field twice, so no one reading of it is right. Scans the whole section. */
EPEE_WUR bool epee_find(const struct epee_section *s, const char *name, struct epee_value *out);

/* An integer value of any of the eight integer types, in *out. False, *out unchanged, for
 * a negative signed value or a value of another type (double, bool, string, ...). */
EPEE_WUR bool epee_get_uint(const struct epee_value *v, uint64_t *out);

/* A bool value (EPEE_BOOL only; integers are not taken for bools). */
EPEE_WUR bool epee_get_bool(const struct epee_value *v, bool *out);

/* A string value: *data points at its *len bytes in the body, which are not NUL-terminated
 * and may hold any byte (binary blobs are strings). */
EPEE_WUR bool epee_get_string(const struct epee_value *v, const char **data, size_t *len);

/* An object value, as a section to look fields up in. */
EPEE_WUR bool epee_get_object(const struct epee_value *v, struct epee_section *out);

/* An array value (type EPEE_ARRAY_FLAG | t, or EPEE_ARRAY), set up in *out to be walked
 * with epee_array_next from its first element. */
EPEE_WUR bool epee_get_array(const struct epee_value *v, struct epee_array *out);

/* The next element of a, in *elem, typed a->type: read it with the epee_get_* function for
 * that type (epee_get_uint for integers, epee_get_object for objects, epee_get_array for
 * the arrays of an array of EPEE_ARRAY). False once all a->count elements were given. */
EPEE_WUR bool epee_array_next(struct epee_array *a, struct epee_value *elem);

/* A section's entries, walked in order with epee_entries_next. */
struct epee_entries {
    uint64_t left; /* entries not yet given */
    /* Where the walk is: only epee_entries_next reads or changes these. */
    const uint8_t *at, *end;
};

/* Sets up *out to walk section s from its first entry; false for a section whose count
 * cannot be read (not from a checked body). */
EPEE_WUR bool epee_entries_open(const struct epee_section *s, struct epee_entries *out);

/* The next entry: its name in name[0..*name_len) (not NUL-terminated), its value in *value.
 * False once every entry was given (or at a malformed one). */
EPEE_WUR bool epee_entries_next(struct epee_entries *e, const char **name, size_t *name_len,
                                struct epee_value *value);

/* Copies the body in[0..in_len) into out without any top-level field named name (every
 * copy of it), sets *out_len to the bytes written and *removed to whether there was one.
 * The root entry count is written anew, in its shortest form, when a field was removed
 * (so the output can be shorter by more than the field); otherwise out is an exact copy.
 * out has out_size >= in_len bytes (asserted; the output is never longer than the input)
 * and may be in itself (stripping in place); no other overlap is allowed. A body epee_open
 * refuses is refused with the same status, and out, *out_len and *removed are left as they
 * were. Nested fields of that name are kept. */
EPEE_WUR enum epee_status epee_strip(const void *in, size_t in_len, const char *name, void *out,
                                     size_t out_size, size_t *out_len, bool *removed);

/* Rewrites in place the value of the top-level field named name of the body[0..len), when
 * it is an EPEE_UINT64 (as monerod writes a height): the same 8 bytes, so nothing else
 * moves. False, body unchanged, for a body epee_open refuses, no such field (or two), or a
 * field of another type. */
EPEE_WUR bool epee_patch_uint64(void *body, size_t len, const char *name, uint64_t value);

#endif
