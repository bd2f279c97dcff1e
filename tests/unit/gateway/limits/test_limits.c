/* Tests for gateway/limits: the texts of the 429 answers, the X-RateLimit-* values, the
 * GET /v1/usage body, the burst limit a request sees (its wait bounded by max_delay and
 * by its own deadline; now, held or refused), and the switch: with the limits disabled
 * nothing is refused or counted and no header is set. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "limits/limits.h"

static void test_rfc3339(void **state)
{
    (void)state;
    const struct {
        int64_t t;
        const char *text;
    } cases[] = {
        {0, "1970-01-01T00:00:00Z"},
        {1795996800, "2026-11-30T00:00:00Z"},
        {1796083199, "2026-11-30T23:59:59Z"},
        {4102444800, "2100-01-01T00:00:00Z"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[21];
        limits_rfc3339(cases[i].t, out);
        assert_string_equal(out, cases[i].text);
    }
}

static void test_burst_refusal(void **state)
{
    (void)state;
    const struct {
        int32_t rps;
        int64_t retry_ms;
        const char *retry_after;
    } cases[] = {{2, 500, "1"}, {2, 1, "1"}, {1, 1000, "1"}, {1, 1001, "2"}, {5, 0, "1"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct limits_refusal r;
        struct rl_limit lim = {.rate = cases[i].rps, .size = 40, .max_delay_us = 2000000};
        limits_burst_refusal(&lim, cases[i].retry_ms, &r);
        assert_string_equal(r.retry_after, cases[i].retry_after);
        assert_non_null(strstr(r.message, "burst limit"));
    }
    struct limits_refusal r;
    struct rl_limit lim = {.rate = 20, .size = 100, .max_delay_us = 1500000};
    limits_burst_refusal(&lim, 50, &r);
    assert_string_equal(r.message, "rate limit exceeded: burst limit of 20 requests per second "
                                   "(bursts of 100, queued up to 1.500 s); retry in 1 s");
}

static void test_quota_refusal(void **state)
{
    (void)state;
    struct quota_status q = {.limit = 2000, .used = 2000, .remaining = 0, .reset = 1795996800};
    struct limits_refusal r;
    limits_quota_refusal(&q, 1, 1795996800 - 3600, &r);
    assert_string_equal(r.retry_after, "3600");
    assert_string_equal(r.message,
                        "daily quota of 2000 exhausted; it resets at 2026-11-30T00:00:00Z");
    q.used = 1995;
    q.remaining = 5;
    limits_quota_refusal(&q, 10, 1795996800 - 1, &r);
    assert_string_equal(r.retry_after, "1");
    assert_non_null(strstr(r.message, "costs 10 of the 5 left of 2000"));
}

static void test_view_headers(void **state)
{
    (void)state;
    struct limits_view v = {.quota = {.limit = 100000, .remaining = 99421, .reset = 1795996800}};
    limits_view_format(&v);
    assert_true(v.set);
    assert_string_equal(v.limit, "100000");
    assert_string_equal(v.remaining, "99421");
    assert_string_equal(v.reset, "1795996800");

    struct limits_view edge = {.quota = {.limit = INT64_MAX, .remaining = 0, .reset = INT64_MIN}};
    limits_view_format(&edge);
    assert_string_equal(edge.limit, "9223372036854775807");
    assert_string_equal(edge.remaining, "0");
    assert_string_equal(edge.reset, "-9223372036854775808");
    edge.quota.remaining = -7;
    limits_view_format(&edge);
    assert_string_equal(edge.remaining, "-7");
}

static const struct tenant_row TENANT = {
    .id = 42,
    .handle = "t_abcdefghijkl",
    .tier_id = "wallet",
    .burst_rps = 20,
    .burst_size = 100,
    .daily_quota = 100000,
    .valid_until = 1798675200, /* 2026-12-31T00:00:00Z */
};

static void test_usage_body(void **state)
{
    (void)state;
    struct quota_status q = {.limit = 100000, .used = 579, .remaining = 99421, .reset = 1795996800};
    size_t len = 0;
    char *body = limits_usage_body(&TENANT, &q, &len);
    assert_non_null(body);
    assert_int_equal(len, strlen(body));
    json_error_t err;
    json_t *obj = json_loads(body, 0, &err);
    assert_non_null(obj);
    assert_string_equal(json_string_value(json_object_get(obj, "tier")), "wallet");
    assert_int_equal(json_integer_value(json_object_get(obj, "daily_quota")), 100000);
    assert_int_equal(json_integer_value(json_object_get(obj, "used_today")), 579);
    assert_int_equal(json_integer_value(json_object_get(obj, "remaining_today")), 99421);
    assert_int_equal(json_integer_value(json_object_get(obj, "burst_rps")), 20);
    assert_int_equal(json_integer_value(json_object_get(obj, "burst_size")), 100);
    assert_string_equal(json_string_value(json_object_get(obj, "valid_until")),
                        "2026-12-31T00:00:00Z");
    assert_string_equal(json_string_value(json_object_get(obj, "resets_at")),
                        "2026-11-30T00:00:00Z");
    json_decref(obj);
    free(body);
}

static void test_burst_limit_of_a_request(void **state)
{
    (void)state;
    const struct {
        int64_t max_delay_us, now_us, deadline_us, expect_us;
    } cases[] = {
        {2000000, 0, 20000000, 2000000}, /* the configured bound */
        {2000000, 0, 1500000, 1500000},  /* the request's deadline comes first */
        {2000000, 5000000, 5000000, 0},  /* no time left: refused at once */
        {2000000, 6000000, 5000000, 0},  /* past its deadline */
        {0, 0, 20000000, 0},             /* max_delay 0: never held */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct rl_limit lim = limits_burst_limit(&TENANT, cases[i].max_delay_us, cases[i].now_us,
                                                 cases[i].deadline_us);
        assert_int_equal(lim.rate, 20);
        assert_int_equal(lim.size, 100);
        assert_int_equal(lim.max_delay_us, cases[i].expect_us);
    }
}

static void test_burst_now_held_refused(void **state)
{
    (void)state;
    /* Enabled limits; the flusher never reaches this database, which the burst bucket
     * does not need. */
    struct gw_limits *l = limits_start(true, 1000000, "postgresql://127.0.0.1:1/none");
    assert_non_null(l);
    struct tenant_row t = TENANT;
    t.burst_rps = 4;
    t.burst_size = 2;
    struct limits_view v;
    struct limits_refusal r;
    int64_t delay = -1, deadline = 20000000;
    assert_int_equal(limits_burst(l, &t, 0, deadline, 1795996800, &v, &delay, &r),
                     LIMITS_BURST_NOW);
    assert_true(v.set);
    assert_int_equal(delay, 0);
    assert_int_equal(limits_burst(l, &t, 0, deadline, 1795996800, &v, &delay, &r),
                     LIMITS_BURST_NOW);
    for (int k = 1; k <= 4; k++) { /* 1 s at 4/s: four held, 250 ms apart */
        assert_int_equal(limits_burst(l, &t, 0, deadline, 1795996800, &v, &delay, &r),
                         LIMITS_BURST_HOLD);
        assert_int_equal(delay, 250000 * k);
    }
    assert_int_equal(limits_burst(l, &t, 0, deadline, 1795996800, &v, &delay, &r),
                     LIMITS_BURST_REFUSED);
    assert_string_equal(r.retry_after, "1");
    /* A request with only 100 ms left before its deadline is not held for 250 ms. */
    struct tenant_row other = t;
    other.id = 43;
    for (int i = 0; i < 2; i++)
        assert_int_equal(limits_burst(l, &other, 0, deadline, 1795996800, &v, &delay, &r),
                         LIMITS_BURST_NOW);
    assert_int_equal(limits_burst(l, &other, 0, 100000, 1795996800, &v, &delay, &r),
                     LIMITS_BURST_REFUSED);
    assert_int_equal(limits_burst(l, &other, 0, 250000, 1795996800, &v, &delay, &r),
                     LIMITS_BURST_HOLD);
    limits_stop(l);
}

static void test_disabled_refuses_and_counts_nothing(void **state)
{
    (void)state;
    struct gw_limits *l = limits_start(false, 2000000, "postgresql://unused");
    assert_non_null(l);
    assert_false(limits_enabled(l));
    struct tenant_row small = TENANT;
    small.burst_rps = 1;
    small.daily_quota = 1;
    for (int i = 0; i < 10; i++) {
        struct limits_view v = {.set = true};
        struct limits_refusal r;
        int64_t delay = -1;
        assert_int_equal(limits_burst(l, &small, 0, 1000, 1795996800, &v, &delay, &r),
                         LIMITS_BURST_NOW);
        assert_int_equal(delay, 0);
        assert_false(v.set);
        assert_true(limits_charge(l, &small, 10, 1795996800, &v, &r));
    }
    struct quota_status q;
    limits_status(l, &small, 1795996800, &q);
    assert_int_equal(q.used, 0);
    assert_int_equal(q.remaining, 1);
    limits_stop(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc3339),
        cmocka_unit_test(test_burst_refusal),
        cmocka_unit_test(test_burst_limit_of_a_request),
        cmocka_unit_test(test_burst_now_held_refused),
        cmocka_unit_test(test_quota_refusal),
        cmocka_unit_test(test_view_headers),
        cmocka_unit_test(test_usage_body),
        cmocka_unit_test(test_disabled_refuses_and_counts_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
