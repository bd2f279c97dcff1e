/* digest — see digest.h. */
#include "auth/digest.h"

#include "xg_hex.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#define NONCE_TIME_LEN 8
#define NONCE_MAC_LEN  16
#define NONCE_RAW_LEN  (NONCE_TIME_LEN + DIGEST_NONCE_ID_LEN + NONCE_MAC_LEN)
#define NONCE_LABEL    "xmrgate-digest-nonce-v1"
#define REPLAY_WINDOW  64
#define MD5_HEX_SIZE   33

_Static_assert(TOKEN_B64URL_LEN(NONCE_RAW_LEN) == DIGEST_NONCE_LEN, "nonce length");

struct nonce_info {
    int64_t issued_ms;
    uint8_t id[DIGEST_NONCE_ID_LEN];
    uint64_t set_hash; /* from MAC bytes that the nonce does not reveal */
};

struct replay_entry {
    bool used;
    uint8_t id[DIGEST_NONCE_ID_LEN];
    int64_t issued_ms;
    uint32_t top;    /* highest nc accepted */
    uint64_t window; /* bit i set: nc == top - i was accepted */
};

struct replay_set {
    pthread_mutex_t lock;
    int64_t floor_ms; /* unknown nonces issued before this are forgotten, hence stale */
    struct replay_entry way[DIGEST_WAYS];
};

struct digest_verifier {
    uint8_t key[DIGEST_KEY_MAX];
    size_t key_len;
    char realm[AUTH_DIGEST_VALUE_MAX + 1];
    int64_t lifetime_ms;
    size_t nsets; /* a power of two */
    struct replay_set *sets;
};

enum record_result { RECORD_OK, RECORD_REPLAY, RECORD_FORGOTTEN };

/* ---- lifecycle --------------------------------------------------------------------- */

static bool hmac_sha256(const struct digest_verifier *v, const uint8_t *msg, size_t n,
                        uint8_t out[32])
{
    unsigned int len = 0;
    return HMAC(EVP_sha256(), v->key, (int)v->key_len, msg, n, out, &len) != NULL && len == 32;
}

static size_t sets_for(size_t slots)
{
    if (slots == 0)
        slots = DIGEST_DEFAULT_SLOTS;
    if (slots > DIGEST_MAX_SLOTS)
        slots = DIGEST_MAX_SLOTS;
    size_t want = (slots + DIGEST_WAYS - 1) / DIGEST_WAYS;
    size_t n = 1;
    while (n < want)
        n <<= 1;
    return n;
}

struct digest_verifier *digest_verifier_new(const struct digest_config *cfg, int64_t now_ms)
{
    if (cfg->nonce_key == NULL || cfg->nonce_key_len < DIGEST_KEY_MIN ||
        cfg->nonce_key_len > DIGEST_KEY_MAX || cfg->realm == NULL ||
        !auth_challenge_value_ok(cfg->realm) || cfg->nonce_lifetime_ms <= 0 || now_ms < 0)
        return NULL;
    bool ok = false;
    struct digest_verifier *v = calloc(1, sizeof *v);
    if (v == NULL)
        goto out;
    memcpy(v->key, cfg->nonce_key, cfg->nonce_key_len);
    v->key_len = cfg->nonce_key_len;
    strcpy(v->realm, cfg->realm);
    v->lifetime_ms = cfg->nonce_lifetime_ms;

    size_t nsets = sets_for(cfg->replay_slots);
    v->sets = calloc(nsets, sizeof *v->sets);
    if (v->sets == NULL)
        goto out;
    /* nsets counts initialised mutexes, so a failure part-way frees exactly those. */
    for (; v->nsets < nsets; v->nsets++) {
        if (pthread_mutex_init(&v->sets[v->nsets].lock, NULL) != 0)
            goto out;
        v->sets[v->nsets].floor_ms = now_ms;
    }
    ok = true;
out:
    if (!ok) {
        digest_verifier_free(v);
        v = NULL;
    }
    return v;
}

void digest_verifier_free(struct digest_verifier *v)
{
    if (v == NULL)
        return;
    if (v->sets != NULL)
        for (size_t i = 0; i < v->nsets; i++)
            pthread_mutex_destroy(&v->sets[i].lock);
    free(v->sets);
    OPENSSL_cleanse(v, sizeof *v);
    free(v);
}

const char *digest_realm(const struct digest_verifier *v)
{
    return v->realm;
}

/* ---- nonces ------------------------------------------------------------------------ */

static void put_be64(uint8_t *p, uint64_t x)
{
    for (int i = 7; i >= 0; i--, x >>= 8)
        p[i] = (uint8_t)x;
}

static uint64_t get_be64(const uint8_t *p)
{
    uint64_t x = 0;
    for (int i = 0; i < 8; i++)
        x = x << 8 | p[i];
    return x;
}

/* MAC over label || issued || id, written to mac (32 bytes). */
static bool nonce_mac(const struct digest_verifier *v, const uint8_t *stamp_and_id, uint8_t mac[32])
{
    uint8_t msg[sizeof NONCE_LABEL - 1 + NONCE_TIME_LEN + DIGEST_NONCE_ID_LEN];
    memcpy(msg, NONCE_LABEL, sizeof NONCE_LABEL - 1);
    memcpy(msg + sizeof NONCE_LABEL - 1, stamp_and_id, NONCE_TIME_LEN + DIGEST_NONCE_ID_LEN);
    return hmac_sha256(v, msg, sizeof msg, mac);
}

bool digest_nonce_make(const struct digest_verifier *v, int64_t issued_ms,
                       const uint8_t id[DIGEST_NONCE_ID_LEN], char out[DIGEST_NONCE_SIZE])
{
    assert(issued_ms >= 0);
    uint8_t raw[NONCE_RAW_LEN];
    uint8_t mac[32];
    put_be64(raw, (uint64_t)issued_ms);
    memcpy(raw + NONCE_TIME_LEN, id, DIGEST_NONCE_ID_LEN);
    if (!nonce_mac(v, raw, mac))
        return false;
    memcpy(raw + NONCE_TIME_LEN + DIGEST_NONCE_ID_LEN, mac, NONCE_MAC_LEN);
    token_b64url_encode(raw, sizeof raw, out);
    return true;
}

bool digest_nonce_issue(const struct digest_verifier *v, int64_t now_ms,
                        char out[DIGEST_NONCE_SIZE])
{
    uint8_t id[DIGEST_NONCE_ID_LEN];
    return RAND_bytes(id, sizeof id) == 1 && digest_nonce_make(v, now_ms, id, out);
}

enum decode_result { DECODE_OK, DECODE_FORGED, DECODE_ERROR };

static enum decode_result nonce_decode(const struct digest_verifier *v, const char *text,
                                       struct nonce_info *out)
{
    uint8_t raw[NONCE_RAW_LEN];
    uint8_t mac[32];
    size_t n = 0;
    size_t len = strnlen(text, DIGEST_NONCE_LEN + 1);
    if (len != DIGEST_NONCE_LEN || !token_b64url_decode(text, len, raw, sizeof raw, &n) ||
        n != sizeof raw)
        return DECODE_FORGED;
    if (!nonce_mac(v, raw, mac))
        return DECODE_ERROR;
    if (CRYPTO_memcmp(mac, raw + NONCE_TIME_LEN + DIGEST_NONCE_ID_LEN, NONCE_MAC_LEN) != 0)
        return DECODE_FORGED;
    uint64_t stamp = get_be64(raw);
    if (stamp > INT64_MAX)
        return DECODE_FORGED; /* we never issue these */
    out->issued_ms = (int64_t)stamp;
    memcpy(out->id, raw + NONCE_TIME_LEN, DIGEST_NONCE_ID_LEN);
    out->set_hash = get_be64(mac + NONCE_MAC_LEN);
    return DECODE_OK;
}

static bool nonce_is_live(const struct digest_verifier *v, int64_t issued_ms, int64_t now_ms)
{
    if (issued_ms > now_ms)
        return issued_ms - now_ms <= DIGEST_CLOCK_SKEW_MS;
    return now_ms - issued_ms <= v->lifetime_ms;
}

enum digest_nonce_status digest_nonce_check(const struct digest_verifier *v, const char *nonce,
                                            int64_t now_ms)
{
    struct nonce_info info;
    if (nonce_decode(v, nonce, &info) != DECODE_OK)
        return DIGEST_NONCE_FORGED;
    return nonce_is_live(v, info.issued_ms, now_ms) ? DIGEST_NONCE_LIVE : DIGEST_NONCE_EXPIRED;
}

bool digest_challenge(const struct digest_verifier *v, int64_t now_ms, bool stale,
                      struct digest_challenges *out)
{
    char nonce[DIGEST_NONCE_SIZE];
    return digest_nonce_issue(v, now_ms, nonce) &&
           auth_challenge_digest(out->md5, sizeof out->md5, v->realm, nonce, AUTH_DIGEST_MD5,
                                 stale) &&
           auth_challenge_digest(out->md5_sess, sizeof out->md5_sess, v->realm, nonce,
                                 AUTH_DIGEST_MD5_SESS, stale);
}

/* ---- responses --------------------------------------------------------------------- */

/* MD5 of the parts joined by ':'. */
static bool md5_joined(const char *const *parts, size_t nparts, uint8_t out[TOKEN_HA1_LEN])
{
    bool ok = false;
    unsigned int n = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_md5(), NULL) != 1)
        goto out;
    for (size_t i = 0; i < nparts; i++)
        if ((i > 0 && EVP_DigestUpdate(ctx, ":", 1) != 1) ||
            EVP_DigestUpdate(ctx, parts[i], strlen(parts[i])) != 1)
            goto out;
    ok = EVP_DigestFinal_ex(ctx, out, &n) == 1 && n == TOKEN_HA1_LEN;
out:
    EVP_MD_CTX_free(ctx);
    return ok;
}

enum algorithm { ALGORITHM_MD5, ALGORITHM_MD5_SESS, ALGORITHM_OTHER };

static enum algorithm algorithm_of(const char *name)
{
    if (name[0] == '\0' || strcasecmp(name, "MD5") == 0)
        return ALGORITHM_MD5;
    if (strcasecmp(name, "MD5-sess") == 0)
        return ALGORITHM_MD5_SESS;
    return ALGORITHM_OTHER;
}

bool digest_response(const uint8_t ha1[TOKEN_HA1_LEN], const char *method,
                     const struct auth_digest *cred, uint8_t out[TOKEN_HA1_LEN])
{
    bool ok = false;
    char ha1_hex[MD5_HEX_SIZE], ha2_hex[MD5_HEX_SIZE];
    uint8_t ha2[TOKEN_HA1_LEN], session[TOKEN_HA1_LEN];
    const char *a2[] = {method, cred->uri};
    if (!md5_joined(a2, 2, ha2))
        goto out;
    xg_hex_encode(ha1, TOKEN_HA1_LEN, ha1_hex);
    xg_hex_encode(ha2, TOKEN_HA1_LEN, ha2_hex);
    if (algorithm_of(cred->algorithm) == ALGORITHM_MD5_SESS) {
        const char *a1[] = {ha1_hex, cred->nonce, cred->cnonce}; /* RFC 2617 §3.2.2.2 */
        if (!md5_joined(a1, 3, session))
            goto out;
        xg_hex_encode(session, TOKEN_HA1_LEN, ha1_hex);
    }
    if (cred->qop[0] != '\0') {
        const char *parts[] = {ha1_hex, cred->nonce, cred->nc, cred->cnonce, cred->qop, ha2_hex};
        ok = md5_joined(parts, 6, out);
    } else {
        const char *parts[] = {ha1_hex, cred->nonce, ha2_hex}; /* RFC 2069 */
        ok = md5_joined(parts, 3, out);
    }
out:
    OPENSSL_cleanse(ha1_hex, sizeof ha1_hex);
    OPENSSL_cleanse(session, sizeof session);
    return ok;
}

/* The request target in uri: uri itself, or what follows the authority of an absolute
 * http(s) URL (RFC 9112 §3.2.2 absolute-form), which some client libraries send. NULL if
 * uri is an absolute URL without a path. */
static const char *uri_target(const char *uri)
{
    static const char *const schemes[] = {"http://", "https://"};
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
        size_t n = strlen(schemes[i]);
        if (strncasecmp(uri, schemes[i], n) != 0)
            continue;
        const char *authority = uri + n;
        const char *path = authority + strcspn(authority, "/?#");
        return path > authority && *path == '/' ? path : NULL;
    }
    return uri;
}

/* ---- replay table ------------------------------------------------------------------ */

/* nc == 0 stands for a use without qop, which spends the whole nonce. */
static enum record_result entry_accept(struct replay_entry *e, uint32_t nc)
{
    if (nc == 0)
        return RECORD_REPLAY;
    if (nc > e->top) {
        uint32_t shift = nc - e->top;
        e->window = shift >= REPLAY_WINDOW ? 0 : e->window << shift;
        e->window |= 1;
        e->top = nc;
        return RECORD_OK;
    }
    uint32_t behind = e->top - nc;
    if (behind >= REPLAY_WINDOW || (e->window & (UINT64_C(1) << behind)))
        return RECORD_REPLAY;
    e->window |= UINT64_C(1) << behind;
    return RECORD_OK;
}

/* The way to reuse for a nonce issued at issued_ms: a free one, else the oldest, unless
 * the new nonce is older still (NULL: the new nonce is the one to forget). */
static struct replay_entry *set_victim(struct replay_set *s, int64_t issued_ms)
{
    struct replay_entry *oldest = NULL;
    for (size_t i = 0; i < DIGEST_WAYS; i++) {
        struct replay_entry *e = &s->way[i];
        if (!e->used)
            return e;
        if (oldest == NULL || e->issued_ms < oldest->issued_ms)
            oldest = e;
    }
    return oldest->issued_ms <= issued_ms ? oldest : NULL;
}

static enum record_result set_record(struct replay_set *s, const struct nonce_info *ni, uint32_t nc)
{
    for (size_t i = 0; i < DIGEST_WAYS; i++) {
        struct replay_entry *e = &s->way[i];
        if (e->used && e->issued_ms == ni->issued_ms &&
            memcmp(e->id, ni->id, DIGEST_NONCE_ID_LEN) == 0)
            return entry_accept(e, nc);
    }
    if (ni->issued_ms < s->floor_ms)
        return RECORD_FORGOTTEN;
    struct replay_entry *e = set_victim(s, ni->issued_ms);
    if (e == NULL)
        return RECORD_FORGOTTEN;
    if (e->used && e->issued_ms + 1 > s->floor_ms)
        s->floor_ms = e->issued_ms + 1;
    e->used = true;
    memcpy(e->id, ni->id, DIGEST_NONCE_ID_LEN);
    e->issued_ms = ni->issued_ms;
    e->top = nc == 0 ? UINT32_MAX : nc;
    e->window = nc == 0 ? ~UINT64_C(0) : 1;
    return RECORD_OK;
}

static enum record_result replay_record(struct digest_verifier *v, const struct nonce_info *ni,
                                        uint32_t nc)
{
    struct replay_set *s = &v->sets[ni->set_hash & (v->nsets - 1)];
    pthread_mutex_lock(&s->lock);
    enum record_result r = set_record(s, ni, nc);
    pthread_mutex_unlock(&s->lock);
    return r;
}

/* ---- verification ------------------------------------------------------------------ */

enum digest_result digest_verify(struct digest_verifier *v, const struct auth_digest *cred,
                                 const uint8_t *ha1, const char *method, const char *request_uri,
                                 int64_t now_ms)
{
    static const uint8_t no_tenant[TOKEN_HA1_LEN];
    struct nonce_info ni;
    uint8_t expected[TOKEN_HA1_LEN], presented[TOKEN_HA1_LEN];

    if (algorithm_of(cred->algorithm) == ALGORITHM_OTHER)
        return DIGEST_UNSUPPORTED;
    if (cred->qop[0] != '\0' && strcasecmp(cred->qop, "auth") != 0)
        return DIGEST_UNSUPPORTED;
    if (strcmp(cred->realm, v->realm) != 0)
        return DIGEST_BAD_REALM;
    const char *target = uri_target(cred->uri);
    if (strcmp(cred->uri, request_uri) != 0 && (target == NULL || strcmp(target, request_uri) != 0))
        return DIGEST_BAD_URI;
    switch (nonce_decode(v, cred->nonce, &ni)) {
    case DECODE_OK:
        break;
    case DECODE_FORGED:
        return DIGEST_BAD_NONCE;
    case DECODE_ERROR:
        return DIGEST_ERROR;
    }
    if (!digest_response(ha1 != NULL ? ha1 : no_tenant, method, cred, expected))
        return DIGEST_ERROR;
    if (!xg_hex_decode(cred->response, presented, sizeof presented))
        return DIGEST_BAD_RESPONSE;
    if (CRYPTO_memcmp(expected, presented, sizeof expected) != 0 || ha1 == NULL)
        return DIGEST_BAD_RESPONSE;
    /* Only now is the password known to be right, so only now may we say "stale". */
    if (!nonce_is_live(v, ni.issued_ms, now_ms))
        return DIGEST_STALE;
    switch (replay_record(v, &ni, cred->qop[0] != '\0' ? cred->nc_value : 0)) {
    case RECORD_OK:
        return DIGEST_OK;
    case RECORD_REPLAY:
        return DIGEST_REPLAY;
    case RECORD_FORGOTTEN:
        return DIGEST_STALE;
    }
    return DIGEST_ERROR;
}

bool digest_result_is_stale(enum digest_result r)
{
    return r == DIGEST_STALE || r == DIGEST_REPLAY;
}

int digest_result_http_status(enum digest_result r)
{
    switch (r) {
    case DIGEST_OK:
        return 200;
    case DIGEST_BAD_URI:
        return 400;
    case DIGEST_ERROR:
        return 500;
    case DIGEST_STALE:
    case DIGEST_REPLAY:
    case DIGEST_BAD_RESPONSE:
    case DIGEST_BAD_NONCE:
    case DIGEST_BAD_REALM:
    case DIGEST_UNSUPPORTED:
        break;
    }
    return 401;
}

const char *digest_result_name(enum digest_result r)
{
    switch (r) {
    case DIGEST_OK:
        return "ok";
    case DIGEST_STALE:
        return "stale";
    case DIGEST_REPLAY:
        return "replay";
    case DIGEST_BAD_RESPONSE:
        return "bad_response";
    case DIGEST_BAD_NONCE:
        return "bad_nonce";
    case DIGEST_BAD_REALM:
        return "bad_realm";
    case DIGEST_BAD_URI:
        return "bad_uri";
    case DIGEST_UNSUPPORTED:
        return "unsupported";
    case DIGEST_ERROR:
        return "error";
    }
    return "unknown";
}
