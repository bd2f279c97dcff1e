/* Tests for billing/hook_sign: the signed text, the signature header against vectors
 * computed apart (Python's hmac over the documented text), the secret's derivation, and a
 * receiver's verification with its tolerance. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/bl_keys.h"
#include "hooks/hook_sign.h"

static void test_text(void **state)
{
    (void)state;
    size_t n = 0;
    char *t = hook_sign_text(1700000000, "{\"a\":1}", 7, &n);
    assert_non_null(t);
    assert_string_equal(t, "1700000000.{\"a\":1}");
    assert_int_equal(n, strlen("1700000000.{\"a\":1}"));
    free(t);
    t = hook_sign_text(5, "", 0, &n); /* an empty body still has its dot */
    assert_string_equal(t, "5.");
    assert_int_equal(n, 2);
    free(t);
}

static void test_header_vector(void **state)
{
    (void)state;
    char h[HOOK_SIGN_HEADER_SIZE];
    /* hmac.new(b"whsec_test", b'1700000000.{"a":1}', sha256).hexdigest() */
    assert_true(hook_sign_header("whsec_test", 1700000000, "{\"a\":1}", 7, h));
    assert_string_equal(
        h, "t=1700000000,v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789");
}

static void test_secret_derivation(void **state)
{
    (void)state;
    uint8_t ha1[HOOK_SIGN_KEY_LEN] = {0}, k[HOOK_SIGN_KEY_LEN], k2[HOOK_SIGN_KEY_LEN];
    assert_true(bl_keys_hook_key_derive(ha1, k));
    static const uint8_t want_k[HOOK_SIGN_KEY_LEN] = {
        0x6a, 0x28, 0x1e, 0xf8, 0xea, 0xac, 0x65, 0xc4, 0x74, 0xf4, 0x66,
        0xc4, 0xb8, 0xa4, 0x2f, 0x58, 0xdd, 0x9e, 0x37, 0x68, 0xf9, 0x70,
        0xe3, 0x3a, 0xd4, 0x5a, 0x61, 0x2e, 0x83, 0xd3, 0xe2, 0xee};
    assert_memory_equal(k, want_k, sizeof k);
    char s[HOOK_SIGN_SECRET_SIZE], s2[HOOK_SIGN_SECRET_SIZE];
    assert_true(hook_sign_secret(k, "11111111-2222-3333-4444-555555555555", s));
    assert_string_equal(s,
                        "whsec_87f19fb864c651ea03aae106828937d78579a51eaee333662da2a9faaed519da");
    /* another invoice, another secret; the same one, the same secret */
    assert_true(hook_sign_secret(k, "11111111-2222-3333-4444-555555555556", s2));
    assert_string_not_equal(s, s2);
    assert_true(hook_sign_secret(k, "11111111-2222-3333-4444-555555555555", s2));
    assert_string_equal(s, s2);
    /* another key, another secret */
    ha1[0] = 1;
    assert_true(bl_keys_hook_key_derive(ha1, k2));
    assert_true(hook_sign_secret(k2, "11111111-2222-3333-4444-555555555555", s2));
    assert_string_not_equal(s, s2);
}

static void test_verify(void **state)
{
    (void)state;
    const char *secret = "whsec_abc", *body = "{\"id\":\"x.seen\"}";
    size_t len = strlen(body);
    char h[HOOK_SIGN_HEADER_SIZE];
    assert_true(hook_sign_header(secret, 1000, body, len, h));
    assert_true(hook_sign_verify(secret, h, body, len, 1000, 300));
    assert_true(hook_sign_verify(secret, h, body, len, 1300, 300));
    assert_true(hook_sign_verify(secret, h, body, len, 700, 300));
    assert_false(hook_sign_verify(secret, h, body, len, 1301, 300)); /* too old: a replay */
    assert_false(hook_sign_verify(secret, h, body, len, 699, 300));  /* from the future */
    assert_false(hook_sign_verify("whsec_abd", h, body, len, 1000, 300));
    assert_false(hook_sign_verify(secret, h, "{\"id\":\"x.seem\"}", len, 1000, 300));
    /* the timestamp is signed: moving it breaks the signature */
    char moved[HOOK_SIGN_HEADER_SIZE];
    memcpy(moved, h, sizeof moved);
    moved[5] = '1'; /* t=1001 */
    assert_false(hook_sign_verify(secret, moved, body, len, 1001, 300));
    assert_false(hook_sign_verify(secret, "", body, len, 1000, 300));
    assert_false(hook_sign_verify(secret, "t=1000", body, len, 1000, 300));
    assert_false(hook_sign_verify(secret, "t=1000,v1=00", body, len, 1000, 300));
    char trailing[HOOK_SIGN_HEADER_SIZE + 2];
    snprintf(trailing, sizeof trailing, "%s,", h);
    assert_false(hook_sign_verify(secret, trailing, body, len, 1000, 300));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_header_vector),
        cmocka_unit_test(test_secret_derivation),
        cmocka_unit_test(test_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
