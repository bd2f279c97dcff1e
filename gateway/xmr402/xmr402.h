/* xmr402 — the gateway's XMR402 rules, pure (no I/O): which requests are agent requests,
 * the Authorization: XMR402 parameters, and the challenge header. The conversation with
 * billing is in xmr402_flow.h.
 *
 * Agent endpoints are the monerod paths under /v1/ without a token: /v1/json_rpc,
 * /v1/get_height, … (a token segment starts with "xg_", which no monerod path does, see
 * token.h). There a request without a credential gets 402 and the challenge
 *     WWW-Authenticate: XMR402 address="<subaddress>", amount="<piconero>",
 *                       message="<nonce>", timestamp="<unix milliseconds>"
 * and retries with
 *     Authorization: XMR402 txid="<64 hex>", proof="<OutProofV…>"[, invoice="<uuid>"]
 * Parameter names are case-insensitive; values may be quoted-strings or tokens; each
 * parameter at most once; unknown parameters are ignored (the draft may grow).
 * The root monerod paths never create an invoice: stock wallets send credentials only
 * after a 401, so they keep getting 401 with Digest and Basic.
 *
 * Draft clients know 200, 402 (pay), 400 and 403 and nothing else, so billing's refusals
 * are mapped here (xmr402_refusal_of): a proof that shows nothing for the invoice is 403
 * INVALID_PROOF_OR_FUNDS_MISSING with no challenge (an agent that pays every 402 must not
 * pay again); "not visible yet" and "allowance spent" are a retry, never a 402. A client
 * that sends X-XMR402-Mode: confirmations keeps xmrgate's extended flow: 202 while its
 * payment confirms, and 402 with a challenge for the rest of an underpaid invoice. */
#ifndef GW_XMR402_H
#define GW_XMR402_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XMR402_TXID_LEN       64
#define XMR402_INVOICE_LEN    36
#define XMR402_PROOF_LIMIT    4096 /* the largest proof any configuration accepts */
#define XMR402_TIER_MAX       32
#define XMR402_CHALLENGE_SIZE 512
#define XMR402_MODE_HEADER    "X-XMR402-Mode"
#define XMR402_MODE_EXTENDED  "confirmations"
/* The draft's error names (its 400 and 403 bodies carry them as "code"), and the statuses
 * it answers with: 402 with a challenge, 403 for a proof that shows no payment, 400 for
 * credentials it cannot read. The gateway's registry rows of its own XMR402 errors
 * (serve/errors.c: payment_required, malformed_xmr402) agree: a unit test holds them. */
#define XMR402_DRAFT_MALFORMED  "INVALID_XMR402_FORMAT"
#define XMR402_DRAFT_REFUSED    "INVALID_PROOF_OR_FUNDS_MISSING"
#define XMR402_STATUS_CHALLENGE 402
#define XMR402_STATUS_REFUSED   403
#define XMR402_STATUS_MALFORMED 400
/* Ours, with X-XMR402-Mode: confirmations: the payment is seen, not yet confirmed. */
#define XMR402_STATUS_WAITING 202

struct xmr402_auth {
    char txid[XMR402_TXID_LEN + 1]; /* lower-cased */
    char proof[XMR402_PROOF_LIMIT + 1];
    char invoice[XMR402_INVOICE_LEN + 1]; /* "" when absent */
};

/* The monerod path an agent endpoint serves ("/json_rpc" for "/v1/json_rpc"), or NULL
 * when path is not an agent endpoint (no /v1/ prefix, a token segment, /v1/usage, or a
 * path monerod does not have: those keep their usual answers). Points into path. */
const char *xmr402_agent_path(const char *path);

/* Parses the parameters after "XMR402 " (params, not NUL-bounded beyond max_len). False
 * with a static reason in *detail for anything malformed, truncated or oversized: a
 * missing txid or proof, a txid that is not 64 hex digits, a proof that is not
 * "OutProofV" + base58 or longer than max_proof, an invoice that is not a UUID, a
 * repeated parameter, unbalanced quotes, control characters. */
__attribute__((warn_unused_result)) bool xmr402_parse_params(const char *params, size_t max_proof,
                                                             struct xmr402_auth *out,
                                                             const char **detail);

/* What the agent gets for a refusal from billing (its error code). */
enum xmr402_refusal {
    XMR402_REFUSE_FORBIDDEN, /* 403 with the reason, no challenge */
    XMR402_REFUSE_PAY_REST,  /* 402 with a challenge for what is missing (extended mode) */
    XMR402_REFUSE_RETRY,     /* billing's status (429/503) with Retry-After: not a purchase */
    XMR402_REFUSE_EXPIRED,   /* 402 with a fresh challenge, marked as a new purchase */
};

/* Pure: the answer for billing's error code (NULL: unknown, forbidden); `extended` for a
 * client in X-XMR402-Mode: confirmations. */
enum xmr402_refusal xmr402_refusal_of(const char *code, bool extended);

/* True when the X-XMR402-Mode value asks for the extended flow (case-insensitive). */
bool xmr402_mode_extended(const char *value);

/* The tenant id a pending allowance is limited under: negative (no real tenant has one),
 * the same for every request of one invoice. */
int64_t xmr402_pending_tenant_id(const char *invoice);

/* True for a scheme name that is XMR402 (case-insensitive). */
bool xmr402_scheme_is(const char *scheme);

/* True for a well-formed tier id (lower-case letters, digits, '-', '_'; 1..32). */
bool xmr402_tier_ok(const char *tier);

/* Writes the WWW-Authenticate value. False when a value cannot be sent as a quoted
 * string (empty, '"', '\', control characters) or buf is too small. */
__attribute__((warn_unused_result)) bool
xmr402_challenge_header(char *buf, size_t len, const char *address, const char *amount,
                        const char *message, int64_t timestamp);

/* Appends `, features="sse"` to a challenge header in buf (v2.1: the answer to this
 * request may be an event stream). False when buf is too small (buf is then unchanged). */
__attribute__((warn_unused_result)) bool xmr402_challenge_add_sse(char *buf, size_t len);

/* True when an Accept header value asks for text/event-stream: one of its media ranges is
 * exactly that type (case-insensitive, parameters allowed) without q=0. NULL: false. */
bool xmr402_accepts_stream(const char *accept);

#endif
