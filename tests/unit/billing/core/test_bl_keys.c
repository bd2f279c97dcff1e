/* Tests for billing/bl_keys (which key derives a stored token), and for where the keys are
 * configured: billing's token_key is its own (refused equal to ha1_key), and a gateway's
 * configuration has no place for it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/bl_config.h"
#include "core/bl_keys.h"
#include "xmr402/bl_xmr402.h"
#include "serve/gw_config.h"
#include "core/credentials.h"

#include "test_files.h"

static const char ha1_hex[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
static const char token_hex[] = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

struct idem {
    const char *key, *fingerprint;
};

static bool idem_seed(const uint8_t key[BL_KEYS_LEN], const void *ctx, uint8_t seed[TOKEN_RAW_LEN])
{
    const struct idem *i = ctx;
    return cred_idempotent_seed(key, i->key, i->fingerprint, seed);
}

static bool nonce_seed(const uint8_t key[BL_KEYS_LEN], const void *ctx, uint8_t seed[TOKEN_RAW_LEN])
{
    return bl_xmr402_token_seed(key, ctx, seed);
}

/* The hex SHA-256 of the token fn derives for ctx under key. */
static void stored_hash(const uint8_t key[BL_KEYS_LEN], bl_keys_seed_fn fn, const void *ctx,
                        char out[TOKEN_HASH_HEX_SIZE])
{
    uint8_t seed[TOKEN_RAW_LEN];
    char token[TOKEN_TEXT_SIZE];
    assert_true(fn(key, ctx, seed));
    token_format(seed, token);
    assert_true(cred_token_hash_hex(token, out));
}

static void test_parse(void **state)
{
    (void)state;
    struct bl_keys k;
    assert_true(bl_keys_parse(&k, ha1_hex, token_hex));
    assert_int_equal(k.ha1[0], 0x00);
    assert_int_equal(k.token[0], 0xff);
    /* equal keys would hand the gateways the derivation again */
    assert_false(bl_keys_parse(&k, ha1_hex, ha1_hex));
    assert_int_equal(k.token[0], 0); /* wiped */
    assert_false(bl_keys_parse(&k, ha1_hex, "00"));
    assert_false(bl_keys_parse(&k, ha1_hex, ""));
    assert_false(bl_keys_parse(&k, NULL, token_hex));
    bl_keys_wipe(&k);
}

/* Which key a stored hash was derived under, for both derivations. */
static void test_rederive_table(void **state)
{
    (void)state;
    struct bl_keys k, other;
    assert_true(bl_keys_parse(&k, ha1_hex, token_hex));
    assert_true(bl_keys_parse(&other, token_hex, ha1_hex)); /* the keys swapped */
    uint8_t stranger[BL_KEYS_LEN];
    memset(stranger, 0x5a, sizeof stranger);
    struct idem idem = {"key-1", "ab"};
    const char *nonce = "00112233445566778899aabbccddeeff";
    const struct {
        bl_keys_seed_fn fn;
        const void *ctx;
        const uint8_t *issued_under;
        enum bl_keys_which want;
    } rows[] = {
        {idem_seed, &idem, k.token, BL_KEYS_TOKEN},
        {idem_seed, &idem, k.ha1, BL_KEYS_LEGACY_HA1},
        {idem_seed, &idem, stranger, BL_KEYS_NONE},
        {nonce_seed, nonce, k.token, BL_KEYS_TOKEN},
        {nonce_seed, nonce, k.ha1, BL_KEYS_LEGACY_HA1},
        {nonce_seed, nonce, stranger, BL_KEYS_NONE},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char stored[TOKEN_HASH_HEX_SIZE], token[TOKEN_TEXT_SIZE], again[TOKEN_HASH_HEX_SIZE];
        stored_hash(rows[i].issued_under, rows[i].fn, rows[i].ctx, stored);
        memset(token, 'x', sizeof token);
        enum bl_keys_which got = bl_keys_rederive(&k, rows[i].fn, rows[i].ctx, stored, token);
        assert_int_equal(got, rows[i].want);
        if (got == BL_KEYS_NONE) {
            assert_int_equal(token[0], 0); /* nothing half-derived is left */
            continue;
        }
        /* the token given back is the one whose hash was stored */
        assert_true(cred_token_hash_hex(token, again));
        assert_string_equal(again, stored);
    }
    /* the other ctx does not derive this row's hash under any key */
    char stored[TOKEN_HASH_HEX_SIZE], token[TOKEN_TEXT_SIZE];
    struct idem other_idem = {"key-2", "ab"};
    stored_hash(k.token, idem_seed, &idem, stored);
    assert_int_equal(bl_keys_rederive(&k, idem_seed, &other_idem, stored, token), BL_KEYS_NONE);
    assert_int_equal(bl_keys_rederive(&k, idem_seed, &idem, "zz", token), BL_KEYS_NONE);
    assert_int_equal(bl_keys_rederive(&k, idem_seed, &idem, NULL, token), BL_KEYS_NONE);
    /* a row issued under the token key is not found by a deployment holding only ha1 in
     * both places (swapped keys find it as legacy, never as current) */
    assert_int_equal(bl_keys_rederive(&other, idem_seed, &idem, stored, token), BL_KEYS_LEGACY_HA1);
    assert_string_equal(bl_keys_which_name(BL_KEYS_TOKEN), "token_key");
    assert_string_equal(bl_keys_which_name(BL_KEYS_LEGACY_HA1), "ha1_key");
    assert_string_equal(bl_keys_which_name(BL_KEYS_NONE), "none");
    bl_keys_wipe(&k);
    bl_keys_wipe(&other);
}

/* A token issued before token_key existed (HMAC under ha1_key, the derivation billing had)
 * is still found: the vector was computed outside this code. */
static void test_legacy_vector(void **state)
{
    (void)state;
    struct bl_keys k;
    assert_true(bl_keys_parse(&k, ha1_hex, token_hex));
    struct idem idem = {"key-1", "ab"};
    char token[TOKEN_TEXT_SIZE];
    assert_int_equal(
        bl_keys_rederive(&k, idem_seed, &idem,
                         "96c61345eae7d554051fbf992d6f86ebb9dbaa0dfcff801aa012cc784990e9ef", token),
        BL_KEYS_LEGACY_HA1);
    assert_string_equal(token, "xg_2eBAMfujEvNzczxxffRp68dtRGVidbUYjArsdLpCfwM");
    bl_keys_wipe(&k);
}

static bool billing_loads(const char *extra, char *err, size_t errlen)
{
    char text[1024], path[64];
    snprintf(text, sizeof text, "[database]\nurl = postgresql:///x\n[gateway]\nha1_key = %s\n%s",
             ha1_hex, extra);
    temp_file_with("xg_test_keys_", text, path, sizeof path);
    struct bl_config cfg;
    memset(&cfg, 0, sizeof cfg);
    bool ok = bl_config_load(&cfg, path, err, errlen);
    if (ok)
        bl_config_free(&cfg);
    unlink(path);
    return ok;
}

static void test_billing_config(void **state)
{
    (void)state;
    char err[256], extra[256];
    /* migrate and grant need no token key (serving does: api_start refuses without) */
    assert_true(billing_loads("", err, sizeof err));
    snprintf(extra, sizeof extra, "[billing]\ntoken_key = %s\n", token_hex);
    assert_true(billing_loads(extra, err, sizeof err));
    snprintf(extra, sizeof extra, "[billing]\ntoken_key = %s\n", ha1_hex);
    assert_false(billing_loads(extra, err, sizeof err));
    assert_non_null(strstr(err, "must differ from [gateway] ha1_key"));
    assert_false(billing_loads("[billing]\ntoken_key = 0011\n", err, sizeof err));
    assert_non_null(strstr(err, "[billing] token_key"));
}

static bool gateway_loads(const char *extra, char *err, size_t errlen)
{
    char text[1024], path[64];
    snprintf(text, sizeof text,
             "[database]\nurl = postgresql:///x\n[auth]\nha1_key = %s\nnonce_secret = %s\n%s",
             ha1_hex, token_hex, extra);
    temp_file_with("xg_test_keys_", text, path, sizeof path);
    struct gw_config cfg;
    memset(&cfg, 0, sizeof cfg);
    bool ok = gw_config_load(&cfg, path, err, errlen);
    if (ok)
        gw_config_free(&cfg);
    unlink(path);
    return ok;
}

/* The gateway runs on the HA1 key alone, and has no key for billing's token key: a
 * configuration that names one is refused rather than carrying the secret around. */
static void test_gateway_config_has_no_token_key(void **state)
{
    (void)state;
    char err[256], extra[256];
    assert_true(gateway_loads("", err, sizeof err));
    snprintf(extra, sizeof extra, "[billing]\ntoken_key = %s\n", token_hex);
    assert_false(gateway_loads(extra, err, sizeof err));
    assert_non_null(strstr(err, "unknown section [billing]"));
    snprintf(extra, sizeof extra, "[auth]\ntoken_key = %s\n", token_hex);
    assert_false(gateway_loads(extra, err, sizeof err));
    assert_non_null(strstr(err, "token_key"));
}

/* ha1_key_previous on both daemons: optional, 64 hex digits, never the current key (in
 * either case) nor billing's token key. */
static void test_previous_key_config(void **state)
{
    (void)state;
    static const char prev_hex[] =
        "0f0e0d0c0b0a09080706050403020100f0e0d0c0b0a090807060504030201000";
    char err[256], extra[256], upper[sizeof ha1_hex];
    for (size_t i = 0; i < sizeof upper; i++)
        upper[i] = (char)(ha1_hex[i] >= 'a' && ha1_hex[i] <= 'f' ? ha1_hex[i] - 32 : ha1_hex[i]);
    const struct {
        const char *value;
        bool ok;
        const char *says;
    } cases[] = {
        {"", true, NULL},
        {prev_hex, true, NULL},
        {ha1_hex, false, "ha1_key_previous: must differ"},
        {upper, false, "ha1_key_previous: must differ"},
        {"0011", false, "ha1_key_previous: expected 64 hex digits"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(extra, sizeof extra, "[gateway]\nha1_key_previous = %s\n", cases[i].value);
        if (billing_loads(extra, err, sizeof err) != cases[i].ok)
            fail_msg("billing, case %zu: %s", i, err);
        if (cases[i].says)
            assert_non_null(strstr(err, cases[i].says));
        snprintf(extra, sizeof extra, "[auth]\nha1_key_previous = %s\n", cases[i].value);
        if (gateway_loads(extra, err, sizeof err) != cases[i].ok)
            fail_msg("gateway, case %zu: %s", i, err);
        if (cases[i].says)
            assert_non_null(strstr(err, cases[i].says));
    }
    snprintf(extra, sizeof extra, "[gateway]\nha1_key_previous = %s\n[billing]\ntoken_key = %s\n",
             token_hex, token_hex);
    assert_false(billing_loads(extra, err, sizeof err));
    assert_non_null(strstr(err, "must differ from [gateway] ha1_key_previous"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_rederive_table),
        cmocka_unit_test(test_legacy_vector),
        cmocka_unit_test(test_billing_config),
        cmocka_unit_test(test_gateway_config_has_no_token_key),
        cmocka_unit_test(test_previous_key_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
