/* jsonrpc — the JSON rules of the request path, as monerod speaks them (pure).
 *
 * monerod's /json_rpc: the id may be any JSON type and is echoed; an unparsable body is
 * -32700 "Parse error" with id 0; an object without a string method is -32600 "Invalid
 * Request"; unknown (even empty) and restricted methods are -32601 "Method not found"
 * (a top-level scalar is a parse error there too); all with
 * HTTP 200. monerod has no batches: a JSON array is refused here with -32600 and a
 * message saying so (monerod itself answers -32700). The plain JSON endpoints answer an
 * unparsable body with HTTP 400.
 *
 * A body is read as monerod's JSON reader (epee's load_from_json) reads it: the first JSON
 * object or array, after optional whitespace, and nothing after it (`{} x`, `{}}`, `{}` and
 * a NUL byte, which some C clients send, are `{}`); an empty or whitespace-only body is an
 * empty object (so an empty /json_rpc body is -32600, as monerod answers). What follows the
 * value is dropped: the gateway forwards what it parsed, re-serialized. */
#ifndef JSONRPC_H
#define JSONRPC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define JSONRPC_PARSE_ERROR      -32700
#define JSONRPC_INVALID_REQUEST  -32600
#define JSONRPC_METHOD_NOT_FOUND -32601
#define JSONRPC_INTERNAL_ERROR   -32603
#define JSONRPC_LIMIT_EXCEEDED   -32005

enum jsonrpc_parse {
    JSONRPC_OK,
    JSONRPC_NOT_JSON,    /* -32700 */
    JSONRPC_BATCH,       /* -32600, batches unsupported */
    JSONRPC_NOT_REQUEST, /* -32600: not an object, or no string method */
};

struct jsonrpc_request {
    json_t *root;       /* owned; json_decref via jsonrpc_request_clear */
    const json_t *id;   /* borrowed from root; NULL when absent */
    const char *method; /* borrowed from root */
};

/* A request body as monerod reads it (above): a new reference, or NULL when monerod would
 * not parse it (-32700 on /json_rpc, 400 on the plain JSON endpoints). */
json_t *jsonrpc_load_body(const char *body, size_t len);

/* Parses a /json_rpc body (jsonrpc_load_body). On JSONRPC_OK fills req; otherwise req is cleared
 * (but for NOT_REQUEST keeps root so the id can be echoed). */
enum jsonrpc_parse jsonrpc_parse(const char *body, size_t len, struct jsonrpc_request *req);
void jsonrpc_request_clear(struct jsonrpc_request *req);

/* Removes the wallet's "client" field (RPC-payment signature) at the top level and
 * inside "params". Returns true if anything was removed. */
bool jsonrpc_strip_client(json_t *root);

/* A compact error answer {"error":{"code","message"},"id","jsonrpc":"2.0"}; id NULL
 * means 0 as monerod answers. Returns a malloc'd string (caller frees). */
char *jsonrpc_error_body(const json_t *id, int code, const char *message, size_t *len);

/* Serializes compactly (malloc'd, caller frees). */
char *jsonrpc_dump(const json_t *root, size_t *len);

#endif
