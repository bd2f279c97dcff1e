/* Fuzzes the /json_rpc request path's JSON rules (gateway/rpc/jsonrpc.h) as server.c's
 * prepare_jsonrpc runs them: jsonrpc_parse over the body, the "client" strip, the
 * forwarded body (jsonrpc_dump), and the error answer echoing the id. The input is the
 * body, as is.
 *
 * Properties checked:
 *   - a request has a string method and an object root; the id, when there is one, is the
 *     root's "id";
 *   - the forwarded body is JSON that parses again into the same request (same class,
 *     same method) without a "client" field at the top level or in params, and stripping
 *     it again removes nothing;
 *   - every error answer is a JSON object carrying the code and the id. */
#include "fuzz.h"
#include "rpc/jsonrpc.h"

static void check_error_body(const json_t *id)
{
    size_t len = 0;
    char *text = jsonrpc_error_body(id, JSONRPC_INVALID_REQUEST, "Invalid Request", &len);
    FUZZ_CHECK(text != NULL && len == strlen(text));
    json_t *answer = json_loadb(text, len, 0, NULL);
    FUZZ_CHECK(json_is_object(answer));
    json_t *error = json_object_get(answer, "error");
    FUZZ_CHECK(json_integer_value(json_object_get(error, "code")) == JSONRPC_INVALID_REQUEST);
    json_t *echoed = json_object_get(answer, "id");
    FUZZ_CHECK(echoed != NULL);
    if (id)
        FUZZ_CHECK(json_equal(echoed, id));
    else
        FUZZ_CHECK(json_integer_value(echoed) == 0 && json_is_integer(echoed));
    json_decref(answer);
    free(text);
}

static void check_forwarded(json_t *root, const char *method)
{
    jsonrpc_strip_client(root);
    size_t len = 0;
    char *fwd = jsonrpc_dump(root, &len);
    FUZZ_CHECK(fwd != NULL && len == strlen(fwd));
    struct jsonrpc_request again;
    FUZZ_CHECK(jsonrpc_parse(fwd, len, &again) == JSONRPC_OK);
    FUZZ_CHECK(strcmp(again.method, method) == 0);
    FUZZ_CHECK(json_equal(again.root, root));
    FUZZ_CHECK(!json_object_get(again.root, "client"));
    json_t *params = json_object_get(again.root, "params");
    FUZZ_CHECK(!json_is_object(params) || !json_object_get(params, "client"));
    FUZZ_CHECK(!jsonrpc_strip_client(again.root));
    jsonrpc_request_clear(&again);
    free(fwd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct jsonrpc_request rpc;
    enum jsonrpc_parse parsed = jsonrpc_parse((const char *)data, size, &rpc);
    switch (parsed) {
    case JSONRPC_OK:
        FUZZ_CHECK(json_is_object(rpc.root) && rpc.method != NULL);
        FUZZ_CHECK(rpc.id == json_object_get(rpc.root, "id"));
        check_error_body(rpc.id);
        check_forwarded(rpc.root, rpc.method);
        break;
    case JSONRPC_NOT_REQUEST:
        FUZZ_CHECK(rpc.root != NULL && rpc.method == NULL);
        check_error_body(rpc.id);
        break;
    case JSONRPC_NOT_JSON:
    case JSONRPC_BATCH:
        FUZZ_CHECK(rpc.root == NULL && rpc.id == NULL);
        check_error_body(NULL);
        break;
    }
    jsonrpc_request_clear(&rpc);
    return 0;
}
