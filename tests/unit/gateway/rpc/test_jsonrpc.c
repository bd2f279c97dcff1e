/* Tests for jsonrpc: parsing as monerod does, the wallet's client field, and errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpc/jsonrpc.h"

static void test_parse_table(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        enum jsonrpc_parse want;
        const char *method; /* when OK */
        bool has_id;
    } cases[] = {
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get_info\"}", JSONRPC_OK, "get_info", true},
        {"{\"method\":\"get_info\"}", JSONRPC_OK, "get_info", false},
        {"{\"id\":{\"a\":[1]},\"method\":\"x\"}", JSONRPC_OK, "x", true},
        {"{\"id\":null,\"method\":\"x\"}", JSONRPC_OK, "x", true},
        {"not json", JSONRPC_NOT_JSON, NULL, false},
        {"", JSONRPC_NOT_REQUEST, NULL, false}, /* monerod: an empty object, -32600 */
        {" \r\n\t", JSONRPC_NOT_REQUEST, NULL, false},
        /* What follows the first value is ignored, as monerod's reader ignores it. */
        {"{\"method\":\"get_info\"} x", JSONRPC_OK, "get_info", false},
        {"{\"method\":\"get_info\"}}", JSONRPC_OK, "get_info", false},
        {" {\"method\":\"get_info\"}\n\n", JSONRPC_OK, "get_info", false},
        {"{} x", JSONRPC_NOT_REQUEST, NULL, false},
        {"x {}", JSONRPC_NOT_JSON, NULL, false},
        {"{\"method\":\"get_info\"", JSONRPC_NOT_JSON, NULL, false},
        {"[{\"method\":\"get_info\"}]", JSONRPC_BATCH, NULL, false},
        {"[]", JSONRPC_BATCH, NULL, false},
        {"{\"id\":7}", JSONRPC_NOT_REQUEST, NULL, true},
        {"{\"id\":7,\"method\":42}", JSONRPC_NOT_REQUEST, NULL, true},
        {"{\"id\":7,\"method\":\"\"}", JSONRPC_OK, "", true}, /* then not found */
        {"\"a string\"", JSONRPC_NOT_JSON, NULL, false},      /* monerod: -32700 */
        {"12", JSONRPC_NOT_JSON, NULL, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct jsonrpc_request req;
        enum jsonrpc_parse got = jsonrpc_parse(cases[i].body, strlen(cases[i].body), &req);
        if (got != cases[i].want)
            fail_msg("case %zu (%s): got %d, want %d", i, cases[i].body, got, cases[i].want);
        if (got == JSONRPC_OK)
            assert_string_equal(req.method, cases[i].method);
        if (got == JSONRPC_OK || got == JSONRPC_NOT_REQUEST)
            assert_int_equal(req.id != NULL, cases[i].has_id);
        jsonrpc_request_clear(&req);
    }
}

/* The plain JSON endpoints' reading: the same rule, a NUL byte after the value included. */
static void test_load_body(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        size_t len;
        const char *dumped; /* NULL: refused */
    } cases[] = {
        {"{}\0", 3, "{}"},
        {"{\"txs_hashes\":[]}\0garbage", 25, "{\"txs_hashes\":[]}"},
        {"{}}", 3, "{}"},
        {"", 0, "{}"},
        {"\n", 1, "{}"},
        {"[1] x", 5, "[1]"},
        {"{\"txs_hashes\":[", 15, NULL},
        {"not json", 8, NULL},
        {"\0{}", 3, NULL},
        {"7", 1, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *root = jsonrpc_load_body(cases[i].body, cases[i].len);
        if (!cases[i].dumped) {
            if (root)
                fail_msg("case %zu: parsed, want refused", i);
            continue;
        }
        if (!root)
            fail_msg("case %zu: refused, want %s", i, cases[i].dumped);
        size_t len;
        char *text = jsonrpc_dump(root, &len);
        assert_string_equal(text, cases[i].dumped);
        free(text);
        json_decref(root);
    }
    struct jsonrpc_request req;
    assert_int_equal(jsonrpc_parse("{\"method\":\"get_info\"}\0", 22, &req), JSONRPC_OK);
    assert_string_equal(req.method, "get_info");
    jsonrpc_request_clear(&req);
}

static void test_strip_client(void **state)
{
    (void)state;
    json_t *root = json_loads("{\"client\":\"a\",\"method\":\"m\",\"params\":{\"client\":\"b\","
                              "\"height\":5}}",
                              0, NULL);
    assert_true(jsonrpc_strip_client(root));
    assert_null(json_object_get(root, "client"));
    assert_null(json_object_get(json_object_get(root, "params"), "client"));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "params"), "height")),
                     5);
    assert_false(jsonrpc_strip_client(root)); /* nothing left to remove */
    json_decref(root);

    json_t *array_params = json_loads("{\"params\":[\"client\"]}", 0, NULL);
    assert_false(jsonrpc_strip_client(array_params));
    json_decref(array_params);
    assert_false(jsonrpc_strip_client(NULL));
}

static void test_error_body_echoes_id(void **state)
{
    (void)state;
    json_t *id = json_pack("{s:[i]}", "k", 1);
    size_t len;
    char *body = jsonrpc_error_body(id, JSONRPC_METHOD_NOT_FOUND, "Method not found", &len);
    assert_int_equal(len, strlen(body));
    json_t *parsed = json_loads(body, 0, NULL);
    assert_true(json_equal(json_object_get(parsed, "id"), id));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(parsed, "error"), "code")),
                     -32601);
    assert_string_equal(json_string_value(json_object_get(parsed, "jsonrpc")), "2.0");
    json_decref(parsed);
    free(body);
    json_decref(id);

    body = jsonrpc_error_body(NULL, JSONRPC_PARSE_ERROR, "Parse error", NULL);
    parsed = json_loads(body, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(parsed, "id")), 0); /* monerod's */
    json_decref(parsed);
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_load_body),
        cmocka_unit_test(test_strip_client),
        cmocka_unit_test(test_error_body_echoes_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
