/* Table tests for common/xg_str: bounded copies and joins, cut to fit, always terminated. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "xg_str.h"

struct join_case {
    const char *a, *b;
    size_t cap;
    const char *want;
    bool whole;
};

static void test_join(void **state)
{
    (void)state;
    static const struct join_case cases[] = {
        {"http://127.0.0.1:18081", "/json_rpc", 64, "http://127.0.0.1:18081/json_rpc", true},
        {"abc", "def", 7, "abcdef", true}, /* exactly fits */
        {"abc", "def", 6, "abcde", false}, /* one short: cut, terminated */
        {"abcdef", "gh", 4, "abc", false}, /* cut inside the first part */
        {"", "", 1, "", true},
        {NULL, "x", 4, "x", true},
        {"x", NULL, 4, "x", true},
        {"abc", "", 1, "", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct join_case *c = &cases[i];
        char buf[64];
        memset(buf, 'Z', sizeof buf);
        bool whole = xg_str_join(buf, c->cap, c->a, c->b);
        assert_string_equal(buf, c->want);
        assert_int_equal(whole, c->whole);
        assert_true(strlen(buf) < c->cap);
        if (c->cap < sizeof buf)
            assert_int_equal(buf[c->cap], 'Z'); /* nothing written past cap */
    }
}

static void test_copy(void **state)
{
    (void)state;
    char buf[8];
    assert_true(xg_str_copy(buf, sizeof buf, "1234567"));
    assert_string_equal(buf, "1234567");
    assert_false(xg_str_copy(buf, sizeof buf, "12345678"));
    assert_string_equal(buf, "1234567");
    assert_true(xg_str_copy(buf, sizeof buf, NULL));
    assert_string_equal(buf, "");
}

static void test_decimal(void **state)
{
    (void)state;
    static const struct {
        int64_t v;
        const char *want;
    } cases[] = {
        {0, "0"},
        {7, "7"},
        {10, "10"},
        {1234567, "1234567"},
        {-1, "-1"},
        {INT64_MAX, "9223372036854775807"},
        {INT64_MIN, "-9223372036854775808"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[XG_STR_INT_SIZE];
        assert_int_equal(xg_str_i64(out, cases[i].v), strlen(cases[i].want));
        assert_string_equal(out, cases[i].want);
    }
    char out[XG_STR_INT_SIZE];
    assert_int_equal(xg_str_u64(out, UINT64_MAX), 20);
    assert_string_equal(out, "18446744073709551615");
}

static void test_uuid_table(void **state)
{
    (void)state;
    struct {
        const char *s;
        bool uuid;
    } rows[] = {
        {"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", true},
        {"00000000-0000-0000-0000-000000000000", true},
        {"0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0", false}, /* upper case: not as printed */
        {"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f", false},  /* one short */
        {"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f00", false},
        {"0f1e2d3c4b5a-6978-8796-a5b4c3d2e1f0-", false}, /* a dash moved */
        {"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1g0", false}, /* not hex */
        {"{f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", false},
        {"", false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(xg_str_is_uuid(rows[i].s), rows[i].uuid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_join),
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_decimal),
        cmocka_unit_test(test_uuid_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
