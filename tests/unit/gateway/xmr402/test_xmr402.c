/* Tests for gateway/xmr402: which paths are agent endpoints, the Authorization: XMR402
 * parameter parser (well-formed, malformed, truncated, oversized), tier ids, and the
 * challenge header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/auth.h"
#include "serve/errors.h"
#include "xmr402/xmr402.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define TXID  "9a0e4f0c1b2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f"
#define PROOF "OutProofV2jHQwEHcvw8uYSJcCCFzdMZh3odi1uqJXaYUv7aTPg2i8M1XnwSWcuDw5Jz1CzWjBM5Q"
#define INV   "0c2a6f3e-9b1d-4c7a-8e5f-1a2b3c4d5e6f"
#define T     "xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

static void test_agent_paths(void **state)
{
    (void)state;
    static const struct {
        const char *path, *rest; /* rest NULL: not an agent endpoint */
    } cases[] = {
        {"/v1/json_rpc", "/json_rpc"},
        {"/v1/get_height", "/get_height"},
        {"/v1/get_transactions", "/get_transactions"},
        {"/v1/get_blocks.bin", "/get_blocks.bin"},
        {"/json_rpc", NULL}, /* root paths keep 401 + Digest/Basic */
        {"/get_height", NULL},
        {"/v1/" T "/json_rpc", NULL}, /* a path token */
        {"/v1/usage", NULL},
        {"/v1/", NULL},
        {"/v1/no_such_path", NULL},
        {"/v1/stop_daemon", NULL}, /* denied: no invoice for what is never served */
        {"/v2/json_rpc", NULL},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const char *got = xmr402_agent_path(cases[i].path);
        if (!cases[i].rest ? got != NULL : !got || strcmp(got, cases[i].rest) != 0)
            fail_msg("case %zu (%s): got %s", i, cases[i].path, got ? got : "NULL");
    }
}

static void test_parse_well_formed(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "txid=\"" TXID "\", proof=\"" PROOF "\"",
        "txid=\"" TXID "\",proof=\"" PROOF "\"",
        "  TXID=\"" TXID "\" ,\tProof=\"" PROOF "\"  ",
        "proof=\"" PROOF "\", txid=" TXID,
        "txid=\"" TXID "\", proof=\"" PROOF "\", invoice=\"" INV "\"",
        "txid=\"" TXID "\", proof=\"" PROOF "\", future=\"ignored\"",
    };
    for (size_t i = 0; i < ARRAY_LEN(ok); i++) {
        struct xmr402_auth a;
        const char *detail = NULL;
        if (!xmr402_parse_params(ok[i], 2048, &a, &detail))
            fail_msg("case %zu refused: %s", i, detail);
        assert_string_equal(a.txid, TXID);
        assert_string_equal(a.proof, PROOF);
    }
    struct xmr402_auth a;
    const char *detail;
    assert_true(xmr402_parse_params("txid=\"" TXID "\", proof=\"" PROOF "\", invoice=\"" INV "\"",
                                    2048, &a, &detail));
    assert_string_equal(a.invoice, INV);
    /* an upper-case txid is the same txid */
    char upper[] = "txid=\"9A0E4F0C1B2D3E4F5A6B7C8D9E0F1A2B3C4D5E6F7A8B9C0D1E2F3A4B5C6D7E8F\", "
                   "proof=\"" PROOF "\"";
    assert_true(xmr402_parse_params(upper, 2048, &a, &detail));
    assert_string_equal(a.txid, TXID);
}

static void test_parse_malformed(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "txid=\"" TXID "\"",                        /* no proof */
        "proof=\"" PROOF "\"",                      /* no txid */
        "txid=\"" TXID "\", proof=\"" PROOF,        /* truncated: open quote */
        "txid=\"" TXID "\", proof=",                /* truncated: no value */
        "txid=\"" TXID "\", proof",                 /* truncated: no '=' */
        "txid=\"abc\", proof=\"" PROOF "\"",        /* short txid */
        "txid=\"" TXID "00\", proof=\"" PROOF "\"", /* long txid */
        "txid=\"zz0e4f0c1b2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f\", "
        "proof=\"" PROOF "\"",                                       /* not hex */
        "txid=\"" TXID "\", proof=\"InProofV2abc\"",                 /* not an out proof */
        "txid=\"" TXID "\", proof=\"OutProofV2 0OIl\"",              /* not base58 */
        "txid=\"" TXID "\", txid=\"" TXID "\", proof=\"" PROOF "\"", /* repeated */
        "txid=\"" TXID "\" proof=\"" PROOF "\"",                     /* no comma */
        "txid=\"" TXID "\", proof=\"" PROOF "\", invoice=\"not-a-uuid\"",
        "txid=\"" TXID "\", proof=\"Out\x01ProofV2\"", /* control character */
        TXID ":" PROOF,                                /* the older Bearer txid:proof form */
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        struct xmr402_auth a;
        const char *detail = NULL;
        if (xmr402_parse_params(bad[i], 2048, &a, &detail))
            fail_msg("case %zu accepted", i);
        assert_non_null(detail);
    }
}

static void test_parse_oversized(void **state)
{
    (void)state;
    size_t n = 3000;
    char *big = malloc(n + 200);
    assert_non_null(big);
    int off = snprintf(big, 200, "txid=\"%s\", proof=\"OutProofV2", TXID);
    memset(big + off, 'a', n);
    strcpy(big + off + n, "\"");
    struct xmr402_auth a;
    const char *detail = NULL;
    assert_false(xmr402_parse_params(big, 2048, &a, &detail)); /* over the configured limit */
    assert_non_null(strstr(detail, "too long"));
    assert_true(xmr402_parse_params(big, 4096, &a, &detail)); /* within a larger one */
    free(big);
    /* longer than anything auth.h lets through */
    char *huge = malloc(20000);
    assert_non_null(huge);
    memset(huge, 'a', 19999);
    huge[19999] = '\0';
    assert_false(xmr402_parse_params(huge, 4096, &a, &detail));
    free(huge);
}

/* A proof of max_proof + 1 characters at the largest max_proof is refused without a byte
 * written past the proof field: the invoice parsed before it (the next field in the struct)
 * stays intact. ASan cannot see this overwrite, it stays inside the struct. */
static void test_parse_proof_at_limit(void **state)
{
    (void)state;
    static const char head[] = "invoice=\"" INV "\", txid=\"" TXID "\", proof=\"OutProofV2";
    for (size_t len = XMR402_PROOF_LIMIT - 1; len <= XMR402_PROOF_LIMIT + 1; len++) {
        size_t fill = len - (sizeof "OutProofV2" - 1);
        char *hdr = malloc(sizeof head + fill + 2);
        assert_non_null(hdr);
        memcpy(hdr, head, sizeof head - 1);
        memset(hdr + sizeof head - 1, 'a', fill);
        strcpy(hdr + sizeof head - 1 + fill, "\"");
        struct xmr402_auth a;
        const char *detail = NULL;
        bool ok = xmr402_parse_params(hdr, XMR402_PROOF_LIMIT, &a, &detail);
        if (ok != (len <= XMR402_PROOF_LIMIT))
            fail_msg("proof of %zu characters: %s", len, ok ? "accepted" : detail);
        if (!ok)
            assert_non_null(strstr(detail, "too long"));
        assert_string_equal(a.invoice, INV);
        free(hdr);
    }
}

/* The parameters auth_parse hands over for an XMR402 header are what we parse. */
static void test_auth_hands_over_xmr402(void **state)
{
    (void)state;
    struct auth_request req = {.path = "/v1/json_rpc",
                               .authorization = "XMR402 txid=\"" TXID "\", proof=\"" PROOF "\""};
    struct auth_credential cred;
    assert_int_equal(auth_parse(&req, &cred), AUTH_OTHER_SCHEME);
    assert_true(xmr402_scheme_is(cred.scheme));
    struct xmr402_auth a;
    const char *detail;
    assert_true(xmr402_parse_params(cred.scheme_params, 2048, &a, &detail));
    assert_string_equal(a.txid, TXID);
    assert_false(xmr402_scheme_is("Digest"));
    assert_true(xmr402_scheme_is("xmr402"));
}

static void test_tier_ids(void **state)
{
    (void)state;
    assert_true(xmr402_tier_ok("wallet"));
    assert_true(xmr402_tier_ok("tier_2-b"));
    assert_false(xmr402_tier_ok(""));
    assert_false(xmr402_tier_ok(NULL));
    assert_false(xmr402_tier_ok("Wallet"));
    assert_false(xmr402_tier_ok("-x"));
    assert_false(xmr402_tier_ok("a b"));
    assert_false(xmr402_tier_ok("abcdefghijklmnopqrstuvwxyz0123456"));
}

static void test_challenge_header(void **state)
{
    (void)state;
    char buf[XMR402_CHALLENGE_SIZE];
    assert_true(xmr402_challenge_header(buf, sizeof buf, "8Abc", "1250000000", "00ff", 1764400000));
    assert_string_equal(buf, "XMR402 address=\"8Abc\", amount=\"1250000000\", message=\"00ff\", "
                             "timestamp=\"1764400000\"");
    assert_false(xmr402_challenge_header(buf, sizeof buf, "", "1", "m", 1));
    assert_false(xmr402_challenge_header(buf, sizeof buf, "a\"b", "1", "m", 1));
    assert_false(xmr402_challenge_header(buf, sizeof buf, "a", "1", "m\\", 1));
    assert_false(xmr402_challenge_header(buf, 20, "8Abc", "1250000000", "00ff", 1));
}

static void test_challenge_sse(void **state)
{
    (void)state;
    char buf[XMR402_CHALLENGE_SIZE];
    assert_true(xmr402_challenge_header(buf, sizeof buf, "8Abc", "1", "00ff", 17));
    assert_true(xmr402_challenge_add_sse(buf, sizeof buf));
    assert_string_equal(buf, "XMR402 address=\"8Abc\", amount=\"1\", message=\"00ff\", "
                             "timestamp=\"17\", features=\"sse\"");
    char small[16] = "XMR402 a=\"b\"";
    assert_false(xmr402_challenge_add_sse(small, sizeof small));
    assert_string_equal(small, "XMR402 a=\"b\""); /* unchanged */
}

static const struct {
    const char *accept;
    bool want;
} ACCEPTS[] = {
    {"text/event-stream", true},
    {"TEXT/Event-Stream", true},
    {"application/json, text/event-stream", true},
    {"text/event-stream;charset=utf-8", true},
    {"  text/event-stream ; q=0.5", true},
    {"text/event-stream;q=1", true},
    {"text/event-stream;q=0", false},
    {"text/event-stream; q=0.000", false},
    {"text/event-stream;q=0.001", true},
    {"text/event-streams", false},
    {"text/*", false}, /* a stream is asked for by name */
    {"*/*", false},
    {"application/json", false},
    {"", false},
    {NULL, false},
};

static void test_accepts_stream(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ACCEPTS / sizeof ACCEPTS[0]; i++)
        if (xmr402_accepts_stream(ACCEPTS[i].accept) != ACCEPTS[i].want)
            fail_msg("Accept: %s: want %d", ACCEPTS[i].accept ? ACCEPTS[i].accept : "(none)",
                     ACCEPTS[i].want);
}

/* The draft's client sends exactly this (the reference server's strict pattern). */
static void test_parse_draft_strict_form(void **state)
{
    (void)state;
    struct xmr402_auth a;
    const char *detail = NULL;
    assert_true(xmr402_parse_params("txid=\"" TXID "\", proof=\"" PROOF "\"", 2048, &a, &detail));
    assert_string_equal(a.txid, TXID);
    assert_string_equal(a.invoice, "");
    assert_true(xmr402_parse_params("txid=\"" TXID "\",proof=\"" PROOF "\"", 2048, &a, &detail));
}

/* The registry's own XMR402 errors answer with the draft's statuses. */
static void test_statuses_agree_with_the_registry(void **state)
{
    (void)state;
    assert_int_equal(errors_get(ERR_PAYMENT_REQUIRED)->http, XMR402_STATUS_CHALLENGE);
    assert_int_equal(errors_get(ERR_INVOICE_EXPIRED)->http, XMR402_STATUS_CHALLENGE);
    assert_int_equal(errors_get(ERR_MALFORMED_XMR402)->http, XMR402_STATUS_MALFORMED);
    assert_int_equal(errors_get(ERR_MALFORMED_TIER)->http, XMR402_STATUS_MALFORMED);
}

static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *code;
        bool extended;
        enum xmr402_refusal want;
    } cases[] = {
        {"proof_invalid", false, XMR402_REFUSE_FORBIDDEN},
        {"proof_invalid", true, XMR402_REFUSE_FORBIDDEN},
        {"txid_used", false, XMR402_REFUSE_FORBIDDEN},
        {"not_counted", false, XMR402_REFUSE_FORBIDDEN},
        {"unknown_invoice", true, XMR402_REFUSE_FORBIDDEN},
        {"not_xmr402", false, XMR402_REFUSE_FORBIDDEN},
        {"underpaid", false, XMR402_REFUSE_FORBIDDEN}, /* the draft: funds missing, 403 */
        {"underpaid", true, XMR402_REFUSE_PAY_REST},
        {"late", false, XMR402_REFUSE_FORBIDDEN},
        {"late", true, XMR402_REFUSE_PAY_REST},
        {"txid_unknown", false, XMR402_REFUSE_RETRY}, /* never "unknown, pay" */
        {"txid_unknown", true, XMR402_REFUSE_RETRY},
        {"pending_spent", false, XMR402_REFUSE_RETRY},
        {"verify_busy", false, XMR402_REFUSE_RETRY},
        {"verify_busy", true, XMR402_REFUSE_RETRY},
        {"rate_limited", false, XMR402_REFUSE_RETRY},
        {"invoice_expired", false, XMR402_REFUSE_EXPIRED},
        {"invoice_expired", true, XMR402_REFUSE_EXPIRED},
        {"credentials_rotated", false, XMR402_REFUSE_FORBIDDEN}, /* never a new challenge */
        {"credentials_rotated", true, XMR402_REFUSE_FORBIDDEN},
        {"something_new", false, XMR402_REFUSE_FORBIDDEN},
        {NULL, false, XMR402_REFUSE_FORBIDDEN},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        if (xmr402_refusal_of(cases[i].code, cases[i].extended) != cases[i].want)
            fail_msg("case %zu (%s)", i, cases[i].code ? cases[i].code : "NULL");
}

static void test_mode_and_pending_id(void **state)
{
    (void)state;
    assert_true(xmr402_mode_extended("confirmations"));
    assert_true(xmr402_mode_extended("Confirmations"));
    assert_false(xmr402_mode_extended(NULL));
    assert_false(xmr402_mode_extended(""));
    assert_false(xmr402_mode_extended("pending"));
    const char *inv = "0b9e5f2a-3c1d-4e8f-9a7b-6c5d4e3f2a1b";
    int64_t id = xmr402_pending_tenant_id(inv);
    assert_true(id < 0);
    assert_int_equal(id, xmr402_pending_tenant_id(inv));
    assert_true(id != xmr402_pending_tenant_id("1b9e5f2a-3c1d-4e8f-9a7b-6c5d4e3f2a1b"));
    assert_true(xmr402_pending_tenant_id("") < 0);
    assert_true(xmr402_pending_tenant_id(NULL) < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_draft_strict_form),
        cmocka_unit_test(test_statuses_agree_with_the_registry),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_mode_and_pending_id),
        cmocka_unit_test(test_agent_paths),
        cmocka_unit_test(test_parse_well_formed),
        cmocka_unit_test(test_parse_malformed),
        cmocka_unit_test(test_parse_oversized),
        cmocka_unit_test(test_parse_proof_at_limit),
        cmocka_unit_test(test_auth_hands_over_xmr402),
        cmocka_unit_test(test_tier_ids),
        cmocka_unit_test(test_challenge_header),
        cmocka_unit_test(test_challenge_sse),
        cmocka_unit_test(test_accepts_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
