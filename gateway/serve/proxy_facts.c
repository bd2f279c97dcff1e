/* proxy_facts — what a node's answer and a call's outcome say, as proxy's routing and
 * caching rules read them: status, BUSY, untrusted, pruned transactions, negatives to
 * confirm, the heights it names (JSON and epee), whether a failure may go to the next
 * node, and the name a tenant sees for a node. Every function here is pure. */
#include "serve/proxy_facts.h"

#include "nodes/upstream.h"
#include "rpc/epee.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

bool proxy_retryable(int outcome, long http_status)
{
    switch ((enum up_outcome)outcome) {
    case UP_CONNECT_ERROR:
    case UP_TIMEOUT:
    case UP_PROTOCOL_ERROR:
        return true;
    case UP_OK:
        return http_status >= 500 || http_status == 429; /* 429: the node's own rate limit */
    default:
        return false;
    }
}

/* ---- reading answers ------------------------------------------------------------------ */

static const json_t *answer_object(const json_t *root)
{
    const json_t *result = json_object_get(root, "result");
    return json_is_object(result) ? result : root;
}

bool proxy_answer_status(const char *body, size_t len, char *out, size_t outlen)
{
    json_t *root = body ? json_loadb(body, len, 0, NULL) : NULL;
    const char *status = json_string_value(json_object_get(answer_object(root), "status"));
    if (status)
        snprintf(out, outlen, "%s", status);
    json_decref(root);
    return status != NULL;
}

static bool is_zero_hash(const char *s)
{
    if (!s || !*s)
        return true;
    for (; *s; s++)
        if (*s != '0')
            return false;
    return true;
}

static void note_height(struct proxy_answer_facts *f, const json_t *h)
{
    if (json_is_integer(h) && f->height != PROXY_HEIGHT_UNSETTLED &&
        json_integer_value(h) > f->height)
        f->height = json_integer_value(h);
}

static bool same_id(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    return json_equal((json_t *)a, (json_t *)b);
}

void proxy_read_facts(const char *body, size_t len, struct proxy_answer_facts *f)
{
    proxy_read_rpc_facts(body, len, NULL, f);
}

void proxy_read_rpc_facts(const char *body, size_t len, const json_t *want,
                          struct proxy_answer_facts *f)
{
    memset(f, 0, sizeof *f);
    f->height = -1;
    json_t *root = body && len ? json_loadb(body, len, 0, NULL) : NULL;
    if (!json_is_object(root))
        goto out;
    f->json = true;
    if (want) {
        const json_t *id = json_object_get(root, "id");
        f->wrong_id = !id || !same_id(id, want);
    }
    const json_t *obj = answer_object(root);
    const char *status = json_string_value(json_object_get(obj, "status"));
    /* A JSON-RPC result that is not an object (on_get_block_hash's hash) has no status. */
    bool is_rpc_result = json_object_get(root, "result") != NULL;
    /* BUSY (syncing), or -32005 (the node's own rate limit, in the JSON-RPC shape): ask
     * another node. */
    f->busy = (status && strcmp(status, "BUSY") == 0) ||
              json_integer_value(json_object_get(json_object_get(root, "error"), "code")) ==
                  PROXY_NODE_BUSY_CODE;
    f->ok = !json_object_get(root, "error") && (status ? strcmp(status, "OK") == 0 : is_rpc_result);
    f->untrusted = json_is_true(json_object_get(obj, "untrusted"));
    size_t i;
    const json_t *item;
    /* get_transactions: missing ones, pool ones (not immutable), pruned ones. */
    f->negatives += json_array_size(json_object_get(obj, "missed_tx"));
    json_array_foreach(json_object_get(obj, "txs"), i, item)
    {
        const char *hex = json_string_value(json_object_get(item, "as_hex"));
        const char *prunable = json_string_value(json_object_get(item, "prunable_hash"));
        if (hex && !*hex && !is_zero_hash(prunable))
            f->pruned = true;
        if (json_is_true(json_object_get(item, "in_pool")))
            f->height = PROXY_HEIGHT_UNSETTLED; /* a pool transaction: never cached */
        else
            note_height(f, json_object_get(item, "block_height"));
    }
    /* on_get_block_hash: an all-zero hash means "no block at that height" (yet). */
    const char *bare = json_string_value(json_object_get(root, "result"));
    if (bare && is_zero_hash(bare))
        f->negatives++;
    /* is_key_image_spent: 0 = unspent. */
    json_array_foreach(json_object_get(obj, "spent_status"), i,
                       item) if (json_integer_value(item) == 0) f->negatives++;
    /* /get_outs: unsettled while an output is locked (it unlocks as the chain grows). */
    json_array_foreach(json_object_get(obj, "outs"), i, item)
    {
        if (!json_is_true(json_object_get(item, "unlocked")) ||
            !json_is_integer(json_object_get(item, "height")))
            f->height = PROXY_HEIGHT_UNSETTLED;
        else
            note_height(f, json_object_get(item, "height"));
    }
    note_height(f, json_object_get(json_object_get(obj, "block_header"), "height"));
    json_array_foreach(json_object_get(obj, "headers"), i, item)
        note_height(f, json_object_get(item, "height"));
    json_array_foreach(json_object_get(obj, "block_headers"), i, item)
        note_height(f, json_object_get(item, "height"));
out:
    json_decref(root);
}

/* get_outs.bin: the outputs' highest height; unsettled while one is locked (a coinbase
 * output, or one with an unlock time, becomes spendable as the chain grows). */
static void note_outs(struct proxy_answer_facts *f, const struct epee_section *root)
{
    struct epee_value v, out_v, field;
    struct epee_array outs;
    if (!epee_find(root, "outs", &v) || !epee_get_array(&v, &outs) || outs.type != EPEE_OBJECT)
        return;
    while (epee_array_next(&outs, &out_v)) {
        struct epee_section out;
        uint64_t height;
        bool unlocked;
        if (!epee_get_object(&out_v, &out) || !epee_find(&out, "height", &field) ||
            !epee_get_uint(&field, &height) || height > INT64_MAX ||
            !epee_find(&out, "unlocked", &field) || !epee_get_bool(&field, &unlocked) ||
            !unlocked) {
            f->height = PROXY_HEIGHT_UNSETTLED;
            return;
        }
        if ((int64_t)height > f->height)
            f->height = (int64_t)height;
    }
}

/* get_blocks.bin: where its blocks start, how many, and the node's chain height. */
static void note_supplement(struct proxy_answer_facts *f, const struct epee_section *root)
{
    struct epee_value v;
    struct epee_array blocks = {0};
    uint64_t start, chain;
    if (!epee_find(root, "start_height", &v) || !epee_get_uint(&v, &start) || start > INT64_MAX ||
        !epee_find(root, "current_height", &v) || !epee_get_uint(&v, &chain) || chain > INT64_MAX ||
        (epee_find(root, "blocks", &v) && !epee_get_array(&v, &blocks)))
        return;
    f->supplement = true;
    f->blocks = (struct plan_supplement){.start_height = (int64_t)start,
                                         .blocks = (int64_t)blocks.count,
                                         .chain_height = (int64_t)chain};
}

void proxy_read_bin_facts(const char *body, size_t len, struct proxy_answer_facts *f)
{
    memset(f, 0, sizeof *f);
    f->height = -1;
    struct epee_section root;
    struct epee_value v;
    const char *status;
    size_t status_len;
    if (!body || epee_open(body, len, &root) != EPEE_OK || !epee_find(&root, "status", &v) ||
        !epee_get_string(&v, &status, &status_len))
        return;
    f->ok = status_len == 2 && memcmp(status, "OK", 2) == 0;
    f->busy = status_len == 4 && memcmp(status, "BUSY", 4) == 0;
    bool untrusted = false;
    f->untrusted = epee_find(&root, "untrusted", &v) && epee_get_bool(&v, &untrusted) && untrusted;
    note_outs(f, &root);
    note_supplement(f, &root);
}

bool proxy_answer_names_block(const char *body, size_t len)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    const char *hash = json_string_value(json_object_get(root, "result"));
    bool known = hash && !is_zero_hash(hash);
    json_decref(root);
    return known;
}

/* ---- naming --------------------------------------------------------------------------- */

void proxy_node_ref(int32_t id, char out[PROXY_NODE_REF_SIZE])
{
    snprintf(out, PROXY_NODE_REF_SIZE, "n%" PRId32, id);
}
