/* xg_xmr402 — see xg_xmr402.h. */
#include "xg_xmr402.h"

#include "xg_hex.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>

#define CLIENT_LABEL "xmrgate-xmr402-client-v1"

bool xg_xmr402_client_sig(const uint8_t key[XG_XMR402_KEY_LEN], const char *client,
                          char out[XG_XMR402_SIG_HEX_SIZE])
{
    uint8_t mac[32];
    unsigned int n = 0;
    size_t nl = sizeof CLIENT_LABEL, nc = strlen(client);
    unsigned char msg[sizeof CLIENT_LABEL + 256];
    if (nc > 255)
        return false;
    memcpy(msg, CLIENT_LABEL, nl);
    memcpy(msg + nl, client, nc);
    if (!HMAC(EVP_sha256(), key, XG_XMR402_KEY_LEN, msg, nl + nc, mac, &n) || n != sizeof mac)
        return false;
    xg_hex_encode(mac, sizeof mac, out);
    return true;
}

bool xg_xmr402_client_sig_ok(const uint8_t key[XG_XMR402_KEY_LEN], const char *client,
                             const char *sig)
{
    char want[XG_XMR402_SIG_HEX_SIZE];
    if (!client || !sig || strlen(sig) != XG_XMR402_SIG_HEX_SIZE - 1 ||
        !xg_xmr402_client_sig(key, client, want))
        return false;
    return CRYPTO_memcmp(want, sig, XG_XMR402_SIG_HEX_SIZE - 1) == 0;
}
