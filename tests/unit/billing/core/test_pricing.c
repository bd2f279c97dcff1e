/* Tests for billing/pricing: exact decimal rates, fiat → piconero rounding, XMR text,
 * and reading a number's exact text at a JSON path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/pricing.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void test_parse_rate(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool ok;
        int64_t rate_e8;
    } cases[] = {
        {"123.45", true, 12345000000},
        {"0.5", true, 50000000},
        {"42", true, 4200000000},
        {"0.00000001", true, 1},
        {"1.123456789", true, 112345678}, /* cut after 8 decimals */
        {"9999999999.99999999", true, 999999999999999999},
        {"0.000000009", false, 0}, /* zero after the cut */
        {"0", false, 0},
        {"", false, 0},
        {".5", false, 0},
        {"5.", false, 0},
        {"-1", false, 0},
        {"+1", false, 0},
        {"1e3", false, 0},
        {"1.2.3", false, 0},
        {"12345678901", false, 0},          /* 11 integer digits */
        {"55555555555555555555", false, 0}, /* 20 digits: refused, no int64 overflow (UBSan) */
        {"1 ", false, 0},
        {"0x10", false, 0},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        int64_t r = -1;
        bool ok = price_parse_rate(cases[i].text, strlen(cases[i].text), &r);
        if (ok != cases[i].ok || (ok && r != cases[i].rate_e8)) {
            print_error("\"%s\": ok %d rate %lld\n", cases[i].text, ok, (long long)r);
            fail();
        }
    }
}

static void test_fiat_to_piconero(void **state)
{
    (void)state;
    static const struct {
        int64_t minor;
        int exponent;
        const char *rate;
        bool ok;
        int64_t piconero;
    } cases[] = {
        /* $5.00 at 100 USD/XMR = 0.05 XMR exactly */
        {500, 2, "100", true, 50000000000},
        /* $5.00 at 150 USD/XMR = 0.0333… XMR, rounded up */
        {500, 2, "150", true, 33333333334},
        /* $25.00 at 123.45 = 0.202511138112… → rounded up */
        {2500, 2, "123.45", true, 202511138113},
        /* ¥1000 at 20000 JPY/XMR = 0.05 XMR */
        {1000, 0, "20000", true, 50000000000},
        /* the smallest rate and a large price overflow int64 */
        {100000000, 2, "0.00000001", false, 0},
        {0, 2, "100", true, 0},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        int64_t rate, p = -1;
        assert_true(price_parse_rate(cases[i].rate, strlen(cases[i].rate), &rate));
        bool ok = price_fiat_to_piconero(cases[i].minor, cases[i].exponent, rate, &p);
        if (ok != cases[i].ok || (ok && p != cases[i].piconero)) {
            print_error("case %zu: ok %d piconero %lld\n", i, ok, (long long)p);
            fail();
        }
    }
    int64_t p;
    assert_false(price_fiat_to_piconero(500, 2, 0, &p));
    assert_false(price_fiat_to_piconero(-1, 2, 100, &p));
}

/* Rounding up never shorts the merchant: the quote times the rate covers the price. */
static void test_rounding_covers_price(void **state)
{
    (void)state;
    static const char *rates[] = {"1", "3", "7.77", "123.45", "161.12345678", "99999.5"};
    for (size_t r = 0; r < ARRAY_LEN(rates); r++) {
        int64_t rate;
        assert_true(price_parse_rate(rates[r], strlen(rates[r]), &rate));
        for (int64_t cents = 1; cents < 100000; cents += 997) {
            int64_t p;
            assert_true(price_fiat_to_piconero(cents, 2, rate, &p));
            /* p * rate / 10^20 >= cents / 100, and p - 1 falls short */
            __int128 have = (__int128)p * rate, need = (__int128)cents * 1000000000000000000LL;
            assert_true(have >= need);
            assert_true((__int128)(p - 1) * rate < need);
        }
    }
}

static void test_quote(void **state)
{
    (void)state;
    int64_t p, rate;
    assert_true(price_quote("XMR", 250000000000, 3, 0, &p));
    assert_true(p == 750000000000);
    assert_true(price_parse_rate("100", 3, &rate));
    assert_true(price_quote("USD", 500, 12, rate, &p));
    assert_true(p == 600000000000);
    assert_false(price_quote("USD", 500, 12, 0, &p)); /* no rate */
    assert_false(price_quote("XMR", INT64_MAX / 2, 3, 0, &p));
    assert_false(price_quote("XMR", 1, 0, 0, &p));
}

/* A tier change carries the time left at the price ratio, in integers; the example of
 * docs/BILLING.md first: 12 months of Wallet ($5) onto Sovereign ($99) is not 12 months. */
static void test_carry_table(void **state)
{
    (void)state;
    enum { YEAR = 365 * 86400, MONTH = 30 * 86400 };
    int64_t rate100;
    assert_true(price_parse_rate("100", 3, &rate100));
    static const int64_t unpriced = -1;
    const struct {
        const char *name;
        struct price_carry_input in;
        int64_t carried; /* unpriced: price_carry is false */
    } rows[] = {
        {"cheaper to dearer: shorter",
         {YEAR, "wallet", "USD", 500, "sovereign", "USD", 9900, 0},
         (int64_t)YEAR * 500 / 9900},
        {"dearer to cheaper: longer",
         {MONTH, "sovereign", "USD", 9900, "wallet", "USD", 500, 0},
         (int64_t)MONTH * 9900 / 500},
        {"same tier: unchanged, whatever the prices",
         {YEAR, "wallet", "USD", 500, "wallet", "USD", 600, 0},
         YEAR},
        {"same price, other tier: unchanged", {MONTH, "a", "XMR", 7, "b", "XMR", 7, 0}, MONTH},
        {"rounded down", {10, "a", "XMR", 1, "b", "XMR", 3, 0}, 3},
        {"nothing left", {0, "wallet", "USD", 500, "sovereign", "USD", 9900, 0}, 0},
        {"lapsed (negative)", {-5, "wallet", "USD", 500, "sovereign", "USD", 9900, 0}, 0},
        {"free time carries nothing", {MONTH, "free", "XMR", 0, "wallet", "USD", 500, 0}, 0},
        {"lapsed fiat to XMR needs no rate", {0, "wallet", "USD", 500, "x", "XMR", 1, 0}, 0},
        /* 0.25 XMR against $5 at 100 USD/XMR (0.05 XMR): five times as long */
        {"XMR to fiat at the invoice's rate",
         {1000, "x", "XMR", 250000000000, "wallet", "USD", 500, rate100},
         5000},
        {"fiat to XMR without a rate", {MONTH, "wallet", "USD", 500, "x", "XMR", 1, 0}, unpriced},
        {"two fiat currencies", {MONTH, "a", "USD", 500, "b", "EUR", 500, rate100}, unpriced},
        {"onto a free tier", {MONTH, "wallet", "USD", 500, "free", "XMR", 0, 0}, unpriced},
        {"too long to fit", {INT64_MAX, "a", "XMR", 2, "b", "XMR", 1, 0}, unpriced},
        {"microseconds of a year, dearer ×20",
         {(int64_t)YEAR * 1000000, "a", "XMR", 20, "b", "XMR", 1, 0},
         (int64_t)YEAR * 1000000 * 20},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t carried = -7;
        bool ok = price_carry(&rows[i].in, &carried);
        if (ok != (rows[i].carried != unpriced) || (ok && carried != rows[i].carried))
            fail_msg("%s: %s, carried %lld (want %lld)", rows[i].name, ok ? "true" : "false",
                     (long long)carried, (long long)rows[i].carried);
    }
}

static void test_format(void **state)
{
    (void)state;
    char x[PRICE_XMR_TEXT_SIZE], r[PRICE_RATE_TEXT_SIZE];
    price_format_xmr(1500000000000, x);
    assert_string_equal(x, "1.5");
    price_format_xmr(1, x);
    assert_string_equal(x, "0.000000000001");
    price_format_xmr(0, x);
    assert_string_equal(x, "0");
    price_format_xmr(33333333334, x);
    assert_string_equal(x, "0.033333333334");
    price_format_xmr(INT64_MAX, x);
    assert_string_equal(x, "9223372.036854775807");
    price_format_rate(12345000000, r);
    assert_string_equal(r, "123.45");
    price_format_rate(4200000000, r);
    assert_string_equal(r, "42");
}

static void test_json_path(void **state)
{
    (void)state;
    static const struct {
        const char *json, *path;
        const char *want; /* NULL: must fail */
    } cases[] = {
        {"{\"monero\":{\"usd\":123.45}}", "monero.usd", "123.45"},
        {"{\"monero\": {\"eur\": 1, \"usd\" : 161.12345678 } }", "monero.usd", "161.12345678"},
        {"{\"price\":\"170.10\"}", "price", "170.10"},
        {"{\"a\":[\"x\",{\"b\":[1,2]}],\"result\":{\"XXMRZUSD\":{\"c\":[\"155.3\",\"0.1\"]}}}",
         "result.XXMRZUSD.c.0", "155.3"},
        {"{\"skip\":{\"usd\":1,\"s\":\"}\\\"{\"},\"usd\":2.5}", "usd", "2.5"},
        {"123.45", "", "123.45"},
        {"{\"monero\":{\"usd\":123.45}}", "monero.eur", NULL},
        {"{\"monero\":{\"usd\":true}}", "monero.usd", NULL},
        {"{\"monero\":{\"usd\":{\"v\":1}}}", "monero.usd", NULL},
        {"{\"monero\":{\"usd\":123.45}", "monero.usd", NULL}, /* invalid JSON */
        {"[1,2]", "5", NULL},
        {"[1,2]", "x", NULL},
        {"{\"a\":1}", "a.b", NULL},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char out[64];
        bool ok = price_json_number_text(cases[i].json, cases[i].path, out, sizeof out);
        if (ok != (cases[i].want != NULL) || (ok && strcmp(out, cases[i].want) != 0)) {
            print_error("case %zu (%s): ok %d out \"%s\"\n", i, cases[i].path, ok, ok ? out : "");
            fail();
        }
    }
    char tiny[4];
    assert_false(price_json_number_text("{\"a\":123.45}", "a", tiny, sizeof tiny));
}

static void test_exponents(void **state)
{
    (void)state;
    assert_int_equal(price_minor_exponent("USD"), 2);
    assert_int_equal(price_minor_exponent("EUR"), 2);
    assert_int_equal(price_minor_exponent("JPY"), 0);
    assert_int_equal(price_minor_exponent("KWD"), 3);
    assert_int_equal(price_minor_exponent("XMR"), 12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_rate),
        cmocka_unit_test(test_fiat_to_piconero),
        cmocka_unit_test(test_rounding_covers_price),
        cmocka_unit_test(test_quote),
        cmocka_unit_test(test_carry_table),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_json_path),
        cmocka_unit_test(test_exponents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
