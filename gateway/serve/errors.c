/* errors — the registry of the gateway's own errors; see errors.h. */
#include "serve/errors.h"

#include "rpc/jsonrpc.h"

#include <assert.h>

#define ROW(c, n, h, r, m) [c] = {.code = c, .name = n, .http = h, .rpc_code = r, .message = m}
#define BARE(c, n, h)      [c] = {.code = c, .name = n, .http = h, .bare = true}

static const struct errors_row errors_table[ERRORS_COUNT] = {
    ROW(ERR_PARSE_ERROR, "parse_error", 200, JSONRPC_PARSE_ERROR, "Parse error"),
    ROW(ERR_BATCH_UNSUPPORTED, "batch_unsupported", 200, JSONRPC_INVALID_REQUEST,
        "Invalid Request: batch requests are not supported"),
    ROW(ERR_INVALID_REQUEST, "invalid_request", 200, JSONRPC_INVALID_REQUEST, "Invalid Request"),
    ROW(ERR_METHOD_NOT_FOUND, "method_not_found", 200, JSONRPC_METHOD_NOT_FOUND,
        "Method not found"),
    BARE(ERR_NO_SUCH_PATH, "no_such_path", 404),
    BARE(ERR_BAD_BIN_BODY, "bad_bin_body", 400),
    BARE(ERR_METHOD_NOT_ALLOWED, "method_not_allowed", 405),
    BARE(ERR_BAD_JSON_BODY, "bad_json_body", 400), /* monerod: 400, an empty text/plain body */
    ROW(ERR_BODY_TOO_LARGE, "body_too_large", 413, JSONRPC_INVALID_REQUEST,
        "request body too large"),
    ROW(ERR_MALFORMED_CREDENTIALS, "malformed_credentials", 400, JSONRPC_INVALID_REQUEST,
        "malformed credentials"),
    ROW(ERR_UNAUTHORIZED, "unauthorized", 401, JSONRPC_INVALID_REQUEST, "authentication required"),
    ROW(ERR_CHALLENGE_FAILED, "challenge_failed", 500, JSONRPC_INTERNAL_ERROR,
        "cannot build the authentication challenge"),
    ROW(ERR_SUSPENDED, "suspended", 403, JSONRPC_INVALID_REQUEST,
        "this access is suspended; contact the operator"),
    ROW(ERR_PLAN_EXPIRED, "plan_expired", 403, JSONRPC_INVALID_REQUEST, "this plan expired"),
    ROW(ERR_LIMIT_EXCEEDED, "limit_exceeded", 429, JSONRPC_LIMIT_EXCEEDED, "limit exceeded"),
    ROW(ERR_OUT_OF_MEMORY, "internal", 500, JSONRPC_INTERNAL_ERROR, "out of memory"),
    ROW(ERR_NO_NODE, "no_node", 502, JSONRPC_INTERNAL_ERROR, "no node could answer"),
    ROW(ERR_PRUNED_ONLY, "pruned_only", 503, JSONRPC_INTERNAL_ERROR,
        "only a pruned node could answer and its answer is incomplete"),
    ROW(ERR_BEHIND_SERVED_TIP, "behind_served_tip", 503, JSONRPC_INTERNAL_ERROR,
        "no node has reached the chain tip already served to this access; retry shortly"),
    ROW(ERR_ANSWERS_DISAGREE, "answers_disagree", 503, JSONRPC_INTERNAL_ERROR,
        "the gateway's nodes disagree about this answer and none can be trusted; retry shortly"),
    ROW(ERR_UNVERIFIED_ANSWER, "unverified_answer", 503, JSONRPC_INTERNAL_ERROR,
        "only one node could answer and this answer is served only when two agree; retry "
        "shortly"),
    ROW(ERR_BILLING_UNAVAILABLE, "billing_unavailable", 503, 0,
        "payments cannot be handled right now; try again shortly"),
    ROW(ERR_PAYMENT_REQUIRED, "payment_required", 402, 0,
        "this endpoint is paid: see how_to_prove"),
    ROW(ERR_BILLING_ANSWER, "billing_answer", 502, 0, "billing's answer has no usable tenant"),
    ROW(ERR_INVOICE_EXPIRED, "invoice_expired", 402, 0,
        "this invoice expired; ask again for a new one"),
    ROW(ERR_MALFORMED_TIER, "malformed_tier", 400, 0,
        "a tier id is lower-case letters, digits, - and _"),
    ROW(ERR_MALFORMED_XMR402, "malformed_xmr402", 400, 0, "malformed XMR402 credentials"),
    ROW(ERR_STREAMS_FULL, "streams_full", 503, 0,
        "too many event streams are open; retry later, or without Accept: text/event-stream"),
};

const struct errors_row *errors_get(enum errors_code code)
{
    assert((unsigned)code < ERRORS_COUNT);
    return &errors_table[code];
}
