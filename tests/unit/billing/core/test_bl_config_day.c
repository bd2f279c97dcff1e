/* Tests for bl_config_day_end: the cut-off day of [xmr402] legacy_receipt_until, a real
 * UTC date, ends at the next day's 00:00 UTC. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "core/bl_config.h"

static void test_day_end(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool ok;
        int64_t end;
    } rows[] = {
        {"2026-12-04", true, INT64_C(1796428800)}, /* 2026-12-05T00:00:00Z */
        {"2000-01-01", true, INT64_C(946771200)},
        {"2028-02-29", true, INT64_C(1835481600)}, /* a leap day */
        {"2026-12-31", true, INT64_C(1798761600)}, /* into the next year */
        {"2027-02-29", false, 0},                  /* no leap day */
        {"2100-02-29", false, 0},                  /* a century is no leap year */
        {"2026-13-01", false, 0},
        {"2026-04-31", false, 0},
        {"2026-12-4", false, 0},
        {"2026/12/04", false, 0},
        {"1999-12-31", false, 0},
        {"2026-12-04x", false, 0},
        {"", false, 0},
        {"+026-12-04", false, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t end = 0;
        print_message("%s\n", rows[i].text);
        assert_int_equal(bl_config_day_end(rows[i].text, &end), rows[i].ok);
        if (rows[i].ok)
            assert_int_equal(end, rows[i].end);
    }
    int64_t end;
    assert_false(bl_config_day_end(NULL, &end));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_day_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
