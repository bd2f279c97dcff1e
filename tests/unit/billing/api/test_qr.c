/* Tests for billing/qr: the SVG's modules are exactly libqrencode's matrix (parsed back
 * from the path and compared cell by cell), with the quiet zone, and bad input is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <qrencode.h>

#include "api/qr.h"

#define URI                                                                                        \
    "monero:86kQTp122c7CPWz4WfgmNTE6BVGvcMKmYC9treRyRJEQJiFvpBFVnAj3gYwUUMW6koZh1M3hqJvtXQEUY8x7t" \
    "idP2HTvcbh?tx_amount=0.03078817734"

/* Paints the path's "Mx yhNv1h-Nz" runs into a size×size grid; fails on any other shape. */
static void paint(const char *svg, unsigned char *grid, int size)
{
    const char *d = strstr(svg, " d=\"");
    assert_non_null(d);
    d += 4;
    while (*d == 'M') {
        int x, y, run, back, used = 0;
        assert_int_equal(sscanf(d, "M%d %dh%dv1h-%dz%n", &x, &y, &run, &back, &used), 4);
        assert_int_equal(run, back);
        assert_true(run > 0 && x >= 0 && y >= 0 && x + run <= size && y < size);
        for (int i = 0; i < run; i++) {
            assert_int_equal(grid[y * size + x + i], 0); /* runs never overlap */
            grid[y * size + x + i] = 1;
        }
        d += used;
    }
    assert_int_equal(*d, '"');
}

static void test_modules_match_the_matrix(void **state)
{
    (void)state;
    char *svg = qr_svg(URI, "Monero payment");
    assert_non_null(svg);
    QRcode *qr = QRcode_encodeString8bit(URI, 0, QR_ECLEVEL_M);
    assert_non_null(qr);
    int size = qr->width + 2 * QR_QUIET_ZONE;
    char view[64];
    snprintf(view, sizeof view, "viewBox=\"0 0 %d %d\"", size, size);
    assert_non_null(strstr(svg, view));
    assert_non_null(strstr(svg, "<title>Monero payment</title>"));
    unsigned char *grid = calloc((size_t)(size * size), 1);
    paint(svg, grid, size);
    for (int y = 0; y < size; y++)
        for (int x = 0; x < size; x++) {
            int qx = x - QR_QUIET_ZONE, qy = y - QR_QUIET_ZONE;
            bool inside = qx >= 0 && qy >= 0 && qx < qr->width && qy < qr->width;
            int dark = inside ? qr->data[qy * qr->width + qx] & 1 : 0;
            assert_int_equal(grid[y * size + x], dark);
        }
    free(grid);
    QRcode_free(qr);
    free(svg);
}

static void test_standalone_document(void **state)
{
    (void)state;
    char *svg = qr_svg("monero:x", NULL);
    assert_non_null(svg);
    assert_memory_equal(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39);
    assert_null(strstr(svg, "<title>"));
    assert_non_null(strstr(svg, "fill=\"#fff\"")); /* a light background under the code */
    assert_string_equal(svg + strlen(svg) - 7, "</svg>\n");
    free(svg);
}

static void test_refuses_bad_input(void **state)
{
    (void)state;
    assert_null(qr_svg("", NULL));
    assert_null(qr_svg(NULL, NULL));
    assert_null(qr_svg("monero:x", "a <b>"));
    assert_null(qr_svg("monero:x", "\"quoted\""));
    /* beyond version 40 at level M (2331 bytes in 8-bit mode) */
    char *big = malloc(4000);
    memset(big, 'a', 3999);
    big[3999] = '\0';
    assert_null(qr_svg(big, NULL));
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modules_match_the_matrix),
        cmocka_unit_test(test_standalone_document),
        cmocka_unit_test(test_refuses_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
