/* Tests for billing/subaddrs' pure part: how many subaddresses a wallet that lacks some is
 * asked to make next, and which index a create_address answer names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "wallet/subaddrs.h"

static void test_to_create(void **state)
{
    (void)state;
    static const struct {
        int64_t wallet_last, db_max, want;
    } rows[] = {
        {0, 0, 0},                   /* nothing handed out */
        {12, 12, 0},                 /* the wallet has them all */
        {40, 12, 0},                 /* more than the database: restored database, kept wallet */
        {1, 12, 11},                 /* a wallet made again from the keys */
        {0, 64, SUBADDRS_BATCH_MAX}, /* exactly one batch */
        {0, 65, SUBADDRS_BATCH_MAX}, /* then one more */
        {64, 65, 1},                 /* ... of one */
        {1, 100000, SUBADDRS_BATCH_MAX}, /* never more than a batch at once */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(subaddrs_to_create(rows[i].wallet_last, rows[i].db_max), rows[i].want);
}

static void test_last_created(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        bool ok;
        int64_t last;
    } rows[] = {
        /* 0.18's answer to count 5: both fields, the first index in address_index */
        {"{\"address\":\"8a\",\"address_index\":1,\"address_indices\":[1,2,3,4,5],"
         "\"addresses\":[\"8a\",\"8b\",\"8c\",\"8d\",\"8e\"]}",
         true, 5},
        {"{\"address\":\"8a\",\"address_index\":7}", true, 7}, /* only the one */
        {"{\"address_indices\":[9]}", true, 9},
        {"{\"address_indices\":[]}", false, 0},
        {"{\"address_index\":0}", false, 0}, /* the primary address is never a new one */
        {"{\"address_index\":\"7\"}", false, 0},
        {"{}", false, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        json_t *doc = json_loads(rows[i].json, 0, NULL);
        assert_non_null(doc);
        int64_t last = -1;
        assert_int_equal(subaddrs_last_created(doc, &last), rows[i].ok);
        if (rows[i].ok)
            assert_int_equal(last, rows[i].last);
        json_decref(doc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_to_create),
        cmocka_unit_test(test_last_created),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
