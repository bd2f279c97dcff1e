/* Fuzzes the epee portable-storage reader (gateway/rpc/epee.h) on node answers and client
 * request bodies: epee_open, the readers over the fields monerod's .bin answers carry,
 * epee_strip, proxy's read of a .bin answer (proxy_read_bin_facts) and the plan's read of a
 * .bin request (plan_for, plan_store). The input is the body, as is.
 *
 * Properties checked:
 *   - every value, string, section and array handed out lies inside the body, and a
 *     reader succeeds only for its own type;
 *   - epee_strip refuses exactly what epee_open refuses, never grows the body, writes a
 *     body epee_open accepts and in which the field is gone, copies the body unchanged
 *     when there was no such field, strips in place as into another buffer, and a second
 *     strip finds nothing more;
 *   - stripping the wallet's "client" field changes nothing proxy reads from the answer. */
#include "fuzz.h"
#include "rpc/epee.h"
#include "rpc/methods.h"
#include "rpc/plan.h"
#include "serve/proxy_facts.h"

static const char *const field_names[] = {
    "status",    "untrusted",      "outs",      "blocks",       "heights",
    "height",    "unlocked",       "key",       "mask",         "txid",
    "txs",       "block",          "block_ids", "start_height", "current_height",
    "indices",   "output_indices", "credits",   "top_hash",     "prune",
    "outputs",   "amount",         "index",     "get_txid",     "client",
    "o_indexes", "blob",           "pruned",    "tx_hashes",    "daemon_height",
};
#define NFIELDS (sizeof field_names / sizeof field_names[0])

struct body {
    const uint8_t *data;
    size_t len;
};

static bool inside(const struct body *b, const void *p, size_t n)
{
    const uint8_t *q = p;
    return q >= b->data && n <= b->len && q - b->data <= (ptrdiff_t)(b->len - n);
}

static void walk_section(const struct body *b, const struct epee_section *s, int depth);

static void walk_value(const struct body *b, const struct epee_value *v, int depth)
{
    FUZZ_CHECK(inside(b, v->data, v->len));
    uint8_t base = v->type & (uint8_t)~EPEE_ARRAY_FLAG;
    bool array = (v->type & EPEE_ARRAY_FLAG) || v->type == EPEE_ARRAY;
    uint64_t u;
    bool flag;
    const char *str;
    size_t str_len;
    struct epee_section sub;
    struct epee_array arr;
    if (epee_get_uint(v, &u))
        FUZZ_CHECK(!array && base >= EPEE_INT64 && base <= EPEE_UINT8);
    if (epee_get_bool(v, &flag))
        FUZZ_CHECK(v->type == EPEE_BOOL);
    if (epee_get_string(v, &str, &str_len))
        FUZZ_CHECK(v->type == EPEE_STRING && inside(b, str, str_len));
    if (epee_get_object(v, &sub)) {
        FUZZ_CHECK(v->type == EPEE_OBJECT && inside(b, sub.data, sub.len));
        walk_section(b, &sub, depth + 1);
    }
    if (epee_get_array(v, &arr)) {
        FUZZ_CHECK(array);
        struct epee_value elem;
        size_t n = 0;
        while (epee_array_next(&arr, &elem)) {
            FUZZ_CHECK(elem.type == arr.type);
            walk_value(b, &elem, depth + 1);
            n++;
        }
        FUZZ_CHECK(n == arr.count);
    }
}

static void walk_section(const struct body *b, const struct epee_section *s, int depth)
{
    FUZZ_CHECK(depth <= EPEE_MAX_DEPTH);
    for (size_t i = 0; i < NFIELDS; i++) {
        struct epee_value v;
        if (epee_find(s, field_names[i], &v))
            walk_value(b, &v, depth);
    }
}

static void check_strip(const uint8_t *in, size_t len, const char *name, enum epee_status open)
{
    uint8_t *out = malloc(len ? len : 1), *in_place = malloc(len ? len : 1);
    if (!out || !in_place)
        abort();
    if (len)
        memcpy(in_place, in, len);
    size_t out_len = 0, in_place_len = 0;
    bool removed = false, in_place_removed = false;
    enum epee_status st = epee_strip(in, len, name, out, len, &out_len, &removed);
    enum epee_status st2 =
        epee_strip(in_place, len, name, in_place, len, &in_place_len, &in_place_removed);
    FUZZ_CHECK(st == open && st2 == open);
    if (st == EPEE_OK) {
        FUZZ_CHECK(out_len <= len);
        FUZZ_CHECK(removed == in_place_removed && out_len == in_place_len &&
                   memcmp(out, in_place, out_len) == 0);
        FUZZ_CHECK(removed || (out_len == len && memcmp(out, in, len) == 0));
        struct epee_section root;
        struct epee_value v;
        FUZZ_CHECK(epee_open(out, out_len, &root) == EPEE_OK);
        FUZZ_CHECK(!epee_find(&root, name, &v));
        size_t again_len = 0;
        bool again = true;
        FUZZ_CHECK(epee_strip(out, out_len, name, in_place, len, &again_len, &again) == EPEE_OK);
        FUZZ_CHECK(!again && again_len == out_len && memcmp(in_place, out, out_len) == 0);
        if (strcmp(name, "client") == 0) {
            struct proxy_answer_facts before, after;
            proxy_read_bin_facts((const char *)in, len, &before);
            proxy_read_bin_facts((const char *)out, out_len, &after);
            FUZZ_CHECK(memcmp(&before, &after, sizeof before) == 0);
        }
    }
    free(out);
    free(in_place);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct body b = {data, size};
    struct epee_section root = {0};
    enum epee_status open = epee_open(data, size, &root);
    FUZZ_CHECK(epee_status_text(open) != NULL);
    if (open == EPEE_OK) {
        FUZZ_CHECK(root.data == data + 9 && root.len == size - 9);
        walk_section(&b, &root, 1);
    }
    check_strip(data, size, "client", open);
    check_strip(data, size, "status", open);

    struct proxy_answer_facts f;
    proxy_read_bin_facts((const char *)data, size, &f);
    FUZZ_CHECK(!f.json && !(f.ok && f.busy));
    FUZZ_CHECK(open == EPEE_OK || (!f.ok && !f.busy));
    FUZZ_CHECK(f.height >= -1 || f.height == PROXY_HEIGHT_UNSETTLED);
    static const int64_t deeps[] = {-1, 0, 100, 3000000, INT64_MAX};
    struct plan by_height, by_index;
    struct plan_request r = {.bin = (const char *)data, .bin_len = size};
    plan_for(methods_find_path("/get_blocks_by_height.bin", 25), &r, &by_height);
    plan_for(methods_find_path("/get_outs.bin", 13), &r, &by_index);
    for (size_t i = 0; i < sizeof deeps / sizeof deeps[0]; i++) {
        /* A chain whose settled top is deeps[i] (height - 1 - min_depth, kept from overflow). */
        struct plan_chain chain = {.known = true, .height = deeps[i], .min_depth = -1};
        int64_t deep;
        if (plan_store(&by_height, &chain, &deep) == PLAN_CACHE_SETTLED)
            FUZZ_CHECK(open == EPEE_OK && by_height.height >= 0 && by_height.height <= deeps[i]);
        FUZZ_CHECK(deep == deeps[i]);
        FUZZ_CHECK((plan_store(&by_index, &chain, &deep) == PLAN_CACHE_SETTLED) == (deeps[i] >= 0));
    }
    return 0;
}
