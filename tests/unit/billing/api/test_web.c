/* Tests for billing/web's pure rules: which paths are pages, which names may be served
 * (no traversal, no dotfiles), their content types, and the ETag's shape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "api/web.h"

static void test_pages(void **state)
{
    (void)state;
    static const struct {
        const char *path, *page;
    } cases[] = {
        {"/", "index.html"},
        {"/index.html", "index.html"},
        {"/renew", "renew.html"},
        {"/invoice/0b7c1a52-3f0e-4c1d-9a7e-2b1f7d9e8c31", "invoice.html"},
        {"/invoice/0B7C1A52-3F0E-4C1D-9A7E-2B1F7D9E8C31", NULL}, /* ids are lower case */
        {"/invoice/0b7c1a52-3f0e-4c1d-9a7e-2b1f7d9e8c3", NULL},
        {"/invoice/0b7c1a52-3f0e-4c1d-9a7e-2b1f7d9e8c31/x", NULL},
        {"/invoice/0b7c1a52x3f0e-4c1d-9a7e-2b1f7d9e8c31", NULL},
        {"/invoice/", NULL},
        {"/renew/", NULL},
        {"/../etc/passwd", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = web_page_for_path(cases[i].path);
        if (cases[i].page)
            assert_string_equal(got, cases[i].page);
        else
            assert_null(got);
    }
}

static void test_names(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        bool ok;
    } cases[] = {
        {"app.css", true},    {"common.js", true},  {"favicon.svg", true}, {"a-b_c.1.js", true},
        {"..", false},        {".htaccess", false}, {"../x.css", false},   {"a/b.css", false},
        {"a%2fb.css", false}, {"", false},          {"a\\b.css", false},   {"x.css\n", false},
        {"é.css", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(web_name_ok(cases[i].name), cases[i].ok);
    char longname[80];
    snprintf(longname, sizeof longname, "%070d.js", 0);
    assert_false(web_name_ok(longname));
}

static void test_content_types(void **state)
{
    (void)state;
    assert_string_equal(web_content_type("index.html"), "text/html; charset=utf-8");
    assert_string_equal(web_content_type("app.css"), "text/css; charset=utf-8");
    assert_string_equal(web_content_type("app.js"), "text/javascript; charset=utf-8");
    assert_string_equal(web_content_type("favicon.svg"), "image/svg+xml");
    assert_null(web_content_type("README"));
    assert_null(web_content_type("billing.ini"));
    assert_null(web_content_type("app.js.map"));
    assert_null(web_content_type("x.HTML"));
}

static void test_etag(void **state)
{
    (void)state;
    char tag[64];
    web_etag(1930, 0x18ec91b1673f121fLL, tag, sizeof tag);
    assert_string_equal(tag, "\"78a-18ec91b1673f121f\"");
    char other[64];
    web_etag(1930, 0x18ec91b1673f1220LL, other, sizeof other);
    assert_string_not_equal(tag, other); /* a new mtime is a new version */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pages),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_content_types),
        cmocka_unit_test(test_etag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
