/* bl_xmr402 — billing's XMR402 rules that need no database or wallet: the challenge nonce,
 * the agent's token, and the signed receipt. The endpoints are in api_xmr402*.c.
 *
 * The token is derived, not stored. An agent's token is
 *     token = "xg_" || base64url(HMAC-SHA256(token_key, label || NUL || nonce))
 * where nonce is the invoice's random challenge nonce. Billing can therefore hand the
 * same token out again each time a valid proof is presented (the same proof twice gives
 * the same credentials, not a second tenant) while the database holds only its SHA-256
 * and the wrapped HA1, as for every other tenant. The nonce is public (it is the
 * challenge's message) but useless without the server key; a database leak alone yields
 * no token. token_key is billing's own ([billing] token_key, bl_keys.h); invoices from
 * before it existed were derived under ha1_key, and billing still derives those. A tenant
 * that rotated its token is no longer its proof's (api_xmr402_verify.c answers
 * credentials_rotated).
 *
 * Receipts. A receipt is  base64url(payload) "." base64url(Ed25519 signature over the
 * payload bytes), payload being compact JSON with sorted keys:
 *     {"amount":"<piconero paid>","handle":"t_…","invoice":"<uuid>","issued_at":<unix>,
 *      "tier":"…","txid":"<hex>","v":1}
 * issued_at is the provisioning time, so a receipt asked for twice is the same bytes
 * (Ed25519 is deterministic). The public key is published at GET /api/xmr402/receipt-key.
 *
 * Ownership: bl_xmr402_receipt_key_* owns an OpenSSL key (free with bl_xmr402_receipt_key_free);
 * bl_xmr402_receipt_sign returns malloc'd text (free()); everything else writes into the
 * caller's buffers. */
#ifndef BL_XMR402_H
#define BL_XMR402_H

#include "token.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BL_XMR402_NONCE_BYTES     16
#define BL_XMR402_NONCE_SIZE      (2 * BL_XMR402_NONCE_BYTES + 1)
#define BL_XMR402_ED25519_LEN     32
#define BL_XMR402_PUBLIC_HEX_SIZE (2 * BL_XMR402_ED25519_LEN + 1)
/* The draft version the challenge body names ("version"), and the verify body's "mode" of
 * a client that waits through 202 itself (the gateway's X-XMR402-Mode: confirmations). */
#define BL_XMR402_DRAFT_VERSION      "2.0"
#define BL_XMR402_MODE_CONFIRMATIONS "confirmations"

/* A fresh challenge nonce: 32 lower-case hex digits. False only if RAND_bytes fails. */
__attribute__((warn_unused_result)) bool bl_xmr402_nonce_generate(char out[BL_XMR402_NONCE_SIZE]);

/* The token seed of an XMR402 invoice (see above). */
__attribute__((warn_unused_result)) bool bl_xmr402_token_seed(const uint8_t key[TOKEN_HA1_KEY_LEN],
                                                              const char *nonce,
                                                              uint8_t seed[TOKEN_RAW_LEN]);

/* The receipt seed when none is configured: HMAC-SHA256(key, label), key being
 * [billing] token_key (before it existed: ha1_key, whose public key billing can still list
 * as retired). */
__attribute__((warn_unused_result)) bool
bl_xmr402_receipt_seed_derive(const uint8_t key[TOKEN_HA1_KEY_LEN],
                              uint8_t seed[BL_XMR402_ED25519_LEN]);

struct bl_xmr402_receipt_key;

/* An Ed25519 private key from its 32-byte seed; NULL if OpenSSL fails. */
struct bl_xmr402_receipt_key *bl_xmr402_receipt_key_new(const uint8_t seed[BL_XMR402_ED25519_LEN]);
void bl_xmr402_receipt_key_free(struct bl_xmr402_receipt_key *k);

/* The raw public key as lower-case hex. */
__attribute__((warn_unused_result)) bool
bl_xmr402_receipt_public_hex(const struct bl_xmr402_receipt_key *k,
                             char out[BL_XMR402_PUBLIC_HEX_SIZE]);

struct bl_xmr402_receipt {
    const char *invoice, *txid, *handle, *tier;
    int64_t amount;    /* piconero */
    int64_t issued_at; /* unix seconds */
};

/* The signed receipt text (malloc'd), or NULL when out of memory or OpenSSL fails. */
char *bl_xmr402_receipt_sign(const struct bl_xmr402_receipt_key *k,
                             const struct bl_xmr402_receipt *r);

/* Checks a receipt against a raw public key (64 hex digits). On success returns the
 * payload (new reference); NULL when the text, the key or the signature is wrong. */
json_t *bl_xmr402_receipt_verify(const char *public_hex, const char *text);

#endif
