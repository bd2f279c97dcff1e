/* hook_sign — the webhook signing secret and signature, pure (OpenSSL's HMAC, no I/O).
 *
 * Secret. Each invoice with a webhook_url has its own secret, shown once in the answer
 * that creates the invoice (and again to a replay of that same request under its
 * Idempotency-Key, as the token is). It is not stored: billing derives it whenever it
 * signs, as "whsec_" followed by the hex of HMAC-SHA256(K, "xmrgate webhook secret v1" ‖
 * 0x00 ‖ invoice id), where K is [webhooks] secret_key (64 hex digits) or, when that is
 * empty, HMAC-SHA256([billing] token_key, "xmrgate webhook key v1") (bl_keys_hook_key_derive,
 * bl_keys.h, which bl_config_load applies). A database dump thus
 * reveals no secret; changing the key changes every secret (receivers must then be given
 * new ones, so keep it fixed).
 *
 * Signature. A delivery carries `Xmrgate-Signature: t=<unix seconds>,v1=<hex>` where hex is
 * HMAC-SHA256 keyed with the secret text (its ASCII bytes, "whsec_" included) over
 * "<t>.<body>", the body being the exact bytes of the request body. A receiver recomputes
 * it, compares in constant time, and refuses a t farther than its tolerance (5 minutes is
 * a good one) from its own clock: a captured delivery cannot be replayed later. */
#ifndef HOOK_SIGN_H
#define HOOK_SIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOOK_SIGN_KEY_LEN     32
#define HOOK_SIGN_SECRET_SIZE (6 + 64 + 1) /* "whsec_" + 64 hex + NUL */
/* "t=" + up to 20 digits + ",v1=" + 64 hex + NUL */
#define HOOK_SIGN_HEADER_SIZE 96

/* The invoice's secret text into out. */
__attribute__((warn_unused_result)) bool hook_sign_secret(const uint8_t key[HOOK_SIGN_KEY_LEN],
                                                          const char *invoice_id,
                                                          char out[HOOK_SIGN_SECRET_SIZE]);

/* The text that is signed, "<t>.<body>", into out (malloc'd, NUL-terminated; *outlen its
 * length). NULL when out of memory. */
char *hook_sign_text(int64_t t, const char *body, size_t len, size_t *outlen);

/* The header value "t=<t>,v1=<hex>" into out. */
__attribute__((warn_unused_result)) bool hook_sign_header(const char *secret, int64_t t,
                                                          const char *body, size_t len,
                                                          char out[HOOK_SIGN_HEADER_SIZE]);

/* What a receiver does: true when header is a valid signature of body under secret and its
 * t lies within tolerance seconds of now. */
bool hook_sign_verify(const char *secret, const char *header, const char *body, size_t len,
                      int64_t now, int64_t tolerance);

#endif
