/* Table tests for gateway/nodes/node_url: which node URLs carry a login, and the form shown
 * in the admin API and logs (never the password). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "nodes/node_url.h"

static void test_has_login(void **state)
{
    (void)state;
    struct {
        const char *url;
        bool login;
    } rows[] = {
        {"http://127.0.0.1:18081", false},
        {"http://user:secret@127.0.0.1:18081", true},
        {"https://user@node.example:18089", true},
        {"http://[::1]:18081", false},
        {"http://u:p@[::1]:18081", true},
        {"http://127.0.0.1:18081/path@x", false}, /* '@' after the authority */
        {"no scheme@host", false},
        {"", false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(node_url_has_login(rows[i].url), rows[i].login);
    assert_false(node_url_has_login(NULL));
}

static void test_redact(void **state)
{
    (void)state;
    struct {
        const char *url, *shown;
    } rows[] = {
        {"http://127.0.0.1:18081", "http://127.0.0.1:18081"},
        {"http://user:secret@127.0.0.1:18081", "http://user:***@127.0.0.1:18081"},
        {"https://user@node.example:18089", "https://user@node.example:18089"},
        {"http://u:p%40ss@[::1]:18081", "http://u:***@[::1]:18081"},
        /* A password holding '@' or ':' (not percent-encoded): the last '@' ends it. */
        {"http://u:a:b@c@host:1", "http://u:***@host:1"},
        {"http://:pw@host", "http://:***@host"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char out[128];
        assert_true(node_url_redact(rows[i].url, out, sizeof out));
        assert_string_equal(out, rows[i].shown);
    }
}

static void test_redact_cut_short(void **state)
{
    (void)state;
    char out[16];
    assert_false(node_url_redact("http://user:longsecret@127.0.0.1:18081", out, sizeof out));
    assert_null(strstr(out, "sec"));
    assert_int_equal(strlen(out), sizeof out - 1);
    assert_false(node_url_redact("http://x", out, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_has_login),
        cmocka_unit_test(test_redact),
        cmocka_unit_test(test_redact_cut_short),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
