/* bl_keys — see bl_keys.h. */
#include "core/bl_keys.h"

#include "xg_hex.h"
#include "xg_xmr402.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>

#define HOOK_KEY_LABEL "xmrgate webhook key v1"

bool bl_keys_parse(struct bl_keys *k, const char *ha1_hex, const char *token_hex)
{
    memset(k, 0, sizeof *k);
    bool ok = ha1_hex && token_hex && xg_hex_decode(ha1_hex, k->ha1, sizeof k->ha1) &&
              xg_hex_decode(token_hex, k->token, sizeof k->token) &&
              CRYPTO_memcmp(k->ha1, k->token, BL_KEYS_LEN) != 0;
    if (!ok)
        bl_keys_wipe(k);
    return ok;
}

bool bl_keys_parse_previous(struct bl_keys *k, const char *ha1_previous_hex)
{
    OPENSSL_cleanse(k->ha1_previous, sizeof k->ha1_previous);
    k->has_ha1_previous = false;
    if (!ha1_previous_hex || !ha1_previous_hex[0])
        return true;
    bool ok = xg_hex_decode(ha1_previous_hex, k->ha1_previous, sizeof k->ha1_previous) &&
              CRYPTO_memcmp(k->ha1_previous, k->ha1, BL_KEYS_LEN) != 0 &&
              CRYPTO_memcmp(k->ha1_previous, k->token, BL_KEYS_LEN) != 0;
    if (!ok)
        OPENSSL_cleanse(k->ha1_previous, sizeof k->ha1_previous);
    k->has_ha1_previous = ok;
    return ok;
}

bool bl_keys_client_sig_ok(const struct bl_keys *k, const char *client, const char *sig)
{
    return xg_xmr402_client_sig_ok(k->ha1, client, sig) ||
           (k->has_ha1_previous && xg_xmr402_client_sig_ok(k->ha1_previous, client, sig));
}

void bl_keys_wipe(struct bl_keys *k)
{
    OPENSSL_cleanse(k, sizeof *k);
}

/* True when the token of ctx under key hashes to stored_hash_hex; the token is in out. */
static bool derives(const uint8_t key[BL_KEYS_LEN], bl_keys_seed_fn seed_fn, const void *ctx,
                    const char *stored_hash_hex, char out[TOKEN_TEXT_SIZE])
{
    uint8_t seed[TOKEN_RAW_LEN], hash[TOKEN_HASH_LEN], stored[TOKEN_HASH_LEN];
    bool ok = xg_hex_decode(stored_hash_hex, stored, sizeof stored) && seed_fn(key, ctx, seed);
    if (ok) {
        token_format(seed, out);
        ok = token_hash(out, TOKEN_TEXT_LEN, hash) && token_hash_equal(hash, stored);
    }
    OPENSSL_cleanse(seed, sizeof seed);
    return ok;
}

enum bl_keys_which bl_keys_rederive(const struct bl_keys *k, bl_keys_seed_fn seed_fn,
                                    const void *ctx, const char *stored_hash_hex,
                                    char out[TOKEN_TEXT_SIZE])
{
    if (stored_hash_hex && derives(k->token, seed_fn, ctx, stored_hash_hex, out))
        return BL_KEYS_TOKEN;
    if (stored_hash_hex && derives(k->ha1, seed_fn, ctx, stored_hash_hex, out))
        return BL_KEYS_LEGACY_HA1;
    OPENSSL_cleanse(out, TOKEN_TEXT_SIZE);
    return BL_KEYS_NONE;
}

bool bl_keys_hook_key_derive(const uint8_t token_key[BL_KEYS_LEN], uint8_t key[BL_KEYS_LEN])
{
    unsigned int n = 0;
    static const char label[] = HOOK_KEY_LABEL;
    return HMAC(EVP_sha256(), token_key, BL_KEYS_LEN, (const unsigned char *)label,
                sizeof label - 1, key, &n) &&
           n == BL_KEYS_LEN;
}

const char *bl_keys_which_name(enum bl_keys_which w)
{
    switch (w) {
    case BL_KEYS_TOKEN:
        return "token_key";
    case BL_KEYS_LEGACY_HA1:
        return "ha1_key";
    case BL_KEYS_NONE:
        break;
    }
    return "none";
}
