/* Tests for common/token: text form, hashing, handles, HA1 and its wrap, base64. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "token.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* bytes 0x00..0x1f, encoded independently (Python base64.urlsafe_b64encode). */
static const char token_0_to_31[] = "xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

static void hex_of(const uint8_t *in, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", in[i]);
}

static void test_format_known_vector(void **state)
{
    (void)state;
    uint8_t raw[TOKEN_RAW_LEN];
    for (size_t i = 0; i < sizeof raw; i++)
        raw[i] = (uint8_t)i;
    char text[TOKEN_TEXT_SIZE];
    token_format(raw, text);
    assert_string_equal(text, token_0_to_31);
    assert_int_equal(strlen(text), TOKEN_TEXT_LEN);

    memset(raw, 0xff, sizeof raw);
    token_format(raw, text);
    assert_string_equal(text, "xg___________________________________________8");
}

static void test_generate(void **state)
{
    (void)state;
    char a[TOKEN_TEXT_SIZE], b[TOKEN_TEXT_SIZE];
    assert_true(token_generate(a));
    assert_true(token_generate(b));
    assert_int_equal(strlen(a), TOKEN_TEXT_LEN);
    assert_true(token_looks_valid(a, strlen(a)));
    assert_true(token_looks_valid(b, strlen(b)));
    assert_string_not_equal(a, b);
}

static void test_looks_valid_table(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool valid;
    } cases[] = {
        {"xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", true},
        {"xg___________________________________________8", true},
        {"xg_-------------------------------------------", false}, /* '-' = 62: low bits set */
        {"xg_------------------------------------------w", true},
        /* non-canonical: last character carries bits the 32 bytes do not have */
        {"xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9", false},
        {"xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh", false},   /* 45 characters */
        {"xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8A", false}, /* 47 characters */
        {"XG_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", false},
        {"xg-AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", false},
        {"ab_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", false},
        {"xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd+h8", false}, /* standard alphabet */
        {"xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd/h8", false},
        {"xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdH=8", false},
        {"xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdH.8", false},
        {"xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdH 8", false},
        /* monerod path segments are never tokens */
        {"json_rpc", false},
        {"get_info", false},
        {"getblocks.bin", false},
        {"get_transactions", false},
        {"send_raw_transaction", false},
        {"xg_", false},
        {"", false},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        bool got = token_looks_valid(cases[i].text, strlen(cases[i].text));
        if (got != cases[i].valid)
            fail_msg("case %zu (%s): expected %d", i, cases[i].text, cases[i].valid);
    }
    /* An embedded NUL inside the 46 bytes is not a token either. */
    char with_nul[TOKEN_TEXT_SIZE];
    memcpy(with_nul, token_0_to_31, sizeof with_nul);
    with_nul[20] = '\0';
    assert_false(token_looks_valid(with_nul, TOKEN_TEXT_LEN));
}

static void test_hash_vectors(void **state)
{
    (void)state;
    uint8_t h[TOKEN_HASH_LEN];
    char hex[TOKEN_HASH_HEX_SIZE];
    /* FIPS 180-2 "abc" */
    assert_true(token_hash("abc", 3, h));
    token_hash_hex(h, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    /* the hash is over the token text, as `printf %s "$t" | sha256sum` computes it */
    assert_true(token_hash(token_0_to_31, strlen(token_0_to_31), h));
    token_hash_hex(h, hex);
    assert_string_equal(hex, "b9185f877e12309721eb7f0bab2c8266bb11567b08a6a8ac93eefdbaf32954ae");
}

static void test_hash_equal(void **state)
{
    (void)state;
    uint8_t a[TOKEN_HASH_LEN], b[TOKEN_HASH_LEN];
    assert_true(token_hash(token_0_to_31, TOKEN_TEXT_LEN, a));
    memcpy(b, a, sizeof a);
    assert_true(token_hash_equal(a, b));
    b[0] ^= 1;
    assert_false(token_hash_equal(a, b));
    b[0] ^= 1;
    b[TOKEN_HASH_LEN - 1] ^= 0x80;
    assert_false(token_hash_equal(a, b));
}

static void test_handles(void **state)
{
    (void)state;
    char a[TOKEN_HANDLE_SIZE], b[TOKEN_HANDLE_SIZE];
    assert_true(token_handle_generate(a));
    assert_true(token_handle_generate(b));
    assert_true(token_handle_looks_valid(a, strlen(a)));
    assert_int_equal(strlen(a), TOKEN_HANDLE_LEN);
    assert_string_not_equal(a, b);
    assert_null(strchr(a, ':'));

    static const struct {
        const char *text;
        bool valid;
    } cases[] = {
        {"t_abcdefgh2345", true},  {"t_abcdefgh234", false},  {"t_abcdefgh23456", false},
        {"t_abcdefgh2341", false}, {"t_Abcdefgh2345", false}, {"u_abcdefgh2345", false},
        {"t-abcdefgh2345", false}, {"t_abcdefgh:345", false}, {"", false},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        if (token_handle_looks_valid(cases[i].text, strlen(cases[i].text)) != cases[i].valid)
            fail_msg("handle case %zu (%s)", i, cases[i].text);
}

static void test_ha1_rfc2617(void **state)
{
    (void)state;
    uint8_t ha1[TOKEN_HA1_LEN];
    char hex[2 * TOKEN_HA1_LEN + 1];
    assert_true(token_digest_ha1("Mufasa", "testrealm@host.com", "Circle Of Life", ha1));
    hex_of(ha1, sizeof ha1, hex);
    assert_string_equal(hex, "939e7578ed9e3c518a452acee763bce9");
}

static void test_ha1_wrap(void **state)
{
    (void)state;
    uint8_t key[TOKEN_HA1_KEY_LEN], other_key[TOKEN_HA1_KEY_LEN];
    for (size_t i = 0; i < sizeof key; i++) {
        key[i] = (uint8_t)(i * 7 + 1);
        other_key[i] = (uint8_t)(i * 7 + 2);
    }
    uint8_t ha1[TOKEN_HA1_LEN], back[TOKEN_HA1_LEN];
    assert_true(token_digest_ha1("t_abcdefgh2345", "xmrgate", token_0_to_31, ha1));

    uint8_t w1[TOKEN_HA1_WRAPPED_LEN], w2[TOKEN_HA1_WRAPPED_LEN];
    assert_true(token_ha1_wrap(key, "t_abcdefgh2345", ha1, w1));
    assert_true(token_ha1_wrap(key, "t_abcdefgh2345", ha1, w2));
    assert_memory_not_equal(w1, w2, sizeof w1); /* fresh IV each time */
    assert_int_equal(w1[0], 1);

    assert_true(token_ha1_unwrap(key, "t_abcdefgh2345", w1, back));
    assert_memory_equal(back, ha1, sizeof ha1);
    assert_true(token_ha1_unwrap(key, "t_abcdefgh2345", w2, back));
    assert_memory_equal(back, ha1, sizeof ha1);

    static const uint8_t zero[TOKEN_HA1_LEN];
    assert_false(token_ha1_unwrap(other_key, "t_abcdefgh2345", w1, back));
    assert_memory_equal(back, zero, sizeof zero);
    assert_false(token_ha1_unwrap(key, "t_abcdefgh2346", w1, back));
    for (size_t i = 0; i < sizeof w1; i++) {
        uint8_t bad[TOKEN_HA1_WRAPPED_LEN];
        memcpy(bad, w1, sizeof bad);
        bad[i] ^= 0x01;
        if (token_ha1_unwrap(key, "t_abcdefgh2345", bad, back))
            fail_msg("a flipped bit at byte %zu still unwrapped", i);
    }
}

/* One unwrapper for many rows gives token_ha1_unwrap's answer row after row, whatever the
 * row before it did: a good row after a wrong tag, a wrong handle, a wrong version or a
 * cut tag still unwraps, and a bad row after a good one still fails. */
static void test_ha1_unwrapper_reused(void **state)
{
    (void)state;
    uint8_t key[TOKEN_HA1_KEY_LEN];
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)(i * 5 + 3);
    static const char *const handles[] = {"t_aaaaaaaaaaaa", "t_bbbbbbbbbbbb", "t_abcdefgh2345"};
    uint8_t ha1[3][TOKEN_HA1_LEN], wrapped[3][TOKEN_HA1_WRAPPED_LEN];
    for (size_t i = 0; i < 3; i++) {
        assert_true(token_digest_ha1(handles[i], "xmrgate", token_0_to_31, ha1[i]));
        assert_true(token_ha1_wrap(key, handles[i], ha1[i], wrapped[i]));
    }
    uint8_t bad_tag[TOKEN_HA1_WRAPPED_LEN], bad_version[TOKEN_HA1_WRAPPED_LEN];
    memcpy(bad_tag, wrapped[0], sizeof bad_tag);
    bad_tag[TOKEN_HA1_WRAPPED_LEN - 1] ^= 0x80;
    memcpy(bad_version, wrapped[1], sizeof bad_version);
    bad_version[0] = 2;
    static const struct {
        size_t handle;
        int wrapped; /* 0..2: that row's own; 3: bad tag of row 0; 4: bad version of row 1 */
        bool ok;
    } seq[] = {
        {0, 0, true},  {0, 3, false}, {1, 1, true}, {0, 1, false}, {1, 1, true},
        {1, 4, false}, {2, 2, true},  {2, 2, true}, {0, 3, false}, {0, 3, false},
        {0, 0, true},  {2, 0, false}, {2, 2, true},
    };
    struct token_ha1_unwrapper *u = token_ha1_unwrapper_new(key);
    assert_non_null(u);
    static const uint8_t zero[TOKEN_HA1_LEN];
    for (size_t i = 0; i < ARRAY_LEN(seq); i++) {
        const uint8_t *w = seq[i].wrapped < 3    ? wrapped[seq[i].wrapped]
                           : seq[i].wrapped == 3 ? bad_tag
                                                 : bad_version;
        uint8_t with[TOKEN_HA1_LEN], plain[TOKEN_HA1_LEN];
        memset(with, 0x55, sizeof with);
        bool got = token_ha1_unwrap_with(u, handles[seq[i].handle], w, with);
        if (got != seq[i].ok)
            fail_msg("row %zu: unwrapped %d, want %d", i, got, seq[i].ok);
        assert_int_equal(token_ha1_unwrap(key, handles[seq[i].handle], w, plain), seq[i].ok);
        assert_memory_equal(with, plain, sizeof with);
        assert_memory_equal(with, seq[i].ok ? ha1[seq[i].handle] : zero, sizeof with);
    }
    token_ha1_unwrapper_free(u);
    token_ha1_unwrapper_free(NULL);
}

static void test_b64url_rfc4648(void **state)
{
    (void)state;
    static const struct {
        const char *plain, *coded;
    } cases[] = {
        {"", ""},           {"f", "Zg"},          {"fo", "Zm8"},          {"foo", "Zm9v"},
        {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"}, {"\xfb\xff", "-_8"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char out[32];
        uint8_t back[32];
        size_t n = strlen(cases[i].plain), m = 0;
        assert_int_equal(token_b64url_encode((const uint8_t *)cases[i].plain, n, out),
                         strlen(cases[i].coded));
        assert_string_equal(out, cases[i].coded);
        assert_true(token_b64url_decode(out, strlen(out), back, sizeof back, &m));
        assert_int_equal(m, n);
        assert_memory_equal(back, cases[i].plain, n);
    }
    uint8_t buf[8];
    size_t m;
    assert_false(token_b64url_decode("Zm9vYg==", 8, buf, sizeof buf, &m)); /* no padding */
    assert_false(token_b64url_decode("Z", 1, buf, sizeof buf, &m));
    assert_false(token_b64url_decode("Zh", 2, buf, sizeof buf, &m)); /* non-zero spare bits */
    assert_false(token_b64url_decode("Zm9+", 4, buf, sizeof buf, &m));
    assert_false(token_b64url_decode("Zm9vYmFy", 8, buf, 5, &m)); /* does not fit */
}

static void test_b64_standard_table(void **state)
{
    (void)state;
    static const struct {
        const char *coded;
        const char *plain; /* NULL: must be refused */
    } cases[] = {
        {"QWxhZGRpbjpvcGVuIHNlc2FtZQ==", "Aladdin:open sesame"}, /* RFC 7617 */
        {"Zm9vYmFy", "foobar"},
        {"Zm9vYg==", "foob"},
        {"Zm9vYmE=", "fooba"},
        {"+/+/", "\xfb\xff\xbf"},
        {"Zm9vYg", NULL},   /* padding required */
        {"Zm9vYg=", NULL},  /* short padding */
        {"Zm9vY===", NULL}, /* three '=' */
        {"Zm9=Yg==", NULL}, /* '=' in the middle */
        {"Zm9vYh==", NULL}, /* non-zero spare bits */
        {"Zm9v-_==", NULL}, /* URL alphabet */
        {"Zm9v Yg=", NULL}, /* whitespace */
        {"====", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        uint8_t out[64];
        size_t n = 0;
        bool ok = token_b64_decode(cases[i].coded, strlen(cases[i].coded), out, sizeof out, &n);
        if (ok != (cases[i].plain != NULL))
            fail_msg("case %zu (%s): decode returned %d", i, cases[i].coded, ok);
        if (ok) {
            assert_int_equal(n, strlen(cases[i].plain));
            assert_memory_equal(out, cases[i].plain, n);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_known_vector),  cmocka_unit_test(test_generate),
        cmocka_unit_test(test_looks_valid_table),    cmocka_unit_test(test_hash_vectors),
        cmocka_unit_test(test_hash_equal),           cmocka_unit_test(test_handles),
        cmocka_unit_test(test_ha1_rfc2617),          cmocka_unit_test(test_ha1_wrap),
        cmocka_unit_test(test_ha1_unwrapper_reused), cmocka_unit_test(test_b64url_rfc4648),
        cmocka_unit_test(test_b64_standard_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
