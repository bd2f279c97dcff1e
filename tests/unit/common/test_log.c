/* Tests for xg_log: level names, and the lines themselves (captured from stderr). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "xg_log.h"

static void test_level_parse(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool ok;
        enum xg_log_level level;
    } cases[] = {
        {"debug", true, XG_LOG_DEBUG},
        {"info", true, XG_LOG_INFO},
        {"warn", true, XG_LOG_WARN},
        {"error", true, XG_LOG_ERROR},
        {"INFO", true, XG_LOG_INFO},
        {"Warn", true, XG_LOG_WARN},
        {"warning", false, 0},
        {"", false, 0},
        {"inf", false, 0},
        {"trace", false, 0},
        {"info ", false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum xg_log_level level = XG_LOG_ERROR + 1;
        bool ok = xg_log_level_parse(cases[i].text, &level);
        if (ok != cases[i].ok)
            fail_msg("\"%s\": expected %s", cases[i].text, cases[i].ok ? "ok" : "failure");
        if (ok)
            assert_int_equal(level, cases[i].level);
    }
}

/* Runs the logging calls of `fn` with stderr redirected; returns what was written. */
static char *capture_stderr(void (*fn)(void))
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
    fn();
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    long len = lseek(fileno(tmp), 0, SEEK_END);
    assert_true(len >= 0);
    char *text = calloc(1, (size_t)len + 1);
    assert_non_null(text);
    assert_int_equal(pread(fileno(tmp), text, (size_t)len, 0), len);
    fclose(tmp);
    return text;
}

static void log_some_lines(void)
{
    xg_log_init("xmrgate-test", XG_LOG_INFO);
    xg_log(XG_LOG_DEBUG, "too_quiet", "not written at level info");
    xg_log(XG_LOG_INFO, "started", "listening on %s:%d", "127.0.0.1", 18089);
    xg_log(XG_LOG_WARN, "no_message", NULL);
    xg_log_fields(XG_LOG_ERROR, "with_fields",
                  json_pack("{s:i,s:s,s:s}", "node", 3, "level", "forged", "reason", "timeout"),
                  "node %d failed", 3);
    xg_log(XG_LOG_INFO, "bad_utf8", "peer sent %s", "\xff\xfe ok");
    xg_log_fields(XG_LOG_DEBUG, "filtered_fields", json_pack("{s:i}", "n", 1), "dropped");
    xg_log_set_level(XG_LOG_DEBUG);
    xg_log(XG_LOG_DEBUG, "now_written", "debug enabled");
    xg_log_set_level(XG_LOG_INFO);
}

static json_t *parse_line(const char *line)
{
    json_error_t err;
    json_t *obj = json_loads(line, 0, &err);
    if (!obj)
        fail_msg("not JSON: %s (%s)", line, err.text);
    return obj;
}

static bool looks_like_rfc3339_ms_utc(const char *ts)
{
    /* 2024-05-01T12:34:56.789Z */
    static const char pattern[] = "dddd-dd-ddTdd:dd:dd.dddZ";
    if (strlen(ts) != strlen(pattern))
        return false;
    for (size_t i = 0; pattern[i]; i++)
        if (pattern[i] == 'd' ? (ts[i] < '0' || ts[i] > '9') : ts[i] != pattern[i])
            return false;
    return true;
}

static void test_lines(void **state)
{
    (void)state;
    char *text = capture_stderr(log_some_lines);
    const char *expected_events[] = {"started", "no_message", "with_fields", "bad_utf8",
                                     "now_written"};
    const char *expected_levels[] = {"info", "warn", "error", "info", "debug"};
    size_t n = 0;
    char *save = NULL;
    assert_int_equal(text[strlen(text) - 1], '\n');
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        assert_true(n < 5);
        json_t *obj = parse_line(line);
        const char *ts = json_string_value(json_object_get(obj, "ts"));
        assert_non_null(ts);
        assert_true(looks_like_rfc3339_ms_utc(ts));
        assert_string_equal(json_string_value(json_object_get(obj, "daemon")), "xmrgate-test");
        assert_string_equal(json_string_value(json_object_get(obj, "event")), expected_events[n]);
        assert_string_equal(json_string_value(json_object_get(obj, "level")), expected_levels[n]);
        if (n == 0)
            assert_string_equal(json_string_value(json_object_get(obj, "msg")),
                                "listening on 127.0.0.1:18089");
        if (n == 1)
            assert_null(json_object_get(obj, "msg"));
        if (n == 2) {
            assert_int_equal(json_integer_value(json_object_get(obj, "node")), 3);
            assert_string_equal(json_string_value(json_object_get(obj, "reason")), "timeout");
            /* a field never overrides the core members */
            assert_string_equal(json_string_value(json_object_get(obj, "level")), "error");
            assert_string_equal(json_string_value(json_object_get(obj, "msg")), "node 3 failed");
        }
        if (n == 3)
            assert_string_equal(json_string_value(json_object_get(obj, "msg")), "peer sent ?? ok");
        json_decref(obj);
        n++;
    }
    assert_int_equal(n, 5);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_level_parse),
        cmocka_unit_test(test_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
