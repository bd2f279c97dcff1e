/* credentials — a tenant's new credential set as billing creates it: the secret token
 * (shown to the buyer once, never stored), the public handle (Digest/Basic user name),
 * and the two values stored at rest (SHA-256 of the token, the wrapped Digest HA1), both
 * as lower-case hex for SQL's decode($n, 'hex'). See token.h for the formats and why.
 *
 * Everything lives in the caller's struct; nothing allocates. cred_wipe clears the
 * token from memory once it has been handed out. */
#ifndef CREDENTIALS_H
#define CREDENTIALS_H

#include "token.h"

#include <stdbool.h>
#include <stdint.h>

#define CRED_HA1_WRAPPED_HEX_SIZE (2 * TOKEN_HA1_WRAPPED_LEN + 1)

struct cred {
    char token[TOKEN_TEXT_SIZE];
    char handle[TOKEN_HANDLE_SIZE];
    char token_hash_hex[TOKEN_HASH_HEX_SIZE];
    char ha1_wrapped_hex[CRED_HA1_WRAPPED_HEX_SIZE];
};

/* Draws a fresh token and handle and derives the stored values for `realm` under the
 * HA1 wrapping key. False only if the random source or OpenSSL fails. */
__attribute__((warn_unused_result)) bool
cred_new(struct cred *out, const uint8_t key[TOKEN_HA1_KEY_LEN], const char *realm);

/* As cred_new, with the token's 256 bits taken from seed instead of the random source
 * (the handle is still drawn at random). */
__attribute__((warn_unused_result)) bool cred_new_seeded(struct cred *out,
                                                         const uint8_t key[TOKEN_HA1_KEY_LEN],
                                                         const char *realm,
                                                         const uint8_t seed[TOKEN_RAW_LEN]);

/* The token seed of an idempotent purchase: HMAC-SHA256 under the server key of the
 * Idempotency-Key and the request's fingerprint. A replay of the same request derives
 * the same token, so it can be shown again without ever being stored; without the
 * server key nobody can derive it, and the key+body pair is as secret as the token. */
__attribute__((warn_unused_result)) bool cred_idempotent_seed(const uint8_t key[TOKEN_HA1_KEY_LEN],
                                                              const char *idempotency_key,
                                                              const char *fingerprint_hex,
                                                              uint8_t seed[TOKEN_RAW_LEN]);

/* Hex SHA-256 of a presented token, for looking a tenant up. False when the text is not
 * a well-formed token (a format check only) or OpenSSL fails. */
__attribute__((warn_unused_result)) bool cred_token_hash_hex(const char *token,
                                                             char out[TOKEN_HASH_HEX_SIZE]);

/* Decodes the configured 64-hex-digit HA1 wrapping key. */
__attribute__((warn_unused_result)) bool cred_parse_key(const char *hex,
                                                        uint8_t key[TOKEN_HA1_KEY_LEN]);

/* Zeroes the struct (the token is a secret). */
void cred_wipe(struct cred *c);

#endif
