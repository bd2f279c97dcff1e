/* answer — the one place a client's answer is written into its request: a node's answer
 * passed on, our own errors (errors.h) in the shape the endpoint's client parses, and the
 * XMR402 conversation's JSON. Whoever answers (server at once, proxy and the XMR402 flow
 * from the engine thread before they resume the request) fills req through these; server
 * alone sends the answer through the request's front end, with the headers every answer
 * ends with.
 *
 * The shapes, by req->endpoint:
 *   GW_EP_JSONRPC  {"error":{"code":<rpc_code>,"message":…},"id":<the request's id, or 0>,
 *                  "jsonrpc":"2.0"}, application/json
 *   GW_EP_JSON     {"status":<message>}, application/json (what monerod's plain JSON
 *                  endpoints and the libraries that call them read)
 *   GW_EP_BIN      the bare status: no body, no Content-Type (wallets read the status)
 *   XMR402         {"protocol":"XMR402","error":{"code":<name>,"message":…}}, plus
 *                  whatever the flow adds (the invoice, how to prove)
 * A bare registry row is answered on any endpoint as monerod answers it: the status,
 * text/plain and no body.
 *
 * Ownership: req owns answer_body (malloc'd) from these calls on; a body handed in is
 * taken. Headers are copied into req (at most GW_MAX_EXTRA_HEADERS, each value truncated
 * to GW_HEADER_VALUE_SIZE - 1 bytes). */
#ifndef ANSWER_H
#define ANSWER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "serve/request.h"
#include "serve/errors.h"

/* The answer is status with body (taken; NULL: none) of Content-Type type ("" or NULL:
 * none). */
void answer_set(struct gw_request *req, long status, char *body, size_t len, const char *type);

/* The answer is status with body serialised compactly as application/json (the reference
 * is taken); 500 with no body when it cannot be serialised. */
void answer_json(struct gw_request *req, unsigned status, json_t *body);

/* Our error code in the endpoint's shape, with its registry status; message replaces the
 * registry's when not NULL. */
void answer_error(struct gw_request *req, enum errors_code code, const char *message);

/* The XMR402 error object for code (new reference; NULL when out of memory); message
 * replaces the registry's when not NULL. */
json_t *answer_xmr402_body(enum errors_code code, const char *message);

/* Our error code as an XMR402 answer, with its registry status. */
void answer_xmr402_error(struct gw_request *req, enum errors_code code, const char *message);

/* Adds a header to the answer, after those already there (a name may repeat). */
void answer_header_add(struct gw_request *req, const char *name, const char *value);

/* Sets a header of the answer: replaces the value of one of that name, else adds it. */
void answer_header_set(struct gw_request *req, const char *name, const char *value);

/* Pure: the body of error code in endpoint's shape (malloc'd, *len set; NULL for the
 * bare shape and when out of memory) and its Content-Type ("" for none). id is the
 * JSON-RPC id to echo (NULL: 0). For the table tests and answer_error. */
char *answer_error_body(enum gw_endpoint endpoint, const json_t *id, enum errors_code code,
                        const char *message, size_t *len, const char **type);

#endif
