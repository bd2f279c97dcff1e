/* Tests for billing/bl_error: every error of the registry keeps the code and status
 * clients match on (the table below is that contract, written out once more), codes are
 * snake_case and unique, each has a default message, and the JSON body is the documented
 * {"error":{"code","message"}}. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/bl_error.h"

static const struct {
    enum bl_error e;
    const char *code;
    unsigned int status;
} contract[] = {
    {BL_ERROR_MALFORMED_JSON, "malformed_json", 400},
    {BL_ERROR_INVALID_IDEMPOTENCY_KEY, "invalid_idempotency_key", 400},
    {BL_ERROR_IDEMPOTENCY_KEY_REUSED, "idempotency_key_reused", 409},
    {BL_ERROR_TOKEN_REQUIRED, "token_required", 401},
    {BL_ERROR_UNKNOWN_TOKEN, "unknown_token", 404},
    {BL_ERROR_NOT_FOUND, "not_found", 404},
    {BL_ERROR_RATE_LIMITED, "rate_limited", 429},
    {BL_ERROR_FREE_TIER_EXHAUSTED, "free_tier_exhausted", 429},
    {BL_ERROR_UNKNOWN_TIER, "unknown_tier", 400},
    {BL_ERROR_TIER_NOT_FOR_SALE, "tier_not_for_sale", 400},
    {BL_ERROR_TIER_CHANGE_UNPRICED, "tier_change_unpriced", 400},
    {BL_ERROR_FREE_TIER_NOT_RENEWABLE, "free_tier_not_renewable", 400},
    {BL_ERROR_MONTHS_OUT_OF_RANGE, "months_out_of_range", 400},
    {BL_ERROR_INVOICE_OPEN, "invoice_open", 409},
    {BL_ERROR_INVOICE_NOT_FOUND, "invoice_not_found", 404},
    {BL_ERROR_NOTHING_TO_PAY, "nothing_to_pay", 404},
    {BL_ERROR_INVALID_WEBHOOK_URL, "invalid_webhook_url", 400},
    {BL_ERROR_WEBHOOK_URL_REFUSED, "webhook_url_refused", 400},
    {BL_ERROR_MALFORMED_PROOF, "malformed_proof", 400},
    {BL_ERROR_UNKNOWN_INVOICE, "unknown_invoice", 402},
    {BL_ERROR_TXID_UNKNOWN, "txid_unknown", 402},
    {BL_ERROR_NOT_XMR402, "not_xmr402", 402},
    {BL_ERROR_TXID_USED, "txid_used", 409},
    {BL_ERROR_PROOF_INVALID, "proof_invalid", 402},
    {BL_ERROR_UNDERPAID, "underpaid", 402},
    {BL_ERROR_LATE, "late", 402},
    {BL_ERROR_NOT_COUNTED, "not_counted", 402},
    {BL_ERROR_INVOICE_EXPIRED, "invoice_expired", 410},
    {BL_ERROR_PENDING_SPENT, "pending_spent", 429},
    {BL_ERROR_VERIFY_BUSY, "verify_busy", 503},
    {BL_ERROR_CREDENTIALS_ROTATED, "credentials_rotated", 402},
    {BL_ERROR_INTERNAL_ERROR, "internal_error", 500},
    {BL_ERROR_DATABASE_UNAVAILABLE, "database_unavailable", 503},
    {BL_ERROR_WALLET_UNAVAILABLE, "wallet_unavailable", 503},
    {BL_ERROR_RATE_UNAVAILABLE, "rate_unavailable", 503},
};

static void test_contract(void **state)
{
    (void)state;
    size_t n = sizeof contract / sizeof contract[0];
    assert_int_equal(n, BL_ERROR_COUNT); /* every error is in the contract */
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(bl_error_code(contract[i].e), contract[i].code);
        assert_int_equal(bl_error_status(contract[i].e), contract[i].status);
        assert_ptr_equal(bl_error_info(contract[i].e)->code, bl_error_code(contract[i].e));
    }
}

static void test_codes_well_formed_and_unique(void **state)
{
    (void)state;
    for (int e = 0; e < BL_ERROR_COUNT; e++) {
        const char *code = bl_error_code((enum bl_error)e);
        assert_non_null(code);
        assert_true(code[0] >= 'a' && code[0] <= 'z');
        assert_int_equal(strspn(code, "abcdefghijklmnopqrstuvwxyz0123456789_"), strlen(code));
        const char *msg = bl_error_message((enum bl_error)e);
        assert_non_null(msg);
        assert_true(msg[0] != '\0');
        unsigned int status = bl_error_status((enum bl_error)e);
        assert_true(status >= 400 && status <= 599);
        for (int f = 0; f < e; f++)
            assert_string_not_equal(code, bl_error_code((enum bl_error)f));
    }
}

static void test_json_body(void **state)
{
    (void)state;
    static const struct {
        enum bl_error e;
        const char *message, *body;
    } cases[] = {
        {BL_ERROR_INVOICE_NOT_FOUND, NULL,
         "{\"error\":{\"code\":\"invoice_not_found\",\"message\":\"no such invoice\"}}"},
        {BL_ERROR_UNKNOWN_TOKEN, NULL,
         "{\"error\":{\"code\":\"unknown_token\",\"message\":\"that token belongs to no "
         "tenant\"}}"},
        {BL_ERROR_UNKNOWN_TIER, "no tier \"gold\"",
         "{\"error\":{\"code\":\"unknown_tier\",\"message\":\"no tier \\\"gold\\\"\"}}"},
        {BL_ERROR_RATE_LIMITED, NULL,
         "{\"error\":{\"code\":\"rate_limited\",\"message\":\"too many invoices from this "
         "address; try again later\"}}"},
        {BL_ERROR_DATABASE_UNAVAILABLE, NULL,
         "{\"error\":{\"code\":\"database_unavailable\",\"message\":\"the database is not "
         "answering; try again shortly\"}}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *body = bl_error_json(cases[i].e, cases[i].message);
        assert_non_null(body);
        char *text = json_dumps(body, JSON_COMPACT);
        assert_string_equal(text, cases[i].body);
        free(text);
        json_decref(body);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contract),
        cmocka_unit_test(test_codes_well_formed_and_unique),
        cmocka_unit_test(test_json_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
