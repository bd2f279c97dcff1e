/* Tests for xg_config: value parsers, good and bad files (the message must name the key
 * and the line), environment overrides, defaults and the reference table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "xg_config.h"

#include "test_files.h"

struct test_cfg {
    char *name;
    char *listen_addr;
    int64_t listen_port;
    bool cache;
    int64_t request_timeout_ms;
    int64_t max_body;
    char *db_url;
    int64_t pool_size;
};

#define F(field) offsetof(struct test_cfg, field), sizeof(((struct test_cfg *)0)->field)
static const struct xg_cfg_key keys[] = {
    {"", "name", XG_CFG_STRING, F(name), "xmrgate", 0, 0, false, "instance name"},
    {"gateway", "listen_addr", XG_CFG_STRING, F(listen_addr), "127.0.0.1", 0, 0, false,
     "address to listen on"},
    {"gateway", "listen_port", XG_CFG_INT, F(listen_port), "18089", 1, 65535, false, "port"},
    {"gateway", "cache", XG_CFG_BOOL, F(cache), "true", 0, 0, true, "cache answers"},
    {"gateway", "request_timeout", XG_CFG_DURATION, F(request_timeout_ms), "30s", 100, 600000, true,
     "deadline | per request"},
    {"gateway", "max_body", XG_CFG_SIZE, F(max_body), "1m", 1024, 64 << 20, false, "body cap"},
    {"db", "url", XG_CFG_STRING, F(db_url), NULL, 0, 0, false, "PostgreSQL URL"},
    {"db", "pool_size", XG_CFG_INT, F(pool_size), "4", 1, 100, false, "connections"},
};
#define NKEYS (sizeof keys / sizeof keys[0])

static char *const no_env[] = {NULL};

static bool load_text(const char *text, char *const *env, struct test_cfg *cfg, char *path,
                      size_t pathlen, char *err, size_t errlen)
{
    temp_file_with("xg_test_config_", text, path, pathlen);
    memset(cfg, 0, sizeof *cfg);
    bool ok = xg_config_load(keys, NKEYS, cfg, path, env, err, errlen);
    unlink(path);
    return ok;
}

/* ---- parsers ---------------------------------------------------------------------- */

struct number_case {
    const char *text;
    bool ok;
    int64_t value;
};

static void test_parse_duration(void **state)
{
    (void)state;
    static const struct number_case cases[] = {
        {"250ms", true, 250},
        {"2s", true, 2000},
        {"5m", true, 300000},
        {"17h", true, 17 * 3600000LL},
        {"1d", true, 86400000},
        {"0", true, 0},
        {"0s", true, 0},
        {"2S", true, 2000},
        {"5", false, 0},
        {"", false, 0},
        {"s", false, 0},
        {"-5s", false, 0},
        {"1.5s", false, 0},
        {"5 s", false, 0},
        {"5x", false, 0},
        {"10msx", false, 0},
        {"9223372036854775807d", false, 0},
        {"106751991168d", false, 0}, /* overflows int64 milliseconds */
        {"106751991167d", true, 106751991167LL * 86400000LL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = -1;
        bool ok = xg_parse_duration_ms(cases[i].text, &v);
        if (ok != cases[i].ok)
            fail_msg("\"%s\": expected %s", cases[i].text, cases[i].ok ? "ok" : "failure");
        if (ok)
            assert_int_equal(v, cases[i].value);
    }
}

static void test_parse_size(void **state)
{
    (void)state;
    static const struct number_case cases[] = {
        {"1024", true, 1024},    {"0", true, 0},
        {"64k", true, 65536},    {"64K", true, 65536},
        {"1m", true, 1048576},   {"256m", true, 256LL << 20},
        {"1g", true, 1LL << 30}, {"2t", true, 2LL << 40},
        {"", false, 0},          {"k", false, 0},
        {"1kb", false, 0},       {"1.5m", false, 0},
        {"-1", false, 0},        {"12q", false, 0},
        {"8388608t", false, 0}, /* 2^63: overflows */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = -1;
        bool ok = xg_parse_size(cases[i].text, &v);
        if (ok != cases[i].ok)
            fail_msg("\"%s\": expected %s", cases[i].text, cases[i].ok ? "ok" : "failure");
        if (ok)
            assert_int_equal(v, cases[i].value);
    }
}

static void test_parse_int(void **state)
{
    (void)state;
    static const struct number_case cases[] = {
        {"0", true, 0},
        {"42", true, 42},
        {"-7", true, -7},
        {"+7", true, 7},
        {"9223372036854775807", true, INT64_MAX},
        {"9223372036854775808", false, 0},
        {"", false, 0},
        {"ten", false, 0},
        {"12abc", false, 0},
        {" 12", false, 0},
        {"1e3", false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = -1;
        bool ok = xg_parse_int(cases[i].text, &v);
        if (ok != cases[i].ok)
            fail_msg("\"%s\": expected %s", cases[i].text, cases[i].ok ? "ok" : "failure");
        if (ok)
            assert_int_equal(v, cases[i].value);
    }
}

static void test_parse_bool(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool ok, value;
    } cases[] = {
        {"true", true, true}, {"yes", true, true},    {"on", true, true},      {"1", true, true},
        {"TRUE", true, true}, {"false", true, false}, {"no", true, false},     {"off", true, false},
        {"0", true, false},   {"", false, false},     {"maybe", false, false}, {"2", false, false},
        {"y", false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool v = !cases[i].value;
        bool ok = xg_parse_bool(cases[i].text, &v);
        if (ok != cases[i].ok)
            fail_msg("\"%s\": expected %s", cases[i].text, cases[i].ok ? "ok" : "failure");
        if (ok)
            assert_int_equal(v, cases[i].value);
    }
}

/* ---- files ------------------------------------------------------------------------ */

static void test_good_file(void **state)
{
    (void)state;
    static const char text[] = "; top comment\n"
                               "name = edge-1\n"
                               "\n"
                               "[gateway]\n"
                               "# another comment\n"
                               "listen_addr = 127.0.0.2\n"
                               "listen_port=18090\n"
                               "cache = off ; inline comment\n"
                               "request_timeout = 250ms\n"
                               "max_body = 64k\n"
                               "[db]\n"
                               "url = postgresql://xg@127.0.0.1/xg?sslmode=disable\n"
                               "pool_size = 100\n";
    struct test_cfg cfg;
    char path[64], err[512] = "";
    assert_true(load_text(text, no_env, &cfg, path, sizeof path, err, sizeof err));
    assert_string_equal(err, "");
    assert_string_equal(cfg.name, "edge-1");
    assert_string_equal(cfg.listen_addr, "127.0.0.2");
    assert_int_equal(cfg.listen_port, 18090);
    assert_false(cfg.cache);
    assert_int_equal(cfg.request_timeout_ms, 250);
    assert_int_equal(cfg.max_body, 65536);
    assert_string_equal(cfg.db_url, "postgresql://xg@127.0.0.1/xg?sslmode=disable");
    assert_int_equal(cfg.pool_size, 100);
    xg_config_free(keys, NKEYS, &cfg);
    assert_null(cfg.name);
    assert_null(cfg.listen_addr);
    assert_null(cfg.db_url);
}

struct bad_case {
    const char *text;
    const char *expected; /* follows the file's path */
};

static void test_bad_files(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"[db]\nurl = x\n[gateway]\nlisten_prot = 1\n",
         ":4: unknown key \"listen_prot\" in [gateway] (did you mean \"listen_port\"?)"},
        {"[db]\nurl = x\nwhatever = 1\n", ":3: unknown key \"whatever\" in [db]"},
        {"colour = blue\n[db]\nurl = x\n", ":1: unknown key \"colour\" before any [section]"},
        {"[db]\nurl = x\n\n[gatewya]\nlisten_port = 1\n", ":4: unknown section [gatewya]"},
        {"[db]\nurl = x\n[empty_unknown]\n", ":3: unknown section [empty_unknown]"},
        {"[db]\nurl = x\npool_size = ten\n",
         ":3: [db] pool_size: expected an integer, got \"ten\""},
        {"[db]\nurl = x\n[gateway]\ncache = maybe\n",
         ":4: [gateway] cache: expected true or false, got \"maybe\""},
        {"[gateway]\nrequest_timeout = 5x\n",
         ":2: [gateway] request_timeout: expected a duration such as 250ms, 2s, 5m, 17h or "
         "1d, got \"5x\""},
        {"[gateway]\nrequest_timeout = 30\n",
         ":2: [gateway] request_timeout: expected a duration such as 250ms, 2s, 5m, 17h or "
         "1d, got \"30\""},
        {"[gateway]\nmax_body = lots\n",
         ":2: [gateway] max_body: expected a size such as 4096, 64k, 1m or 1g, got \"lots\""},
        {"[db]\nurl = x\npool_size = 500\n",
         ":3: [db] pool_size: \"500\" is out of range (1 to 100)"},
        {"[db]\npool_size = 0\n", ":2: [db] pool_size: \"0\" is out of range (1 to 100)"},
        {"[gateway]\nrequest_timeout = 11m\n",
         ":2: [gateway] request_timeout: \"11m\" is out of range (100ms to 10m)"},
        {"[gateway]\nmax_body = 1g\n",
         ":2: [gateway] max_body: \"1g\" is out of range (1k to 64m)"},
        {"[gateway]\nlisten_port = 70000\n",
         ":2: [gateway] listen_port: \"70000\" is out of range (1 to 65535)"},
        {"[db]\nurl = a\n\nurl = b\n", ":4: duplicate key [db] url (first set on line 2)"},
        {"[db]\nurl = a\n[gateway]\n[db]\nurl = b\n",
         ":5: duplicate key [db] url (first set on line 2)"},
        {"[db]\nurl\n", ":2: syntax error: expected \"[section]\" or \"key = value\""},
        {"[db\nurl = x\n", ":1: syntax error: expected \"[section]\" or \"key = value\""},
        {"[db]\n  url = x\n  pool_size = 3\n",
         ":3: indented line is read as a continuation of \"url\"; remove the leading "
         "whitespace"},
        /* the first error in the file wins, whatever its kind */
        {"[db]\npool_size = ten\nbogus\nurl = x\n",
         ":2: [db] pool_size: expected an integer, got \"ten\""},
        {"[db]\nbogus\npool_size = ten\nurl = x\n",
         ":2: syntax error: expected \"[section]\" or \"key = value\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct test_cfg cfg;
        char path[64], err[512] = "", expected[512];
        assert_false(load_text(cases[i].text, no_env, &cfg, path, sizeof path, err, sizeof err));
        snprintf(expected, sizeof expected, "%s%s", path, cases[i].expected);
        if (strcmp(err, expected) != 0)
            fail_msg("case %zu:\n  got      %s\n  expected %s", i, err, expected);
        /* a failed load leaves nothing allocated */
        assert_null(cfg.name);
        assert_null(cfg.listen_addr);
        assert_null(cfg.db_url);
    }
}

static void test_missing_required(void **state)
{
    (void)state;
    struct test_cfg cfg;
    char path[64], err[512] = "";
    assert_false(load_text("[gateway]\nlisten_port = 80\n", no_env, &cfg, path, sizeof path, err,
                           sizeof err));
    assert_string_equal(err, "missing required key [db] url (or XMRGATE_DB_URL)");
    assert_null(cfg.listen_addr);
}

static void test_long_line(void **state)
{
    (void)state;
    char text[600], path[64], err[512] = "", expected[256];
    struct test_cfg cfg;
    snprintf(text, sizeof text, "[db]\nurl = postgresql://");
    size_t n = strlen(text);
    memset(text + n, 'a', 300);
    snprintf(text + n + 300, sizeof text - n - 300, "\n");
    assert_false(load_text(text, no_env, &cfg, path, sizeof path, err, sizeof err));
    snprintf(expected, sizeof expected, "%s:2: line longer than", path);
    assert_non_null(strstr(err, expected));
}

static void test_unreadable_file(void **state)
{
    (void)state;
    struct test_cfg cfg = {0};
    char err[512] = "";
    assert_false(
        xg_config_load(keys, NKEYS, &cfg, "/nonexistent/xmrgate.ini", no_env, err, sizeof err));
    assert_string_equal(err, "cannot read /nonexistent/xmrgate.ini: No such file or directory");
}

/* ---- environment and defaults ----------------------------------------------------- */

static void test_env_overrides_file(void **state)
{
    (void)state;
    char *const env[] = {
        "PATH=/usr/bin",
        "XMRGATE_DB_POOL_SIZE=7",
        "XMRGATE_GATEWAY_CACHE=off",
        "XMRGATE_GATEWAY_REQUEST_TIMEOUT=2s",
        "XMRGATE_NAME=from-env",
        "XMRGATE_UNRELATED_TOOL_SETTING=whatever", /* other tools share the prefix */
        "XMRGATE_DB_POOL_SIZE_EXTRA=ten",
        NULL,
    };
    struct test_cfg cfg;
    char path[64], err[512] = "";
    assert_true(load_text("name = from-file\n[db]\nurl = postgres://file\npool_size = 3\n", env,
                          &cfg, path, sizeof path, err, sizeof err));
    assert_int_equal(cfg.pool_size, 7);
    assert_false(cfg.cache);
    assert_int_equal(cfg.request_timeout_ms, 2000);
    assert_string_equal(cfg.name, "from-env");
    assert_string_equal(cfg.db_url, "postgres://file");
    xg_config_free(keys, NKEYS, &cfg);
}

static void test_env_supplies_required(void **state)
{
    (void)state;
    char *const env[] = {"XMRGATE_DB_URL=postgres://env", NULL};
    struct test_cfg cfg = {0};
    char err[512] = "";
    assert_true(xg_config_load(keys, NKEYS, &cfg, NULL, env, err, sizeof err));
    assert_string_equal(cfg.db_url, "postgres://env");
    xg_config_free(keys, NKEYS, &cfg);
}

static void test_bad_env_value(void **state)
{
    (void)state;
    static const struct {
        const char *var;
        const char *expected;
    } cases[] = {
        {"XMRGATE_DB_POOL_SIZE=ten", "XMRGATE_DB_POOL_SIZE: expected an integer, got \"ten\""},
        {"XMRGATE_DB_POOL_SIZE=101", "XMRGATE_DB_POOL_SIZE: \"101\" is out of range (1 to 100)"},
        {"XMRGATE_GATEWAY_CACHE=perhaps",
         "XMRGATE_GATEWAY_CACHE: expected true or false, got \"perhaps\""},
        {"XMRGATE_GATEWAY_MAX_BODY=1x",
         "XMRGATE_GATEWAY_MAX_BODY: expected a size such as 4096, 64k, 1m or 1g, got \"1x\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *const env[] = {"XMRGATE_DB_URL=postgres://env", (char *)cases[i].var, NULL};
        struct test_cfg cfg;
        char path[64], err[512] = "";
        assert_false(
            load_text("[db]\npool_size = 3\n", env, &cfg, path, sizeof path, err, sizeof err));
        assert_string_equal(err, cases[i].expected);
        assert_null(cfg.db_url);
    }
}

static void test_defaults(void **state)
{
    (void)state;
    char *const env[] = {"XMRGATE_DB_URL=postgres://env", NULL};
    struct test_cfg cfg = {0};
    char err[512] = "";
    assert_true(xg_config_load(keys, NKEYS, &cfg, NULL, env, err, sizeof err));
    assert_string_equal(cfg.name, "xmrgate");
    assert_string_equal(cfg.listen_addr, "127.0.0.1");
    assert_int_equal(cfg.listen_port, 18089);
    assert_true(cfg.cache);
    assert_int_equal(cfg.request_timeout_ms, 30000);
    assert_int_equal(cfg.max_body, 1 << 20);
    assert_int_equal(cfg.pool_size, 4);
    xg_config_free(keys, NKEYS, &cfg);
}

static void test_invalid_default_is_reported(void **state)
{
    (void)state;
    static const struct xg_cfg_key broken[] = {
        {"x", "n", XG_CFG_INT, 0, sizeof(int64_t), "four", 0, 0, false, "a key with a bad default"},
    };
    int64_t target = 0;
    char err[512] = "";
    assert_false(xg_config_load(broken, 1, &target, NULL, no_env, err, sizeof err));
    assert_string_equal(err,
                        "built-in default of [x] n is invalid: expected an integer, got \"four\"");
}

/* A field narrower than its type stores is refused before anything is written to it. */
static void test_wrong_field_size_is_refused(void **state)
{
    (void)state;
    struct narrow {
        int n, after;
    };
    static const struct xg_cfg_key narrow_keys[] = {
        {"x", "n", XG_CFG_INT, offsetof(struct narrow, n), sizeof(int), "4", 0, 0, false, "int"},
    };
    struct narrow target = {0, 7};
    char err[512] = "";
    assert_false(xg_config_load(narrow_keys, 1, &target, NULL, no_env, err, sizeof err));
    assert_string_equal(err, "key table: the field of [x] n is 4 bytes, its type stores 8");
    assert_int_equal(target.after, 7);
}

/* ---- reload ----------------------------------------------------------------------- */

/* A reload takes exactly the keys marked reloadable, strings included (ownership moves:
 * freeing both structs afterwards frees every string once), and counts the changed ones. */
static void test_take_reloadable(void **state)
{
    (void)state;
    struct reload_cfg {
        char *level, *url;
        bool cache;
        int64_t timeout_ms, port;
    };
#define R(field) offsetof(struct reload_cfg, field), sizeof(((struct reload_cfg *)0)->field)
    static const struct xg_cfg_key rkeys[] = {
        {"log", "level", XG_CFG_STRING, R(level), "info", 0, 0, true, "level"},
        {"db", "url", XG_CFG_STRING, R(url), "postgres://a", 0, 0, false, "url"},
        {"gateway", "cache", XG_CFG_BOOL, R(cache), "true", 0, 0, true, "cache"},
        {"gateway", "timeout", XG_CFG_DURATION, R(timeout_ms), "30s", 0, 0, true, "timeout"},
        {"gateway", "port", XG_CFG_INT, R(port), "1", 0, 0, false, "port"},
    };
#undef R
    size_t n = sizeof rkeys / sizeof rkeys[0];
    char *const old_env[] = {NULL};
    char *const new_env[] = {"XMRGATE_LOG_LEVEL=debug", "XMRGATE_DB_URL=postgres://b",
                             "XMRGATE_GATEWAY_CACHE=false", "XMRGATE_GATEWAY_PORT=2", NULL};
    struct reload_cfg running = {0}, fresh = {0};
    char err[256];
    assert_true(xg_config_load(rkeys, n, &running, NULL, old_env, err, sizeof err));
    assert_true(xg_config_load(rkeys, n, &fresh, NULL, new_env, err, sizeof err));
    /* level and cache changed and are reloadable; timeout is reloadable but the same; url
     * and port changed but need a restart */
    assert_int_equal(xg_config_take_reloadable(rkeys, n, &running, &fresh), 2);
    assert_string_equal(running.level, "debug");
    assert_false(running.cache);
    assert_int_equal(running.timeout_ms, 30000);
    assert_string_equal(running.url, "postgres://a");
    assert_int_equal(running.port, 1);
    assert_string_equal(fresh.level, "info"); /* what running had: freed with fresh */
    assert_string_equal(fresh.url, "postgres://b");
    /* nothing left to take */
    assert_int_equal(xg_config_take_reloadable(rkeys, n, &running, &running), 0);
    xg_config_free(rkeys, n, &fresh);
    xg_config_free(rkeys, n, &running);
}

/* ---- reference -------------------------------------------------------------------- */

static char *capture_reference(void)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(tmp), STDOUT_FILENO) >= 0);
    xg_config_print_reference(keys, NKEYS, "Test daemon");
    fflush(stdout);
    assert_true(dup2(saved, STDOUT_FILENO) >= 0);
    close(saved);
    long len = ftell(tmp);
    assert_true(len > 0);
    char *text = calloc(1, (size_t)len + 1);
    assert_non_null(text);
    rewind(tmp);
    assert_int_equal(fread(text, 1, (size_t)len, tmp), (size_t)len);
    fclose(tmp);
    return text;
}

static void test_print_reference(void **state)
{
    (void)state;
    char *text = capture_reference();
    assert_non_null(strstr(text, "### Test daemon\n"));
    assert_non_null(strstr(text, "| Section | Key | Type | Default | Environment |"));
    assert_non_null(
        strstr(text, "| `[db]` | `url` | string | *required* | `XMRGATE_DB_URL` | no |"));
    assert_non_null(strstr(text, "|  | `name` | string | `xmrgate` | `XMRGATE_NAME` |"));
    assert_non_null(strstr(text, "`request_timeout` | duration (100ms–10m) | `30s` | "
                                 "`XMRGATE_GATEWAY_REQUEST_TIMEOUT` | yes | deadline \\| per "
                                 "request |"));
    /* one row per key plus the title, a blank line and two header rows */
    size_t lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, NKEYS + 4);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_duration),
        cmocka_unit_test(test_parse_size),
        cmocka_unit_test(test_parse_int),
        cmocka_unit_test(test_parse_bool),
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_missing_required),
        cmocka_unit_test(test_long_line),
        cmocka_unit_test(test_unreadable_file),
        cmocka_unit_test(test_env_overrides_file),
        cmocka_unit_test(test_env_supplies_required),
        cmocka_unit_test(test_bad_env_value),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_invalid_default_is_reported),
        cmocka_unit_test(test_wrong_field_size_is_refused),
        cmocka_unit_test(test_take_reloadable),
        cmocka_unit_test(test_print_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
