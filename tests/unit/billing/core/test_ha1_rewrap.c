/* Tests for billing/core/ha1_rewrap (what rewrap-ha1 does with one stored HA1), for
 * token_ha1_unwrap_either under which it sits, and for the previous HA1 key in bl_keys
 * (parsed, refused when it repeats a key, accepted for an XMR402 client address MAC). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/bl_keys.h"
#include "core/ha1_rewrap.h"
#include "token.h"
#include "xg_xmr402.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char handle[] = "t_aaaaaaaaaaaa";

/* Which key a stored value was wrapped under, or how it was spoiled. */
enum stored {
    UNDER_K1,        /* the previous key */
    UNDER_K2,        /* the current key */
    UNDER_K3,        /* a key billing does not hold */
    K1_OTHER_HANDLE, /* wrapped under K1 for another handle, copied here */
    K1_BAD_TAG,      /* a byte of the tag flipped */
    K1_BAD_VERSION,  /* an unknown version byte */
    K1_SHORT,        /* a byte short */
};

static void test_plan_table(void **state)
{
    (void)state;
    uint8_t k1[TOKEN_HA1_KEY_LEN], k2[TOKEN_HA1_KEY_LEN], k3[TOKEN_HA1_KEY_LEN];
    memset(k1, 1, sizeof k1);
    memset(k2, 2, sizeof k2);
    memset(k3, 3, sizeof k3);
    uint8_t ha1[TOKEN_HA1_LEN];
    assert_true(token_digest_ha1(handle, "xmrgate", "xg_token", ha1));
    uint8_t w[7][TOKEN_HA1_WRAPPED_LEN];
    assert_true(token_ha1_wrap(k1, handle, ha1, w[UNDER_K1]));
    assert_true(token_ha1_wrap(k2, handle, ha1, w[UNDER_K2]));
    assert_true(token_ha1_wrap(k3, handle, ha1, w[UNDER_K3]));
    assert_true(token_ha1_wrap(k1, "t_bbbbbbbbbbbb", ha1, w[K1_OTHER_HANDLE]));
    memcpy(w[K1_BAD_TAG], w[UNDER_K1], sizeof w[0]);
    w[K1_BAD_TAG][TOKEN_HA1_WRAPPED_LEN - 1] ^= 1;
    memcpy(w[K1_BAD_VERSION], w[UNDER_K1], sizeof w[0]);
    w[K1_BAD_VERSION][0] = 2;
    memcpy(w[K1_SHORT], w[UNDER_K1], sizeof w[0]);

    struct token_ha1_unwrapper *u1 = token_ha1_unwrapper_new(k1);
    struct token_ha1_unwrapper *u2 = token_ha1_unwrapper_new(k2);
    assert_non_null(u1);
    assert_non_null(u2);
    const struct token_ha1_keys rotating = {u2, u1}, settled = {u2, NULL}, backwards = {u1, u2};

    static const uint8_t zero[TOKEN_HA1_LEN];
    const struct {
        const struct token_ha1_keys *keys;
        enum stored stored;
        enum token_ha1_key which;
        enum ha1_rewrap_action want;
    } cases[] = {
        {&rotating, UNDER_K1, TOKEN_HA1_KEY_PREVIOUS, HA1_REWRAP_WRAP},
        {&rotating, UNDER_K2, TOKEN_HA1_KEY_CURRENT, HA1_REWRAP_CURRENT},
        {&rotating, UNDER_K3, TOKEN_HA1_KEY_NONE, HA1_REWRAP_UNWRAPPABLE},
        {&rotating, K1_OTHER_HANDLE, TOKEN_HA1_KEY_NONE, HA1_REWRAP_UNWRAPPABLE},
        {&rotating, K1_BAD_TAG, TOKEN_HA1_KEY_NONE, HA1_REWRAP_UNWRAPPABLE},
        {&rotating, K1_BAD_VERSION, TOKEN_HA1_KEY_NONE, HA1_REWRAP_UNWRAPPABLE},
        {&rotating, K1_SHORT, TOKEN_HA1_KEY_PREVIOUS, HA1_REWRAP_UNWRAPPABLE},
        /* No previous key: a K1 row is not re-wrapped, only counted. */
        {&settled, UNDER_K1, TOKEN_HA1_KEY_NONE, HA1_REWRAP_UNWRAPPABLE},
        {&settled, UNDER_K2, TOKEN_HA1_KEY_CURRENT, HA1_REWRAP_CURRENT},
        /* The keys given the wrong way round: the rows already rewritten would go back. */
        {&backwards, UNDER_K2, TOKEN_HA1_KEY_PREVIOUS, HA1_REWRAP_WRAP},
        {&backwards, UNDER_K1, TOKEN_HA1_KEY_CURRENT, HA1_REWRAP_CURRENT},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        size_t len =
            cases[i].stored == K1_SHORT ? TOKEN_HA1_WRAPPED_LEN - 1 : TOKEN_HA1_WRAPPED_LEN;
        uint8_t out[TOKEN_HA1_LEN];
        memset(out, 0x55, sizeof out);
        enum ha1_rewrap_action got =
            ha1_rewrap_plan(cases[i].keys, handle, w[cases[i].stored], len, out);
        if (got != cases[i].want)
            fail_msg("case %zu: %s, want %s", i, ha1_rewrap_action_name(got),
                     ha1_rewrap_action_name(cases[i].want));
        assert_memory_equal(out, got == HA1_REWRAP_WRAP ? ha1 : zero, sizeof out);
        /* The unwrap under it, on the full value (the short case reads 45 bytes). */
        memset(out, 0x55, sizeof out);
        enum token_ha1_key which =
            token_ha1_unwrap_either(cases[i].keys, handle, w[cases[i].stored], out);
        if (which != cases[i].which)
            fail_msg("case %zu: unwrapped under %d, want %d", i, which, cases[i].which);
        assert_memory_equal(out, which == TOKEN_HA1_KEY_NONE ? zero : ha1, sizeof out);
    }
    assert_string_equal(ha1_rewrap_action_name(HA1_REWRAP_WRAP), "rewrap");
    assert_string_equal(ha1_rewrap_action_name(HA1_REWRAP_CURRENT), "current");
    assert_string_equal(ha1_rewrap_action_name(HA1_REWRAP_UNWRAPPABLE), "unwrappable");
    token_ha1_unwrapper_free(u1);
    token_ha1_unwrapper_free(u2);
}

/* A value re-wrapped under the current key is then current: a second run changes none. */
static void test_plan_rewrap_then_current(void **state)
{
    (void)state;
    uint8_t k1[TOKEN_HA1_KEY_LEN], k2[TOKEN_HA1_KEY_LEN], ha1[TOKEN_HA1_LEN], out[TOKEN_HA1_LEN];
    memset(k1, 1, sizeof k1);
    memset(k2, 2, sizeof k2);
    assert_true(token_digest_ha1(handle, "xmrgate", "xg_token", ha1));
    uint8_t w[TOKEN_HA1_WRAPPED_LEN];
    assert_true(token_ha1_wrap(k1, handle, ha1, w));
    struct token_ha1_unwrapper *u1 = token_ha1_unwrapper_new(k1);
    struct token_ha1_unwrapper *u2 = token_ha1_unwrapper_new(k2);
    const struct token_ha1_keys keys = {u2, u1};
    assert_int_equal(ha1_rewrap_plan(&keys, handle, w, sizeof w, out), HA1_REWRAP_WRAP);
    assert_true(token_ha1_wrap(k2, handle, out, w));
    assert_int_equal(ha1_rewrap_plan(&keys, handle, w, sizeof w, out), HA1_REWRAP_CURRENT);
    assert_true(token_ha1_unwrap(k2, handle, w, out));
    assert_memory_equal(out, ha1, sizeof ha1);
    token_ha1_unwrapper_free(u1);
    token_ha1_unwrapper_free(u2);
}

static const char k_ha1[] = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
static const char k_prev[] = "0f0e0d0c0b0a09080706050403020100f0e0d0c0b0a090807060504030201000";
static const char k_token[] = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

static void test_keys_previous(void **state)
{
    (void)state;
    struct bl_keys k;
    assert_true(bl_keys_parse(&k, k_ha1, k_token));
    assert_false(k.has_ha1_previous);
    assert_true(bl_keys_parse_previous(&k, ""));
    assert_false(k.has_ha1_previous);
    assert_true(bl_keys_parse_previous(&k, NULL));
    assert_false(k.has_ha1_previous);
    assert_false(bl_keys_parse_previous(&k, k_ha1)); /* the current key again */
    assert_false(k.has_ha1_previous);
    assert_false(bl_keys_parse_previous(&k, k_token)); /* billing's own key */
    assert_false(bl_keys_parse_previous(&k, "0011"));
    assert_false(k.has_ha1_previous);
    assert_true(bl_keys_parse_previous(&k, k_prev));
    assert_true(k.has_ha1_previous);
    bl_keys_wipe(&k);
}

/* The client address MAC: the current key always, the previous one only while set. */
static void test_client_sig_either_key(void **state)
{
    (void)state;
    struct bl_keys k, prev_only;
    assert_true(bl_keys_parse(&k, k_ha1, k_token));
    assert_true(bl_keys_parse(&prev_only, k_prev, k_token));
    char by_current[XG_XMR402_SIG_HEX_SIZE], by_previous[XG_XMR402_SIG_HEX_SIZE];
    assert_true(xg_xmr402_client_sig(k.ha1, "203.0.113.9", by_current));
    assert_true(xg_xmr402_client_sig(prev_only.ha1, "203.0.113.9", by_previous));
    const struct {
        bool rotating;
        const char *client, *sig;
        bool ok;
    } cases[] = {
        {false, "203.0.113.9", by_current, true},   {false, "203.0.113.9", by_previous, false},
        {true, "203.0.113.9", by_current, true},    {true, "203.0.113.9", by_previous, true},
        {true, "203.0.113.10", by_previous, false}, {true, "203.0.113.9", NULL, false},
        {true, "203.0.113.9", "00", false},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        assert_true(bl_keys_parse_previous(&k, cases[i].rotating ? k_prev : ""));
        if (bl_keys_client_sig_ok(&k, cases[i].client, cases[i].sig) != cases[i].ok)
            fail_msg("case %zu: want %d", i, cases[i].ok);
    }
    bl_keys_wipe(&k);
    bl_keys_wipe(&prev_only);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_table),
        cmocka_unit_test(test_plan_rewrap_then_current),
        cmocka_unit_test(test_keys_previous),
        cmocka_unit_test(test_client_sig_either_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
