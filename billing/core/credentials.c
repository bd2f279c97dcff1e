/* credentials — see credentials.h. */
#include "core/credentials.h"

#include "xg_hex.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>

#define IDEMPOTENT_LABEL "xmrgate-idempotent-token-v1"

static bool derive(struct cred *out, const uint8_t key[TOKEN_HA1_KEY_LEN], const char *realm,
                   const uint8_t *seed)
{
    uint8_t hash[TOKEN_HASH_LEN], ha1[TOKEN_HA1_LEN], wrapped[TOKEN_HA1_WRAPPED_LEN];
    bool ok = false;
    memset(out, 0, sizeof *out);
    if (seed)
        token_format(seed, out->token);
    else if (!token_generate(out->token))
        goto out;
    if (!token_handle_generate(out->handle))
        goto out;
    if (!token_hash(out->token, TOKEN_TEXT_LEN, hash))
        goto out;
    if (!token_digest_ha1(out->handle, realm, out->token, ha1))
        goto out;
    if (!token_ha1_wrap(key, out->handle, ha1, wrapped))
        goto out;
    token_hash_hex(hash, out->token_hash_hex);
    xg_hex_encode(wrapped, sizeof wrapped, out->ha1_wrapped_hex);
    ok = true;
out:
    OPENSSL_cleanse(ha1, sizeof ha1);
    if (!ok)
        cred_wipe(out);
    return ok;
}

bool cred_new(struct cred *out, const uint8_t key[TOKEN_HA1_KEY_LEN], const char *realm)
{
    return derive(out, key, realm, NULL);
}

bool cred_new_seeded(struct cred *out, const uint8_t key[TOKEN_HA1_KEY_LEN], const char *realm,
                     const uint8_t seed[TOKEN_RAW_LEN])
{
    return derive(out, key, realm, seed);
}

bool cred_idempotent_seed(const uint8_t key[TOKEN_HA1_KEY_LEN], const char *idempotency_key,
                          const char *fingerprint_hex, uint8_t seed[TOKEN_RAW_LEN])
{
    /* label NUL key NUL fingerprint: the NULs keep the fields from sliding into each other */
    size_t nl = sizeof IDEMPOTENT_LABEL, nk = strlen(idempotency_key) + 1,
           nf = strlen(fingerprint_hex);
    unsigned char *msg = malloc(nl + nk + nf);
    unsigned int outlen = 0;
    if (!msg)
        return false;
    memcpy(msg, IDEMPOTENT_LABEL, nl);
    memcpy(msg + nl, idempotency_key, nk);
    memcpy(msg + nl + nk, fingerprint_hex, nf);
    bool ok = HMAC(EVP_sha256(), key, TOKEN_HA1_KEY_LEN, msg, nl + nk + nf, seed, &outlen) &&
              outlen == TOKEN_RAW_LEN;
    free(msg);
    return ok;
}

bool cred_token_hash_hex(const char *token, char out[TOKEN_HASH_HEX_SIZE])
{
    uint8_t hash[TOKEN_HASH_LEN];
    size_t len = strlen(token);
    if (!token_looks_valid(token, len) || !token_hash(token, len, hash))
        return false;
    token_hash_hex(hash, out);
    return true;
}

bool cred_parse_key(const char *hex, uint8_t key[TOKEN_HA1_KEY_LEN])
{
    return hex && xg_hex_decode(hex, key, TOKEN_HA1_KEY_LEN);
}

void cred_wipe(struct cred *c)
{
    OPENSSL_cleanse(c, sizeof *c);
}
