/* jsonrpc — JSON-RPC parsing and answers in monerod's shape. */
#include "rpc/jsonrpc.h"

#include <stdlib.h>
#include <string.h>

json_t *jsonrpc_load_body(const char *body, size_t len)
{
    size_t lead = 0;
    while (lead < len &&
           (body[lead] == ' ' || body[lead] == '\t' || body[lead] == '\n' || body[lead] == '\r'))
        lead++;
    if (lead == len)
        return json_object();
    json_error_t error;
    return json_loadb(body + lead, len - lead, JSON_DISABLE_EOF_CHECK, &error);
}

enum jsonrpc_parse jsonrpc_parse(const char *body, size_t len, struct jsonrpc_request *req)
{
    memset(req, 0, sizeof *req);
    json_t *root = jsonrpc_load_body(body, len);
    if (!root)
        return JSONRPC_NOT_JSON;
    if (json_is_array(root)) {
        json_decref(root);
        return JSONRPC_BATCH;
    }
    req->root = root;
    if (!json_is_object(root))
        return JSONRPC_NOT_REQUEST;
    req->id = json_object_get(root, "id");
    const json_t *method = json_object_get(root, "method");
    if (!json_is_string(method))
        return JSONRPC_NOT_REQUEST; /* an empty name is simply not found, as in monerod */
    req->method = json_string_value(method);
    return JSONRPC_OK;
}

void jsonrpc_request_clear(struct jsonrpc_request *req)
{
    json_decref(req->root);
    memset(req, 0, sizeof *req);
}

bool jsonrpc_strip_client(json_t *root)
{
    bool removed = false;
    if (!json_is_object(root))
        return false;
    removed |= json_object_del(root, "client") == 0;
    json_t *params = json_object_get(root, "params");
    if (json_is_object(params))
        removed |= json_object_del(params, "client") == 0;
    return removed;
}

char *jsonrpc_dump(const json_t *root, size_t *len)
{
    char *text = json_dumps(root, JSON_COMPACT | JSON_ENCODE_ANY);
    if (text && len)
        *len = strlen(text);
    return text;
}

char *jsonrpc_error_body(const json_t *id, int code, const char *message, size_t *len)
{
    json_t *id_value = id ? json_incref((json_t *)id) : json_integer(0);
    json_t *answer = json_pack("{s:{s:i,s:s},s:o,s:s}", "error", "code", code, "message", message,
                               "id", id_value, "jsonrpc", "2.0");
    char *text = jsonrpc_dump(answer, len);
    json_decref(answer);
    return text;
}
