/* A differential driver for the cache key (gateway/cache/cache.h): the key proxy.c's
 * request_key computes over the body server.c forwards must not depend on how the client
 * wrote its JSON. The input is a request body; it goes through the gateway's preparation
 * (server.c: prepare_jsonrpc for /json_rpc, prepare_path for the JSON endpoints: parse,
 * strip the wallet's "client" field, re-serialise compactly) and cache_key; then the same
 * document written differently (indented, ASCII-escaped with escaped slashes, its object
 * keys in reverse order, sorted, wrapped in white space) goes the same way.
 *
 * Properties checked: every writing of the document gets the same key, for JSON-RPC and
 * path endpoints, tip and immutable alike; a tip key is never an immutable key, and a JSON
 * key never the key of the same bytes as a binary body. */
#include "fuzz.h"
#include "fuzz_json_variants.h"
#include "cache/cache.h"
#include "rpc/jsonrpc.h"

#define FUZZ_TIP "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* The body server.c forwards for this document (malloc'd), and the JSON-RPC method. */
static char *forwarded(const char *body, size_t len, bool rpc, char *method, size_t method_size,
                       size_t *fwd_len)
{
    json_t *root;
    if (rpc) {
        struct jsonrpc_request req;
        if (jsonrpc_parse(body, len, &req) != JSONRPC_OK) {
            jsonrpc_request_clear(&req);
            return NULL;
        }
        snprintf(method, method_size, "%s", req.method);
        root = json_incref(req.root);
        jsonrpc_request_clear(&req);
    } else {
        root = json_loadb(body, len, 0, NULL);
        if (!root)
            return NULL;
    }
    jsonrpc_strip_client(root);
    char *fwd = jsonrpc_dump(root, fwd_len);
    json_decref(root);
    FUZZ_CHECK(fwd != NULL);
    return fwd;
}

struct keys {
    bool ok;
    uint8_t tip[CACHE_KEY_LEN], immutable[CACHE_KEY_LEN];
};

static struct keys keys_of(const char *body, size_t len, bool rpc)
{
    struct keys k = {0};
    char method[256] = "";
    size_t fwd_len = 0;
    char *fwd = forwarded(body, len, rpc, method, sizeof method, &fwd_len);
    if (!fwd)
        return k;
    const char *scope = rpc ? "rpc" : "path", *name = rpc ? method : "/get_transactions";
    k.ok = cache_key(scope, name, fwd, fwd_len, true, FUZZ_TIP, k.tip) &&
           cache_key(scope, name, fwd, fwd_len, true, NULL, k.immutable);
    FUZZ_CHECK(k.ok); /* the forwarded body is JSON */
    FUZZ_CHECK(memcmp(k.tip, k.immutable, CACHE_KEY_LEN) != 0);
    uint8_t bin[CACHE_KEY_LEN];
    if (cache_key(scope, name, fwd, fwd_len, false, NULL, bin))
        FUZZ_CHECK(memcmp(bin, k.immutable, CACHE_KEY_LEN) != 0);
    free(fwd);
    return k;
}

static void check_same_keys(const json_t *doc, const struct keys *want, bool rpc)
{
    for (int i = 0; i < FUZZ_JSON_VARIANTS; i++) {
        char *text = fuzz_json_variant(doc, i);
        FUZZ_CHECK(text != NULL);
        struct keys k = keys_of(text, strlen(text), rpc);
        FUZZ_CHECK(k.ok);
        FUZZ_CHECK(memcmp(k.tip, want->tip, CACHE_KEY_LEN) == 0 &&
                   memcmp(k.immutable, want->immutable, CACHE_KEY_LEN) == 0);
        free(text);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *body = (const char *)data;
    json_t *doc = json_loadb(body, size, 0, NULL);
    if (!doc)
        return 0;
    for (int rpc = 0; rpc <= 1; rpc++) {
        struct keys want = keys_of(body, size, rpc);
        if (want.ok)
            check_same_keys(doc, &want, rpc);
    }
    json_decref(doc);
    return 0;
}
