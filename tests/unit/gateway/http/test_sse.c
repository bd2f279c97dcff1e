/* Table tests for gateway/http/sse: the framing of events and comments, line breaks in
 * data split into data lines, and names that cannot be framed refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "http/sse.h"

struct row {
    const char *what;
    const char *name;
    const char *data;
    const char *want; /* NULL: refused */
};

static const struct row ROWS[] = {
    {"a named event with JSON", "accepted", "{\"status\":\"mempool\"}",
     "event: accepted\ndata: {\"status\":\"mempool\"}\n\n"},
    {"no name: a plain message", NULL, "x", "data: x\n\n"},
    {"an empty name is no name", "", "x", "data: x\n\n"},
    {"a name without data", "ping", NULL, "event: ping\n\n"},
    {"empty data is one empty data line", "e", "", "event: e\ndata: \n\n"},
    {"LF starts a data line", "e", "a\nb", "event: e\ndata: a\ndata: b\n\n"},
    {"CRLF is one break", "e", "a\r\nb", "event: e\ndata: a\ndata: b\n\n"},
    {"a lone CR is a break", "e", "a\rb", "event: e\ndata: a\ndata: b\n\n"},
    {"a trailing break leaves an empty line", "e", "a\n", "event: e\ndata: a\ndata: \n\n"},
    {"two breaks in a row", "e", "a\n\nb", "event: e\ndata: a\ndata: \ndata: b\n\n"},
    {"a name with LF is refused", "a\nb", "x", NULL},
    {"a name with CR is refused", "a\rb", "x", NULL},
};

static void test_events(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        const struct row *r = &ROWS[i];
        size_t len = 0;
        char *got = sse_event(r->name, r->data, &len);
        if (!r->want) {
            if (got)
                fail_msg("%s: framed as %s", r->what, got);
            continue;
        }
        if (!got)
            fail_msg("%s: refused", r->what);
        if (strcmp(got, r->want) != 0 || len != strlen(r->want))
            fail_msg("%s: got [%s]", r->what, got);
        free(got);
    }
}

static void test_comments(void **state)
{
    (void)state;
    size_t len = 0;
    char *c = sse_comment("keep-alive", &len);
    assert_non_null(c);
    assert_string_equal(c, ": keep-alive\n\n");
    assert_int_equal(len, strlen(": keep-alive\n\n"));
    free(c);
    assert_null(sse_comment("a\nb", &len));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_comments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
