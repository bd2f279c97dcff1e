/* hook_sign — see hook_sign.h. */
#include "hooks/hook_sign.h"

#include "xg_hex.h"

#include <inttypes.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECRET_LABEL "xmrgate webhook secret v1"

static bool hmac256(const void *key, size_t keylen, const void *data, size_t len, uint8_t out[32])
{
    unsigned int n = 0;
    return HMAC(EVP_sha256(), key, (int)keylen, data, len, out, &n) && n == 32;
}

bool hook_sign_secret(const uint8_t key[HOOK_SIGN_KEY_LEN], const char *invoice_id,
                      char out[HOOK_SIGN_SECRET_SIZE])
{
    char msg[sizeof SECRET_LABEL + 64];
    size_t idlen = strlen(invoice_id);
    if (idlen > sizeof msg - sizeof SECRET_LABEL)
        return false;
    memcpy(msg, SECRET_LABEL, sizeof SECRET_LABEL); /* the label's NUL separates */
    memcpy(msg + sizeof SECRET_LABEL, invoice_id, idlen);
    uint8_t raw[32];
    bool ok = hmac256(key, HOOK_SIGN_KEY_LEN, msg, sizeof SECRET_LABEL + idlen, raw);
    if (ok) {
        memcpy(out, "whsec_", 6);
        xg_hex_encode(raw, sizeof raw, out + 6);
    }
    OPENSSL_cleanse(raw, sizeof raw);
    return ok;
}

char *hook_sign_text(int64_t t, const char *body, size_t len, size_t *outlen)
{
    char prefix[32];
    int p = snprintf(prefix, sizeof prefix, "%" PRId64 ".", t);
    char *text = malloc((size_t)p + len + 1);
    if (!text)
        return NULL;
    memcpy(text, prefix, (size_t)p);
    memcpy(text + p, body, len);
    text[(size_t)p + len] = '\0';
    *outlen = (size_t)p + len;
    return text;
}

static bool mac_hex(const char *secret, int64_t t, const char *body, size_t len, char hex[65])
{
    size_t n;
    char *text = hook_sign_text(t, body, len, &n);
    uint8_t mac[32];
    bool ok = text && hmac256(secret, strlen(secret), text, n, mac);
    free(text);
    if (ok)
        xg_hex_encode(mac, sizeof mac, hex);
    return ok;
}

bool hook_sign_header(const char *secret, int64_t t, const char *body, size_t len,
                      char out[HOOK_SIGN_HEADER_SIZE])
{
    char hex[65];
    if (!mac_hex(secret, t, body, len, hex))
        return false;
    snprintf(out, HOOK_SIGN_HEADER_SIZE, "t=%" PRId64 ",v1=%s", t, hex);
    return true;
}

bool hook_sign_verify(const char *secret, const char *header, const char *body, size_t len,
                      int64_t now, int64_t tolerance)
{
    long long t;
    char given[65], want[65];
    int end = 0;
    if (sscanf(header, "t=%lld,v1=%64[0-9a-f]%n", &t, given, &end) != 2 || header[end] != '\0' ||
        strlen(given) != 64)
        return false;
    if ((int64_t)t > now + tolerance || (int64_t)t < now - tolerance)
        return false;
    if (!mac_hex(secret, (int64_t)t, body, len, want))
        return false;
    return CRYPTO_memcmp(given, want, 64) == 0;
}
