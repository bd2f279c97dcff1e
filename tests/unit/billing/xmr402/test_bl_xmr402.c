/* Tests for billing/bl_xmr402 (challenge nonce, derived token, Ed25519 receipts) and
 * common/xg_xmr402 (the gateway's signature over the agent's address). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/credentials.h"
#include "xmr402/bl_xmr402.h"
#include "xg_hex.h"
#include "xg_xmr402.h"

static const uint8_t key_a[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t key_b[32] = {32, 31, 30};

static const struct bl_xmr402_receipt sample = {
    .invoice = "0c2a6f3e-9b1d-4c7a-8e5f-1a2b3c4d5e6f",
    .txid = "9a0e4f0c1b2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f",
    .handle = "t_abcdefghijkl",
    .tier = "wallet",
    .amount = 1234567890123,
    .issued_at = 1764400000,
};

/* RFC 8032 §7.1 test 1: the public key of a known seed. */
static void test_ed25519_vector(void **state)
{
    (void)state;
    uint8_t seed[32];
    assert_true(xg_hex_decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
                              seed, sizeof seed));
    struct bl_xmr402_receipt_key *k = bl_xmr402_receipt_key_new(seed);
    assert_non_null(k);
    char pub[BL_XMR402_PUBLIC_HEX_SIZE];
    assert_true(bl_xmr402_receipt_public_hex(k, pub));
    assert_string_equal(pub, "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
    bl_xmr402_receipt_key_free(k);
}

static void test_receipt_round_trip(void **state)
{
    (void)state;
    uint8_t seed[32];
    assert_true(bl_xmr402_receipt_seed_derive(key_a, seed));
    struct bl_xmr402_receipt_key *k = bl_xmr402_receipt_key_new(seed);
    assert_non_null(k);
    char pub[BL_XMR402_PUBLIC_HEX_SIZE];
    assert_true(bl_xmr402_receipt_public_hex(k, pub));
    char *r1 = bl_xmr402_receipt_sign(k, &sample), *r2 = bl_xmr402_receipt_sign(k, &sample);
    assert_non_null(r1);
    assert_string_equal(r1, r2); /* asked twice: the same receipt */
    json_t *payload = bl_xmr402_receipt_verify(pub, r1);
    assert_non_null(payload);
    assert_string_equal(json_string_value(json_object_get(payload, "amount")), "1234567890123");
    assert_string_equal(json_string_value(json_object_get(payload, "handle")), sample.handle);
    assert_string_equal(json_string_value(json_object_get(payload, "invoice")), sample.invoice);
    assert_string_equal(json_string_value(json_object_get(payload, "txid")), sample.txid);
    assert_string_equal(json_string_value(json_object_get(payload, "tier")), "wallet");
    assert_int_equal(json_integer_value(json_object_get(payload, "issued_at")), 1764400000);
    json_decref(payload);

    /* any changed byte of the payload or the signature fails */
    size_t n = strlen(r1);
    for (size_t i = 0; i < n; i += 7) {
        if (r1[i] == '.')
            continue;
        char saved = r1[i];
        r1[i] = saved == 'A' ? 'B' : 'A';
        payload = bl_xmr402_receipt_verify(pub, r1);
        if (payload)
            fail_msg("a receipt changed at %zu still verifies", i);
        r1[i] = saved;
    }
    /* another key does not verify it */
    uint8_t other_seed[32];
    assert_true(bl_xmr402_receipt_seed_derive(key_b, other_seed));
    struct bl_xmr402_receipt_key *k2 = bl_xmr402_receipt_key_new(other_seed);
    char pub2[BL_XMR402_PUBLIC_HEX_SIZE];
    assert_true(bl_xmr402_receipt_public_hex(k2, pub2));
    assert_string_not_equal(pub, pub2);
    assert_null(bl_xmr402_receipt_verify(pub2, r1));
    assert_null(bl_xmr402_receipt_verify(pub, "no-dot"));
    assert_null(bl_xmr402_receipt_verify("00", r1));
    /* a different amount is a different receipt */
    struct bl_xmr402_receipt changed = sample;
    changed.amount++;
    char *r3 = bl_xmr402_receipt_sign(k, &changed);
    assert_string_not_equal(r1, r3);
    free(r1);
    free(r2);
    free(r3);
    bl_xmr402_receipt_key_free(k);
    bl_xmr402_receipt_key_free(k2);
}

static void test_token_derivation(void **state)
{
    (void)state;
    uint8_t s1[TOKEN_RAW_LEN], s2[TOKEN_RAW_LEN], s3[TOKEN_RAW_LEN], s4[TOKEN_RAW_LEN];
    assert_true(bl_xmr402_token_seed(key_a, "00112233445566778899aabbccddeeff", s1));
    assert_true(bl_xmr402_token_seed(key_a, "00112233445566778899aabbccddeeff", s2));
    assert_true(bl_xmr402_token_seed(key_a, "00112233445566778899aabbccddeef0", s3));
    assert_true(bl_xmr402_token_seed(key_b, "00112233445566778899aabbccddeeff", s4));
    assert_memory_equal(s1, s2, sizeof s1);     /* the same invoice: the same token */
    assert_memory_not_equal(s1, s3, sizeof s1); /* another nonce */
    assert_memory_not_equal(s1, s4, sizeof s1); /* another server key */
    assert_false(bl_xmr402_token_seed(key_a, "", s1));
    /* the stored hash is the hash of the token derived again */
    struct cred c;
    assert_true(cred_new_seeded(&c, key_a, "xmrgate", s2));
    char token[TOKEN_TEXT_SIZE], hash[TOKEN_HASH_HEX_SIZE];
    token_format(s1, token);
    assert_true(cred_token_hash_hex(token, hash));
    assert_string_equal(hash, c.token_hash_hex);
    cred_wipe(&c);
}

static void test_nonce(void **state)
{
    (void)state;
    char a[BL_XMR402_NONCE_SIZE], b[BL_XMR402_NONCE_SIZE];
    assert_true(bl_xmr402_nonce_generate(a));
    assert_true(bl_xmr402_nonce_generate(b));
    assert_int_equal(strlen(a), 32);
    assert_true(xg_hex_ok(a, 16));
    assert_string_not_equal(a, b);
}

static void test_client_signature(void **state)
{
    (void)state;
    char sig[XG_XMR402_SIG_HEX_SIZE];
    assert_true(xg_xmr402_client_sig(key_a, "192.0.2.7", sig));
    assert_true(xg_xmr402_client_sig_ok(key_a, "192.0.2.7", sig));
    assert_false(xg_xmr402_client_sig_ok(key_a, "192.0.2.8", sig));
    assert_false(xg_xmr402_client_sig_ok(key_b, "192.0.2.7", sig));
    assert_false(xg_xmr402_client_sig_ok(key_a, "192.0.2.7", NULL));
    assert_false(xg_xmr402_client_sig_ok(key_a, "192.0.2.7", "abc"));
    sig[5] = sig[5] == '0' ? '1' : '0';
    assert_false(xg_xmr402_client_sig_ok(key_a, "192.0.2.7", sig));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ed25519_vector),   cmocka_unit_test(test_receipt_round_trip),
        cmocka_unit_test(test_token_derivation), cmocka_unit_test(test_nonce),
        cmocka_unit_test(test_client_signature),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
