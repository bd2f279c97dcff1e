/* Table tests for gateway/http/errors (the registry: every row's status, JSON-RPC code,
 * name and message) and gateway/http/answer (each error in each endpoint's shape, byte for
 * byte as clients receive it, and the answer and header rules). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "serve/answer.h"
#include "serve/errors.h"

/* ---- the registry ------------------------------------------------------------------- */

struct registry_row {
    enum errors_code code;
    const char *name;
    unsigned http;
    int rpc_code;
    const char *message; /* NULL: bare */
};

/* What clients see today, row by row: a change here is a change on the wire. */
static const struct registry_row REGISTRY[] = {
    {ERR_PARSE_ERROR, "parse_error", 200, -32700, "Parse error"},
    {ERR_BATCH_UNSUPPORTED, "batch_unsupported", 200, -32600,
     "Invalid Request: batch requests are not supported"},
    {ERR_INVALID_REQUEST, "invalid_request", 200, -32600, "Invalid Request"},
    {ERR_METHOD_NOT_FOUND, "method_not_found", 200, -32601, "Method not found"},
    {ERR_NO_SUCH_PATH, "no_such_path", 404, 0, NULL},
    {ERR_BAD_BIN_BODY, "bad_bin_body", 400, 0, NULL},
    {ERR_METHOD_NOT_ALLOWED, "method_not_allowed", 405, 0, NULL},
    {ERR_BAD_JSON_BODY, "bad_json_body", 400, 0, NULL},
    {ERR_BODY_TOO_LARGE, "body_too_large", 413, -32600, "request body too large"},
    {ERR_MALFORMED_CREDENTIALS, "malformed_credentials", 400, -32600, "malformed credentials"},
    {ERR_UNAUTHORIZED, "unauthorized", 401, -32600, "authentication required"},
    {ERR_CHALLENGE_FAILED, "challenge_failed", 500, -32603,
     "cannot build the authentication challenge"},
    {ERR_SUSPENDED, "suspended", 403, -32600, "this access is suspended; contact the operator"},
    {ERR_PLAN_EXPIRED, "plan_expired", 403, -32600, "this plan expired"},
    {ERR_LIMIT_EXCEEDED, "limit_exceeded", 429, -32005, "limit exceeded"},
    {ERR_OUT_OF_MEMORY, "internal", 500, -32603, "out of memory"},
    {ERR_NO_NODE, "no_node", 502, -32603, "no node could answer"},
    {ERR_PRUNED_ONLY, "pruned_only", 503, -32603,
     "only a pruned node could answer and its answer is incomplete"},
    {ERR_BEHIND_SERVED_TIP, "behind_served_tip", 503, -32603,
     "no node has reached the chain tip already served to this access; retry shortly"},
    {ERR_ANSWERS_DISAGREE, "answers_disagree", 503, -32603,
     "the gateway's nodes disagree about this answer and none can be trusted; retry shortly"},
    {ERR_UNVERIFIED_ANSWER, "unverified_answer", 503, -32603,
     "only one node could answer and this answer is served only when two agree; retry "
     "shortly"},
    {ERR_BILLING_UNAVAILABLE, "billing_unavailable", 503, 0,
     "payments cannot be handled right now; try again shortly"},
    {ERR_PAYMENT_REQUIRED, "payment_required", 402, 0, "this endpoint is paid: see how_to_prove"},
    {ERR_BILLING_ANSWER, "billing_answer", 502, 0, "billing's answer has no usable tenant"},
    {ERR_INVOICE_EXPIRED, "invoice_expired", 402, 0,
     "this invoice expired; ask again for a new one"},
    {ERR_MALFORMED_TIER, "malformed_tier", 400, 0,
     "a tier id is lower-case letters, digits, - and _"},
    {ERR_MALFORMED_XMR402, "malformed_xmr402", 400, 0, "malformed XMR402 credentials"},
    {ERR_STREAMS_FULL, "streams_full", 503, 0,
     "too many event streams are open; retry later, or without Accept: text/event-stream"},
};

static void test_registry_rows(void **state)
{
    (void)state;
    assert_int_equal(sizeof REGISTRY / sizeof REGISTRY[0], ERRORS_COUNT);
    for (size_t i = 0; i < sizeof REGISTRY / sizeof REGISTRY[0]; i++) {
        const struct registry_row *want = &REGISTRY[i];
        const struct errors_row *got = errors_get(want->code);
        assert_int_equal(got->code, want->code);
        assert_string_equal(got->name, want->name);
        assert_int_equal(got->http, want->http);
        assert_int_equal(got->rpc_code, want->rpc_code);
        assert_int_equal(got->bare, want->message == NULL);
        if (want->message)
            assert_string_equal(got->message, want->message);
        else
            assert_null(got->message);
    }
}

/* Every code has a row of its own, names are unique, lower-case letters, digits and _. */
static void test_registry_complete(void **state)
{
    (void)state;
    for (int c = 0; c < ERRORS_COUNT; c++) {
        const struct errors_row *row = errors_get((enum errors_code)c);
        assert_int_equal(row->code, c);
        assert_non_null(row->name);
        assert_true(row->http >= 200 && row->http < 600);
        for (const char *p = row->name; *p; p++)
            assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_');
        for (int d = 0; d < c; d++)
            assert_string_not_equal(errors_get((enum errors_code)d)->name, row->name);
    }
}

/* ---- the shapes --------------------------------------------------------------------- */

struct shape_row {
    const char *name;
    enum gw_endpoint endpoint;
    int id; /* the JSON-RPC id to echo; -1: none */
    enum errors_code code;
    const char *message;
    const char *want_body; /* NULL: none */
    const char *want_type;
};

static const struct shape_row SHAPES[] = {
    {"JSON-RPC parse error, no id", GW_EP_JSONRPC, -1, ERR_PARSE_ERROR, NULL,
     "{\"error\":{\"code\":-32700,\"message\":\"Parse error\"},\"id\":0,\"jsonrpc\":\"2.0\"}",
     "application/json"},
    {"JSON-RPC: the id echoed", GW_EP_JSONRPC, 7, ERR_METHOD_NOT_FOUND, NULL,
     "{\"error\":{\"code\":-32601,\"message\":\"Method not found\"},\"id\":7,\"jsonrpc\":\"2.0\"}",
     "application/json"},
    {"JSON-RPC 429 with the limit's message", GW_EP_JSONRPC, 1, ERR_LIMIT_EXCEEDED,
     "daily quota exceeded",
     "{\"error\":{\"code\":-32005,\"message\":\"daily quota exceeded\"},\"id\":1,\"jsonrpc\":"
     "\"2.0\"}",
     "application/json"},
    {"JSON-RPC 502 from proxy", GW_EP_JSONRPC, 3, ERR_NO_NODE, "no node could answer: x",
     "{\"error\":{\"code\":-32603,\"message\":\"no node could answer: x\"},\"id\":3,\"jsonrpc\":"
     "\"2.0\"}",
     "application/json"},
    {"JSON status shape", GW_EP_JSON, -1, ERR_UNAUTHORIZED, NULL,
     "{\"status\":\"authentication required\"}", "application/json"},
    {"JSON status shape, the caller's message", GW_EP_JSON, -1, ERR_MALFORMED_CREDENTIALS,
     "the Digest uri does not match the request",
     "{\"status\":\"the Digest uri does not match the request\"}", "application/json"},
    {"JSON body refused: bare, as monerod", GW_EP_JSON, -1, ERR_BAD_JSON_BODY, NULL, NULL,
     "text/plain"},
    {".bin: the bare status", GW_EP_BIN, -1, ERR_LIMIT_EXCEEDED, "over", NULL, ""},
    {".bin: 502 bare", GW_EP_BIN, -1, ERR_NO_NODE, "no node could answer: x", NULL, ""},
    {"bare row on JSON-RPC: text/plain, no body", GW_EP_JSONRPC, 1, ERR_NO_SUCH_PATH, NULL, NULL,
     "text/plain"},
    {"bare row on .bin", GW_EP_BIN, -1, ERR_BAD_BIN_BODY, NULL, NULL, "text/plain"},
    {"405 bare", GW_EP_JSON, -1, ERR_METHOD_NOT_ALLOWED, NULL, NULL, "text/plain"},
};

static void test_shapes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) {
        const struct shape_row *r = &SHAPES[i];
        json_t *id = r->id >= 0 ? json_integer(r->id) : NULL;
        size_t len = 99;
        const char *type = NULL;
        char *body = answer_error_body(r->endpoint, id, r->code, r->message, &len, &type);
        if (r->want_body) {
            assert_non_null(body);
            if (strcmp(body, r->want_body) != 0)
                fail_msg("%s: got %s", r->name, body);
            assert_int_equal(len, strlen(r->want_body));
        } else {
            assert_null(body);
            assert_int_equal(len, 0);
        }
        assert_string_equal(type, r->want_type);
        free(body);
        json_decref(id);
    }
}

/* answer_error fills the request: status from the registry, body and type as shaped. */
static void test_answer_error_fills_request(void **state)
{
    (void)state;
    struct gw_request req = {.endpoint = GW_EP_JSON};
    answer_error(&req, ERR_SUSPENDED, NULL);
    assert_true(req.answered);
    assert_int_equal(req.status, 403);
    assert_string_equal(req.answer_type, "application/json");
    assert_string_equal(req.answer_body, "{\"status\":\"this access is suspended; contact the "
                                         "operator\"}");
    assert_int_equal(req.answer_len, strlen(req.answer_body));
    /* a second answer replaces the first */
    req.endpoint = GW_EP_BIN;
    answer_error(&req, ERR_BODY_TOO_LARGE, NULL);
    assert_int_equal(req.status, 413);
    assert_null(req.answer_body);
    assert_int_equal(req.answer_len, 0);
    assert_string_equal(req.answer_type, "");
}

struct xmr402_row {
    enum errors_code code;
    const char *message;
    unsigned want_status;
    const char *want_body;
};

static const struct xmr402_row XMR402[] = {
    {ERR_BILLING_UNAVAILABLE, NULL, 503,
     "{\"protocol\":\"XMR402\",\"error\":{\"code\":\"billing_unavailable\",\"message\":\"payments "
     "cannot be handled right now; try again shortly\"}}"},
    {ERR_OUT_OF_MEMORY, NULL, 500,
     "{\"protocol\":\"XMR402\",\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}"},
    {ERR_MALFORMED_XMR402, "XMR402 parameter repeated", 400,
     "{\"protocol\":\"XMR402\",\"error\":{\"code\":\"malformed_xmr402\",\"message\":\"XMR402 "
     "parameter repeated\"}}"},
    {ERR_INVOICE_EXPIRED, NULL, 402,
     "{\"protocol\":\"XMR402\",\"error\":{\"code\":\"invoice_expired\",\"message\":\"this "
     "invoice expired; ask again for a new one\"}}"},
};

static void test_xmr402_shape(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof XMR402 / sizeof XMR402[0]; i++) {
        struct gw_request req = {.endpoint = GW_EP_JSONRPC};
        answer_xmr402_error(&req, XMR402[i].code, XMR402[i].message);
        assert_int_equal(req.status, XMR402[i].want_status);
        assert_string_equal(req.answer_type, "application/json");
        assert_string_equal(req.answer_body, XMR402[i].want_body);
        free(req.answer_body);
    }
}

/* A JSON answer that cannot be serialised is a 500 with no body, still typed JSON. */
static void test_answer_json_null(void **state)
{
    (void)state;
    struct gw_request req = {0};
    answer_json(&req, 202, NULL);
    assert_int_equal(req.status, 500);
    assert_null(req.answer_body);
    assert_string_equal(req.answer_type, "application/json");
}

static void test_headers(void **state)
{
    (void)state;
    struct gw_request req = {0};
    answer_header_add(&req, "WWW-authenticate", "Digest a");
    answer_header_add(&req, "WWW-authenticate", "Digest b");
    assert_int_equal(req.nextra_headers, 2); /* add repeats a name */
    answer_header_set(&req, "X-Xmrgate-Cache", "miss");
    answer_header_set(&req, "X-Xmrgate-Cache", "hit");
    assert_int_equal(req.nextra_headers, 3); /* set replaces */
    assert_string_equal(req.extra_headers[2].value, "hit");
    answer_header_add(&req, "Retry-After", "1");
    answer_header_add(&req, "X-Dropped", "beyond the cap");
    assert_int_equal(req.nextra_headers, GW_MAX_EXTRA_HEADERS);
    assert_string_equal(req.extra_headers[3].name, "Retry-After");
    /* a Digest challenge fits whole */
    char challenge[GW_HEADER_VALUE_SIZE];
    memset(challenge, 'x', sizeof challenge - 1);
    challenge[sizeof challenge - 1] = '\0';
    struct gw_request big = {0};
    answer_header_add(&big, "WWW-authenticate", challenge);
    assert_string_equal(big.extra_headers[0].value, challenge);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_rows), cmocka_unit_test(test_registry_complete),
        cmocka_unit_test(test_shapes),        cmocka_unit_test(test_answer_error_fills_request),
        cmocka_unit_test(test_xmr402_shape),  cmocka_unit_test(test_answer_json_null),
        cmocka_unit_test(test_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
