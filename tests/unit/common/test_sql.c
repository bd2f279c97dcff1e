/* Tests for xg_sql: named-block lookup in a text, and the embedded sql/ files (every
 * named query resolves, and no name is defined twice). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xg_sql.h"

static const char sample[] = "-- queries for the tests\n"
                             "SET search_path = public;\n"
                             "\n"
                             "-- name: tenant_by_hash\n"
                             "SELECT id, tier\n"
                             "  FROM tenants\n"
                             " WHERE token_hash = $1;\n"
                             "\n"
                             "--   not a header: -- name: fake\n"
                             "-- name:   usage_add   \r\n"
                             "INSERT INTO usage VALUES ($1, $2);\n"
                             "-- name: empty_one\n"
                             "-- name: tenant_by_hash_v2\n"
                             "SELECT 2;\n"
                             "-- name: last\n"
                             "SELECT 'end'";

static void test_find_named(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *expected; /* NULL: not found */
    } cases[] = {
        {"tenant_by_hash", "SELECT id, tier\n  FROM tenants\n WHERE token_hash = $1;\n\n"
                           "--   not a header: -- name: fake"},
        {"usage_add", "INSERT INTO usage VALUES ($1, $2);"},
        {"empty_one", ""},
        {"tenant_by_hash_v2", "SELECT 2;"},
        {"last", "SELECT 'end'"},
        {"tenant", NULL},
        {"fake", NULL},
        {"", NULL},
        {"nope", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *q = xg_sql_find_named(sample, cases[i].name);
        if (!cases[i].expected) {
            if (q)
                fail_msg("\"%s\": expected not found, got \"%s\"", cases[i].name, q);
            continue;
        }
        if (!q)
            fail_msg("\"%s\": not found", cases[i].name);
        assert_string_equal(q, cases[i].expected);
        free(q);
    }
}

static void test_find_named_empty_text(void **state)
{
    (void)state;
    assert_null(xg_sql_find_named("", "x"));
    assert_null(xg_sql_find_named("SELECT 1;\n", "x"));
}

/* Calls fn(file, name) for every "-- name:" header of an embedded file. */
static size_t for_each_name(void (*fn)(const struct xg_sql_file *, const char *, void *), void *ctx)
{
    size_t count = 0;
    for (size_t i = 0; i < xg_sql_file_count; i++) {
        for (const char *line = xg_sql_files[i].text; line && *line;) {
            const char *nl = strchr(line, '\n');
            size_t len = nl ? (size_t)(nl - line) : strlen(line);
            if (strncmp(line, "-- name:", 8) == 0) {
                char name[128];
                const char *p = line + 8;
                size_t n = len - 8;
                while (n > 0 && (*p == ' ' || *p == '\t'))
                    p++, n--;
                while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
                    n--;
                assert_true(n > 0 && n < sizeof name);
                memcpy(name, p, n);
                name[n] = '\0';
                fn(&xg_sql_files[i], name, ctx);
                count++;
            }
            line = nl ? nl + 1 : line + len;
        }
    }
    return count;
}

static void check_resolves(const struct xg_sql_file *file, const char *name, void *ctx)
{
    (void)ctx;
    char *q = xg_sql_query(name);
    if (!q)
        fail_msg("%s: query %s does not resolve", file->name, name);
    char *direct = xg_sql_find_named(file->text, name);
    if (!direct || strcmp(q, direct) != 0)
        fail_msg("query %s is defined more than once (again in %s)", name, file->name);
    free(q);
    free(direct);
}

static void count_name(const struct xg_sql_file *file, const char *name, void *ctx)
{
    (void)file;
    struct {
        const char *name;
        int seen;
    } *c = ctx;
    c->seen += strcmp(name, c->name) == 0;
}

static void check_unique(const struct xg_sql_file *file, const char *name, void *ctx)
{
    (void)ctx;
    struct {
        const char *name;
        int seen;
    } c = {name, 0};
    for_each_name(count_name, &c);
    if (c.seen != 1)
        fail_msg("query %s (in %s) is defined %d times", name, file->name, c.seen);
}

static void test_embedded_queries(void **state)
{
    (void)state;
    for_each_name(check_resolves, NULL);
    for_each_name(check_unique, NULL);
    assert_null(xg_sql_query("no_such_query_anywhere"));
}

static void test_marked_idempotent(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        bool yes;
    } cases[] = {
        {"-- idempotent: a read\nSELECT 1;", true},
        {"-- A comment first.\n-- idempotent\nSELECT 1;", true},
        {"  -- idempotent: indented\nSELECT 1;", true},
        {"-- idempotent\tbecause", true},
        {"SELECT 1;", false},
        {"-- not idempotent: an increment\nUPDATE x SET n = n + 1;", false},
        {"-- idempotently\nSELECT 1;", false},
        {"SELECT 1; -- idempotent", false}, /* only a line of its own */
        {"", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (xg_sql_marked_idempotent(cases[i].body) != cases[i].yes)
            fail_msg("\"%s\": expected %s", cases[i].body, cases[i].yes ? "marked" : "unmarked");
}

/* The marks in sql/ as the daemons rely on them: reads may be sent again, additions and
 * inserts never. */
static void test_embedded_idempotent_marks(void **state)
{
    (void)state;
    static const char *const marked[] = {"bl_tiers_public", "bl_invoice_get",  "bl_cursor_get",
                                         "bl_cursor_set",   "gw_tenant_by_id", "bl_tenant_status",
                                         "adm_nodes_all"};
    static const char *const unmarked[] = {
        "gw_usage_add",           "bl_invoice_insert", "bl_payment_upsert",       "bl_tenant_grant",
        "bl_tenant_from_invoice", "adm_node_insert",   "bl_tenant_by_token_hash", "no_such_query"};
    for (size_t i = 0; i < sizeof marked / sizeof marked[0]; i++)
        if (!xg_sql_query_idempotent(marked[i]))
            fail_msg("%s: expected marked idempotent", marked[i]);
    for (size_t i = 0; i < sizeof unmarked / sizeof unmarked[0]; i++)
        if (xg_sql_query_idempotent(unmarked[i]))
            fail_msg("%s: expected not marked", unmarked[i]);
}

static void test_embedded_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < xg_sql_file_count; i++) {
        assert_non_null(xg_sql_files[i].name);
        assert_ptr_equal(xg_sql_file(xg_sql_files[i].name), xg_sql_files[i].text);
        assert_null(strchr(xg_sql_files[i].name, '/'));
    }
    assert_null(xg_sql_files[xg_sql_file_count].name); /* the generator's terminator */
    assert_null(xg_sql_file("no_such_file.sql"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_named),        cmocka_unit_test(test_find_named_empty_text),
        cmocka_unit_test(test_embedded_queries),  cmocka_unit_test(test_embedded_files),
        cmocka_unit_test(test_marked_idempotent), cmocka_unit_test(test_embedded_idempotent_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
