/* Table tests for gateway/nodes/tls_pin: the fingerprint list an operator writes (as
 * `openssl x509 -fingerprint -sha256` prints it, or bare hex) and matching against it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "nodes/tls_pin.h"

#define HEX64 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define COLONS                                                                                     \
    "00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:"      \
    "DD:EE:FF"

static void test_parse_table(void **state)
{
    (void)state;
    struct {
        const char *text;
        bool ok;
        size_t count;
    } rows[] = {
        {"", true, 0},
        {"  , ", true, 0},
        {HEX64, true, 1},
        {COLONS, true, 1},
        {HEX64 "," COLONS, true, 2},
        {" " HEX64 " ,\n " COLONS " ", true, 2},
        {HEX64 "0", false, 0}, /* 65 digits */
        {"00112233445566778899aabbccddeeff00112233445566778899aabbccddee", false, 0},   /* 62 */
        {"zz112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", false, 0}, /* hex? */
        {":" HEX64, false, 0}, /* a leading colon */
        {HEX64 ":", false, 0}, /* a trailing colon */
        {"00::112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", false, 0}, /* :: */
        {"0:0112233445566778899aabbccddeeff00112233445566778899aabbccddeeff0", false, 0},
        {"sha256//" HEX64, false, 0}, /* curl's public-key pin is another thing */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct tls_pins pins;
        char err[128] = "";
        printf("# %s\n", rows[i].text);
        assert_int_equal(tls_pin_parse(rows[i].text, &pins, err, sizeof err), rows[i].ok);
        assert_int_equal(pins.count, rows[i].count);
        if (!rows[i].ok)
            assert_true(err[0] != '\0');
    }
}

static void test_too_many(void **state)
{
    (void)state;
    char text[(TLS_PIN_MAX + 1) * 66 + 1] = "";
    for (int i = 0; i <= TLS_PIN_MAX; i++)
        strcat(strcat(text, HEX64), ",");
    struct tls_pins pins;
    char err[128];
    assert_false(tls_pin_parse(text, &pins, err, sizeof err));
    assert_int_equal(pins.count, 0);
}

static void test_match(void **state)
{
    (void)state;
    struct tls_pins pins;
    char err[128];
    assert_true(tls_pin_parse(COLONS, &pins, err, sizeof err));
    unsigned char digest[TLS_PIN_LEN];
    for (int i = 0; i < TLS_PIN_LEN; i++)
        digest[i] = (unsigned char)((i % 16) * 0x11);
    assert_true(tls_pin_match(&pins, digest));
    digest[TLS_PIN_LEN - 1] ^= 1;
    assert_false(tls_pin_match(&pins, digest));
    struct tls_pins none;
    assert_true(tls_pin_parse("", &none, err, sizeof err));
    assert_false(tls_pin_match(&none, digest));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_too_many),
        cmocka_unit_test(test_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
