/* token — tenant credentials: the secret token, the public handle, and what is stored.
 *
 * Text forms
 *   token   "xg_" + 43 base64url characters (RFC 4648 §5, no padding) = 46 characters,
 *           encoding 256 bits from RAND_bytes. Every character is URL-unreserved, so the
 *           token sits in a path (/v1/<token>/json_rpc), a Bearer header, a Basic password
 *           or a wallet's --daemon-login unchanged. The "xg_" prefix plus the fixed length
 *           tell it apart from any monerod path segment (json_rpc, get_info,
 *           getblocks.bin: lower-case words, never "xg_"), and let secret scanners and
 *           support staff recognise a leaked token. Only the canonical encoding is valid
 *           (the last character carries 4 bits; the 2 unused bits must be zero), so one
 *           token has exactly one text.
 *   handle  "t_" + 12 characters of lower-case base32 (a-z, 2-7) = 60 random bits. It is
 *           public (a user name, not a secret), unique in the tenants table, and is the
 *           Digest/Basic user name: a wallet runs with
 *               --daemon-login <handle>:<token>
 *           (the wallet splits at the first ':'; neither form contains one).
 *
 * What is stored at rest (tenants table), and why
 *   token_sha256  SHA-256 of the token text (32 bytes). Path, Bearer, API-key and Basic
 *                 credentials are checked by hashing the presented token and looking the
 *                 hash up. An unsalted fast hash is enough: the input has 256 bits of
 *                 entropy, so the hash cannot be inverted by search. Shell tools can
 *                 compute it too: printf %s "$token" | sha256sum.
 *   digest_ha1    The Digest key HA1 = MD5(handle ":" realm ":" token), wrapped with
 *                 AES-256-GCM under a server key (token_ha1_wrap, 45 bytes).
 *   Digest cannot be verified from a hash of the token: the server must hold HA1 itself,
 *   which is password-equivalent for Digest in our realm (not for the other schemes, which
 *   need the token). Stored in clear, a read-only database leak (a backup, an injected
 *   SELECT) would let anyone use every tenant's quota through Digest. Wrapped, that leak
 *   is worthless without the key, which lives only in the billing and gateway
 *   configuration. The alternative of deriving the Digest password from the token with a
 *   server HMAC was rejected: the wallet must then be given a second secret, and the
 *   database would still have to hold something HA1-equivalent. The wrap is bound to the
 *   handle (GCM associated data), so a wrapped HA1 copied to another row does not unwrap.
 *   Billing computes both values when it creates or rotates a token (the only time it
 *   sees the token) and writes them in one statement; the gateway unwraps HA1 once when a
 *   tenant row is loaded or changed and keeps it in memory. Because HA1 covers the realm,
 *   billing and every gateway replica must use the same realm, and changing it
 *   invalidates every stored digest_ha1 (tokens keep working for the other schemes).
 *
 * Everything here is pure except token_generate, token_handle_generate and
 * token_ha1_wrap, which draw from RAND_bytes. No function allocates but
 * token_ha1_unwrapper_new (freed by token_ha1_unwrapper_free); callers own all buffers. */
#ifndef TOKEN_H
#define TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOKEN_PREFIX          "xg_"
#define TOKEN_PREFIX_LEN      3
#define TOKEN_RAW_LEN         32 /* random bytes in a token */
#define TOKEN_TEXT_LEN        46 /* prefix + 43 base64url characters */
#define TOKEN_TEXT_SIZE       (TOKEN_TEXT_LEN + 1)
#define TOKEN_HASH_LEN        32 /* SHA-256 */
#define TOKEN_HASH_HEX_SIZE   (2 * TOKEN_HASH_LEN + 1)
#define TOKEN_HANDLE_PREFIX   "t_"
#define TOKEN_HANDLE_LEN      14 /* prefix + 12 base32 characters */
#define TOKEN_HANDLE_SIZE     (TOKEN_HANDLE_LEN + 1)
#define TOKEN_HA1_LEN         16                            /* MD5 */
#define TOKEN_HA1_KEY_LEN     32                            /* AES-256 */
#define TOKEN_HA1_WRAPPED_LEN (1 + 12 + TOKEN_HA1_LEN + 16) /* version, IV, ciphertext, tag */

/* Length of the unpadded base64url text of n bytes. */
#define TOKEN_B64URL_LEN(n) (((n)*4 + 2) / 3)

/* Draws 256 random bits and writes the token text. False only if RAND_bytes fails. */
__attribute__((warn_unused_result)) bool token_generate(char out[TOKEN_TEXT_SIZE]);

/* Writes the token text of the given 32 bytes (the deterministic half of token_generate). */
void token_format(const uint8_t raw[TOKEN_RAW_LEN], char out[TOKEN_TEXT_SIZE]);

/* True iff text[0..len) is a canonical token text. A format check only: it says nothing
 * about whether the token belongs to a tenant. */
bool token_looks_valid(const char *text, size_t len);

/* SHA-256 of the token text: the value stored in tenants.token_sha256. False only if
 * OpenSSL fails. */
__attribute__((warn_unused_result)) bool token_hash(const char *text, size_t len,
                                                    uint8_t out[TOKEN_HASH_LEN]);

/* SHA-256 of any bytes, with the algorithm fetched once per process (the request path
 * hashes on every request). False only if OpenSSL fails. */
__attribute__((warn_unused_result)) bool token_sha256_of(const void *data, size_t len,
                                                         uint8_t out[TOKEN_HASH_LEN]);

/* Constant-time equality of two token hashes. */
bool token_hash_equal(const uint8_t a[TOKEN_HASH_LEN], const uint8_t b[TOKEN_HASH_LEN]);

/* Lower-case hex of a hash (for SQL: decode($1, 'hex')). */
void token_hash_hex(const uint8_t hash[TOKEN_HASH_LEN], char out[TOKEN_HASH_HEX_SIZE]);

/* Draws a new random handle. False only if RAND_bytes fails. Uniqueness is the
 * database's job (a unique index; billing draws again on a conflict). */
__attribute__((warn_unused_result)) bool token_handle_generate(char out[TOKEN_HANDLE_SIZE]);

/* True iff text[0..len) is a well-formed handle. */
bool token_handle_looks_valid(const char *text, size_t len);

/* HA1 = MD5(handle ":" realm ":" token), raw 16 bytes. False only if OpenSSL fails. */
__attribute__((warn_unused_result)) bool token_digest_ha1(const char *handle, const char *realm,
                                                          const char *token,
                                                          uint8_t out[TOKEN_HA1_LEN]);

/* Wraps HA1 for storage: 0x01 || IV(12, random) || AES-256-GCM(key, HA1) || tag(16), with
 * the handle as associated data. False if RAND_bytes or OpenSSL fails. */
__attribute__((warn_unused_result)) bool token_ha1_wrap(const uint8_t key[TOKEN_HA1_KEY_LEN],
                                                        const char *handle,
                                                        const uint8_t ha1[TOKEN_HA1_LEN],
                                                        uint8_t out[TOKEN_HA1_WRAPPED_LEN]);

/* Unwraps a stored HA1. False if the version, key, handle or any byte does not match;
 * ha1 is then zeroed. */
__attribute__((warn_unused_result)) bool
token_ha1_unwrap(const uint8_t key[TOKEN_HA1_KEY_LEN], const char *handle,
                 const uint8_t wrapped[TOKEN_HA1_WRAPPED_LEN], uint8_t ha1[TOKEN_HA1_LEN]);

/* The same unwrap for many rows under one key (the gateway's full tenant load): the
 * AES-256 key schedule and the GCM hash key are set up once, in token_ha1_unwrapper_new,
 * and each token_ha1_unwrap_with sets only the row's IV. Setting them up per row was a
 * fifth of a million-tenant load's CPU time. An unwrapper is used by one thread at a
 * time; token_ha1_unwrapper_free cleanses it. NULL when OpenSSL fails. */
struct token_ha1_unwrapper;
struct token_ha1_unwrapper *token_ha1_unwrapper_new(const uint8_t key[TOKEN_HA1_KEY_LEN]);
void token_ha1_unwrapper_free(struct token_ha1_unwrapper *u);
/* As token_ha1_unwrap, with the unwrapper's key: the same answer for every input. */
__attribute__((warn_unused_result)) bool
token_ha1_unwrap_with(struct token_ha1_unwrapper *u, const char *handle,
                      const uint8_t wrapped[TOKEN_HA1_WRAPPED_LEN], uint8_t ha1[TOKEN_HA1_LEN]);

/* A key rotation ([auth] ha1_key_previous, docs/OPERATIONS.md "Rotating the HA1 key"):
 * the current key's unwrapper and, while rows wrapped under the old key remain, the
 * previous one's (NULL when no rotation is under way). One unwrapper per key, each set up
 * once; the caller owns both. */
struct token_ha1_keys {
    struct token_ha1_unwrapper *current;
    struct token_ha1_unwrapper *previous; /* may be NULL */
};

/* Which key of a token_ha1_keys unwrapped a stored HA1. */
enum token_ha1_key {
    TOKEN_HA1_KEY_NONE,     /* neither (another key, a copied row, a damaged value) */
    TOKEN_HA1_KEY_CURRENT,  /* the current key */
    TOKEN_HA1_KEY_PREVIOUS, /* the previous key: the row awaits rewrap-ha1 */
};

/* Unwraps with the current key, then the previous one; ha1 is zeroed when neither
 * unwraps. The same answer for every input as token_ha1_unwrap under each key. */
__attribute__((warn_unused_result)) enum token_ha1_key
token_ha1_unwrap_either(const struct token_ha1_keys *keys, const char *handle,
                        const uint8_t wrapped[TOKEN_HA1_WRAPPED_LEN], uint8_t ha1[TOKEN_HA1_LEN]);

/* base64url without padding; out must hold TOKEN_B64URL_LEN(n) + 1 bytes (NUL-terminated).
 * Returns the text length. */
size_t token_b64url_encode(const uint8_t *in, size_t n, char *out);

/* Strict decoders: any character outside the alphabet, a wrong length, wrong padding or
 * non-zero unused trailing bits is refused. token_b64url_decode takes the unpadded URL
 * alphabet; token_b64_decode the standard alphabet with the '=' padding that RFC 7617
 * (Basic) uses. On success *outlen bytes were written (at most cap). */
__attribute__((warn_unused_result)) bool token_b64url_decode(const char *in, size_t n, uint8_t *out,
                                                             size_t cap, size_t *outlen);
__attribute__((warn_unused_result)) bool token_b64_decode(const char *in, size_t n, uint8_t *out,
                                                          size_t cap, size_t *outlen);

#endif
