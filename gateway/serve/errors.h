/* errors — the registry of every error the gateway itself sends a client: one row per
 * error, with its symbolic code, HTTP status, JSON-RPC error code and message. The
 * answer module (answer.h) turns a row into the client's shape; nothing else spells an
 * error's status or wording.
 *
 * A row's message is what the client reads unless the caller has a more precise one (the
 * limit that was hit, the renewal address, the parser's reason): answer_error takes it
 * then instead. The symbolic code is the "code" of an XMR402 error body. A bare row is
 * answered as monerod answers it: the status, text/plain and no body, on any endpoint.
 *
 * Pure and constant: the table is static data, table-tested in
 * tests/unit/gateway/http/test_answer.c. */
#ifndef ERRORS_H
#define ERRORS_H

#include <stdbool.h>
#include <stddef.h>

enum errors_code {
    /* JSON-RPC requests that never reach a node (answered 200, as monerod does) */
    ERR_PARSE_ERROR,
    ERR_BATCH_UNSUPPORTED,
    ERR_INVALID_REQUEST,
    ERR_METHOD_NOT_FOUND,
    /* monerod's own bare refusals */
    ERR_NO_SUCH_PATH,
    ERR_BAD_BIN_BODY,
    ERR_METHOD_NOT_ALLOWED,
    /* the request itself */
    ERR_BAD_JSON_BODY,
    ERR_BODY_TOO_LARGE,
    /* authentication and the tenant */
    ERR_MALFORMED_CREDENTIALS,
    ERR_UNAUTHORIZED,
    ERR_CHALLENGE_FAILED,
    ERR_SUSPENDED,
    ERR_PLAN_EXPIRED,
    ERR_LIMIT_EXCEEDED,
    /* the gateway and its nodes */
    ERR_OUT_OF_MEMORY,
    ERR_NO_NODE,
    ERR_PRUNED_ONLY,
    ERR_BEHIND_SERVED_TIP,
    ERR_ANSWERS_DISAGREE,
    ERR_UNVERIFIED_ANSWER,
    /* XMR402 (answered in its shape only) */
    ERR_BILLING_UNAVAILABLE,
    ERR_PAYMENT_REQUIRED,
    ERR_BILLING_ANSWER,
    ERR_INVOICE_EXPIRED,
    ERR_MALFORMED_TIER,
    ERR_MALFORMED_XMR402,
    ERR_STREAMS_FULL,
    ERRORS_COUNT
};

struct errors_row {
    enum errors_code code;
    const char *name;    /* symbolic, lower_snake_case: the XMR402 body's "code" */
    unsigned http;       /* HTTP status */
    int rpc_code;        /* JSON-RPC error code on /json_rpc; 0 where it is never sent there */
    const char *message; /* the default message; NULL for a bare row */
    bool bare;           /* status, text/plain, no body, whatever the endpoint */
};

/* The row of code; never NULL for a code below ERRORS_COUNT (asserted). */
const struct errors_row *errors_get(enum errors_code code);

#endif
