/* token — see token.h. */
#include "token.h"

#include "xg_hex.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

static const char b64url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
static const char b64std_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char base32_lower[] = "abcdefghijklmnopqrstuvwxyz234567";

#define HANDLE_RANDOM_CHARS (TOKEN_HANDLE_LEN - (sizeof TOKEN_HANDLE_PREFIX - 1))
#define HA1_WRAP_VERSION    0x01
#define HA1_WRAP_IV_LEN     12
#define HA1_WRAP_TAG_LEN    16
#define HA1_WRAP_AAD_LABEL  "xmrgate-ha1-v1"

/* Index of c in alphabet, or -1. Both alphabets are A–Z, a–z, 0–9 and two symbols of their own:
 * classified by range, not searched (this runs for every character of every token on the request
 * path). */
static int b64_value(const char *alphabet, char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c != '\0' && c == alphabet[62])
        return 62;
    if (c != '\0' && c == alphabet[63])
        return 63;
    return -1;
}

size_t token_b64url_encode(const uint8_t *in, size_t n, char *out)
{
    size_t o = 0;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = b64url_alphabet[v >> 18 & 63];
        out[o++] = b64url_alphabet[v >> 12 & 63];
        out[o++] = b64url_alphabet[v >> 6 & 63];
        out[o++] = b64url_alphabet[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[o++] = b64url_alphabet[v >> 18 & 63];
        out[o++] = b64url_alphabet[v >> 12 & 63];
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        out[o++] = b64url_alphabet[v >> 18 & 63];
        out[o++] = b64url_alphabet[v >> 12 & 63];
        out[o++] = b64url_alphabet[v >> 6 & 63];
    }
    out[o] = '\0';
    return o;
}

/* Decodes n unpadded characters. A final group of 2 or 3 characters must leave its unused
 * low bits zero, so every byte string has exactly one accepted text. */
static bool b64_decode_unpadded(const char *alphabet, const char *in, size_t n, uint8_t *out,
                                size_t cap, size_t *outlen)
{
    if (n % 4 == 1)
        return false;
    size_t need = n / 4 * 3 + (n % 4 == 0 ? 0 : n % 4 - 1);
    if (need > cap)
        return false;
    size_t o = 0;
    uint32_t acc = 0;
    unsigned bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_value(alphabet, in[i]);
        if (v < 0)
            return false;
        acc = (acc << 6 | (uint32_t)v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (uint8_t)(acc >> bits);
        }
    }
    if ((acc & ((1u << bits) - 1)) != 0)
        return false;
    *outlen = o;
    return true;
}

bool token_b64url_decode(const char *in, size_t n, uint8_t *out, size_t cap, size_t *outlen)
{
    return b64_decode_unpadded(b64url_alphabet, in, n, out, cap, outlen);
}

bool token_b64_decode(const char *in, size_t n, uint8_t *out, size_t cap, size_t *outlen)
{
    if (n == 0 || n % 4 != 0)
        return false;
    size_t pad = 0;
    while (pad < 2 && in[n - 1 - pad] == '=')
        pad++;
    /* A third '=' (or one in the middle) is caught as a character outside the alphabet. */
    return b64_decode_unpadded(b64std_alphabet, in, n - pad, out, cap, outlen);
}

void token_format(const uint8_t raw[TOKEN_RAW_LEN], char out[TOKEN_TEXT_SIZE])
{
    memcpy(out, TOKEN_PREFIX, TOKEN_PREFIX_LEN);
    token_b64url_encode(raw, TOKEN_RAW_LEN, out + TOKEN_PREFIX_LEN);
}

bool token_generate(char out[TOKEN_TEXT_SIZE])
{
    uint8_t raw[TOKEN_RAW_LEN];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return false;
    token_format(raw, out);
    OPENSSL_cleanse(raw, sizeof raw);
    return true;
}

bool token_looks_valid(const char *text, size_t len)
{
    if (len != TOKEN_TEXT_LEN || memcmp(text, TOKEN_PREFIX, TOKEN_PREFIX_LEN) != 0)
        return false;
    uint8_t raw[TOKEN_RAW_LEN];
    size_t n = 0;
    bool ok =
        token_b64url_decode(text + TOKEN_PREFIX_LEN, len - TOKEN_PREFIX_LEN, raw, sizeof raw, &n) &&
        n == TOKEN_RAW_LEN;
    OPENSSL_cleanse(raw, sizeof raw);
    return ok;
}

/* Fetched once: OpenSSL 3 looks the algorithm up again on every call given EVP_sha256(),
 * which cost more than the hash itself on the request path. Never freed (process-wide,
 * immutable after the first call). */
static EVP_MD *token_sha256;
/* Each thread keeps one digest context and reuses it: allocating one per hash cost more
 * than the hash of a short token. The key's destructor frees it when the thread ends. */
static pthread_key_t token_ctx_key;
static pthread_once_t token_sha256_once = PTHREAD_ONCE_INIT;

static void token_ctx_free(void *ctx)
{
    EVP_MD_CTX_free(ctx);
}

static void token_fetch_sha256(void)
{
    token_sha256 = EVP_MD_fetch(NULL, "SHA2-256", NULL);
    if (pthread_key_create(&token_ctx_key, token_ctx_free) != 0)
        abort();
}

static EVP_MD_CTX *token_thread_ctx(void)
{
    EVP_MD_CTX *ctx = pthread_getspecific(token_ctx_key);
    if (!ctx && (ctx = EVP_MD_CTX_new()) && pthread_setspecific(token_ctx_key, ctx) != 0) {
        EVP_MD_CTX_free(ctx);
        ctx = NULL;
    }
    return ctx;
}

bool token_sha256_of(const void *data, size_t len, uint8_t out[TOKEN_HASH_LEN])
{
    pthread_once(&token_sha256_once, token_fetch_sha256);
    unsigned int n = 0;
    const EVP_MD *md = token_sha256 ? token_sha256 : EVP_sha256();
    EVP_MD_CTX *ctx = token_thread_ctx();
    if (!ctx)
        return EVP_Digest(data, len, out, &n, md, NULL) == 1 && n == TOKEN_HASH_LEN;
    return EVP_DigestInit_ex(ctx, md, NULL) == 1 && EVP_DigestUpdate(ctx, data, len) == 1 &&
           EVP_DigestFinal_ex(ctx, out, &n) == 1 && n == TOKEN_HASH_LEN;
}

bool token_hash(const char *text, size_t len, uint8_t out[TOKEN_HASH_LEN])
{
    return token_sha256_of(text, len, out);
}

bool token_hash_equal(const uint8_t a[TOKEN_HASH_LEN], const uint8_t b[TOKEN_HASH_LEN])
{
    return CRYPTO_memcmp(a, b, TOKEN_HASH_LEN) == 0;
}

void token_hash_hex(const uint8_t hash[TOKEN_HASH_LEN], char out[TOKEN_HASH_HEX_SIZE])
{
    xg_hex_encode(hash, TOKEN_HASH_LEN, out);
}

bool token_handle_generate(char out[TOKEN_HANDLE_SIZE])
{
    uint8_t rnd[HANDLE_RANDOM_CHARS];
    if (RAND_bytes(rnd, sizeof rnd) != 1)
        return false;
    size_t o = sizeof TOKEN_HANDLE_PREFIX - 1;
    memcpy(out, TOKEN_HANDLE_PREFIX, o);
    /* 256 is a multiple of 32, so taking the low 5 bits is unbiased. */
    for (size_t i = 0; i < sizeof rnd; i++)
        out[o++] = base32_lower[rnd[i] & 31];
    out[o] = '\0';
    return true;
}

bool token_handle_looks_valid(const char *text, size_t len)
{
    size_t plen = sizeof TOKEN_HANDLE_PREFIX - 1;
    if (len != TOKEN_HANDLE_LEN || memcmp(text, TOKEN_HANDLE_PREFIX, plen) != 0)
        return false;
    for (size_t i = plen; i < len; i++)
        if (text[i] == '\0' || strchr(base32_lower, text[i]) == NULL)
            return false;
    return true;
}

bool token_digest_ha1(const char *handle, const char *realm, const char *token,
                      uint8_t out[TOKEN_HA1_LEN])
{
    bool ok = false;
    unsigned int n = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx == NULL)
        goto out;
    ok = EVP_DigestInit_ex(ctx, EVP_md5(), NULL) == 1 &&
         EVP_DigestUpdate(ctx, handle, strlen(handle)) == 1 && EVP_DigestUpdate(ctx, ":", 1) == 1 &&
         EVP_DigestUpdate(ctx, realm, strlen(realm)) == 1 && EVP_DigestUpdate(ctx, ":", 1) == 1 &&
         EVP_DigestUpdate(ctx, token, strlen(token)) == 1 &&
         EVP_DigestFinal_ex(ctx, out, &n) == 1 && n == TOKEN_HA1_LEN;
out:
    EVP_MD_CTX_free(ctx);
    return ok;
}

/* Feeds the associated data that binds a wrapped HA1 to its handle. */
static bool ha1_wrap_aad(EVP_CIPHER_CTX *ctx, const char *handle)
{
    int n = 0;
    return EVP_CipherUpdate(ctx, NULL, &n, (const uint8_t *)HA1_WRAP_AAD_LABEL,
                            sizeof HA1_WRAP_AAD_LABEL) == 1 &&
           EVP_CipherUpdate(ctx, NULL, &n, (const uint8_t *)handle, (int)strlen(handle)) == 1;
}

bool token_ha1_wrap(const uint8_t key[TOKEN_HA1_KEY_LEN], const char *handle,
                    const uint8_t ha1[TOKEN_HA1_LEN], uint8_t out[TOKEN_HA1_WRAPPED_LEN])
{
    bool ok = false;
    uint8_t *iv = out + 1;
    uint8_t *ct = iv + HA1_WRAP_IV_LEN;
    uint8_t *tag = ct + TOKEN_HA1_LEN;
    int n = 0, fin = 0;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL || RAND_bytes(iv, HA1_WRAP_IV_LEN) != 1)
        goto out;
    out[0] = HA1_WRAP_VERSION;
    ok = EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, iv) == 1 &&
         ha1_wrap_aad(ctx, handle) && EVP_EncryptUpdate(ctx, ct, &n, ha1, TOKEN_HA1_LEN) == 1 &&
         EVP_EncryptFinal_ex(ctx, ct + n, &fin) == 1 && n + fin == TOKEN_HA1_LEN &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, HA1_WRAP_TAG_LEN, tag) == 1;
out:
    EVP_CIPHER_CTX_free(ctx);
    if (!ok)
        OPENSSL_cleanse(out, TOKEN_HA1_WRAPPED_LEN);
    return ok;
}

struct token_ha1_unwrapper {
    EVP_CIPHER_CTX *ctx; /* the key schedule set, no IV */
};

struct token_ha1_unwrapper *token_ha1_unwrapper_new(const uint8_t key[TOKEN_HA1_KEY_LEN])
{
    struct token_ha1_unwrapper *u = calloc(1, sizeof *u);
    if (u == NULL)
        return NULL;
    u->ctx = EVP_CIPHER_CTX_new();
    if (u->ctx == NULL || EVP_DecryptInit_ex(u->ctx, EVP_aes_256_gcm(), NULL, key, NULL) != 1) {
        token_ha1_unwrapper_free(u);
        return NULL;
    }
    return u;
}

void token_ha1_unwrapper_free(struct token_ha1_unwrapper *u)
{
    if (u == NULL)
        return;
    EVP_CIPHER_CTX_free(u->ctx); /* cleanses the key schedule */
    free(u);
}

bool token_ha1_unwrap_with(struct token_ha1_unwrapper *u, const char *handle,
                           const uint8_t wrapped[TOKEN_HA1_WRAPPED_LEN], uint8_t ha1[TOKEN_HA1_LEN])
{
    const uint8_t *iv = wrapped + 1;
    const uint8_t *ct = iv + HA1_WRAP_IV_LEN;
    uint8_t tag[HA1_WRAP_TAG_LEN];
    int n = 0, fin = 0;
    memcpy(tag, ct + TOKEN_HA1_LEN, sizeof tag);
    /* A new IV restarts GCM (counter, hash and tag state) and keeps the key; whatever an
     * earlier row left half done, failed or not, is discarded here. */
    bool ok = wrapped[0] == HA1_WRAP_VERSION &&
              EVP_DecryptInit_ex(u->ctx, NULL, NULL, NULL, iv) == 1 &&
              ha1_wrap_aad(u->ctx, handle) &&
              EVP_DecryptUpdate(u->ctx, ha1, &n, ct, TOKEN_HA1_LEN) == 1 &&
              EVP_CIPHER_CTX_ctrl(u->ctx, EVP_CTRL_GCM_SET_TAG, sizeof tag, tag) == 1 &&
              EVP_DecryptFinal_ex(u->ctx, ha1 + n, &fin) == 1 && n + fin == TOKEN_HA1_LEN;
    if (!ok)
        OPENSSL_cleanse(ha1, TOKEN_HA1_LEN);
    return ok;
}

enum token_ha1_key token_ha1_unwrap_either(const struct token_ha1_keys *keys, const char *handle,
                                           const uint8_t wrapped[TOKEN_HA1_WRAPPED_LEN],
                                           uint8_t ha1[TOKEN_HA1_LEN])
{
    if (token_ha1_unwrap_with(keys->current, handle, wrapped, ha1))
        return TOKEN_HA1_KEY_CURRENT;
    if (keys->previous && token_ha1_unwrap_with(keys->previous, handle, wrapped, ha1))
        return TOKEN_HA1_KEY_PREVIOUS;
    return TOKEN_HA1_KEY_NONE;
}

bool token_ha1_unwrap(const uint8_t key[TOKEN_HA1_KEY_LEN], const char *handle,
                      const uint8_t wrapped[TOKEN_HA1_WRAPPED_LEN], uint8_t ha1[TOKEN_HA1_LEN])
{
    struct token_ha1_unwrapper *u = token_ha1_unwrapper_new(key);
    bool ok = u != NULL && token_ha1_unwrap_with(u, handle, wrapped, ha1);
    token_ha1_unwrapper_free(u);
    if (!ok)
        OPENSSL_cleanse(ha1, TOKEN_HA1_LEN);
    return ok;
}
