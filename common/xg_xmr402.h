/* xg_xmr402 — what the gateway and billing share for XMR402 (pure but for OpenSSL).
 *
 * Challenges are rate-limited per client address in billing, but billing sees the
 * gateway's address, not the agent's. The gateway therefore names the agent's address
 * in X-Xmrgate-Client and vouches for it with X-Xmrgate-Client-Sig, an HMAC-SHA256 under
 * the HA1 wrapping key both daemons already hold. Billing trusts the named address only
 * when the signature matches; anyone else calling billing directly is limited by their
 * own address. Nothing allocates; callers own all buffers. */
#ifndef XG_XMR402_H
#define XG_XMR402_H

#include <stdbool.h>
#include <stdint.h>

#define XG_XMR402_KEY_LEN      32
#define XG_XMR402_SIG_HEX_SIZE 65
#define XG_XMR402_CLIENT_HDR   "X-Xmrgate-Client"
#define XG_XMR402_SIG_HDR      "X-Xmrgate-Client-Sig"

/* Hex HMAC-SHA256(key, label || client). False only if OpenSSL fails. */
__attribute__((warn_unused_result)) bool xg_xmr402_client_sig(const uint8_t key[XG_XMR402_KEY_LEN],
                                                              const char *client,
                                                              char out[XG_XMR402_SIG_HEX_SIZE]);

/* Constant-time check of a presented signature (NULL or malformed: false). */
__attribute__((warn_unused_result)) bool
xg_xmr402_client_sig_ok(const uint8_t key[XG_XMR402_KEY_LEN], const char *client, const char *sig);

#endif
