/* Tests for gateway/auth: credential sources, Basic/Bearer, the Digest parameter parser,
 * and the challenge headers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "auth/auth.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define T   "xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8" /* a well-formed token */
#define R32 "0123456789abcdef0123456789abcdef"               /* a hex response */

static const char *kind_name(enum auth_kind k)
{
    static const char *names[] = {"NONE",   "PATH_TOKEN",   "BEARER",  "API_KEY",  "BASIC",
                                  "DIGEST", "OTHER_SCHEME", "INVALID", "MALFORMED"};
    return (size_t)k < ARRAY_LEN(names) ? names[k] : "?";
}

static void expect_kind(size_t i, const char *what, enum auth_kind got, enum auth_kind want)
{
    if (got != want)
        fail_msg("case %zu (%s): got %s, want %s", i, what, kind_name(got), kind_name(want));
}

/* "Basic " + base64(plain), encoded by OpenSSL rather than by the code under test. */
static char *basic_header(const char *plain, size_t n)
{
    char *out = malloc(6 + 4 * (n / 3 + 1) + 1);
    assert_non_null(out);
    memcpy(out, "Basic ", 6);
    EVP_EncodeBlock((unsigned char *)out + 6, (const unsigned char *)plain, (int)n);
    return out;
}

/* ---- paths --------------------------------------------------------------------------- */

static void test_path_split_table(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        enum auth_kind kind;
        const char *rest;
    } cases[] = {
        {"/v1/" T "/json_rpc", AUTH_PATH_TOKEN, "/json_rpc"},
        {"/v1/" T "/getblocks.bin", AUTH_PATH_TOKEN, "/getblocks.bin"},
        {"/v1/" T "/get_transactions", AUTH_PATH_TOKEN, "/get_transactions"},
        {"/v1/" T, AUTH_PATH_TOKEN, "/"},
        {"/v1/" T "/", AUTH_PATH_TOKEN, "/"},
        {"/v1/" T "//json_rpc", AUTH_PATH_TOKEN, "//json_rpc"},
        /* agent endpoints: no token */
        {"/v1/json_rpc", AUTH_NONE, "/v1/json_rpc"},
        {"/v1/get_info", AUTH_NONE, "/v1/get_info"},
        {"/v1/getblocks.bin", AUTH_NONE, "/v1/getblocks.bin"},
        {"/v1/", AUTH_NONE, "/v1/"},
        {"/v1", AUTH_NONE, "/v1"},
        {"/json_rpc", AUTH_NONE, "/json_rpc"},
        {"/", AUTH_NONE, "/"},
        {"/v2/" T "/json_rpc", AUTH_NONE, "/v2/" T "/json_rpc"},
        {"//v1/" T "/json_rpc", AUTH_NONE, "//v1/" T "/json_rpc"},
        {"/v1/XG_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8/json_rpc", AUTH_NONE,
         "/v1/XG_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8/json_rpc"},
        /* looks like a token attempt, but cannot be one: 401, not 404 */
        {"/v1/xg_/json_rpc", AUTH_INVALID, "/v1/xg_/json_rpc"},
        {"/v1/xg_short/json_rpc", AUTH_INVALID, "/v1/xg_short/json_rpc"},
        {"/v1/" T "A/json_rpc", AUTH_INVALID, "/v1/" T "A/json_rpc"},
        {"/v1/xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9/json_rpc", AUTH_INVALID,
         "/v1/xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9/json_rpc"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct auth_request req = {.path = cases[i].path};
        struct auth_credential c;
        expect_kind(i, cases[i].path, auth_parse(&req, &c), cases[i].kind);
        assert_int_equal(c.kind, cases[i].kind);
        assert_string_equal(c.rest_path, cases[i].rest);
        if (cases[i].kind == AUTH_PATH_TOKEN)
            assert_string_equal(c.token, T);
        else
            assert_string_equal(c.token, "");
        if (cases[i].kind == AUTH_INVALID)
            assert_non_null(c.detail);
    }
}

/* ---- single-token schemes ------------------------------------------------------------ */

static void test_bearer_and_api_key_table(void **state)
{
    (void)state;
    static const struct {
        const char *authorization, *api_key;
        enum auth_kind kind;
    } cases[] = {
        {"Bearer " T, NULL, AUTH_BEARER},
        {"bearer " T, NULL, AUTH_BEARER},
        {"BEARER\t" T, NULL, AUTH_BEARER},
        {"  Bearer    " T "  ", NULL, AUTH_BEARER},
        {"Bearer abc", NULL, AUTH_INVALID},
        {"Bearer " T "=", NULL, AUTH_INVALID},
        {"Bearer xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9", NULL, AUTH_INVALID},
        {"Bearer", NULL, AUTH_MALFORMED},
        {"Bearer ", NULL, AUTH_MALFORMED},
        {"Bearer " T " extra", NULL, AUTH_MALFORMED},
        {"Bearer \"" T "\"", NULL, AUTH_MALFORMED},
        {"Bearer " T ",", NULL, AUTH_MALFORMED},
        {"Bearer:" T, NULL, AUTH_MALFORMED},
        {"", NULL, AUTH_MALFORMED},
        {"   ", NULL, AUTH_MALFORMED},
        {NULL, T, AUTH_API_KEY},
        {NULL, " " T "\t", AUTH_API_KEY},
        {NULL, "xg_nope", AUTH_INVALID},
        {NULL, "", AUTH_INVALID},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct auth_request req = {
            .path = "/json_rpc",
            .authorization = cases[i].authorization,
            .api_key = cases[i].api_key,
        };
        struct auth_credential c;
        expect_kind(i, cases[i].authorization ? cases[i].authorization : cases[i].api_key,
                    auth_parse(&req, &c), cases[i].kind);
        if (cases[i].kind == AUTH_BEARER || cases[i].kind == AUTH_API_KEY)
            assert_string_equal(c.token, T);
        if (cases[i].kind == AUTH_MALFORMED || cases[i].kind == AUTH_INVALID)
            assert_non_null(c.detail);
        assert_string_equal(c.rest_path, "/json_rpc");
    }
}

static void test_basic_table(void **state)
{
    (void)state;
    static const struct {
        const char *plain; /* base64-encoded into the header by the test */
        size_t len;        /* 0: strlen */
        enum auth_kind kind;
        const char *user;
    } cases[] = {
        {"t_abcdefgh2345:" T, 0, AUTH_BASIC, "t_abcdefgh2345"},
        {":" T, 0, AUTH_BASIC, ""},
        {"anyone at all:" T, 0, AUTH_BASIC, "anyone at all"},
        {"caf\xc3\xa9:" T, 0, AUTH_BASIC, "caf\xc3\xa9"}, /* UTF-8 user */
        {"t_abcdefgh2345:xg_short", 0, AUTH_INVALID, NULL},
        {"t_abcdefgh2345:" T ":more", 0, AUTH_INVALID, NULL},
        {"t_abcdefgh2345:", 0, AUTH_INVALID, NULL},
        {"t_abcdefgh2345" T, 0, AUTH_MALFORMED, NULL}, /* no colon */
        {"", 0, AUTH_MALFORMED, NULL},
        {"t_abc\x01:" T, 0, AUTH_MALFORMED, NULL},                           /* control character */
        {"t_abc\0def:" T, 5 + 1 + 4 + TOKEN_TEXT_LEN, AUTH_MALFORMED, NULL}, /* NUL */
        {"t_abc:" T "\n", 0, AUTH_MALFORMED, NULL},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        size_t n = cases[i].len ? cases[i].len : strlen(cases[i].plain);
        char *hdr = basic_header(cases[i].plain, n);
        struct auth_request req = {.path = "/json_rpc", .authorization = hdr};
        struct auth_credential c;
        expect_kind(i, hdr, auth_parse(&req, &c), cases[i].kind);
        if (cases[i].kind == AUTH_BASIC) {
            assert_string_equal(c.username, cases[i].user);
            assert_string_equal(c.token, T);
        }
        free(hdr);
    }

    /* A user name longer than AUTH_USERNAME_MAX. */
    char plain[AUTH_USERNAME_MAX + 1 + 1 + TOKEN_TEXT_LEN + 1];
    memset(plain, 'u', AUTH_USERNAME_MAX + 1);
    strcpy(plain + AUTH_USERNAME_MAX + 1, ":" T);
    char *hdr = basic_header(plain, strlen(plain));
    struct auth_request req = {.path = "/json_rpc", .authorization = hdr};
    struct auth_credential c;
    assert_int_equal(auth_parse(&req, &c), AUTH_MALFORMED);
    free(hdr);
    /* ... and one of exactly AUTH_USERNAME_MAX is fine. */
    memmove(plain + 1, plain + 2, strlen(plain + 2) + 1);
    hdr = basic_header(plain, strlen(plain));
    req.authorization = hdr;
    assert_int_equal(auth_parse(&req, &c), AUTH_BASIC);
    assert_int_equal(strlen(c.username), AUTH_USERNAME_MAX);
    free(hdr);
}

static void test_basic_malformed_base64(void **state)
{
    (void)state;
    static const char *cases[] = {
        "Basic !!!!",      "Basic dDo6", /* "t::" is fine base64 but a bad token: checked below */
        "Basic dF9h",                    /* no colon */
        "Basic dF9hOng",                 /* missing padding */
        "Basic dF9hOng=x", "Basic dF9h Ong=", "Basic", "Basic:dF9hOng=", "Basic \"dF9hOng=\"",
    };
    static const enum auth_kind want[] = {
        AUTH_MALFORMED, AUTH_INVALID,   AUTH_MALFORMED, AUTH_MALFORMED, AUTH_MALFORMED,
        AUTH_MALFORMED, AUTH_MALFORMED, AUTH_MALFORMED, AUTH_MALFORMED,
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct auth_request req = {.path = "/json_rpc", .authorization = cases[i]};
        struct auth_credential c;
        expect_kind(i, cases[i], auth_parse(&req, &c), want[i]);
    }
}

static void test_huge_headers(void **state)
{
    (void)state;
    size_t n = AUTH_HEADER_MAX + 100;
    char *big = malloc(n + 1);
    assert_non_null(big);
    struct auth_credential c;

    memcpy(big, "Bearer ", 7);
    memset(big + 7, 'A', n - 7);
    big[n] = '\0';
    struct auth_request req = {.path = "/json_rpc", .authorization = big};
    assert_int_equal(auth_parse(&req, &c), AUTH_MALFORMED);

    memcpy(big, "Basic ", 6);
    memset(big + 6, 'A', n - 6);
    assert_int_equal(auth_parse(&req, &c), AUTH_MALFORMED);

    memcpy(big, "Digest username=\"", 17);
    memset(big + 17, 'a', n - 17);
    assert_int_equal(auth_parse(&req, &c), AUTH_MALFORMED);

    req.authorization = NULL;
    req.api_key = big;
    assert_int_equal(auth_parse(&req, &c), AUTH_MALFORMED);
    free(big);
}

static void test_conflicts_and_other_schemes(void **state)
{
    (void)state;
    struct auth_credential c;
    struct auth_request req = {.path = "/v1/" T "/json_rpc", .authorization = "Bearer " T};
    assert_int_equal(auth_parse(&req, &c), AUTH_MALFORMED);
    assert_string_equal(c.token, "");
    assert_string_equal(c.rest_path, "/v1/" T "/json_rpc");

    req = (struct auth_request){.path = "/json_rpc", .authorization = "Bearer " T, .api_key = T};
    assert_int_equal(auth_parse(&req, &c), AUTH_MALFORMED);

    req = (struct auth_request){.path = "/v1/xg_bad/json_rpc", .api_key = T};
    assert_int_equal(auth_parse(&req, &c), AUTH_MALFORMED);

    /* A repeated Authorization header, even a valid one each time. */
    req = (struct auth_request){
        .path = "/json_rpc", .authorization = "Bearer " T, .authorization_repeated = true};
    assert_int_equal(auth_parse(&req, &c), AUTH_MALFORMED);
    assert_string_equal(c.detail, "more than one Authorization header");
    assert_string_equal(c.token, "");
    assert_string_equal(c.rest_path, "/json_rpc");

    /* An agent path and a header: one source only. */
    req = (struct auth_request){.path = "/v1/json_rpc", .authorization = "Bearer " T};
    assert_int_equal(auth_parse(&req, &c), AUTH_BEARER);
    assert_string_equal(c.rest_path, "/v1/json_rpc");

    req = (struct auth_request){.path = "/v1/json_rpc",
                                .authorization = "XMR402 txid=\"ab12\", proof=\"OutProofV2x\""};
    assert_int_equal(auth_parse(&req, &c), AUTH_OTHER_SCHEME);
    assert_string_equal(c.scheme, "XMR402");
    assert_string_equal(c.scheme_params, "txid=\"ab12\", proof=\"OutProofV2x\"");

    req.authorization = "Negotiate";
    assert_int_equal(auth_parse(&req, &c), AUTH_OTHER_SCHEME);
    assert_string_equal(c.scheme, "Negotiate");
    assert_string_equal(c.scheme_params, "");

    req.authorization = "AVeryLongSchemeNameThatIsLongerThan32";
    assert_int_equal(auth_parse(&req, &c), AUTH_MALFORMED);

    req = (struct auth_request){.path = "/json_rpc"};
    assert_int_equal(auth_parse(&req, &c), AUTH_NONE);
    assert_null(c.detail);
}

static void test_basic_user_rule(void **state)
{
    (void)state;
    struct auth_credential c = {.kind = AUTH_BASIC};
    strcpy(c.username, "t_abcdefgh2345");
    assert_true(auth_basic_user_ok(&c, "t_abcdefgh2345"));
    assert_false(auth_basic_user_ok(&c, "t_abcdefgh2346"));
    c.username[0] = '\0';
    assert_true(auth_basic_user_ok(&c, "t_abcdefgh2345"));
    strcpy(c.username, "T_ABCDEFGH2345");
    assert_false(auth_basic_user_ok(&c, "t_abcdefgh2345"));
    c.kind = AUTH_BEARER;
    c.username[0] = '\0';
    assert_false(auth_basic_user_ok(&c, "t_abcdefgh2345"));
}

/* ---- Digest parameters --------------------------------------------------------------- */

struct digest_case {
    const char *header;
    enum auth_kind kind;
    /* expected fields when kind == AUTH_DIGEST (NULL: not checked) */
    const char *username, *realm, *nonce, *uri, *qop, *nc, *cnonce, *algorithm;
    uint32_t nc_value;
};

static const struct digest_case digest_cases[] = {
    /* monero 0.18's exact format: no spaces, no cnonce */
    {"Digest algorithm=MD5,nonce=\"n1\",realm=\"xmrgate\",response=\"" R32 "\",uri=\"/json_rpc\","
     "username=\"t_abcdefgh2345\",opaque=\"op\",qop=auth,nc=00000001",
     AUTH_DIGEST, "t_abcdefgh2345", "xmrgate", "n1", "/json_rpc", "auth", "00000001", "", "MD5", 1},
    /* later monero: base64 cnonce with '+', '/', '=' */
    {"Digest algorithm=MD5,nonce=\"n1\",realm=\"xmrgate\",response=\"" R32 "\",uri=\"/json_rpc\","
     "username=\"u\",qop=auth,nc=0000002a,cnonce=\"ab+/cd==\"",
     AUTH_DIGEST, "u", "xmrgate", "n1", "/json_rpc", "auth", "0000002a", "ab+/cd==", "MD5", 42},
    /* curl's format: spaces after commas, algorithm last */
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/get_info\", cnonce=\"c\", "
     "nc=0000000A, qop=auth, response=\"" R32 "\", opaque=\"o\", algorithm=MD5",
     AUTH_DIGEST, "u", "r", "n", "/get_info", "auth", "0000000A", "c", "MD5", 10},
    /* Python requests (HTTPDigestAuth) after our two challenges: algorithm and qop quoted */
    {"Digest username=\"u\", realm=\"xmrgate\", nonce=\"n\", uri=\"/json_rpc?a=1\", response=\"" R32
     "\", algorithm=\"MD5-sess\", qop=\"auth\", nc=00000001, cnonce=\"0a1b2c3d4e5f6a7b\"",
     AUTH_DIGEST, "u", "xmrgate", "n", "/json_rpc?a=1", "auth", "00000001", "0a1b2c3d4e5f6a7b",
     "MD5-sess", 1},
    /* a naive client: absolute uri, opaque "null", upper-case hex */
    {"Digest username=\"u\",realm=\"xmrgate\",nonce=\"n\",uri=\"http://127.0.0.1:33100/json_rpc\","
     "algorithm=MD5,response=\"0123456789ABCDEF0123456789ABCDEF\",opaque=\"null\",qop=auth,"
     "nc=00000001,cnonce=\"c\"",
     AUTH_DIGEST, "u", "xmrgate", "n", "http://127.0.0.1:33100/json_rpc", "auth", "00000001", "c",
     "MD5", 1},
    /* opaque is skipped like any unknown parameter, even twice */
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32
     "\", opaque=\"a\", OPAQUE=\"b\"",
     AUTH_DIGEST, "u", "r", "n", "/", "", "", "", "", 0},
    /* RFC 2069: no qop */
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32 "\"",
     AUTH_DIGEST, "u", "r", "n", "/", "", "", "", "", 0},
    /* escapes, commas and '=' inside quotes */
    {"Digest username=\"a\\\"b\\\\c\", realm=\"x, y=z\", nonce=\"n\", uri=\"/a,b\", "
     "response=\"" R32 "\"",
     AUTH_DIGEST, "a\"b\\c", "x, y=z", "n", "/a,b", "", "", "", "", 0},
    /* case-insensitive names and scheme, whitespace around '=', tabs, empty elements */
    {"DIGEST  ,USERNAME = \"u\" ,\tRealm=\t\"r\",, NONCE=\"n\", Uri=\"/\", RESPONSE=\"" R32
     "\", QOP=\"auth\", Nc=\"00000003\",",
     AUTH_DIGEST, "u", "r", "n", "/", "auth", "00000003", "", "", 3},
    /* unknown parameters are ignored, even with odd values */
    {"Digest userhash=false, charset=UTF-8, foo=\"bar, \\\"baz\\\"\", username=\"u\", realm=\"r\","
     " nonce=\"n\", uri=\"/\", response=\"" R32 "\"",
     AUTH_DIGEST, "u", "r", "n", "/", "", "", "", "", 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32
     "\", algorithm=MD5-sess, qop=auth, nc=00000001, cnonce=\"c\"",
     AUTH_DIGEST, "u", "r", "n", "/", "auth", "00000001", "c", "MD5-sess", 1},
    /* algorithms we refuse still parse: digest_verify says UNSUPPORTED */
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32 R32
     "\", algorithm=SHA-256",
     AUTH_DIGEST, "u", "r", "n", "/", "", "", "", "SHA-256", 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32
     "\", qop=auth-int, nc=00000001",
     AUTH_DIGEST, "u", "r", "n", "/", "auth-int", "00000001", "", "", 1},

    /* malformed */
    {"Digest", AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest ,,,", AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", username=\"v\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32
     "\"",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", Nonce=\"n\", nonce=\"n\", uri=\"/\", response=\"" R32
     "\"",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32 "\"", AUTH_MALFORMED, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", nonce=\"n\", uri=\"/\", response=\"" R32 "\"", AUTH_MALFORMED, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", uri=\"/\", response=\"" R32 "\"", AUTH_MALFORMED, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", response=\"" R32 "\"", AUTH_MALFORMED, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\"", AUTH_MALFORMED, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32 "\"",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u, realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32, AUTH_MALFORMED,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\\", AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\" realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32 "\"",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username, realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32 "\"", AUTH_MALFORMED,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest =\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32 "\"", AUTH_MALFORMED,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=u\"v\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32 "\"",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=/json_rpc, response=\"" R32 "\"",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\x01\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32 "\"",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"xyz\"", AUTH_MALFORMED,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32 R32 "0\"",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32 "\", qop=auth",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32
     "\", qop=auth, nc=1",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32
     "\", qop=auth, nc=000000001",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32
     "\", qop=auth, nc=0000000g",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32
     "\", qop=auth, nc=00000000",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32
     "\", nc=00000001",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32
     "\", cnonce=\"c\"",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32
     "\", qop=\"\", nc=00000001",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
    {"Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32
     "\", algorithm=\"\"",
     AUTH_MALFORMED, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0},
};

static void check_field(size_t i, const char *name, const char *got, const char *want)
{
    if (want != NULL && strcmp(got, want) != 0)
        fail_msg("case %zu: %s is \"%s\", want \"%s\"", i, name, got, want);
}

static void test_digest_param_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(digest_cases); i++) {
        const struct digest_case *dc = &digest_cases[i];
        struct auth_request req = {.path = "/json_rpc", .authorization = dc->header};
        struct auth_credential c;
        expect_kind(i, dc->header, auth_parse(&req, &c), dc->kind);
        if (dc->kind != AUTH_DIGEST) {
            assert_non_null(c.detail);
            assert_string_equal(c.digest.username, "");
            continue;
        }
        check_field(i, "username", c.digest.username, dc->username);
        check_field(i, "realm", c.digest.realm, dc->realm);
        check_field(i, "nonce", c.digest.nonce, dc->nonce);
        check_field(i, "uri", c.digest.uri, dc->uri);
        check_field(i, "qop", c.digest.qop, dc->qop);
        check_field(i, "nc", c.digest.nc, dc->nc);
        check_field(i, "cnonce", c.digest.cnonce, dc->cnonce);
        check_field(i, "algorithm", c.digest.algorithm, dc->algorithm);
        assert_int_equal(c.digest.nc_value, dc->nc_value);
    }
}

/* Length limits per field, and on the number of parameters. */
static void test_digest_limits(void **state)
{
    (void)state;
    char hdr[AUTH_HEADER_MAX + 1];
    char uri[AUTH_DIGEST_URI_MAX + 2];
    struct auth_credential c;
    struct auth_request req = {.path = "/json_rpc", .authorization = hdr};

    for (size_t len = AUTH_DIGEST_URI_MAX; len <= AUTH_DIGEST_URI_MAX + 1; len++) {
        memset(uri, 'a', len);
        uri[0] = '/';
        uri[len] = '\0';
        snprintf(hdr, sizeof hdr,
                 "Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"%s\", response=\"" R32
                 "\"",
                 uri);
        enum auth_kind want = len <= AUTH_DIGEST_URI_MAX ? AUTH_DIGEST : AUTH_MALFORMED;
        assert_int_equal(auth_parse(&req, &c), want);
    }

    char user[AUTH_USERNAME_MAX + 2];
    memset(user, 'u', sizeof user - 1);
    user[sizeof user - 1] = '\0';
    snprintf(hdr, sizeof hdr,
             "Digest username=\"%s\", realm=\"r\", nonce=\"n\", uri=\"/\", response=\"" R32 "\"",
             user);
    assert_int_equal(auth_parse(&req, &c), AUTH_MALFORMED);

    /* 32 parameters pass, 33 do not (27 or 28 ignored ones plus the 5 required) */
    for (int extra = 27; extra <= 28; extra++) {
        int n = snprintf(hdr, sizeof hdr,
                         "Digest username=\"u\", realm=\"r\", nonce=\"n\", uri=\"/\", "
                         "response=\"" R32 "\"");
        for (int i = 0; i < extra; i++)
            n += snprintf(hdr + n, sizeof hdr - (size_t)n, ", x%d=1", i);
        assert_int_equal(auth_parse(&req, &c), extra == 27 ? AUTH_DIGEST : AUTH_MALFORMED);
    }
}

/* ---- challenges ---------------------------------------------------------------------- */

static void test_challenge_text(void **state)
{
    (void)state;
    static const struct {
        enum auth_digest_algorithm algorithm;
        bool stale;
        const char *want; /* monerod's bytes (epee add_challenge), our realm and nonce */
    } cases[] = {
        {AUTH_DIGEST_MD5, false,
         "Digest qop=\"auth\",algorithm=MD5,realm=\"xmrgate\",nonce=\"N0nce-_x\",stale=false"},
        {AUTH_DIGEST_MD5_SESS, false,
         "Digest qop=\"auth\",algorithm=MD5-sess,realm=\"xmrgate\",nonce=\"N0nce-_x\","
         "stale=false"},
        {AUTH_DIGEST_MD5, true,
         "Digest qop=\"auth\",algorithm=MD5,realm=\"xmrgate\",nonce=\"N0nce-_x\",stale=true"},
        {AUTH_DIGEST_MD5_SESS, true,
         "Digest qop=\"auth\",algorithm=MD5-sess,realm=\"xmrgate\",nonce=\"N0nce-_x\","
         "stale=true"},
    };
    char buf[256];
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        assert_true(auth_challenge_digest(buf, sizeof buf, "xmrgate", "N0nce-_x",
                                          cases[i].algorithm, cases[i].stale));
        assert_string_equal(buf, cases[i].want);
    }
    assert_true(auth_challenge_basic(buf, sizeof buf, "xmrgate"));
    assert_string_equal(buf, "Basic realm=\"xmrgate\", charset=\"UTF-8\"");

    /* values the wallet would read back wrongly, or not at all */
    assert_false(auth_challenge_digest(buf, sizeof buf, "x\"y", "n", AUTH_DIGEST_MD5, false));
    assert_false(auth_challenge_digest(buf, sizeof buf, "x\\y", "n", AUTH_DIGEST_MD5, false));
    assert_false(auth_challenge_digest(buf, sizeof buf, "", "n", AUTH_DIGEST_MD5, false));
    assert_false(auth_challenge_digest(buf, sizeof buf, "r", "", AUTH_DIGEST_MD5_SESS, false));
    assert_false(auth_challenge_digest(buf, sizeof buf, "r\n", "n", AUTH_DIGEST_MD5, false));
    assert_false(auth_challenge_basic(buf, sizeof buf, "x\"y"));
    /* truncation is refused, not silently sent */
    assert_false(auth_challenge_digest(buf, 40, "xmrgate", "nonce", AUTH_DIGEST_MD5, false));
    assert_false(auth_challenge_basic(buf, 10, "xmrgate"));
    assert_true(auth_challenge_value_ok("testrealm@host.com"));
    assert_false(auth_challenge_value_ok("caf\xc3\xa9"));
}

/* monero's client discards a Digest challenge that carries any parameter outside its
 * table (http_auth.cpp, field_table), so ours must use only those names; and clients that
 * split the challenge on ',' without trimming need no blank after a comma. */
static void test_challenge_uses_only_names_monero_knows(void **state)
{
    (void)state;
    static const char *known[] = {"algorithm", "cnonce", "domain",   "nc",    "nonce", "opaque",
                                  "qop",       "realm",  "response", "stale", "uri",   "username"};
    static const enum auth_digest_algorithm algorithms[] = {AUTH_DIGEST_MD5, AUTH_DIGEST_MD5_SESS};
    for (size_t a = 0; a < ARRAY_LEN(algorithms); a++) {
        char buf[256];
        assert_true(auth_challenge_digest(buf, sizeof buf, "xmrgate", "abc", algorithms[a], true));
        assert_memory_equal(buf, "Digest ", 7);
        assert_null(strchr(buf + 7, ' '));
        const char *p = buf + 7;
        int names = 0;
        while (*p != '\0') {
            size_t n = strcspn(p, "=");
            bool found = false;
            for (size_t i = 0; i < ARRAY_LEN(known); i++)
                found |= strlen(known[i]) == n && strncmp(p, known[i], n) == 0;
            if (!found)
                fail_msg("challenge parameter \"%.*s\" is unknown to monero", (int)n, p);
            names++;
            p += n + 1;
            if (*p == '"') {
                p = strchr(p + 1, '"');
                assert_non_null(p);
                assert_int_not_equal(p[-1], '"'); /* monero refuses empty quoted strings */
                p++;
            } else {
                p += strcspn(p, ",");
            }
            if (*p == ',')
                p++;
        }
        assert_int_equal(names, 5);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_split_table),
        cmocka_unit_test(test_bearer_and_api_key_table),
        cmocka_unit_test(test_basic_table),
        cmocka_unit_test(test_basic_malformed_base64),
        cmocka_unit_test(test_huge_headers),
        cmocka_unit_test(test_conflicts_and_other_schemes),
        cmocka_unit_test(test_basic_user_rule),
        cmocka_unit_test(test_digest_param_table),
        cmocka_unit_test(test_digest_limits),
        cmocka_unit_test(test_challenge_text),
        cmocka_unit_test(test_challenge_uses_only_names_monero_knows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
