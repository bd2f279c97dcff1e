/* auth_gate — whether a request whose credential failed on its head is answered at once
 * or after its body: the rule that keeps unauthenticated clients from making the gateway
 * buffer bodies, without breaking the clients monerod serves.
 *
 * The request path authenticates every request once, on its head (the credential is in
 * the headers and the request target; a Digest response covers the method and the uri,
 * never the body). A request that passed reads its body and goes on. One that failed is
 * answered at once, before a byte of its body is read, unless reading it is both cheap
 * and what a real client needs:
 *   - a declared body of at most AUTH_GATE_SMALL_BODY is read: monerod answers a refused
 *     request after its body, so a /json_rpc error can echo the request's id, and stock
 *     wallets (epee's http client) send their first request without a credential and
 *     retry the 401 on the same connection, which stays open only when the body was read;
 *   - a stale Digest nonce (the password was right) reads its body as an authenticated
 *     request would: the client is a tenant that will retry on this connection;
 *   - an XMR402 agent path without a credential goes to billing, which may serve the
 *     request once paid: its body is read (bounded by max_body and the body rate).
 * Everything else is answered on the head: a chunked body, a declared body over the
 * small bound, and any body sent with Expect: 100-continue (the client waits for our
 * go-ahead, and a refusal instead is what the expectation is for). The front end then
 * closes the connection after the answer (a body it did not read cannot be skipped).
 * Pure. */
#ifndef AUTH_GATE_H
#define AUTH_GATE_H

#include <stdbool.h>
#include <stdint.h>

#define AUTH_GATE_SMALL_BODY 16384

enum auth_gate_verdict {
    AUTH_GATE_OK,           /* a tenant, or a pending XMR402 allowance */
    AUTH_GATE_UNAUTHORIZED, /* missing or wrong credential: 401 */
    AUTH_GATE_STALE,        /* right Digest password, stale nonce: 401 stale=true */
    AUTH_GATE_MALFORMED,    /* a credential that does not parse: 400 */
};

struct auth_gate_head {
    enum auth_gate_verdict verdict;
    bool agent_path; /* an XMR402 agent endpoint without a tenant credential */
    bool chunked;    /* Transfer-Encoding: chunked */
    bool has_length; /* Content-Length was sent */
    uint64_t content_length;
    bool expect_continue; /* Expect: 100-continue */
};

enum auth_gate_action {
    AUTH_GATE_READ_BODY,  /* read the body, then the request path goes on (or refuses) */
    AUTH_GATE_ANSWER_NOW, /* refuse on the head, the body unread */
};

enum auth_gate_action auth_gate_decide(const struct auth_gate_head *h);

#endif
