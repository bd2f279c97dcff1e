/* xmr402 — the gateway's XMR402 rules, pure (no I/O): which requests are agent requests,
 * the Authorization: XMR402 parameters, and the challenge header. The conversation with
 * billing is in xmr402_flow.h.
 *
 * Agent endpoints are the monerod paths under /v1/ without a token: /v1/json_rpc,
 * /v1/get_height, … (a token segment starts with "xg_", which no monerod path does, see
 * token.h). There a request without a credential gets 402 and the challenge
 *     WWW-Authenticate: XMR402 address="<subaddress>", amount="<piconero>",
 *                       message="<nonce>", timestamp="<unix seconds>"
 * and retries with
 *     Authorization: XMR402 txid="<64 hex>", proof="<OutProofV…>"[, invoice="<uuid>"]
 * Parameter names are case-insensitive; values may be quoted-strings or tokens; each
 * parameter at most once; unknown parameters are ignored (the draft may grow).
 * The root monerod paths never create an invoice: stock wallets send credentials only
 * after a 401, so they keep getting 401 with Digest and Basic. */
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

/* True for a scheme name that is XMR402 (case-insensitive). */
bool xmr402_scheme_is(const char *scheme);

/* True for a well-formed tier id (lower-case letters, digits, '-', '_'; 1..32). */
bool xmr402_tier_ok(const char *tier);

/* Writes the WWW-Authenticate value. False when a value cannot be sent as a quoted
 * string (empty, '"', '\', control characters) or buf is too small. */
__attribute__((warn_unused_result)) bool
xmr402_challenge_header(char *buf, size_t len, const char *address, const char *amount,
                        const char *message, int64_t timestamp);

#endif
