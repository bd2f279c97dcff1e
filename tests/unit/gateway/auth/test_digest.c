/* Tests for gateway/digest: the challenges, response computation, stateless nonces, nc
 * replay, and the Authorization headers monero wallets and other clients actually send,
 * with their responses computed here independently (OpenSSL MD5 over the strings epee's
 * http_auth.cpp hashes, MD5-sess included). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <pthread.h>

#include "auth/auth.h"
#include "auth/digest.h"
#include "token.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define T0       INT64_C(1700000000000) /* the verifier's start, ms */
#define LIFETIME INT64_C(300000)
#define REALM    "xmrgate"
#define HANDLE   "t_abcdefgh2345"
#define TOKEN    "xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

static const uint8_t key_a[32] = "0123456789abcdef0123456789abcdef";
static const uint8_t key_b[32] = "fedcba9876543210fedcba9876543210";

/* ---- independent helpers ------------------------------------------------------------- */

static void md5_hex(const char *s, char out[33])
{
    uint8_t d[16];
    unsigned int n = 0;
    assert_int_equal(EVP_Digest(s, strlen(s), d, &n, EVP_md5(), NULL), 1);
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

struct wallet {
    const char *user, *password, *realm, *method, *uri;
    const char *nonce, *opaque; /* opaque NULL: not sent */
    const char *cnonce;         /* NULL: monero 0.18 (none sent, hashed as "") */
    const char *nc;             /* NULL: RFC 2069, no qop */
    const char *algorithm;      /* NULL: "MD5"; "" sends none; as sent (quotes included) */
};

/* What other clients do differently from epee. */
struct form {
    const char *qop; /* NULL: auth, unquoted as epee sends it; else as sent */
    bool upper_hex;  /* the response in upper-case hex */
};

static const struct form epee_form = {NULL, false};

/* A value as sent, without its quotes if it has them. */
static void unquote(const char *sent, char *out, size_t len)
{
    bool quoted = sent[0] == '"';
    snprintf(out, len, "%.*s", (int)(strlen(sent) - 2 * quoted), sent + quoted);
}

/* The response for w, from RFC 2617 §3.2.2 read literally: HA1 = MD5(user:realm:password),
 * for MD5-sess HA1 = MD5(HA1:nonce:cnonce); HA2 = MD5(method:uri as sent); then
 * MD5(HA1:nonce:nc:cnonce:qop:HA2), or MD5(HA1:nonce:HA2) without qop. */
static void wallet_response(const struct wallet *w, const struct form *form, char resp[33])
{
    char a1[512], a2[2600], ha1[33], ha2[33], all[1024], qop[32], algorithm[32];
    unquote(form->qop ? form->qop : "auth", qop, sizeof qop);
    unquote(w->algorithm ? w->algorithm : "MD5", algorithm, sizeof algorithm);
    snprintf(a1, sizeof a1, "%s:%s:%s", w->user, w->realm, w->password);
    snprintf(a2, sizeof a2, "%s:%s", w->method, w->uri);
    md5_hex(a1, ha1);
    md5_hex(a2, ha2);
    if (strcasecmp(algorithm, "MD5-sess") == 0) {
        char sess[512];
        snprintf(sess, sizeof sess, "%s:%s:%s", ha1, w->nonce, w->cnonce ? w->cnonce : "");
        md5_hex(sess, ha1);
    }
    if (w->nc != NULL)
        snprintf(all, sizeof all, "%s:%s:%s:%s:%s:%s", ha1, w->nonce, w->nc,
                 w->cnonce ? w->cnonce : "", qop, ha2);
    else
        snprintf(all, sizeof all, "%s:%s:%s", ha1, w->nonce, ha2);
    md5_hex(all, resp);
    for (char *c = resp; form->upper_hex && *c; c++)
        *c = (char)toupper((unsigned char)*c);
}

/* The header as epee formats it (init_client_value + auth_algorithm: no blanks), in form. */
static void wallet_header_as(const struct wallet *w, const struct form *form, char *out, size_t len)
{
    char resp[33];
    wallet_response(w, form, resp);
    int n = 0;
    if (w->algorithm == NULL || w->algorithm[0] != '\0')
        n = snprintf(out, len, "Digest algorithm=%s,", w->algorithm ? w->algorithm : "MD5");
    else
        n = snprintf(out, len, "Digest ");
    n += snprintf(out + n, len - (size_t)n,
                  "nonce=\"%s\",realm=\"%s\",response=\"%s\",uri=\"%s\",username=\"%s\"", w->nonce,
                  w->realm, resp, w->uri, w->user);
    if (w->opaque != NULL)
        n += snprintf(out + n, len - (size_t)n, ",opaque=\"%s\"", w->opaque);
    if (w->nc != NULL)
        n += snprintf(out + n, len - (size_t)n, ",qop=%s,nc=%s", form->qop ? form->qop : "auth",
                      w->nc);
    if (w->nc != NULL && w->cnonce != NULL)
        snprintf(out + n, len - (size_t)n, ",cnonce=\"%s\"", w->cnonce);
}

static void wallet_header(const struct wallet *w, char *out, size_t len)
{
    wallet_header_as(w, &epee_form, out, len);
}

/* ---- fixture ------------------------------------------------------------------------- */

struct fixture {
    struct digest_verifier *v;
    uint8_t ha1[TOKEN_HA1_LEN];
};

static struct digest_verifier *new_verifier(const uint8_t *key, size_t slots)
{
    struct digest_config cfg = {
        .nonce_key = key,
        .nonce_key_len = 32,
        .realm = REALM,
        .nonce_lifetime_ms = LIFETIME,
        .replay_slots = slots,
    };
    struct digest_verifier *v = digest_verifier_new(&cfg, T0);
    assert_non_null(v);
    return v;
}

static int setup(void **state)
{
    static struct fixture f;
    f.v = new_verifier(key_a, 0);
    assert_true(token_digest_ha1(HANDLE, REALM, TOKEN, f.ha1));
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    digest_verifier_free(f->v);
    return 0;
}

static void make_nonce(const struct digest_verifier *v, int64_t issued, uint8_t tag,
                       char out[DIGEST_NONCE_SIZE])
{
    uint8_t id[DIGEST_NONCE_ID_LEN] = {tag, 0x5a, tag};
    assert_true(digest_nonce_make(v, issued, id, out));
}

/* Parses a header and verifies it; fails the test if it does not parse. */
static enum digest_result check(struct digest_verifier *v, const char *header, const uint8_t *ha1,
                                const char *method, const char *uri, int64_t now)
{
    struct auth_request req = {.path = uri, .authorization = header};
    struct auth_credential c;
    if (auth_parse(&req, &c) != AUTH_DIGEST)
        fail_msg("does not parse: %s (%s)", header, c.detail ? c.detail : "");
    return digest_verify(v, &c.digest, ha1, method, uri, now);
}

static enum digest_result wallet_request(struct fixture *f, const char *nonce, const char *nc,
                                         int64_t now)
{
    char hdr[1024];
    struct wallet w = {HANDLE, TOKEN, REALM, "POST", "/json_rpc", nonce, NULL, NULL, nc, NULL};
    wallet_header(&w, hdr, sizeof hdr);
    return check(f->v, hdr, f->ha1, "POST", "/json_rpc", now);
}

static void expect_result(const char *what, enum digest_result got, enum digest_result want)
{
    if (got != want)
        fail_msg("%s: got %s, want %s", what, digest_result_name(got), digest_result_name(want));
}

/* ---- known answers ------------------------------------------------------------------- */

static void test_rfc2617_mufasa(void **state)
{
    (void)state;
    const char *hdr = "Digest username=\"Mufasa\", realm=\"testrealm@host.com\", "
                      "nonce=\"dcd98b7102dd2f0e8b11d0f600bfb0c093\", uri=\"/dir/index.html\", "
                      "qop=auth, nc=00000001, cnonce=\"0a4f113b\", "
                      "response=\"6629fae49393a05397450978507c4ef1\", "
                      "opaque=\"5ccc069c403ebaf9f0171e9517f40e41\"";
    struct auth_request req = {.path = "/dir/index.html", .authorization = hdr};
    struct auth_credential c;
    assert_int_equal(auth_parse(&req, &c), AUTH_DIGEST);
    uint8_t ha1[TOKEN_HA1_LEN], resp[TOKEN_HA1_LEN];
    assert_true(token_digest_ha1("Mufasa", "testrealm@host.com", "Circle Of Life", ha1));
    assert_true(digest_response(ha1, "GET", &c.digest, resp));
    static const uint8_t want[16] = {0x66, 0x29, 0xfa, 0xe4, 0x93, 0x93, 0xa0, 0x53,
                                     0x97, 0x45, 0x09, 0x78, 0x50, 0x7c, 0x4e, 0xf1};
    assert_memory_equal(resp, want, sizeof want);
    /* another method changes HA2 */
    assert_true(digest_response(ha1, "POST", &c.digest, resp));
    assert_memory_not_equal(resp, want, sizeof want);
}

/* ---- the wallets' forms -------------------------------------------------------------- */

static void test_wallet_018_empty_cnonce(void **state)
{
    struct fixture *f = *state;
    struct digest_challenges challenge;
    char nonce[DIGEST_NONCE_SIZE];
    assert_true(digest_challenge(f->v, T0 + 1000, false, &challenge));
    const char *p = strstr(challenge.md5, "nonce=\"");
    assert_non_null(p);
    memcpy(nonce, p + 7, DIGEST_NONCE_LEN);
    nonce[DIGEST_NONCE_LEN] = '\0';
    assert_int_equal(p[7 + DIGEST_NONCE_LEN], '"');

    expect_result("nc 1", wallet_request(f, nonce, "00000001", T0 + 2000), DIGEST_OK);
    expect_result("nc 2", wallet_request(f, nonce, "00000002", T0 + 2100), DIGEST_OK);
    expect_result("nc 2 again", wallet_request(f, nonce, "00000002", T0 + 2200), DIGEST_REPLAY);
    expect_result("nc 1 again", wallet_request(f, nonce, "00000001", T0 + 2300), DIGEST_REPLAY);
    expect_result("nc 3", wallet_request(f, nonce, "00000003", T0 + 2400), DIGEST_OK);
    expect_result("nc ff", wallet_request(f, nonce, "000000ff", T0 + 2500), DIGEST_OK);
    assert_true(digest_result_is_stale(DIGEST_REPLAY));
}

static void test_wallet_with_cnonce(void **state)
{
    struct fixture *f = *state;
    char nonce[DIGEST_NONCE_SIZE], hdr[1024];
    make_nonce(f->v, T0 + 1000, 1, nonce);
    struct wallet w = {HANDLE,           TOKEN, REALM, "POST",
                       "/getblocks.bin", nonce, NULL,  "q83vEjRWeJCrze8SNFZ4kA==",
                       "00000001",       NULL};
    wallet_header(&w, hdr, sizeof hdr);
    expect_result("cnonce form", check(f->v, hdr, f->ha1, "POST", "/getblocks.bin", T0 + 2000),
                  DIGEST_OK);
    /* the same nc with a different cnonce is still a replay */
    w.cnonce = "AAAAAAAAAAAAAAAAAAAAAA==";
    wallet_header(&w, hdr, sizeof hdr);
    expect_result("cnonce replay", check(f->v, hdr, f->ha1, "POST", "/getblocks.bin", T0 + 2001),
                  DIGEST_REPLAY);
}

static void test_rfc2069_no_qop_is_single_use(void **state)
{
    struct fixture *f = *state;
    char nonce[DIGEST_NONCE_SIZE], hdr[1024];
    make_nonce(f->v, T0 + 1000, 2, nonce);
    struct wallet w = {HANDLE, TOKEN, REALM, "GET", "/get_info", nonce, NULL, NULL, NULL, NULL};
    wallet_header(&w, hdr, sizeof hdr);
    expect_result("first", check(f->v, hdr, f->ha1, "GET", "/get_info", T0 + 2000), DIGEST_OK);
    expect_result("second", check(f->v, hdr, f->ha1, "GET", "/get_info", T0 + 2001), DIGEST_REPLAY);
    /* nor can the spent nonce be reused with qop */
    struct wallet q = {HANDLE, TOKEN, REALM, "GET",      "/get_info",
                       nonce,  NULL,  NULL,  "00000009", NULL};
    wallet_header(&q, hdr, sizeof hdr);
    expect_result("then qop", check(f->v, hdr, f->ha1, "GET", "/get_info", T0 + 2002),
                  DIGEST_REPLAY);
}

/* ---- refusals ------------------------------------------------------------------------ */

static void test_refusals_table(void **state)
{
    struct fixture *f = *state;
    char nonce[DIGEST_NONCE_SIZE];
    make_nonce(f->v, T0 + 1000, 3, nonce);
    const char *op = NULL;
    struct {
        const char *what;
        struct wallet w;
        const char *request_uri;
        bool unknown_user;
        enum digest_result want;
    } cases[] = {
        {"wrong password",
         {HANDLE, "xg_wrongwrongwrongwrongwrongwrongwrongwrongww", REALM, "POST", "/json_rpc",
          nonce, op, NULL, "00000001", NULL},
         "/json_rpc",
         false,
         DIGEST_BAD_RESPONSE},
        {"right response, unknown user",
         {HANDLE, TOKEN, REALM, "POST", "/json_rpc", nonce, op, NULL, "00000001", NULL},
         "/json_rpc",
         true,
         DIGEST_BAD_RESPONSE},
        {"wrong method hashed",
         {HANDLE, TOKEN, REALM, "GET", "/json_rpc", nonce, op, NULL, "00000001", NULL},
         "/json_rpc",
         false,
         DIGEST_BAD_RESPONSE},
        {"uri of another request",
         {HANDLE, TOKEN, REALM, "POST", "/json_rpc", nonce, op, NULL, "00000001", NULL},
         "/get_info",
         false,
         DIGEST_BAD_URI},
        {"absolute uri of another path",
         {HANDLE, TOKEN, REALM, "POST", "http://127.0.0.1:18081/get_info", nonce, op, NULL,
          "00000001", NULL},
         "/json_rpc",
         false,
         DIGEST_BAD_URI},
        {"absolute uri that only ends in the path",
         {HANDLE, TOKEN, REALM, "POST", "http://127.0.0.1:18081/x/json_rpc", nonce, op, NULL,
          "00000001", NULL},
         "/json_rpc",
         false,
         DIGEST_BAD_URI},
        {"absolute uri without authority",
         {HANDLE, TOKEN, REALM, "POST", "http:///json_rpc", nonce, op, NULL, "00000001", NULL},
         "/json_rpc",
         false,
         DIGEST_BAD_URI},
        {"uri of another scheme",
         {HANDLE, TOKEN, REALM, "POST", "ftp://127.0.0.1/json_rpc", nonce, op, NULL, "00000001",
          NULL},
         "/json_rpc",
         false,
         DIGEST_BAD_URI},
        {"another realm",
         {HANDLE, TOKEN, "monero-rpc", "POST", "/json_rpc", nonce, op, NULL, "00000001", NULL},
         "/json_rpc",
         false,
         DIGEST_BAD_REALM},
        {"MD5-sess, wrong password",
         {HANDLE, "xg_wrongwrongwrongwrongwrongwrongwrongwrongww", REALM, "POST", "/json_rpc",
          nonce, op, "c", "00000001", "MD5-sess"},
         "/json_rpc",
         false,
         DIGEST_BAD_RESPONSE},
        {"a name that only starts with MD5",
         {HANDLE, TOKEN, REALM, "POST", "/json_rpc", nonce, op, "c", "00000001", "MD5-foo"},
         "/json_rpc",
         false,
         DIGEST_UNSUPPORTED},
        {"SHA-256",
         {HANDLE, TOKEN, REALM, "POST", "/json_rpc", nonce, op, "c", "00000001", "SHA-256"},
         "/json_rpc",
         false,
         DIGEST_UNSUPPORTED},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char hdr[1024];
        wallet_header(&cases[i].w, hdr, sizeof hdr);
        enum digest_result r = check(f->v, hdr, cases[i].unknown_user ? NULL : f->ha1, "POST",
                                     cases[i].request_uri, T0 + 2000);
        expect_result(cases[i].what, r, cases[i].want);
        assert_false(digest_result_is_stale(r));
    }
    /* An unknown user must not pass with a response made for whatever HA1 stands in for
     * "no tenant" (here: all zero, all 0xff). */
    static const uint8_t stand_ins[2][TOKEN_HA1_LEN] = {{0},
                                                        {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                                         0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                                         0xff, 0xff}};
    for (size_t i = 0; i < ARRAY_LEN(stand_ins); i++) {
        char hdr[1024];
        struct wallet w = {HANDLE, TOKEN, REALM, "POST",     "/json_rpc",
                           nonce,  op,    NULL,  "00000001", NULL};
        wallet_header(&w, hdr, sizeof hdr);
        struct auth_request req = {.path = "/json_rpc", .authorization = hdr};
        struct auth_credential c;
        uint8_t r[TOKEN_HA1_LEN];
        assert_int_equal(auth_parse(&req, &c), AUTH_DIGEST);
        assert_true(digest_response(stand_ins[i], "POST", &c.digest, r));
        for (int k = 0; k < 16; k++)
            snprintf(c.digest.response + 2 * k, 3, "%02x", r[k]);
        expect_result("unknown user, stand-in HA1",
                      digest_verify(f->v, &c.digest, NULL, "POST", "/json_rpc", T0 + 2000),
                      DIGEST_BAD_RESPONSE);
    }
    /* none of the refusals spent nc 1 */
    expect_result("nc 1 after refusals", wallet_request(f, nonce, "00000001", T0 + 3000),
                  DIGEST_OK);

    /* qop=auth-int, hand-written */
    char hdr[512];
    snprintf(hdr, sizeof hdr,
             "Digest username=\"%s\", realm=\"%s\", nonce=\"%s\", uri=\"/json_rpc\", "
             "qop=auth-int, nc=00000002, cnonce=\"c\", response=\"%032d\"",
             HANDLE, REALM, nonce, 0);
    expect_result("auth-int", check(f->v, hdr, f->ha1, "POST", "/json_rpc", T0 + 3000),
                  DIGEST_UNSUPPORTED);
}

static void test_case_variants_accepted(void **state)
{
    struct fixture *f = *state;
    char nonce[DIGEST_NONCE_SIZE], hdr[1024];
    make_nonce(f->v, T0 + 1000, 4, nonce);
    struct wallet w = {HANDLE, TOKEN, REALM, "POST",     "/json_rpc",
                       nonce,  NULL,  NULL,  "00000001", "md5"};
    wallet_header(&w, hdr, sizeof hdr);
    expect_result("algorithm=md5", check(f->v, hdr, f->ha1, "POST", "/json_rpc", T0 + 2000),
                  DIGEST_OK);
    /* an upper-case hex response */
    w.nc = "00000002";
    wallet_header(&w, hdr, sizeof hdr);
    char *r = strstr(hdr, "response=\"") + 10;
    for (int i = 0; i < 32; i++)
        if (r[i] >= 'a' && r[i] <= 'f')
            r[i] = (char)(r[i] - 'a' + 'A');
    expect_result("upper-case response", check(f->v, hdr, f->ha1, "POST", "/json_rpc", T0 + 2001),
                  DIGEST_OK);
}

/* ---- what monerod accepts, as clients send it ----------------------------------------- */

static void test_accepted_forms_table(void **state)
{
    struct fixture *f = *state;
    char nonce[DIGEST_NONCE_SIZE];
    make_nonce(f->v, T0 + 1000, 0x21, nonce);
    static const struct {
        const char *what;
        const char *uri, *opaque, *cnonce, *algorithm, *qop;
        bool upper_hex;
        const char *request_uri; /* NULL: uri */
    } cases[] = {
        {"wallet 0.18: MD5, no cnonce, no opaque", "/json_rpc", NULL, NULL, NULL, NULL, false,
         NULL},
        {"wallet 0.18.3+: a cnonce", "/getblocks.bin", NULL, "q83vEjRWeJCrze8SNFZ4kA==", NULL, NULL,
         false, NULL},
        {"opaque echoed", "/json_rpc", "5ccc069c403ebaf9f0171e9517f40e41", NULL, NULL, NULL, false,
         NULL},
        {"opaque \"null\" (none in the challenge)", "/json_rpc", "null", "c", NULL, NULL, false,
         NULL},
        {"opaque empty", "/json_rpc", "", "c", NULL, NULL, false, NULL},
        {"qop quoted", "/json_rpc", NULL, "c", NULL, "\"auth\"", false, NULL},
        {"qop upper-case, hashed as sent", "/json_rpc", NULL, "c", NULL, "AUTH", false, NULL},
        {"no algorithm: MD5", "/json_rpc", NULL, "c", "", NULL, false, NULL},
        {"algorithm quoted", "/json_rpc", NULL, "c", "\"MD5\"", NULL, false, NULL},
        {"upper-case hex response", "/json_rpc", NULL, NULL, NULL, NULL, true, NULL},
        {"MD5-sess with a cnonce", "/json_rpc", NULL, "0a4f113b", "MD5-sess", NULL, false, NULL},
        {"MD5-sess without a cnonce (hashed as \"\")", "/json_rpc", NULL, NULL, "MD5-sess", NULL,
         false, NULL},
        {"MD5-SESS, quoted", "/json_rpc", NULL, "0a4f113b", "\"MD5-SESS\"", "\"auth\"", false,
         NULL},
        {"absolute uri with a port", "http://127.0.0.1:33100/json_rpc", "null", "c", NULL, NULL,
         false, "/json_rpc"},
        {"absolute https uri", "https://node.example/get_info", NULL, "c", NULL, NULL, false,
         "/get_info"},
        {"absolute uri, scheme in capitals", "HTTP://node.example:80/get_info", NULL, "c", NULL,
         NULL, false, "/get_info"},
        {"absolute uri with a query", "http://h/get_info?a=1", NULL, "c", NULL, NULL, false,
         "/get_info?a=1"},
        {"path with a query", "/get_info?a=1", NULL, "c", NULL, NULL, false, NULL},
        {"an absolute request target, the same in uri", "http://h/json_rpc", NULL, "c", NULL, NULL,
         false, "http://h/json_rpc"},
        {"MD5-sess, absolute uri, upper-case hex", "http://127.0.0.1:1/json_rpc", "null", "x",
         "MD5-sess", "auth", true, "/json_rpc"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char hdr[1024], nc[9];
        snprintf(nc, sizeof nc, "%08zx", i + 1);
        struct wallet w = {HANDLE, TOKEN,           REALM,           "POST", cases[i].uri,
                           nonce,  cases[i].opaque, cases[i].cnonce, nc,     cases[i].algorithm};
        struct form form = {cases[i].qop, cases[i].upper_hex};
        wallet_header_as(&w, &form, hdr, sizeof hdr);
        const char *target = cases[i].request_uri ? cases[i].request_uri : cases[i].uri;
        expect_result(cases[i].what, check(f->v, hdr, f->ha1, "POST", target, T0 + 2000),
                      DIGEST_OK);
    }
}

/* MD5-sess as digest_response computes it, against a response computed here; and the
 * session key is not the plain one. */
static void test_md5_sess(void **state)
{
    struct fixture *f = *state;
    char nonce[DIGEST_NONCE_SIZE], hdr[1024];
    make_nonce(f->v, T0 + 1000, 0x22, nonce);
    struct wallet w = {HANDLE, TOKEN, REALM, "GET",      "/get_info",
                       nonce,  NULL,  "cn",  "00000001", "MD5-sess"};
    wallet_header(&w, hdr, sizeof hdr);
    struct auth_request req = {.path = "/get_info", .authorization = hdr};
    struct auth_credential c;
    assert_int_equal(auth_parse(&req, &c), AUTH_DIGEST);
    uint8_t got[TOKEN_HA1_LEN], want[TOKEN_HA1_LEN];
    char want_hex[33];
    wallet_response(&w, &epee_form, want_hex);
    for (int i = 0; i < 16; i++)
        assert_int_equal(sscanf(want_hex + 2 * i, "%2hhx", &want[i]), 1);
    assert_true(digest_response(f->ha1, "GET", &c.digest, got));
    assert_memory_equal(got, want, sizeof want);
    strcpy(c.digest.algorithm, "MD5");
    assert_true(digest_response(f->ha1, "GET", &c.digest, got));
    assert_memory_not_equal(got, want, sizeof want);
    /* labelled MD5, the MD5-sess response is wrong; relabelled back it passes once */
    expect_result("sess response labelled MD5",
                  digest_verify(f->v, &c.digest, f->ha1, "GET", "/get_info", T0 + 2000),
                  DIGEST_BAD_RESPONSE);
    strcpy(c.digest.algorithm, "md5-sess");
    expect_result("md5-sess", digest_verify(f->v, &c.digest, f->ha1, "GET", "/get_info", T0 + 2000),
                  DIGEST_OK);
    expect_result("md5-sess replayed",
                  digest_verify(f->v, &c.digest, f->ha1, "GET", "/get_info", T0 + 2001),
                  DIGEST_REPLAY);
    /* another cnonce with the same nc changes the key, and is a replay all the same */
    w.cnonce = "other";
    wallet_header(&w, hdr, sizeof hdr);
    expect_result("md5-sess, new cnonce, same nc",
                  check(f->v, hdr, f->ha1, "GET", "/get_info", T0 + 2002), DIGEST_REPLAY);
    w.nc = "00000002";
    wallet_header(&w, hdr, sizeof hdr);
    expect_result("md5-sess, next nc", check(f->v, hdr, f->ha1, "GET", "/get_info", T0 + 2003),
                  DIGEST_OK);
    /* stale rules hold for MD5-sess too */
    w.nc = "00000003";
    wallet_header(&w, hdr, sizeof hdr);
    expect_result("md5-sess, expired nonce",
                  check(f->v, hdr, f->ha1, "GET", "/get_info", T0 + 1000 + LIFETIME + 1),
                  DIGEST_STALE);
}

/* The exact headers of the clients the integration tests drive, built as they build them. */
static void test_client_headers(void **state)
{
    struct fixture *f = *state;
    char nonce[DIGEST_NONCE_SIZE], hdr[1024], resp[33];
    make_nonce(f->v, T0 + 1000, 0x23, nonce);

    /* Python requests' HTTPDigestAuth, after reading our two challenges as one dict */
    struct wallet py = {HANDLE,      TOKEN,     REALM, "POST",
                        "/json_rpc", nonce,     NULL,  "2f4a0c9e8b7d6a51",
                        "00000001",  "MD5-sess"};
    wallet_response(&py, &epee_form, resp);
    snprintf(hdr, sizeof hdr,
             "Digest username=\"%s\", realm=\"%s\", nonce=\"%s\", uri=\"/json_rpc\", "
             "response=\"%s\", algorithm=\"MD5-sess\", qop=\"auth\", nc=00000001, "
             "cnonce=\"2f4a0c9e8b7d6a51\"",
             HANDLE, REALM, nonce, resp);
    expect_result("python requests", check(f->v, hdr, f->ha1, "POST", "/json_rpc", T0 + 2000),
                  DIGEST_OK);

    /* a naive client: absolute uri, opaque "null", qop unquoted, a cnonce, odd blanks */
    struct wallet naive = {HANDLE, TOKEN, REALM, "POST",     "http://127.0.0.1:33100/json_rpc",
                           nonce,  NULL,  "abc", "00000002", NULL};
    wallet_response(&naive, &epee_form, resp);
    snprintf(hdr, sizeof hdr,
             "Digest  username=\"%s\",realm=\"%s\" , nonce=\"%s\",\turi=\"http://127.0.0.1:33100/"
             "json_rpc\", algorithm=MD5,response=\"%s\",opaque=\"null\",qop=auth,nc=00000002,"
             "cnonce=\"abc\"",
             HANDLE, REALM, nonce, resp);
    expect_result("naive client", check(f->v, hdr, f->ha1, "POST", "/json_rpc", T0 + 2001),
                  DIGEST_OK);

    /* curl --digest: blanks after the commas, qop unquoted, algorithm last */
    struct wallet curl = {HANDLE, TOKEN, REALM,      "POST",     "/json_rpc",
                          nonce,  NULL,  "NjE2ZTc4", "00000003", NULL};
    wallet_response(&curl, &epee_form, resp);
    snprintf(hdr, sizeof hdr,
             "Digest username=\"%s\", realm=\"%s\", nonce=\"%s\", uri=\"/json_rpc\", "
             "cnonce=\"NjE2ZTc4\", nc=00000003, qop=auth, response=\"%s\", algorithm=MD5",
             HANDLE, REALM, nonce, resp);
    expect_result("curl", check(f->v, hdr, f->ha1, "POST", "/json_rpc", T0 + 2002), DIGEST_OK);
}

/* ---- nonce lifetime and forgery ------------------------------------------------------ */

static void test_expiry_is_stale(void **state)
{
    struct fixture *f = *state;
    char nonce[DIGEST_NONCE_SIZE];
    int64_t issued = T0 + 5000;
    make_nonce(f->v, issued, 5, nonce);
    assert_int_equal(digest_nonce_check(f->v, nonce, issued), DIGEST_NONCE_LIVE);
    assert_int_equal(digest_nonce_check(f->v, nonce, issued + LIFETIME), DIGEST_NONCE_LIVE);
    assert_int_equal(digest_nonce_check(f->v, nonce, issued + LIFETIME + 1), DIGEST_NONCE_EXPIRED);
    assert_int_equal(digest_nonce_check(f->v, nonce, issued - DIGEST_CLOCK_SKEW_MS),
                     DIGEST_NONCE_LIVE);
    assert_int_equal(digest_nonce_check(f->v, nonce, issued - DIGEST_CLOCK_SKEW_MS - 1),
                     DIGEST_NONCE_EXPIRED);

    expect_result("at the limit", wallet_request(f, nonce, "00000001", issued + LIFETIME),
                  DIGEST_OK);
    enum digest_result r = wallet_request(f, nonce, "00000002", issued + LIFETIME + 1);
    expect_result("past the limit", r, DIGEST_STALE);
    assert_true(digest_result_is_stale(r));
    assert_int_equal(digest_result_http_status(r), 401);

    /* a wrong password on an expired nonce is a wrong password, not "stale" */
    char hdr[1024];
    struct wallet w = {HANDLE, "not the token", REALM, "POST", "/json_rpc", nonce, NULL,
                       NULL,   "00000003",      NULL};
    wallet_header(&w, hdr, sizeof hdr);
    expect_result("expired, wrong password",
                  check(f->v, hdr, f->ha1, "POST", "/json_rpc", issued + LIFETIME + 1),
                  DIGEST_BAD_RESPONSE);

    /* from a replica whose clock runs ahead */
    char future[DIGEST_NONCE_SIZE];
    make_nonce(f->v, T0 + 100000, 6, future);
    expect_result("within skew", wallet_request(f, future, "00000001", T0 + 100000 - 60000),
                  DIGEST_OK);
    make_nonce(f->v, T0 + 200000, 7, future);
    expect_result("beyond skew", wallet_request(f, future, "00000001", T0 + 200000 - 60001),
                  DIGEST_STALE);
}

static void test_forged_nonce_is_invalid_not_stale(void **state)
{
    struct fixture *f = *state;
    char good[DIGEST_NONCE_SIZE], forged[DIGEST_NONCE_SIZE];
    make_nonce(f->v, T0 + 1000, 8, good);

    /* change one character in each of the stamp, the id and the MAC */
    static const size_t positions[] = {2, 15, 30, 46};
    for (size_t i = 0; i < ARRAY_LEN(positions); i++) {
        memcpy(forged, good, sizeof forged);
        forged[positions[i]] = forged[positions[i]] == 'A' ? 'B' : 'A';
        assert_int_equal(digest_nonce_check(f->v, forged, T0 + 2000), DIGEST_NONCE_FORGED);
        /* the response is right for the forged nonce: only the MAC is wrong */
        enum digest_result r = wallet_request(f, forged, "00000001", T0 + 2000);
        expect_result("forged nonce", r, DIGEST_BAD_NONCE);
        assert_false(digest_result_is_stale(r));
    }

    /* a nonce from a verifier with another key */
    struct digest_verifier *other = new_verifier(key_b, 0);
    make_nonce(other, T0 + 1000, 8, forged);
    digest_verifier_free(other);
    assert_int_equal(digest_nonce_check(f->v, forged, T0 + 2000), DIGEST_NONCE_FORGED);
    expect_result("other key", wallet_request(f, forged, "00000001", T0 + 2000), DIGEST_BAD_NONCE);

    /* wrong length or alphabet, and an RFC-style hex nonce */
    static const char *garbage[] = {
        "dcd98b7102dd2f0e8b11d0f600bfb0c093",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",   /* 47 */
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", /* 49 */
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA+/",
    };
    for (size_t i = 0; i < ARRAY_LEN(garbage); i++) {
        assert_int_equal(digest_nonce_check(f->v, garbage[i], T0 + 2000), DIGEST_NONCE_FORGED);
        expect_result(garbage[i], wallet_request(f, garbage[i], "00000001", T0 + 2000),
                      DIGEST_BAD_NONCE);
    }
    /* the genuine one was never spent by the forgeries */
    expect_result("genuine", wallet_request(f, good, "00000001", T0 + 2000), DIGEST_OK);
}

static void test_replicas_share_nonces(void **state)
{
    struct fixture *f = *state;
    struct digest_verifier *b = new_verifier(key_a, 0);
    struct digest_verifier *c = new_verifier(key_b, 0);

    char nonce[DIGEST_NONCE_SIZE], hdr[1024];
    assert_true(digest_nonce_issue(f->v, T0 + 1000, nonce));
    assert_int_equal(digest_nonce_check(b, nonce, T0 + 1000), DIGEST_NONCE_LIVE);
    assert_int_equal(digest_nonce_check(c, nonce, T0 + 1000), DIGEST_NONCE_FORGED);

    struct wallet w = {HANDLE, TOKEN, REALM, "POST",     "/json_rpc",
                       nonce,  NULL,  NULL,  "00000001", NULL};
    wallet_header(&w, hdr, sizeof hdr);
    expect_result("replica A", check(f->v, hdr, f->ha1, "POST", "/json_rpc", T0 + 2000), DIGEST_OK);
    w.nc = "00000002";
    wallet_header(&w, hdr, sizeof hdr);
    expect_result("replica B", check(b, hdr, f->ha1, "POST", "/json_rpc", T0 + 2001), DIGEST_OK);
    expect_result("replica B again", check(b, hdr, f->ha1, "POST", "/json_rpc", T0 + 2002),
                  DIGEST_REPLAY);
    digest_verifier_free(b);
    digest_verifier_free(c);
}

/* ---- the nc window ------------------------------------------------------------------- */

static void test_nc_window(void **state)
{
    struct fixture *f = *state;
    char nonce[DIGEST_NONCE_SIZE];
    make_nonce(f->v, T0 + 1000, 9, nonce);
    static const struct {
        const char *nc;
        enum digest_result want;
    } steps[] = {
        {"00000001", DIGEST_OK},     {"00000002", DIGEST_OK},     {"00000003", DIGEST_OK},
        {"00000003", DIGEST_REPLAY}, {"00000005", DIGEST_OK},     {"00000004", DIGEST_OK},
        {"00000004", DIGEST_REPLAY}, {"00000064", DIGEST_OK}, /* 100 */
        {"00000024", DIGEST_REPLAY},                          /* 36: 64 behind, out of window */
        {"00000025", DIGEST_OK},                              /* 37: 63 behind, unseen */
        {"00000025", DIGEST_REPLAY}, {"00000063", DIGEST_OK},     {"00000064", DIGEST_REPLAY},
        {"ffffffff", DIGEST_OK},     {"00000065", DIGEST_REPLAY}, {"ffffffff", DIGEST_REPLAY},
        {"fffffffe", DIGEST_OK},
    };
    for (size_t i = 0; i < ARRAY_LEN(steps); i++) {
        char what[64];
        snprintf(what, sizeof what, "step %zu nc %s", i, steps[i].nc);
        expect_result(what, wallet_request(f, nonce, steps[i].nc, T0 + 2000 + (int64_t)i),
                      steps[i].want);
    }
}

/* ---- bounded memory: forgetting means stale ------------------------------------------ */

static void test_eviction_is_stale_never_fresh(void **state)
{
    struct fixture *f = *state;
    struct digest_verifier *saved = f->v;
    f->v = new_verifier(key_a, DIGEST_WAYS); /* one set: every nonce competes */
    char nonce[DIGEST_WAYS + 2][DIGEST_NONCE_SIZE];
    for (int i = 1; i <= DIGEST_WAYS + 1; i++)
        make_nonce(f->v, T0 + 1000 * i, (uint8_t)i, nonce[i]);
    for (int i = 1; i <= DIGEST_WAYS + 1; i++)
        expect_result("fill", wallet_request(f, nonce[i], "00000001", T0 + 20000), DIGEST_OK);
    /* nonce 1 (the oldest) was evicted by nonce 9: its replay must not look fresh */
    expect_result("evicted, replayed", wallet_request(f, nonce[1], "00000001", T0 + 20001),
                  DIGEST_STALE);
    expect_result("evicted, next nc", wallet_request(f, nonce[1], "00000002", T0 + 20002),
                  DIGEST_STALE);
    /* the others are still tracked */
    expect_result("kept, replayed", wallet_request(f, nonce[2], "00000001", T0 + 20003),
                  DIGEST_REPLAY);
    expect_result("kept, next nc", wallet_request(f, nonce[2], "00000002", T0 + 20004), DIGEST_OK);
    /* a never-seen nonce older than everything tracked cannot be tracked: stale */
    char old[DIGEST_NONCE_SIZE];
    make_nonce(f->v, T0 + 1500, 0x77, old);
    expect_result("older than the set", wallet_request(f, old, "00000001", T0 + 20005),
                  DIGEST_STALE);
    /* what the wallet does next: a fresh nonce, nc from 1 */
    char fresh[DIGEST_NONCE_SIZE];
    assert_true(digest_nonce_issue(f->v, T0 + 20006, fresh));
    expect_result("fresh", wallet_request(f, fresh, "00000001", T0 + 20007), DIGEST_OK);
    digest_verifier_free(f->v);
    f->v = saved;
}

static void test_nonce_from_before_start_is_stale(void **state)
{
    struct fixture *f = *state;
    char before[DIGEST_NONCE_SIZE], at[DIGEST_NONCE_SIZE];
    make_nonce(f->v, T0 - 1, 0x40, before); /* issued by a previous process */
    make_nonce(f->v, T0, 0x41, at);
    assert_int_equal(digest_nonce_check(f->v, before, T0 + 10), DIGEST_NONCE_LIVE);
    expect_result("before start", wallet_request(f, before, "00000005", T0 + 10), DIGEST_STALE);
    expect_result("at start", wallet_request(f, at, "00000001", T0 + 10), DIGEST_OK);
}

/* ---- threads ------------------------------------------------------------------------- */

#define THREADS 4
#define NCS     1500

struct worker {
    struct digest_verifier *v;
    const uint8_t *ha1;
    struct auth_digest shared, own;
    atomic_int *accepted; /* per nc of the shared nonce */
    int own_ok;
};

static void set_nc(struct auth_digest *d, const uint8_t *ha1, uint32_t nc)
{
    uint8_t r[TOKEN_HA1_LEN];
    snprintf(d->nc, sizeof d->nc, "%08x", nc);
    d->nc_value = nc;
    if (!digest_response(ha1, "POST", d, r))
        abort(); /* cmocka's asserts must not run off the main thread */
    for (int i = 0; i < 16; i++)
        snprintf(d->response + 2 * i, 3, "%02x", r[i]);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    for (uint32_t nc = 1; nc <= NCS; nc++) {
        set_nc(&w->shared, w->ha1, nc);
        if (digest_verify(w->v, &w->shared, w->ha1, "POST", "/json_rpc", T0 + 5000) == DIGEST_OK)
            atomic_fetch_add(&w->accepted[nc], 1);
        set_nc(&w->own, w->ha1, nc);
        if (digest_verify(w->v, &w->own, w->ha1, "POST", "/json_rpc", T0 + 5000) == DIGEST_OK)
            w->own_ok++;
    }
    return NULL;
}

static void base_cred(struct auth_digest *d, const char *nonce)
{
    memset(d, 0, sizeof *d);
    strcpy(d->username, HANDLE);
    strcpy(d->realm, REALM);
    strcpy(d->nonce, nonce);
    strcpy(d->uri, "/json_rpc");
    strcpy(d->qop, "auth");
    strcpy(d->algorithm, "MD5");
}

static void test_concurrent_replay_refusal(void **state)
{
    struct fixture *f = *state;
    struct digest_verifier *saved = f->v;
    f->v = new_verifier(key_a, 2 * DIGEST_WAYS); /* two sets, shared by all threads */
    static atomic_int accepted[NCS + 1];
    struct worker w[THREADS];
    pthread_t tid[THREADS];
    char shared[DIGEST_NONCE_SIZE];
    make_nonce(f->v, T0 + 1000, 0xaa, shared);
    for (int i = 0; i < THREADS; i++) {
        char own[DIGEST_NONCE_SIZE];
        make_nonce(f->v, T0 + 1000, (uint8_t)(0xb0 + i), own);
        w[i] = (struct worker){.v = f->v, .ha1 = f->ha1, .accepted = accepted};
        base_cred(&w[i].shared, shared);
        base_cred(&w[i].own, own);
    }
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&tid[i], NULL, worker_main, &w[i]), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(tid[i], NULL), 0);

    int total = 0;
    for (int nc = 1; nc <= NCS; nc++) {
        int n = atomic_load(&accepted[nc]);
        if (n > 1)
            fail_msg("nc %d of the shared nonce was accepted %d times", nc, n);
        total += n;
    }
    assert_true(total > 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(w[i].own_ok, NCS); /* no interference between nonces */
    digest_verifier_free(f->v);
    f->v = saved;
}

/* ---- small pieces -------------------------------------------------------------------- */

static void test_result_mapping(void **state)
{
    (void)state;
    static const struct {
        enum digest_result r;
        int status;
        bool stale;
    } cases[] = {
        {DIGEST_OK, 200, false},        {DIGEST_STALE, 401, true},
        {DIGEST_REPLAY, 401, true},     {DIGEST_BAD_RESPONSE, 401, false},
        {DIGEST_BAD_NONCE, 401, false}, {DIGEST_BAD_REALM, 401, false},
        {DIGEST_BAD_URI, 400, false},   {DIGEST_UNSUPPORTED, 401, false},
        {DIGEST_ERROR, 500, false},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        assert_int_equal(digest_result_http_status(cases[i].r), cases[i].status);
        assert_int_equal(digest_result_is_stale(cases[i].r), cases[i].stale);
        assert_string_not_equal(digest_result_name(cases[i].r), "unknown");
    }
}

static void test_verifier_config(void **state)
{
    (void)state;
    static const uint8_t key[DIGEST_KEY_MAX + 1] = {1};
    static const struct {
        size_t key_len;
        const char *realm;
        int64_t lifetime;
        bool ok;
    } cases[] = {
        {32, "xmrgate", 1000, true},
        {DIGEST_KEY_MIN, "xmrgate", 1000, true},
        {DIGEST_KEY_MAX, "xmrgate", 1000, true},
        {DIGEST_KEY_MIN - 1, "xmrgate", 1000, false},
        {DIGEST_KEY_MAX + 1, "xmrgate", 1000, false},
        {32, "", 1000, false},
        {32, "x\"y", 1000, false},
        {32, NULL, 1000, false},
        {32, "xmrgate", 0, false},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct digest_config cfg = {key, cases[i].key_len, cases[i].realm, cases[i].lifetime, 0};
        struct digest_verifier *v = digest_verifier_new(&cfg, T0);
        if ((v != NULL) != cases[i].ok)
            fail_msg("config case %zu", i);
        digest_verifier_free(v);
    }
}

static void test_challenge_header(void **state)
{
    struct fixture *f = *state;
    struct digest_challenges a, b;
    char want[DIGEST_CHALLENGE_SIZE], nonce[DIGEST_NONCE_SIZE];
    assert_true(digest_challenge(f->v, T0 + 1000, false, &a));
    assert_true(digest_challenge(f->v, T0 + 1000, true, &b));
    const char *n = strstr(a.md5, "nonce=\"") + 7;
    memcpy(nonce, n, DIGEST_NONCE_LEN);
    nonce[DIGEST_NONCE_LEN] = '\0';
    /* monerod's two challenges, byte for byte, with our realm and one nonce for both */
    snprintf(want, sizeof want,
             "Digest qop=\"auth\",algorithm=MD5,realm=\"xmrgate\",nonce=\"%s\",stale=false", nonce);
    assert_string_equal(a.md5, want);
    snprintf(want, sizeof want,
             "Digest qop=\"auth\",algorithm=MD5-sess,realm=\"xmrgate\",nonce=\"%s\",stale=false",
             nonce);
    assert_string_equal(a.md5_sess, want);
    assert_int_equal(digest_nonce_check(f->v, nonce, T0 + 1000), DIGEST_NONCE_LIVE);

    n = strstr(b.md5, "nonce=\"") + 7;
    memcpy(nonce, n, DIGEST_NONCE_LEN);
    snprintf(want, sizeof want,
             "Digest qop=\"auth\",algorithm=MD5,realm=\"xmrgate\",nonce=\"%s\",stale=true", nonce);
    assert_string_equal(b.md5, want);
    snprintf(want, sizeof want,
             "Digest qop=\"auth\",algorithm=MD5-sess,realm=\"xmrgate\",nonce=\"%s\",stale=true",
             nonce);
    assert_string_equal(b.md5_sess, want);
    assert_string_not_equal(a.md5, b.md5); /* a new nonce per challenge */
    assert_string_equal(digest_realm(f->v), REALM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc2617_mufasa),
        cmocka_unit_test_setup_teardown(test_wallet_018_empty_cnonce, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wallet_with_cnonce, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rfc2069_no_qop_is_single_use, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_case_variants_accepted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_accepted_forms_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_md5_sess, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_headers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry_is_stale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forged_nonce_is_invalid_not_stale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replicas_share_nonces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nc_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eviction_is_stale_never_fresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nonce_from_before_start_is_stale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_replay_refusal, setup, teardown),
        cmocka_unit_test(test_result_mapping),
        cmocka_unit_test(test_verifier_config),
        cmocka_unit_test_setup_teardown(test_challenge_header, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
