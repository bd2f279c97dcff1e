/* Table tests for gateway/nodes/fit: what get_info and get_version say (as monerod 0.18.0
 * and 0.18.4 answer them), and whether a node of those facts fits the pool's settings. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "nodes/fit.h"

/* Answers of real nodes (trimmed to the fields read): 0.18.0 stagenet, 0.18.0 regtest with
 * --restricted-rpc (release hidden), 0.18.4 testnet, and a node without nettype. */
#define INFO(fields) "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{" fields ",\"status\":\"OK\"}}"
static const char info_stagenet[] =
    INFO("\"nettype\":\"stagenet\",\"mainnet\":false,\"testnet\":false,\"stagenet\":true,"
         "\"restricted\":false,\"version\":\"0.18.0.0-unknown\"");
static const char info_regtest_restricted[] =
    INFO("\"nettype\":\"fakechain\",\"mainnet\":false,\"testnet\":false,\"stagenet\":false,"
         "\"restricted\":true,\"version\":\"\"");
static const char info_testnet[] =
    INFO("\"nettype\":\"testnet\",\"testnet\":true,\"restricted\":false,"
         "\"version\":\"0.18.4.0-unknown\"");
static const char info_flags_only[] = INFO("\"mainnet\":true,\"version\":\"0.12.0.0\"");
static const char info_busy[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"nettype\":\"mainnet\",\"status\":\"BUSY\"}}";
static const char version_0180[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"release\":false,\"status\":\"OK\","
    "\"untrusted\":false,\"version\":196618}}";
static const char version_0184[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"current_height\":1,\"release\":false,"
    "\"status\":\"OK\",\"untrusted\":false,\"version\":196622}}";

static void test_parse(void **state)
{
    (void)state;
    static const struct {
        const char *info, *version;
        long info_http, version_http;
        enum fit_network network;
        bool restricted_known, restricted;
        uint32_t rpc_version;
        const char *release;
    } rows[] = {
        {info_stagenet, version_0180, 200, 200, FIT_NET_STAGENET, true, false, 196618,
         "0.18.0.0-unknown"},
        {info_regtest_restricted, version_0180, 200, 200, FIT_NET_REGTEST, true, true, 196618, ""},
        {info_testnet, version_0184, 200, 200, FIT_NET_TESTNET, true, false, 196622,
         "0.18.4.0-unknown"},
        {info_flags_only, NULL, 200, 0, FIT_NET_MAINNET, false, false, 0, "0.12.0.0"},
        /* Not OK, not HTTP 200, no body, not JSON: nothing told. */
        {info_busy, version_0180, 200, 500, FIT_NET_ANY, false, false, 0, ""},
        {info_stagenet, version_0184, 503, 404, FIT_NET_ANY, false, false, 0, ""},
        {NULL, NULL, 0, 0, FIT_NET_ANY, false, false, 0, ""},
        {"{\"result\":", "]", 200, 200, FIT_NET_ANY, false, false, 0, ""},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct fit_facts f;
        fit_facts_parse(&f, rows[i].info_http, rows[i].info, rows[i].version_http, rows[i].version);
        assert_int_equal(f.network, rows[i].network);
        assert_int_equal(f.restricted_known, rows[i].restricted_known);
        assert_int_equal(f.restricted, rows[i].restricted);
        assert_int_equal(f.rpc_version, rows[i].rpc_version);
        assert_string_equal(f.version, rows[i].release);
    }
}

#define V(major, minor) ((uint32_t)(major) << 16 | (minor))

static void test_check(void **state)
{
    (void)state;
    static const struct {
        struct fit_facts facts;
        struct fit_settings settings;
        bool fits;
        const char *reason;
    } rows[] = {
        /* Nothing asked: every node fits, whatever it told. */
        {{0}, {0}, true, ""},
        {{FIT_NET_STAGENET, true, false, V(3, 10), ""}, {0}, true, ""},
        /* The network. */
        {{FIT_NET_REGTEST, true, true, V(3, 10), ""}, {FIT_NET_REGTEST, 0, false}, true, ""},
        {{FIT_NET_STAGENET, true, false, V(3, 10), ""},
         {FIT_NET_REGTEST, 0, false},
         false,
         "wrong network: node is on stagenet, gateway is on regtest"},
        {{FIT_NET_TESTNET, true, false, V(3, 14), ""},
         {FIT_NET_MAINNET, 0, false},
         false,
         "wrong network: node is on testnet, gateway is on mainnet"},
        {{FIT_NET_ANY, false, false, 0, ""},
         {FIT_NET_MAINNET, 0, false},
         false,
         "network unknown (get_info has no nettype), gateway is on mainnet"},
        /* The minimum RPC version: equal fits, one minor below does not. */
        {{FIT_NET_MAINNET, true, true, V(3, 14), ""}, {FIT_NET_MAINNET, V(3, 14), false}, true, ""},
        {{FIT_NET_MAINNET, true, true, V(4, 0), ""}, {FIT_NET_MAINNET, V(3, 14), false}, true, ""},
        {{FIT_NET_MAINNET, true, true, V(3, 13), ""},
         {FIT_NET_MAINNET, V(3, 14), false},
         false,
         "RPC version 3.13 below the minimum 3.14"},
        {{FIT_NET_MAINNET, true, true, 0, ""},
         {FIT_NET_ANY, V(3, 10), false},
         false,
         "RPC version unknown (no get_version answer), minimum is 3.10"},
        /* Restricted mode. */
        {{FIT_NET_MAINNET, true, true, V(3, 14), ""}, {FIT_NET_ANY, 0, true}, true, ""},
        {{FIT_NET_MAINNET, true, false, V(3, 14), ""},
         {FIT_NET_ANY, 0, true},
         false,
         "not in restricted RPC mode, which is required"},
        {{FIT_NET_MAINNET, false, false, V(3, 14), ""},
         {FIT_NET_ANY, 0, true},
         false,
         "restricted mode unknown (get_info has no restricted), which is required"},
        /* The network is named first when several do not fit. */
        {{FIT_NET_STAGENET, true, false, V(3, 1), ""},
         {FIT_NET_MAINNET, V(3, 14), true},
         false,
         "wrong network: node is on stagenet, gateway is on mainnet"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char reason[FIT_REASON_LEN] = "x";
        assert_int_equal(fit_check(&rows[i].facts, &rows[i].settings, reason, sizeof reason),
                         rows[i].fits);
        assert_string_equal(reason, rows[i].reason);
    }
}

static void test_settings_parse(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        bool ok;
        uint32_t v;
    } versions[] = {
        {"", true, 0},
        {"0", true, 0},
        {"3.10", true, V(3, 10)},
        {"3.14", true, V(3, 14)},
        {"65535.65535", true, V(65535, 65535)},
        {"3", false, 0},
        {"3.", false, 0},
        {".14", false, 0},
        {"3.14.1", false, 0},
        {"3.65536", false, 0},
        {"-3.1", false, 0},
        {"3.1x", false, 0},
        {"0.18.4", false, 0},
        {" 3.14", false, 0},
    };
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        uint32_t v = 12345;
        assert_int_equal(fit_rpc_version_parse(versions[i].in, &v), versions[i].ok);
        if (versions[i].ok)
            assert_int_equal(v, versions[i].v);
    }
    char buf[16];
    fit_rpc_version_format(V(3, 14), buf, sizeof buf);
    assert_string_equal(buf, "3.14");
    fit_rpc_version_format(0, buf, sizeof buf);
    assert_string_equal(buf, "");

    static const struct {
        const char *in;
        bool ok;
        enum fit_network n;
    } networks[] = {
        {"any", true, FIT_NET_ANY},         {"mainnet", true, FIT_NET_MAINNET},
        {"testnet", true, FIT_NET_TESTNET}, {"stagenet", true, FIT_NET_STAGENET},
        {"regtest", true, FIT_NET_REGTEST}, {"fakechain", false, FIT_NET_ANY},
        {"Mainnet", false, FIT_NET_ANY},    {"", false, FIT_NET_ANY},
    };
    for (size_t i = 0; i < sizeof networks / sizeof networks[0]; i++) {
        enum fit_network n = FIT_NET_ANY;
        assert_int_equal(fit_network_parse(networks[i].in, &n), networks[i].ok);
        assert_int_equal(n, networks[i].n);
        if (networks[i].ok)
            assert_string_equal(fit_network_name(n), networks[i].in);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_settings_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
