/* api_xmr402 — the billing half of the XMR402 agent flow, which gateway/xmr402/ calls, and
 * what its endpoints share:
 *
 *   POST /api/xmr402/challenge    a new XMR402 invoice to pay      (api_xmr402_challenge.c)
 *   POST /api/xmr402/verify       a payment's proof, and what it buys (api_xmr402_verify.c)
 *   GET  /api/xmr402/receipt-key  the key receipts are signed with (api_xmr402_receipt_key.c)
 *
 * An agent asks the gateway without credentials, the gateway asks billing for a challenge
 * and answers 402 with it; the agent pays the challenge's subaddress and sends the proof
 * of its transaction over the challenge's nonce, which the gateway relays to verify; the
 * invoice follows the same state machine as a web purchase (invoice.h, settle.h). */
#ifndef API_XMR402_H
#define API_XMR402_H

#include "api/api_shared.h"
#include "api/client_limit.h"
#include "invoice/invoice_row.h"
#include "xg_httpd.h"
#include "xg_pg.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* The invoice id (invoice_row.h), as the XMR402 answers read it. */
__attribute__((warn_unused_result)) enum api_load
api_xmr402_load_invoice(struct xg_pg *pg, const char *id, struct invoice_row *inv);

/* What is left to pay on it (0 once covered). */
int64_t api_xmr402_remaining(const struct invoice_row *inv);

/* The challenge an agent pays (new reference): what the gateway turns into
 * WWW-Authenticate and a body. */
json_t *api_xmr402_challenge_json(const struct api *api, const struct invoice_row *inv);

/* The client address billing's limiters count (out: at least 256 bytes): the agent's, when
 * the gateway vouches for it (its signed client header), else the request's. */
void api_xmr402_client_key(const struct xg_httpd_request *req, char *out, size_t len);

/* The network key (client_prefix.h, [clients] ipv4_network_prefix, ipv6_network_prefix) of
 * that client address: what a network's fair share of a global cap is counted by
 * (fair_share.h). Never empty: an address that is no IP counts as its own text. */
void api_xmr402_network_key(const struct xg_httpd_request *req, char out[CLIENT_PREFIX_KEY_SIZE]);

/* A token from table for this client (global: one bucket for all clients; what names the
 * requests in the refusal's message); false with the 429 queued in *mr. */
bool api_xmr402_take_limit(const struct xg_httpd_request *req, struct client_limit_table *table,
                           const char *what, bool global, enum xg_httpd_result *mr);

#endif
