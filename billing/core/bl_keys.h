/* bl_keys — billing's two secrets, and which one a rule uses (docs/SECURITY.md, "Key map").
 *
 *   ha1      [gateway] ha1_key: shared with every gateway replica, which must verify what
 *            billing writes. It wraps each tenant's Digest HA1 (token.h) and MACs the
 *            client address the gateway forwards with an XMR402 proof (xg_xmr402.h).
 *   ha1_previous  [gateway] ha1_key_previous, set only during a rotation of ha1_key
 *            (docs/OPERATIONS.md): nothing is wrapped or signed with it; rewrap-ha1
 *            rewrites what it wrapped, and a client address MAC under it is accepted.
 *   token    [billing] token_key: billing's alone, never in a gateway's configuration.
 *            It derives the tokens billing can hand out again without storing them (an
 *            idempotent purchase's, an XMR402 purchase's) and, when [xmr402] receipt_key
 *            is empty, the receipt signing seed, and when [webhooks] secret_key is empty,
 *            the webhook signing key.
 *
 * Before token_key existed, ha1_key derived those tokens too, so a database dump plus any
 * gateway's configuration gave them all. Tokens issued then stay valid (the gateways check
 * stored hashes, never a derivation); to hand one out again, billing derives it under
 * token_key and, when that does not give the hash the invoice stored, under ha1_key
 * (bl_keys_rederive). New rows are always derived under token_key.
 *
 * Pure but for OpenSSL's HMAC and SHA-256; nothing allocates. */
#ifndef BL_KEYS_H
#define BL_KEYS_H

#include "token.h"

#include <stdbool.h>
#include <stdint.h>

#define BL_KEYS_LEN TOKEN_HA1_KEY_LEN

struct bl_keys {
    uint8_t ha1[BL_KEYS_LEN];
    uint8_t ha1_previous[BL_KEYS_LEN];
    bool has_ha1_previous;
    uint8_t token[BL_KEYS_LEN];
};

/* Decodes both keys (64 hex digits each). False when either is malformed, or when they are
 * equal: a token_key equal to ha1_key would hand the gateways the derivation again. */
__attribute__((warn_unused_result)) bool bl_keys_parse(struct bl_keys *k, const char *ha1_hex,
                                                       const char *token_hex);

/* Sets the previous HA1 key (64 hex digits; "" or NULL: none). False when it is
 * malformed or equal to the current ha1 or the token key; k is then left without one. */
__attribute__((warn_unused_result)) bool bl_keys_parse_previous(struct bl_keys *k,
                                                                const char *ha1_previous_hex);

/* True when sig is the gateway's MAC of client (xg_xmr402.h) under the current HA1 key or,
 * during a rotation, the previous one: replicas still on the old key keep their agents'
 * addresses counted as theirs. */
bool bl_keys_client_sig_ok(const struct bl_keys *k, const char *client, const char *sig);

/* Zeroes all keys. */
void bl_keys_wipe(struct bl_keys *k);

/* A token derivation: writes the 32-byte seed of the token under key for ctx (the nonce,
 * the Idempotency-Key and fingerprint). False only when it cannot (bad ctx, OpenSSL). */
typedef bool (*bl_keys_seed_fn)(const uint8_t key[BL_KEYS_LEN], const void *ctx,
                                uint8_t seed[TOKEN_RAW_LEN]);

/* Which key derived a stored token. */
enum bl_keys_which {
    BL_KEYS_NONE,       /* neither: the row was not derived (or under another key) */
    BL_KEYS_TOKEN,      /* [billing] token_key: every row issued since it exists */
    BL_KEYS_LEGACY_HA1, /* [gateway] ha1_key: a row issued before token_key */
};

/* Derives the token of ctx under token_key, then under ha1_key, and stops at the first
 * whose SHA-256 is stored_hash_hex (lower-case hex, as the invoices table gives it). On a
 * match the token text is in out; otherwise out is zeroed. */
enum bl_keys_which bl_keys_rederive(const struct bl_keys *k, bl_keys_seed_fn seed_fn,
                                    const void *ctx, const char *stored_hash_hex,
                                    char out[TOKEN_TEXT_SIZE]);

/* The webhook signing key ([webhooks] secret_key when it is set, else this, hook_sign.h):
 * HMAC-SHA256(token_key, "xmrgate webhook key v1"). */
__attribute__((warn_unused_result)) bool
bl_keys_hook_key_derive(const uint8_t token_key[BL_KEYS_LEN], uint8_t key[BL_KEYS_LEN]);

/* The name of a bl_keys_which, for logs ("none", "token_key", "ha1_key"). */
const char *bl_keys_which_name(enum bl_keys_which w);

#endif
