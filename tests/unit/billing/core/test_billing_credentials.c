/* Tests for billing/credentials (what billing stores for a new tenant) and the pure
 * parser of wallet-rpc transfers (billing/wallet). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/credentials.h"
#include "wallet/wallet.h"
#include "xg_hex.h"

static const char key_hex[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

static void test_new_credentials_are_consistent(void **state)
{
    (void)state;
    uint8_t key[TOKEN_HA1_KEY_LEN], hash[TOKEN_HASH_LEN], wrapped[TOKEN_HA1_WRAPPED_LEN];
    uint8_t ha1[TOKEN_HA1_LEN], expect_ha1[TOKEN_HA1_LEN];
    char hex[TOKEN_HASH_HEX_SIZE];
    struct cred c;
    assert_true(cred_parse_key(key_hex, key));
    assert_true(cred_new(&c, key, "xmrgate"));
    assert_true(token_looks_valid(c.token, strlen(c.token)));
    assert_true(token_handle_looks_valid(c.handle, strlen(c.handle)));
    /* the stored hash is SHA-256 of the token text */
    assert_true(token_hash(c.token, strlen(c.token), hash));
    token_hash_hex(hash, hex);
    assert_string_equal(hex, c.token_hash_hex);
    assert_true(cred_token_hash_hex(c.token, hex));
    assert_string_equal(hex, c.token_hash_hex);
    /* the wrapped HA1 unwraps, under this key and handle, to MD5(handle:realm:token) */
    assert_int_equal(strlen(c.ha1_wrapped_hex), 2 * TOKEN_HA1_WRAPPED_LEN);
    assert_true(xg_hex_decode(c.ha1_wrapped_hex, wrapped, sizeof wrapped));
    assert_true(token_ha1_unwrap(key, c.handle, wrapped, ha1));
    assert_true(token_digest_ha1(c.handle, "xmrgate", c.token, expect_ha1));
    assert_memory_equal(ha1, expect_ha1, sizeof ha1);
    cred_wipe(&c);
    assert_int_equal(c.token[0], 0);
}

static void test_idempotent_seed(void **state)
{
    (void)state;
    uint8_t key[TOKEN_HA1_KEY_LEN], a[TOKEN_RAW_LEN], b[TOKEN_RAW_LEN], c[TOKEN_RAW_LEN];
    assert_true(cred_parse_key(key_hex, key));
    assert_true(cred_idempotent_seed(key, "key-1", "ab", a));
    assert_true(cred_idempotent_seed(key, "key-1", "ab", b));
    assert_memory_equal(a, b, sizeof a);
    /* the separator keeps ("key-1a", "b") apart from ("key-1", "ab") */
    assert_true(cred_idempotent_seed(key, "key-1a", "b", c));
    assert_memory_not_equal(a, c, sizeof a);
    key[0] ^= 1;
    assert_true(cred_idempotent_seed(key, "key-1", "ab", c));
    assert_memory_not_equal(a, c, sizeof a);
    struct cred x, y;
    assert_true(cred_new_seeded(&x, key, "xmrgate", a));
    assert_true(cred_new_seeded(&y, key, "xmrgate", a));
    assert_string_equal(x.token, y.token);
    assert_string_not_equal(x.handle, y.handle);
}

static void test_rejects(void **state)
{
    (void)state;
    uint8_t key[TOKEN_HA1_KEY_LEN];
    char hex[TOKEN_HASH_HEX_SIZE];
    assert_false(cred_parse_key("0011", key));
    assert_false(cred_parse_key(NULL, key));
    assert_false(cred_token_hash_hex("xg_short", hex));
    assert_false(cred_token_hash_hex("", hex));
}

static void test_parse_transfer(void **state)
{
    (void)state;
    const char *txid = "2EFDA08D47CC3826BD0662F92B9DC592C9C074C55CD97B10809F3D961A50AAD0";
    json_t *in = json_pack("{s:s, s:{s:i, s:i}, s:I, s:I, s:b, s:I}", "txid", txid, "subaddr_index",
                           "major", 0, "minor", 7, "amount", (json_int_t)33333333334, "height",
                           (json_int_t)120, "double_spend_seen", 0, "unlock_time", (json_int_t)0);
    struct wallet_transfer t;
    assert_true(wallet_parse_transfer(in, false, &t));
    assert_string_equal(t.txid, "2efda08d47cc3826bd0662f92b9dc592c9c074c55cd97b10809f3d961a50aad0");
    assert_int_equal(t.subaddr_index, 7);
    assert_true(t.amount == 33333333334);
    assert_int_equal(t.height, 120);
    assert_false(t.pool);
    /* a pool entry has height 0; a mined one with height 0 is malformed */
    assert_true(wallet_parse_transfer(in, true, &t));
    assert_int_equal(t.height, 0);
    json_object_set_new(in, "height", json_integer(0));
    assert_false(wallet_parse_transfer(in, false, &t));
    json_object_set_new(in, "height", json_integer(5));
    json_object_set_new(json_object_get(in, "subaddr_index"), "major", json_integer(1));
    assert_false(wallet_parse_transfer(in, false, &t)); /* another account */
    json_object_set_new(json_object_get(in, "subaddr_index"), "major", json_integer(0));
    json_object_set_new(in, "amount", json_integer(0));
    assert_false(wallet_parse_transfer(in, false, &t));
    json_object_set_new(in, "amount", json_integer(5));
    json_object_set_new(in, "txid", json_string("abc"));
    assert_false(wallet_parse_transfer(in, false, &t));
    json_object_set_new(in, "txid", json_string(txid));
    json_object_set_new(in, "double_spend_seen", json_true());
    assert_true(wallet_parse_transfer(in, true, &t));
    assert_true(t.double_spend_seen);
    json_decref(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_credentials_are_consistent),
        cmocka_unit_test(test_idempotent_seed),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_parse_transfer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
