/* Tests for the pure parts of the admin API (node bodies), the reload rule (which keys a
 * SIGHUP applies, which need a restart) and the gateway metrics' label helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ops/admin_api.h"
#include "auth/auth.h"
#include "serve/gw_config.h"
#include "ops/gw_metrics.h"
#include "rpc/methods.h"
#include "nodes/upstream.h"
#include "xg_metrics.h"

#include "test_files.h"

static void test_node_names_and_urls(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool name, url;
    } cases[] = {
        {"node-a.1_x", true, false},
        {"", false, false},
        {"has space", false, false},
        {"a/b", false, false},
        {"http://127.0.0.1:18081", false, true},
        {"https://node.example:443", false, true},
        {"http://127.0.0.1:18081/", false, false},
        {"http://h/json_rpc", false, false},
        {"http://h?x=1", false, false},
        {"ftp://h", false, false},
        {"http://", false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (admin_node_name_ok(cases[i].text) != cases[i].name)
            fail_msg("name \"%s\"", cases[i].text);
        if (admin_node_url_ok(cases[i].text) != cases[i].url)
            fail_msg("url \"%s\"", cases[i].text);
    }
    char long_name[80];
    memset(long_name, 'a', 65);
    long_name[65] = '\0';
    assert_false(admin_node_name_ok(long_name));
    long_name[64] = '\0';
    assert_true(admin_node_name_ok(long_name));
}

static void test_node_change_parse(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        bool adding, ok;
        const char *error_has;
    } cases[] = {
        {"{\"name\":\"d\",\"url\":\"http://127.0.0.1:1\"}", true, true, NULL},
        {"{\"name\":\"d\",\"url\":\"http://127.0.0.1:1\",\"priority\":\"standby\",\"pruned\":true,"
         "\"enabled\":false}",
         true, true, NULL},
        {"{\"url\":\"http://127.0.0.1:1\"}", true, false, "required"},
        {"{\"url\":\"http://127.0.0.1:1\"}", false, true, NULL},
        {"{\"name\":\"d\",\"url\":\"http://127.0.0.1:1/x\"}", true, false, "url"},
        {"{\"name\":\"d e\",\"url\":\"http://127.0.0.1:1\"}", true, false, "name"},
        {"{\"priority\":\"gold\"}", false, false, "priority"},
        {"{\"pruned\":\"yes\"}", false, false, "pruned"},
        {"{\"enabled\":1}", false, false, "enabled"},
        {"{\"url\":5}", false, false, "url"},
        {"{\"colour\":\"red\"}", false, false, "unknown"},
        {"[1]", false, false, "object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *body = json_loads(cases[i].json, 0, NULL);
        struct admin_node_change c;
        char err[256] = "";
        bool ok = admin_node_change_parse(body, cases[i].adding, &c, err, sizeof err);
        if (ok != cases[i].ok)
            fail_msg("%s: expected %s (%s)", cases[i].json, cases[i].ok ? "ok" : "an error", err);
        if (!ok && !strstr(err, cases[i].error_has))
            fail_msg("%s: error \"%s\" does not name %s", cases[i].json, err, cases[i].error_has);
        json_decref(body);
    }
    json_t *body = json_loads("{\"pruned\":false,\"enabled\":true}", 0, NULL);
    struct admin_node_change c;
    char err[256];
    assert_true(admin_node_change_parse(body, false, &c, err, sizeof err));
    assert_string_equal(c.pruned, "false");
    assert_string_equal(c.enabled, "true");
    assert_null(c.url);
    assert_null(c.priority);
    json_decref(body);
}

/* Writes `text` to a temporary file and returns its path (static buffer). */
static const char *write_config(const char *text)
{
    static char path[64];
    temp_file_with("xg-test-reload-", text, path, sizeof path);
    return path;
}

#define BASE_CONFIG                                                                                \
    "[auth]\nha1_key = 0000000000000000000000000000000000000000000000000000000000000000\n"         \
    "[database]\nurl = postgresql://x@127.0.0.1/x\n"

/* A reload applies the reloadable keys and names the others as needing a restart. */
static void test_reload_diff(void **state)
{
    (void)state;
    struct gw_config a = {0}, b = {0};
    char err[256], names[512];
    const char *pa = write_config(BASE_CONFIG "[admin]\ntoken = one\n[log]\nlevel = info\n");
    assert_true(gw_config_load(&a, pa, err, sizeof err));
    unlink(pa);
    const char *pb = write_config(BASE_CONFIG "[admin]\ntoken = two\nport = 19999\n"
                                              "[log]\nlevel = debug\nslow_request = 250ms\n"
                                              "[server]\nport = 18000\n");
    assert_true(gw_config_load(&b, pb, err, sizeof err));
    unlink(pb);
    assert_int_equal(b.slow_request_ms, 250);
    size_t applied =
        xg_config_diff(gw_config_keys, gw_config_key_count, &a, &b, true, names, sizeof names);
    assert_int_equal(applied, 3);
    assert_non_null(strstr(names, "[admin] token"));
    assert_non_null(strstr(names, "[log] level"));
    assert_non_null(strstr(names, "[log] slow_request"));
    size_t fixed =
        xg_config_diff(gw_config_keys, gw_config_key_count, &a, &b, false, names, sizeof names);
    assert_int_equal(fixed, 2);
    assert_string_equal(names, "[server] port, [admin] port");
    /* Identical files: nothing to apply, nothing to restart for. */
    assert_int_equal(
        xg_config_diff(gw_config_keys, gw_config_key_count, &a, &a, false, names, sizeof names), 0);
    assert_string_equal(names, "");
    /* Truncation never overflows. */
    char tiny[8];
    assert_int_equal(
        xg_config_diff(gw_config_keys, gw_config_key_count, &a, &b, true, tiny, sizeof tiny), 3);
    assert_true(strlen(tiny) < sizeof tiny);
    gw_config_free(&a);
    gw_config_free(&b);
}

/* A bad file is refused whole: the caller keeps the running configuration. */
static void test_reload_rejects_bad_file(void **state)
{
    (void)state;
    struct gw_config c = {0};
    char err[256] = "";
    const char *p = write_config(BASE_CONFIG "[log]\nlevel = loud\n");
    assert_false(gw_config_load(&c, p, err, sizeof err));
    assert_non_null(strstr(err, "[log] level"));
    unlink(p);
    p = write_config(BASE_CONFIG "[nodes]\nno_such_key = 1\n");
    assert_false(gw_config_load(&c, p, err, sizeof err));
    unlink(p);
}

/* trusted_proxies is parsed at load; proxy_protocol needs it, on every front end (the
 * libmicrohttpd one reads the header through xg_mhd_proxy). */
static void test_balancer_keys(void **state)
{
    (void)state;
    static const struct {
        const char *extra, *error; /* error NULL: loads */
    } cases[] = {
        {"[server]\ntrusted_proxies = 10.0.0.0/8, ::1\nproxy_protocol = true\n", NULL},
        {"[server]\ntrusted_proxies = 10.0.0.0/8\n", NULL},
        {"[server]\ntrusted_proxies = 10.0.0.1/8\n", "[server] trusted_proxies"},
        {"[server]\ntrusted_proxies = proxy.lan\n", "[server] trusted_proxies"},
        {"[server]\nproxy_protocol = true\n", "[server] proxy_protocol"},
        {"[server]\ntrusted_proxies = 10.0.0.5\nproxy_protocol = true\n"
         "front_end = libmicrohttpd\n",
         NULL},
        {"[server]\nproxy_protocol = true\nfront_end = libmicrohttpd\n", "[server] proxy_protocol"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct gw_config c = {0};
        char err[256] = "";
        char text[1024];
        snprintf(text, sizeof text, "%s%s", BASE_CONFIG, cases[i].extra);
        const char *p = write_config(text);
        bool ok = gw_config_load(&c, p, err, sizeof err);
        unlink(p);
        if (ok != (cases[i].error == NULL))
            fail_msg("case %zu: loaded %d (%s)", i, ok, err);
        if (!ok) {
            assert_non_null(strstr(err, cases[i].error));
            continue;
        }
        assert_true(c.trust.n > 0);
        gw_config_free(&c);
    }
}

static void test_metric_labels(void **state)
{
    (void)state;
    assert_string_equal(gw_metrics_status_label(200), "200");
    assert_string_equal(gw_metrics_status_label(429), "429");
    assert_string_equal(gw_metrics_status_label(418), "other");
    assert_string_equal(gw_metrics_auth_scheme(AUTH_DIGEST), "digest");
    assert_string_equal(gw_metrics_auth_scheme(AUTH_PATH_TOKEN), "path");
    assert_string_equal(gw_metrics_auth_scheme(AUTH_MALFORMED), "malformed");
    assert_string_equal(gw_metrics_auth_scheme(AUTH_OTHER_SCHEME), "other");
    static const struct {
        int up;
        long http;
        bool busy;
        enum gw_node_outcome want;
    } cases[] = {
        {UP_OK, 200, false, GW_NODE_OK},
        {UP_OK, 200, true, GW_NODE_BUSY},
        {UP_OK, 404, false, GW_NODE_OK}, /* a node's own answer, passed on */
        {UP_OK, 500, false, GW_NODE_HTTP_ERROR},
        {UP_OK, 503, true, GW_NODE_HTTP_ERROR},
        {UP_CONNECT_ERROR, 0, false, GW_NODE_CONNECT_ERROR},
        {UP_TIMEOUT, 0, false, GW_NODE_TIMEOUT},
        {UP_PROTOCOL_ERROR, 0, false, GW_NODE_BROKEN},
        {UP_TOO_LARGE, 200, false, GW_NODE_BROKEN},
        {UP_CANCELLED, 0, false, GW_NODE_BROKEN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (gw_metrics_node_outcome(cases[i].up, cases[i].http, cases[i].busy) != cases[i].want)
            fail_msg("case %zu", i);
}

/* Requests land in the series of their method and class; unknown methods in "other";
 * nothing about the client reaches a label. */
static void test_request_series(void **state)
{
    (void)state;
    struct gw_metrics *m = gw_metrics_new(100);
    assert_non_null(m);
    const struct method_info *info = methods_find_jsonrpc("get_info", 8);
    assert_non_null(info);
    gw_metrics_request(m, info, 200, GW_OUTCOME_CACHE, 0.0002);
    gw_metrics_request(m, info, 429, GW_OUTCOME_REFUSED, 0.0001);
    gw_metrics_request(m, NULL, 401, GW_OUTCOME_REFUSED, 0.5);
    gw_metrics_rate_limited(m, true);
    gw_metrics_auth_failure(m, "digest");
    gw_metrics_node_call(m, "a", GW_NODE_OK, 0.004);
    gw_metrics_node_call(m, "a", GW_NODE_TIMEOUT, 2);
    gw_metrics_broadcast_node(m, "b", GW_BCAST_ACCEPTED);
    size_t len;
    char *text = xg_metrics_render(gw_metrics_registry(m), &len);
    assert_non_null(text);
    assert_non_null(strstr(text, "xmrgate_gateway_requests_total{class=\"tip\",method=\"get_info\","
                                 "status=\"200\"} 1\n"));
    assert_non_null(strstr(text, "xmrgate_gateway_requests_total{class=\"tip\",method=\"get_info\","
                                 "status=\"429\"} 1\n"));
    assert_non_null(strstr(text, "xmrgate_gateway_requests_total{class=\"none\",method=\"other\","
                                 "status=\"401\"} 1\n"));
    assert_non_null(strstr(
        text, "xmrgate_gateway_request_outcomes_total{class=\"tip\",outcome=\"cache\"} 1\n"));
    assert_non_null(strstr(text, "xmrgate_gateway_rate_limited_total{limit=\"quota\"} 1\n"));
    assert_non_null(strstr(text, "xmrgate_gateway_auth_failures_total{scheme=\"digest\"} 1\n"));
    assert_non_null(
        strstr(text, "xmrgate_gateway_node_requests_total{node=\"a\",outcome=\"timeout\"} 1\n"));
    assert_non_null(
        strstr(text, "xmrgate_gateway_node_request_duration_seconds_count{node=\"a\"} 2\n"));
    assert_non_null(strstr(
        text, "xmrgate_gateway_broadcast_node_outcomes_total{node=\"b\",result=\"accepted\"} 1\n"));
    /* Only the 0.5 s request passed the 100 ms threshold. */
    assert_non_null(strstr(text, "xmrgate_gateway_slow_requests_total{method=\"other\"} 1\n"));
    assert_null(strstr(text, "xmrgate_gateway_slow_requests_total{method=\"get_info\"}"));
    free(text);
    gw_metrics_stop(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_names_and_urls), cmocka_unit_test(test_node_change_parse),
        cmocka_unit_test(test_reload_diff),         cmocka_unit_test(test_reload_rejects_bad_file),
        cmocka_unit_test(test_balancer_keys),       cmocka_unit_test(test_metric_labels),
        cmocka_unit_test(test_request_series),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
