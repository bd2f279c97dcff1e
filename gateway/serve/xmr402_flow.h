/* xmr402_flow — the gateway's half of an XMR402 conversation: it asks billing for a
 * challenge or hands it a proof, without blocking a thread. The request's connection is
 * suspended while billing answers through the upstream engine (upstream.h), exactly as
 * for a node; the answer is built on the engine thread and the connection resumed.
 *
 *   no credential            → POST {billing_url}/api/xmr402/challenge {"tier"}
 *                              402 + WWW-Authenticate: XMR402 … + the invoice as JSON
 *   Authorization: XMR402 …  → POST {billing_url}/api/xmr402/verify {txid, proof, invoice?}
 *       provisioned          → the request is served as the new tenant (server.c goes on
 *                              with limits, classification and the nodes) and the answer
 *                              carries X-XMR402-Token, -Login, -RPC-URL, -Receipt, -Invoice
 *       pending (proven, short of the tier's confirmations)
 *                            → served from the pending allowance as a tenant of the tier's
 *                              rate that exists only for the request (no quota row),
 *                              with X-XMR402-Pending (left) and X-XMR402-Confirmations
 *       seen / confirming    → 202 + Retry-After + confirmations, required: only for a
 *                              client that sent X-XMR402-Mode: confirmations, or with no
 *                              pending allowance configured in billing
 *       refused              → 403 with the reason, no challenge (xmr402_refusal_of); an
 *                              underpaid invoice in the extended mode: 402 for the rest
 *       not visible yet / allowance spent → 503 / 429 + Retry-After, never a 402
 *       expired              → 402 with reason invoice_expired, a NEW challenge and
 *                              "new_purchase": true
 *       malformed header     → 400 INVALID_XMR402_FORMAT (answered at once)
 *       accepted, with Accept: text/event-stream (v2.1 SSE; the challenge said
 *       features="sse", only where streams are served: the own front end ([server] front_end =
 * native), and [xmr402] streams > 0) → 200 text/event-stream: event: accepted (the pending
 *                              allowance and the token the payment buys), keep-alive
 *                              comments, billing asked again every retry_after, event:
 *                              confirmed (provisioned), the end; 503 streams_full when
 *                              [xmr402] streams are open already
 * The tier a bare 402 sells is [xmr402] default_tier; an agent asks for another with
 * ?tier=<id> or X-XMR402-Tier: <id>. The agent's address goes to billing, signed, for
 * its per-client challenge limit (xg_xmr402.h); it is bound to nothing else.
 *
 * Ownership: the per-request state hangs off gw_request.xmr402 and is freed by
 * xmr402_flow_request_free from the completion callback. */
#ifndef XMR402_FLOW_H
#define XMR402_FLOW_H

#include <stdbool.h>

#include "auth/auth.h"
#include "serve/request.h"
#include "state/tenants.h"

/* For server.c: the monerod path to serve when this request belongs to XMR402 (XMR402
 * enabled, an agent endpoint, and no credential or an XMR402 one); NULL otherwise. */
const char *xmr402_flow_applies(const struct gw_request *req, const struct auth_credential *cred);

/* Starts the conversation (the connection is already suspended). Returns false when the
 * answer is already in req (a malformed header, out of memory): the caller resumes. */
__attribute__((warn_unused_result)) bool xmr402_flow_begin(struct gw_request *req,
                                                           const struct auth_credential *cred);

/* True when the request is served from a pending allowance (server.c skips the quota:
 * billing counts the allowance). */
bool xmr402_flow_pending(const struct gw_request *req);

/* After the connection resumed: true (once) when billing provisioned the tenant and
 * the request is now to be served as *tenant. */
bool xmr402_flow_take_tenant(struct gw_request *req, struct tenant_row *tenant);

/* Hands each header of the XMR402 answer (challenge, credentials, Retry-After) to add. */
void xmr402_flow_each_header(const struct gw_request *req,
                             void (*add)(void *ctx, const char *name, const char *value),
                             void *ctx);

/* After the connection resumed: true when the answer is the v2.1 event stream (opened
 * here, then written from the loop's timers until it ends; *rc says what the front end
 * does now). False when it is no stream: the request goes on as before. */
bool xmr402_flow_stream_open(struct gw_request *req, enum front_result *rc);

void xmr402_flow_request_free(struct gw_request *req);

#endif
