/* bl_xmr402 — see bl_xmr402.h. */
#include "xmr402/bl_xmr402.h"

#include "xg_hex.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_LABEL   "xmrgate-xmr402-token-v1"
#define RECEIPT_LABEL "xmrgate-xmr402-receipt-key-v1"
#define SIG_LEN       64
#define PAYLOAD_MAX   4096

struct bl_xmr402_receipt_key {
    EVP_PKEY *pkey;
};

bool bl_xmr402_nonce_generate(char out[BL_XMR402_NONCE_SIZE])
{
    uint8_t raw[BL_XMR402_NONCE_BYTES];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return false;
    xg_hex_encode(raw, sizeof raw, out);
    return true;
}

static bool hmac_label(const uint8_t key[TOKEN_HA1_KEY_LEN], const char *label, const char *data,
                       uint8_t out[32])
{
    size_t nl = strlen(label) + 1, nd = data ? strlen(data) : 0;
    unsigned char *msg = malloc(nl + nd + 1);
    unsigned int n = 0;
    if (!msg)
        return false;
    memcpy(msg, label, nl);
    if (nd)
        memcpy(msg + nl, data, nd);
    bool ok = HMAC(EVP_sha256(), key, TOKEN_HA1_KEY_LEN, msg, nl + nd, out, &n) && n == 32;
    OPENSSL_cleanse(msg, nl + nd);
    free(msg);
    return ok;
}

bool bl_xmr402_token_seed(const uint8_t key[TOKEN_HA1_KEY_LEN], const char *nonce,
                          uint8_t seed[TOKEN_RAW_LEN])
{
    return nonce && *nonce && hmac_label(key, TOKEN_LABEL, nonce, seed);
}

bool bl_xmr402_receipt_seed_derive(const uint8_t key[TOKEN_HA1_KEY_LEN],
                                   uint8_t seed[BL_XMR402_ED25519_LEN])
{
    return hmac_label(key, RECEIPT_LABEL, NULL, seed);
}

struct bl_xmr402_receipt_key *bl_xmr402_receipt_key_new(const uint8_t seed[BL_XMR402_ED25519_LEN])
{
    struct bl_xmr402_receipt_key *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, BL_XMR402_ED25519_LEN);
    if (!k->pkey) {
        free(k);
        return NULL;
    }
    return k;
}

void bl_xmr402_receipt_key_free(struct bl_xmr402_receipt_key *k)
{
    if (!k)
        return;
    EVP_PKEY_free(k->pkey);
    free(k);
}

bool bl_xmr402_receipt_public_hex(const struct bl_xmr402_receipt_key *k,
                                  char out[BL_XMR402_PUBLIC_HEX_SIZE])
{
    uint8_t pub[BL_XMR402_ED25519_LEN];
    size_t len = sizeof pub;
    if (EVP_PKEY_get_raw_public_key(k->pkey, pub, &len) != 1 || len != sizeof pub)
        return false;
    xg_hex_encode(pub, sizeof pub, out);
    return true;
}

/* Ed25519 is one-shot: EVP_DigestSign with no digest. */
static bool ed25519_sign(EVP_PKEY *pkey, const char *msg, size_t len, uint8_t sig[SIG_LEN])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    size_t siglen = SIG_LEN;
    bool ok = ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, pkey) == 1 &&
              EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)msg, len) == 1 &&
              siglen == SIG_LEN;
    EVP_MD_CTX_free(ctx);
    return ok;
}

char *bl_xmr402_receipt_sign(const struct bl_xmr402_receipt_key *k,
                             const struct bl_xmr402_receipt *r)
{
    char amount[24], *payload = NULL, *out = NULL;
    uint8_t sig[SIG_LEN];
    snprintf(amount, sizeof amount, "%lld", (long long)r->amount);
    json_t *doc = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:i}", "amount", amount, "handle",
                            r->handle, "invoice", r->invoice, "issued_at", (json_int_t)r->issued_at,
                            "tier", r->tier, "txid", r->txid, "v", 1);
    if (!doc)
        return NULL;
    payload = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(doc);
    if (!payload || !ed25519_sign(k->pkey, payload, strlen(payload), sig))
        goto out;
    size_t plen = strlen(payload);
    out = malloc(TOKEN_B64URL_LEN(plen) + 1 + TOKEN_B64URL_LEN(SIG_LEN) + 1);
    if (!out)
        goto out;
    size_t n = token_b64url_encode((const uint8_t *)payload, plen, out);
    out[n++] = '.';
    token_b64url_encode(sig, SIG_LEN, out + n);
out:
    free(payload);
    return out;
}

json_t *bl_xmr402_receipt_verify(const char *public_hex, const char *text)
{
    uint8_t pub[BL_XMR402_ED25519_LEN], sig[SIG_LEN], payload[PAYLOAD_MAX];
    size_t plen = 0, slen = 0;
    const char *dot = text ? strchr(text, '.') : NULL;
    if (!dot || !public_hex || !xg_hex_decode(public_hex, pub, sizeof pub))
        return NULL;
    if (!token_b64url_decode(text, (size_t)(dot - text), payload, sizeof payload - 1, &plen) ||
        !token_b64url_decode(dot + 1, strlen(dot + 1), sig, sizeof sig, &slen) || slen != SIG_LEN)
        return NULL;
    EVP_PKEY *pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, sizeof pub);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = pkey && ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pkey) == 1 &&
              EVP_DigestVerify(ctx, sig, SIG_LEN, payload, plen) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(pkey);
    if (!ok)
        return NULL;
    return json_loadb((const char *)payload, plen, JSON_REJECT_DUPLICATES, NULL);
}
