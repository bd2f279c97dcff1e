/* Tests for billing/invoice/invoice_row: the one decoder of an invoice's row, over results
 * built with libpq's own result constructors (no server): every column to its field, NULLs
 * to their flags, every state, and the refusals (columns renamed, moved or missing, an
 * unknown state, a text longer than its field); and that bl_invoice_get in sql/ names its
 * columns as the decoder lists them, in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "invoice/invoice_row.h"
#include "xg_sql.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A full row: a provisioned XMR402 purchase with a webhook and a fiat quote. */
static const char *const full[INVOICE_ROW_NCOLUMNS] = {
    "0f5e6c1a-7b2d-4c3e-9f10-2a3b4c5d6e7f",
    "purchase",
    "provisioned",
    "wallet",
    "3",
    "31000000000",
    "31500000000",
    "12",
    "10",
    "7",
    "8Bxyz",
    "00112233445566778899aabbccddeeff",
    "ab12",
    "42",
    "t_abcdefghijkl",
    "2027-03-01T00:00:00Z",
    "USD",
    "500",
    "162.40000000",
    "1767225600",
    "2026-01-01T00:00:00Z",
    "1767223800123",
    "2025-12-31T23:30:00Z",
    "1767224000",
    "https://hooks.example/x",
    "1767224100",
};

/* A result of one row with the given column names and values (NULL value: SQL NULL). */
static PGresult *result_of(const char *const *names, int ncols, const char *const *values)
{
    PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    assert_non_null(res);
    PGresAttDesc attrs[INVOICE_ROW_NCOLUMNS + 1];
    assert_true(ncols <= (int)ARRAY_LEN(attrs));
    for (int c = 0; c < ncols; c++)
        attrs[c] =
            (PGresAttDesc){.name = (char *)names[c], .typid = 25, .typlen = -1, .atttypmod = -1};
    assert_int_equal(PQsetResultAttrs(res, ncols, attrs), 1);
    for (int c = 0; c < ncols; c++)
        assert_int_equal(
            PQsetvalue(res, 0, c, (char *)values[c], values[c] ? (int)strlen(values[c]) : -1), 1);
    return res;
}

static bool decode(const char *const *values, struct invoice_row *row, char *why, size_t len)
{
    PGresult *res = result_of(invoice_row_columns, INVOICE_ROW_NCOLUMNS, values);
    bool ok = invoice_row_decode(res, 0, row, why, len);
    PQclear(res);
    return ok;
}

static void test_full_row(void **state)
{
    (void)state;
    struct invoice_row r;
    char why[128] = "";
    assert_true(decode(full, &r, why, sizeof why));
    assert_string_equal(r.id, full[0]);
    assert_false(r.renewal);
    assert_int_equal(r.state, INVOICE_PROVISIONED);
    assert_string_equal(r.tier, "wallet");
    assert_int_equal(r.months, 3);
    assert_int_equal(r.amount, 31000000000LL);
    assert_int_equal(r.paid, 31500000000LL);
    assert_int_equal(r.confirmations, 12);
    assert_int_equal(r.confirmations_required, 10);
    assert_true(r.has_subaddress);
    assert_int_equal(r.subaddress_index, 7);
    assert_string_equal(r.subaddress, "8Bxyz");
    assert_true(r.xmr402);
    assert_string_equal(r.nonce, "00112233445566778899aabbccddeeff");
    assert_string_equal(r.token_hash, "ab12");
    assert_int_equal(r.tenant_id, 42);
    assert_string_equal(r.handle, "t_abcdefghijkl");
    assert_true(r.has_valid_until);
    assert_string_equal(r.valid_until, "2027-03-01T00:00:00Z");
    assert_string_equal(r.currency, "USD");
    assert_int_equal(r.price_minor, 500);
    assert_true(r.has_rate);
    assert_string_equal(r.rate, "162.40000000");
    assert_int_equal(r.expires, 1767225600);
    assert_string_equal(r.expires_at, "2026-01-01T00:00:00Z");
    assert_int_equal(r.created_ms, 1767223800123LL);
    assert_string_equal(r.created_at, "2025-12-31T23:30:00Z");
    assert_int_equal(r.provisioned_at, 1767224000);
    assert_true(r.has_webhook);
    assert_string_equal(r.webhook_url, "https://hooks.example/x");
    assert_int_equal(r.now, 1767224100);
}

/* Every column that may be NULL is NULL. */
static void test_nulls(void **state)
{
    (void)state;
    const char *v[INVOICE_ROW_NCOLUMNS];
    memcpy(v, full, sizeof v);
    static const int nullable[] = {9, 10, 11, 13, 15, 18, 23, 24};
    for (size_t i = 0; i < ARRAY_LEN(nullable); i++)
        v[nullable[i]] = NULL;
    v[1] = "renewal";
    v[2] = "pending";
    struct invoice_row r;
    char why[128] = "";
    assert_true(decode(v, &r, why, sizeof why));
    assert_true(r.renewal);
    assert_int_equal(r.state, INVOICE_PENDING);
    assert_false(r.has_subaddress);
    assert_int_equal(r.subaddress_index, 0);
    assert_string_equal(r.subaddress, "");
    assert_false(r.xmr402);
    assert_string_equal(r.nonce, "");
    assert_int_equal(r.tenant_id, 0);
    assert_false(r.has_valid_until);
    assert_false(r.has_rate);
    assert_string_equal(r.rate, "");
    assert_int_equal(r.provisioned_at, 0);
    assert_false(r.has_webhook);
    assert_string_equal(r.webhook_url, "");
}

static void test_every_state(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        enum invoice_state want;
    } cases[] = {
        {"pending", INVOICE_PENDING},         {"seen", INVOICE_SEEN},
        {"confirming", INVOICE_CONFIRMING},   {"paid", INVOICE_PAID},
        {"provisioned", INVOICE_PROVISIONED}, {"underpaid", INVOICE_UNDERPAID},
        {"expired", INVOICE_EXPIRED},         {"late", INVOICE_LATE},
        {"reverted", INVOICE_REVERTED},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const char *v[INVOICE_ROW_NCOLUMNS];
        memcpy(v, full, sizeof v);
        v[2] = cases[i].text;
        struct invoice_row r;
        char why[128] = "";
        if (!decode(v, &r, why, sizeof why) || r.state != cases[i].want)
            fail_msg("state %s: %s", cases[i].text, why);
        /* the state reads back as the database spells it (the API shows it so) */
        assert_string_equal(invoice_state_name(r.state), cases[i].text);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    struct invoice_row r;
    char why[128];
    const char *v[INVOICE_ROW_NCOLUMNS];

    memcpy(v, full, sizeof v);
    v[2] = "refunded";
    assert_false(decode(v, &r, why, sizeof why));
    assert_non_null(strstr(why, "refunded"));

    /* a text one byte longer than its field is refused, not cut */
    char address[INVOICE_ADDRESS_SIZE + 1];
    memset(address, 'A', sizeof address - 1);
    address[sizeof address - 1] = '\0';
    memcpy(v, full, sizeof v);
    v[10] = address;
    assert_false(decode(v, &r, why, sizeof why));
    address[INVOICE_ADDRESS_SIZE - 1] = '\0'; /* the longest that fits */
    assert_true(decode(v, &r, why, sizeof why));
    assert_int_equal(strlen(r.subaddress), INVOICE_ADDRESS_SIZE - 1);

    /* two columns swapped */
    const char *names[INVOICE_ROW_NCOLUMNS];
    memcpy(names, invoice_row_columns, sizeof names);
    names[5] = invoice_row_columns[6];
    names[6] = invoice_row_columns[5];
    PGresult *res = result_of(names, INVOICE_ROW_NCOLUMNS, full);
    assert_false(invoice_row_decode(res, 0, &r, why, sizeof why));
    assert_non_null(strstr(why, "\"paid\", not \"amount\""));
    PQclear(res);

    /* a column missing */
    res = result_of(invoice_row_columns, INVOICE_ROW_NCOLUMNS - 1, full);
    assert_false(invoice_row_decode(res, 0, &r, why, sizeof why));
    PQclear(res);
}

/* The one query's columns are the decoder's list, in order: each is named "AS <name>". */
static void test_query_names_the_columns(void **state)
{
    (void)state;
    char *q = xg_sql_query("bl_invoice_get");
    assert_non_null(q);
    const char *p = q;
    for (int c = 0; c < INVOICE_ROW_NCOLUMNS; c++) {
        const char *as = strstr(p, " AS ");
        if (!as)
            fail_msg("bl_invoice_get: no column named \"%s\"", invoice_row_columns[c]);
        as += 4;
        size_t n = strspn(as, "abcdefghijklmnopqrstuvwxyz_");
        if (n != strlen(invoice_row_columns[c]) || strncmp(as, invoice_row_columns[c], n) != 0)
            fail_msg("bl_invoice_get: column %d is \"%.*s\", the decoder reads \"%s\"", c + 1,
                     (int)n, as, invoice_row_columns[c]);
        p = as + n;
    }
    assert_null(strstr(p, " AS ")); /* and no more */
    free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_row),
        cmocka_unit_test(test_nulls),
        cmocka_unit_test(test_every_state),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_query_names_the_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
