/* Tests for common/xg_admin_error: every error of the admin ports' registry keeps the code
 * and status scripts match on (the table below is that contract, written out once more),
 * codes are snake_case and unique, each has a default message, and the JSON body is the
 * documented {"error":{"code","message"}}, with the caller's message when it gives one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xg_admin_error.h"

static const struct {
    enum xg_admin_error e;
    const char *code;
    unsigned int status;
} contract[] = {
    {XG_ADMIN_ERROR_UNAUTHORIZED, "unauthorized", 401},
    {XG_ADMIN_ERROR_DISABLED, "admin_api_disabled", 403},
    {XG_ADMIN_ERROR_NOT_FOUND, "not_found", 404},
    {XG_ADMIN_ERROR_METHOD_NOT_ALLOWED, "method_not_allowed", 405},
    {XG_ADMIN_ERROR_INVALID, "invalid", 400},
    {XG_ADMIN_ERROR_CONFLICT, "conflict", 409},
    {XG_ADMIN_ERROR_UNKNOWN_NODE, "unknown_node", 404},
    {XG_ADMIN_ERROR_UNKNOWN_TENANT, "unknown_tenant", 404},
    {XG_ADMIN_ERROR_DATABASE_UNAVAILABLE, "database_unavailable", 503},
    {XG_ADMIN_ERROR_OUT_OF_MEMORY, "out_of_memory", 500},
};

static void test_contract(void **state)
{
    (void)state;
    size_t n = sizeof contract / sizeof contract[0];
    assert_int_equal(n, XG_ADMIN_ERROR_COUNT); /* every error is in the contract */
    for (size_t i = 0; i < n; i++) {
        const struct xg_admin_error_info *info = xg_admin_error_info(contract[i].e);
        assert_string_equal(info->code, contract[i].code);
        assert_int_equal(info->status, contract[i].status);
    }
}

static void test_codes_well_formed_and_unique(void **state)
{
    (void)state;
    for (int e = 0; e < XG_ADMIN_ERROR_COUNT; e++) {
        const struct xg_admin_error_info *info = xg_admin_error_info((enum xg_admin_error)e);
        assert_non_null(info->code);
        assert_int_equal(strspn(info->code, "abcdefghijklmnopqrstuvwxyz_"), strlen(info->code));
        assert_non_null(info->message);
        assert_true(info->message[0] != '\0');
        assert_true(info->status >= 400 && info->status <= 599);
        for (int f = 0; f < e; f++)
            assert_string_not_equal(info->code, xg_admin_error_info((enum xg_admin_error)f)->code);
    }
}

static void test_json(void **state)
{
    (void)state;
    json_t *j = xg_admin_error_json(XG_ADMIN_ERROR_UNKNOWN_NODE, NULL);
    assert_non_null(j);
    const json_t *err = json_object_get(j, "error");
    assert_int_equal(json_object_size(j), 1);
    assert_int_equal(json_object_size(err), 2);
    assert_string_equal(json_string_value(json_object_get(err, "code")), "unknown_node");
    assert_string_equal(json_string_value(json_object_get(err, "message")), "no such node");
    json_decref(j);
    j = xg_admin_error_json(XG_ADMIN_ERROR_INVALID, "priority must be primary or fallback");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "error"), "message")),
                        "priority must be primary or fallback");
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contract),
        cmocka_unit_test(test_codes_well_formed_and_unique),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
