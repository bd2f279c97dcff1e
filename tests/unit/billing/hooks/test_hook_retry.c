/* Tests for billing/hook_retry: the backoff schedule (doubling from base, capped), giving
 * up after the retry window, which statuses count as delivered, and the failure reasons. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "hooks/hook_retry.h"

#define S 1000LL
#define H (3600 * S)

static void test_schedule_defaults(void **state)
{
    (void)state;
    struct hook_retry_policy p = {.base_ms = 10 * S, .cap_ms = H, .give_up_ms = 24 * H};
    static const int64_t want[] = {10 * S,  20 * S,   40 * S,   80 * S, 160 * S, 320 * S,
                                   640 * S, 1280 * S, 2560 * S, H,      H,       H};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(hook_retry_delay_ms(&p, (int64_t)i + 1), want[i]);
    assert_int_equal(hook_retry_delay_ms(&p, 1000000), H); /* no overflow, still the cap */
    /* over 24 h: 9 growing pauses (5110 s) then hourly, about 31 attempts in all */
    int64_t age = 0, attempts = 0;
    while (hook_retry_again(&p, attempts + 1, age)) {
        attempts++;
        age += hook_retry_delay_ms(&p, attempts);
    }
    assert_true(age <= 24 * H);
    assert_true(age + H > 24 * H);
    assert_int_equal(attempts, 31);
}

static void test_schedule_small(void **state)
{
    (void)state;
    struct hook_retry_policy p = {.base_ms = 500, .cap_ms = 3000, .give_up_ms = 120 * S};
    static const int64_t want[] = {500, 1000, 2000, 3000, 3000};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(hook_retry_delay_ms(&p, (int64_t)i + 1), want[i]);
    struct hook_retry_policy flat = {.base_ms = 700, .cap_ms = 700, .give_up_ms = 10 * S};
    assert_int_equal(hook_retry_delay_ms(&flat, 1), 700);
    assert_int_equal(hook_retry_delay_ms(&flat, 9), 700);
}

static void test_give_up(void **state)
{
    (void)state;
    struct hook_retry_policy p = {.base_ms = 10 * S, .cap_ms = H, .give_up_ms = 24 * H};
    assert_true(hook_retry_again(&p, 1, 0));
    assert_true(hook_retry_again(&p, 20, 23 * H));      /* next in 1 h: at 24 h exactly */
    assert_false(hook_retry_again(&p, 20, 23 * H + 1)); /* would be past 24 h */
    assert_false(hook_retry_again(&p, 1, 24 * H));
}

static void test_delivered(void **state)
{
    (void)state;
    static const struct {
        long status;
        bool delivered;
    } rows[] = {{200, true},  {201, true},  {202, true},  {204, true},  {299, true},  {0, false},
                {100, false}, {199, false}, {301, false}, {302, false}, {400, false}, {404, false},
                {410, false}, {429, false}, {500, false}, {503, false}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(hook_retry_delivered(rows[i].status), rows[i].delivered);
}

/* The failure reason of an attempt: what nothing was sent for comes first, then the guard's
 * refusal, an oversized answer, then libcurl's code, then the status. */
static void test_failure_reason(void **state)
{
    (void)state;
    static const struct {
        bool no_url, refused, too_large;
        int curl;
        long status;
        enum hook_failure want;
    } rows[] = {
        {true, false, false, 0, 0, HOOK_FAILURE_NO_URL},
        {true, true, false, CURLE_COULDNT_CONNECT, 0, HOOK_FAILURE_NO_URL},
        {false, true, false, CURLE_COULDNT_CONNECT, 0, HOOK_FAILURE_REFUSED},
        {false, true, false, CURLE_OPERATION_TIMEDOUT, 0, HOOK_FAILURE_REFUSED},
        {false, false, true, CURLE_WRITE_ERROR, 0, HOOK_FAILURE_TOO_LARGE},
        {false, false, false, CURLE_OPERATION_TIMEDOUT, 0, HOOK_FAILURE_TIMEOUT},
        {false, false, false, CURLE_COULDNT_CONNECT, 0, HOOK_FAILURE_CONNECT},
        {false, false, false, CURLE_RECV_ERROR, 0, HOOK_FAILURE_CONNECT},
        {false, false, false, CURLE_GOT_NOTHING, 0, HOOK_FAILURE_CONNECT},
        {false, false, false, CURLE_COULDNT_RESOLVE_HOST, 0, HOOK_FAILURE_RESOLVE},
        {false, false, false, CURLE_PEER_FAILED_VERIFICATION, 0, HOOK_FAILURE_TLS},
        {false, false, false, CURLE_SSL_CONNECT_ERROR, 0, HOOK_FAILURE_TLS},
        {false, false, false, CURLE_OK, 500, HOOK_FAILURE_HTTP_STATUS},
        {false, false, false, CURLE_OK, 302, HOOK_FAILURE_HTTP_STATUS},
        {false, false, false, CURLE_OK, 0, HOOK_FAILURE_OTHER},
        {false, false, false, -1, 0, HOOK_FAILURE_OTHER}, /* not sent: cannot sign */
        {false, false, false, CURLE_OUT_OF_MEMORY, 0, HOOK_FAILURE_OTHER},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(hook_failure_of(rows[i].no_url, rows[i].refused, rows[i].too_large,
                                         rows[i].curl, rows[i].status),
                         rows[i].want);
    /* the label values: one per reason, in the enum's order, then the end */
    assert_string_equal(hook_failure_names[HOOK_FAILURE_TIMEOUT], "timeout");
    assert_string_equal(hook_failure_names[HOOK_FAILURE_REFUSED], "refused");
    assert_string_equal(hook_failure_names[HOOK_FAILURE_HTTP_STATUS], "http_status");
    assert_string_equal(hook_failure_names[HOOK_FAILURE_OTHER], "other");
    for (unsigned i = 0; i < HOOK_FAILURE_COUNT; i++)
        assert_non_null(hook_failure_names[i]);
    assert_null(hook_failure_names[HOOK_FAILURE_COUNT]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule_defaults), cmocka_unit_test(test_schedule_small),
        cmocka_unit_test(test_give_up),           cmocka_unit_test(test_delivered),
        cmocka_unit_test(test_failure_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
