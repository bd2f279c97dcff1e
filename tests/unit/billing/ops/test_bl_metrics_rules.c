/* Tests for bl_metrics' pure rules: the status class of an API answer, which routes are
 * XMR402's steps, the latency buckets; and that the registry really exports the families
 * with labels of bounded cardinality (an observation lands in its route's series). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "core/bl_error.h"
#include "ops/bl_metrics.h"
#include "xg_metrics.h"

static void test_status_class(void **state)
{
    (void)state;
    static const struct {
        unsigned status;
        enum bl_metrics_status_class want;
    } rows[] = {
        {0, BL_METRICS_DROPPED},        {100, BL_METRICS_OTHER_STATUS},
        {199, BL_METRICS_OTHER_STATUS}, {200, BL_METRICS_2XX},
        {201, BL_METRICS_2XX},          {299, BL_METRICS_2XX},
        {302, BL_METRICS_3XX},          {400, BL_METRICS_4XX},
        {402, BL_METRICS_4XX},          {429, BL_METRICS_4XX},
        {499, BL_METRICS_4XX},          {500, BL_METRICS_5XX},
        {503, BL_METRICS_5XX},          {599, BL_METRICS_5XX},
        {600, BL_METRICS_OTHER_STATUS}, {9999, BL_METRICS_OTHER_STATUS},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(bl_metrics_status_class(rows[i].status), rows[i].want);
}

static void test_xmr402_step(void **state)
{
    (void)state;
    assert_int_equal(bl_metrics_xmr402_step("/api/xmr402/challenge"), 0);
    assert_int_equal(bl_metrics_xmr402_step("/api/xmr402/verify"), 1);
    assert_int_equal(bl_metrics_xmr402_step("/api/xmr402/receipt-key"), -1);
    assert_int_equal(bl_metrics_xmr402_step("/api/invoices"), -1);
    /* both steps are routes of the table */
    int found = 0;
    for (size_t i = 0; api_route_paths[i]; i++)
        found += bl_metrics_xmr402_step(api_route_paths[i]) >= 0;
    assert_int_equal(found, 2);
}

static void test_latency_bounds(void **state)
{
    (void)state;
    assert_true(bl_metrics_latency_nbounds >= 5 && bl_metrics_latency_nbounds <= 12);
    assert_true(bl_metrics_latency_bounds[0] == 0.005);
    assert_true(bl_metrics_latency_bounds[bl_metrics_latency_nbounds - 1] == 10);
    for (size_t i = 1; i < bl_metrics_latency_nbounds; i++)
        assert_true(bl_metrics_latency_bounds[i] > bl_metrics_latency_bounds[i - 1]);
}

/* Renders the registry after one observed answer of each kind, without a database. */
static void test_observer_series(void **state)
{
    (void)state;
    struct bl_metrics_sources src = {.conninfo = "", .daemon_url = ""};
    struct bl_metrics *m = bl_metrics_new(&src);
    assert_non_null(m);
    struct api_observer obs = bl_metrics_api_observer(m);
    size_t challenge = 0, verify = 0, tiers = 0;
    for (size_t i = 0; api_route_paths[i]; i++) {
        if (strcmp(api_route_paths[i], "/api/xmr402/challenge") == 0)
            challenge = i;
        if (strcmp(api_route_paths[i], "/api/xmr402/verify") == 0)
            verify = i;
        if (strcmp(api_route_paths[i], "/api/tiers") == 0)
            tiers = i;
    }
    obs.answered(obs.ctx, tiers, 200, 0.003, -1);
    obs.answered(obs.ctx, challenge, 201, 0.02, -1);
    obs.answered(obs.ctx, verify, 402, 0.3, BL_ERROR_PROOF_INVALID);
    obs.answered(obs.ctx, verify, 429, 0.001, BL_ERROR_RATE_LIMITED);
    obs.answered(obs.ctx, verify, 0, 7.0, -1); /* dropped: not an answer */
    obs.answered(obs.ctx, 9999, 200, 0.1, -1); /* out of the table: "other" */
    size_t len;
    char *text = xg_metrics_render(bl_metrics_registry(m), &len);
    assert_non_null(text);
    static const char *const want[] = {
        "xmrgate_billing_api_requests_total{route=\"/api/tiers\",code=\"2xx\"} 1\n",
        "xmrgate_billing_api_requests_total{route=\"/api/xmr402/verify\",code=\"4xx\"} 2\n",
        "xmrgate_billing_api_requests_total{route=\"/api/xmr402/verify\",code=\"dropped\"} 1\n",
        "xmrgate_billing_api_requests_total{route=\"other\",code=\"2xx\"} 1\n",
        "xmrgate_billing_api_request_duration_seconds_bucket{route=\"/api/tiers\",le=\"0.005\"} "
        "1\n",
        "xmrgate_billing_api_request_duration_seconds_bucket{route=\"/api/xmr402/"
        "verify\",le=\"0.25\"} 1\n",
        "xmrgate_billing_api_request_duration_seconds_bucket{route=\"/api/xmr402/"
        "verify\",le=\"5\"} 2\n",
        "xmrgate_billing_api_request_duration_seconds_bucket{route=\"/api/xmr402/"
        "verify\",le=\"10\"} 3\n",
        "xmrgate_billing_api_request_duration_seconds_count{route=\"/api/xmr402/verify\"} 3\n",
        "xmrgate_billing_xmr402_challenges_total 1\n",
        "xmrgate_billing_xmr402_verifies_total 2\n",
        "xmrgate_billing_xmr402_refusals_total{step=\"verify\",reason=\"proof_invalid\"} 1\n",
        "xmrgate_billing_xmr402_refusals_total{step=\"verify\",reason=\"rate_limited\"} 1\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!strstr(text, want[i]))
            fail_msg("missing: %s", want[i]);
    }
    assert_null(strstr(text, "reason=\"txid_unknown\"")); /* counters show what moved */
    free(text);
    bl_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_class),
        cmocka_unit_test(test_xmr402_step),
        cmocka_unit_test(test_latency_bounds),
        cmocka_unit_test(test_observer_series),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
