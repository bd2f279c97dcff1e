/* Fuzzes the credential parser and the Digest check (gateway/auth/auth.h, gateway/auth/digest.h):
 * auth_parse over a request's path, Authorization and X-Api-Key, then, for Digest,
 * digest_verify under a fixed nonce key, as server.c's authenticate() calls them; XMR402
 * parameters go on to xmr402_parse_params.
 *
 * Input: byte 0 holds flags, the rest four lines: path, Authorization, X-Api-Key, and the
 * request target digest_verify compares the uri with ("" takes the path). Flags: 0, an
 * Authorization header is sent; 1, it came twice; 2, an X-Api-Key is sent; 3, no tenant
 * has the user name (no HA1); 4, the method is POST; 5, the nonce is replaced by one of
 * ours, live (or, with 7, expired), since a fuzzer cannot forge its MAC; 6, the response
 * is replaced by the right one for that nonce, which it cannot guess either.
 *
 * Properties checked:
 *   - the result keeps auth.h's promises: a Digest credential has its mandatory
 *     parameters, a hex response, and nc exactly with qop; a token credential holds a
 *     token of the canonical shape (a malformed one is AUTH_INVALID); a refusal says why;
 *   - a correct Digest response is accepted once: the same request again is a replay, and
 *     nothing is ever accepted for an unknown user;
 *   - a realm and nonce go into a challenge exactly when auth_challenge_value_ok allows. */
#include "fuzz.h"
#include "auth/auth.h"
#include "auth/digest.h"
#include "token.h"
#include "xg_hex.h"
#include "xmr402/xmr402.h"

#include <ctype.h>

#define FUZZ_REALM       "xmrgate"
#define FUZZ_NOW_MS      1700000000000LL
#define FUZZ_LIFETIME_MS 300000

#define FLAG_AUTHORIZATION 0x01
#define FLAG_REPEATED      0x02
#define FLAG_API_KEY       0x04
#define FLAG_NO_TENANT     0x08
#define FLAG_POST          0x10
#define FLAG_OUR_NONCE     0x20
#define FLAG_RIGHT_ANSWER  0x40
#define FLAG_EXPIRED       0x80

static bool all_hex(const char *s)
{
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s))
            return false;
    return true;
}

static void check_digest(const struct auth_digest *d)
{
    FUZZ_CHECK(d->username[0] && d->realm[0] && d->nonce[0] && d->uri[0] && d->response[0]);
    FUZZ_CHECK(all_hex(d->response));
    if (d->qop[0]) {
        FUZZ_CHECK(strlen(d->nc) == AUTH_DIGEST_NC_LEN && all_hex(d->nc) && d->nc_value >= 1);
    } else {
        FUZZ_CHECK(d->nc[0] == '\0' && d->cnonce[0] == '\0');
    }
}

static void check_credential(const struct auth_credential *c)
{
    FUZZ_CHECK(c->rest_path != NULL);
    switch (c->kind) {
    case AUTH_PATH_TOKEN:
        FUZZ_CHECK(c->rest_path[0] == '/');
        /* fall through */
    case AUTH_BEARER:
    case AUTH_API_KEY:
    case AUTH_BASIC:
        FUZZ_CHECK(token_looks_valid(c->token, strlen(c->token)));
        break;
    case AUTH_DIGEST:
        check_digest(&c->digest);
        break;
    case AUTH_OTHER_SCHEME:
        FUZZ_CHECK(c->scheme[0] != '\0' && c->scheme_params != NULL);
        break;
    case AUTH_INVALID:
    case AUTH_MALFORMED:
        FUZZ_CHECK(c->detail != NULL);
        break;
    case AUTH_NONE:
        break;
    }
}

static void check_xmr402(const char *params)
{
    struct xmr402_auth *x = malloc(sizeof *x);
    if (!x)
        abort();
    const char *detail = NULL;
    if (xmr402_parse_params(params, XMR402_PROOF_LIMIT, x, &detail))
        FUZZ_CHECK(strlen(x->txid) == XMR402_TXID_LEN && strncmp(x->proof, "OutProofV", 9) == 0);
    else
        FUZZ_CHECK(detail != NULL);
    free(x);
}

/* What the parser took for realm and nonce, sent back in a challenge: written exactly
 * when both are values a challenge may carry. */
static void check_challenge(const struct auth_digest *d)
{
    char buf[1024];
    bool ok = auth_challenge_value_ok(d->realm) && auth_challenge_value_ok(d->nonce);
    FUZZ_CHECK(auth_challenge_digest(buf, sizeof buf, d->realm, d->nonce, AUTH_DIGEST_MD5_SESS,
                                     false) == ok);
    if (ok)
        FUZZ_CHECK(strncmp(buf, "Digest ", 7) == 0 && strstr(buf, d->nonce) != NULL);
    FUZZ_CHECK(auth_challenge_basic(buf, sizeof buf, d->realm) ==
               auth_challenge_value_ok(d->realm));
}

static void verify_digest(struct auth_digest *d, const char *method, const char *target,
                          uint8_t flags)
{
    static const uint8_t key[32] = {0x42, 0x13, 0x37};
    struct digest_config cfg = {key, sizeof key, FUZZ_REALM, FUZZ_LIFETIME_MS, 64};
    struct digest_verifier *v = digest_verifier_new(&cfg, FUZZ_NOW_MS - 1000);
    FUZZ_CHECK(v != NULL);
    uint8_t ha1[TOKEN_HA1_LEN];
    FUZZ_CHECK(token_digest_ha1("t_fuzz", FUZZ_REALM, "xg_fuzz", ha1));
    const uint8_t *tenant_ha1 = (flags & FLAG_NO_TENANT) ? NULL : ha1;
    if (flags & FLAG_OUR_NONCE) {
        uint8_t id[DIGEST_NONCE_ID_LEN] = {flags, 0x5a};
        int64_t issued =
            (flags & FLAG_EXPIRED) ? FUZZ_NOW_MS - 10 * FUZZ_LIFETIME_MS : FUZZ_NOW_MS - 500;
        FUZZ_CHECK(digest_nonce_make(v, issued, id, d->nonce));
        FUZZ_CHECK(digest_nonce_check(v, d->nonce, FUZZ_NOW_MS) != DIGEST_NONCE_FORGED);
    }
    if (flags & FLAG_RIGHT_ANSWER) {
        uint8_t right[TOKEN_HA1_LEN];
        if (digest_response(ha1, method, d, right))
            xg_hex_encode(right, sizeof right, d->response);
    }
    enum digest_result first = digest_verify(v, d, tenant_ha1, method, target, FUZZ_NOW_MS);
    enum digest_result again = digest_verify(v, d, tenant_ha1, method, target, FUZZ_NOW_MS);
    FUZZ_CHECK(digest_result_name(first) != NULL);
    FUZZ_CHECK(first != DIGEST_ERROR);
    FUZZ_CHECK(tenant_ha1 != NULL || first != DIGEST_OK);
    FUZZ_CHECK(first != DIGEST_OK || again == DIGEST_REPLAY || again == DIGEST_STALE);
    FUZZ_CHECK(first == DIGEST_OK || again == first); /* only a success is recorded */
    FUZZ_CHECK(digest_result_is_stale(again) == (again == DIGEST_STALE || again == DIGEST_REPLAY));
    int status = digest_result_http_status(first);
    FUZZ_CHECK(status == 200 || status == 400 || status == 401 || status == 500);
    digest_verifier_free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t flags = data[0];
    const char *f[4];
    char *buf = fuzz_fields(data + 1, size - 1, f, 4);
    struct auth_request req = {
        .path = f[0],
        .authorization = (flags & FLAG_AUTHORIZATION) ? f[1] : NULL,
        .authorization_repeated = (flags & FLAG_REPEATED) != 0,
        .api_key = (flags & FLAG_API_KEY) ? f[2] : NULL,
    };
    struct auth_credential *cred = malloc(sizeof *cred);
    if (!cred)
        abort();
    enum auth_kind kind = auth_parse(&req, cred);
    FUZZ_CHECK(kind == cred->kind);
    check_credential(cred);
    if (kind == AUTH_BASIC)
        (void)auth_basic_user_ok(cred, "t_fuzz");
    if (kind == AUTH_OTHER_SCHEME && xmr402_scheme_is(cred->scheme))
        check_xmr402(cred->scheme_params);
    if (kind == AUTH_DIGEST)
        check_challenge(&cred->digest);
    if (kind == AUTH_DIGEST)
        verify_digest(&cred->digest, (flags & FLAG_POST) ? "POST" : "GET", f[3][0] ? f[3] : f[0],
                      flags);
    free(cred);
    free(buf);
    return 0;
}
