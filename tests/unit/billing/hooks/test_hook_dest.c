/* Table tests for billing/hooks/hook_dest: a webhook URL's destination, which failures
 * count for its breaker, the breaker's life (closed, open, half-open, a doubling cooldown)
 * and the per-destination fairness verdict. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "hooks/hook_dest.h"

static void test_key(void **state)
{
    (void)state;
    static const struct {
        const char *url, *want; /* want NULL: no destination */
    } cases[] = {
        {"http://merchant.example/hook", "merchant.example:80"},
        {"https://merchant.example/hook", "merchant.example:443"},
        {"HTTPS://Merchant.Example:8443/a?b#c", "merchant.example:8443"},
        {"http://user:pw@merchant.example:81/x", "merchant.example:81"},
        {"http://a@b@merchant.example/x", "merchant.example:80"}, /* the last '@' ends it */
        {"http://merchant.example:/x", "merchant.example:80"},    /* an empty port */
        {"http://merchant.example?q", "merchant.example:80"},
        {"http://127.0.0.1:9000", "127.0.0.1:9000"},
        {"http://[2001:DB8::1]:9000/h", "[2001:db8::1]:9000"},
        {"https://[::1]/h", "[::1]:443"},
        {"http://[::1/h", NULL},
        {"http://[]/h", NULL},
        {"http:///h", NULL},
        {"http://host:9x/h", NULL},
        {"ftp://host/h", NULL},
        {"", NULL},
        {"merchant.example/hook", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char key[HOOK_DEST_KEY_SIZE];
        bool ok = hook_dest_key(cases[i].url, key);
        if (ok != (cases[i].want != NULL) || (ok && strcmp(key, cases[i].want) != 0))
            fail_msg("case %zu (%s): %s", i, cases[i].url, ok ? key : "(none)");
        if (!ok)
            assert_string_equal(key, "");
    }
    /* one host and the same port in two spellings are one destination */
    char a[HOOK_DEST_KEY_SIZE], b[HOOK_DEST_KEY_SIZE];
    assert_true(hook_dest_key("http://Shop.Example/a", a));
    assert_true(hook_dest_key("http://shop.example:80/b", b));
    assert_string_equal(a, b);
}

static void test_counts(void **state)
{
    (void)state;
    static const struct {
        bool timeout, connect, tls;
        long status;
        bool want;
    } cases[] = {
        {true, false, false, 0, true},     {false, true, false, 0, true},
        {false, false, true, 0, true},     {false, false, false, 500, true},
        {false, false, false, 503, true},  {false, false, false, 404, false},
        {false, false, false, 410, false}, {false, false, false, 0, false}, /* SSRF, no URL */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (hook_dest_breaker_counts(cases[i].timeout, cases[i].connect, cases[i].tls,
                                     cases[i].status) != cases[i].want)
            fail_msg("case %zu", i);
}

/* A breaker's life, one step a row: at t, an attempt's outcome (or a decision), and the
 * state and cooldown after it. */
static void test_breaker(void **state)
{
    (void)state;
    const struct hook_breaker_policy p = {
        .threshold = 3, .cooldown_ms = 1000, .cooldown_max_ms = 3000};
    enum { FAIL, FAIL_4XX, OK, DECIDE };
    static const struct {
        int64_t t;
        int step;
        enum hook_dest_verdict verdict; /* for DECIDE */
        enum hook_breaker_state after;
        int64_t cooldown;
    } steps[] = {
        {0, DECIDE, HOOK_DEST_SEND, HOOK_BREAKER_CLOSED, 0},
        {10, FAIL, 0, HOOK_BREAKER_CLOSED, 0},
        {20, FAIL, 0, HOOK_BREAKER_CLOSED, 0},
        {25, FAIL_4XX, 0, HOOK_BREAKER_CLOSED, 0}, /* a 4xx neither counts nor resets */
        {30, FAIL, 0, HOOK_BREAKER_OPEN, 1000},    /* the third in a row: open 1 s */
        {40, FAIL, 0, HOOK_BREAKER_OPEN, 1000},    /* one begun before: no longer */
        {500, DECIDE, HOOK_DEST_OPEN, HOOK_BREAKER_OPEN, 1000},
        {1030, DECIDE, HOOK_DEST_SEND, HOOK_BREAKER_HALF_OPEN, 1000}, /* the probe */
        {1031, DECIDE, HOOK_DEST_OPEN, HOOK_BREAKER_HALF_OPEN, 1000}, /* one probe at a time */
        {1100, FAIL, 0, HOOK_BREAKER_OPEN, 2000},                     /* doubled */
        {3100, DECIDE, HOOK_DEST_SEND, HOOK_BREAKER_HALF_OPEN, 2000},
        {3200, FAIL, 0, HOOK_BREAKER_OPEN, 3000}, /* doubled, capped at 3 s */
        {6200, DECIDE, HOOK_DEST_SEND, HOOK_BREAKER_HALF_OPEN, 3000},
        {6300, FAIL, 0, HOOK_BREAKER_OPEN, 3000},
        {9300, DECIDE, HOOK_DEST_SEND, HOOK_BREAKER_HALF_OPEN, 3000},
        {9400, OK, 0, HOOK_BREAKER_CLOSED, 0}, /* the probe came through: closed, forgotten */
        {9500, FAIL, 0, HOOK_BREAKER_CLOSED, 0},
        {9600, OK, 0, HOOK_BREAKER_CLOSED, 0}, /* a success resets the count */
        {9700, FAIL, 0, HOOK_BREAKER_CLOSED, 0},
        {9800, FAIL, 0, HOOK_BREAKER_CLOSED, 0},
        {9900, FAIL, 0, HOOK_BREAKER_OPEN, 1000}, /* open again from the first cooldown */
    };
    struct hook_breaker b = {0};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        int64_t t = steps[i].t, retry = -1;
        switch (steps[i].step) {
        case DECIDE:
            if (hook_dest_decide(&b, 0, 1, t, &retry) != steps[i].verdict)
                fail_msg("step %zu: verdict", i);
            break;
        case FAIL:
            hook_breaker_result(&b, &p, false, true, t);
            break;
        case FAIL_4XX:
            hook_breaker_result(&b, &p, false, false, t);
            break;
        case OK:
            hook_breaker_result(&b, &p, true, false, t);
            break;
        }
        if (hook_breaker_state(&b, t) != steps[i].after || b.cooldown_ms != steps[i].cooldown)
            fail_msg("step %zu: state %d cooldown %lld", i, (int)hook_breaker_state(&b, t),
                     (long long)b.cooldown_ms);
    }
    assert_false(hook_breaker_idle(&b));
    hook_breaker_result(&b, &p, true, false, 10000);
    assert_true(hook_breaker_idle(&b));
}

static void test_decide(void **state)
{
    (void)state;
    static const struct {
        int64_t cooldown, open_until;
        bool probing;
        int in_flight, per_destination;
        int64_t now;
        enum hook_dest_verdict want;
        int64_t retry_at;
    } cases[] = {
        {0, 0, false, 0, 1, 100, HOOK_DEST_SEND, 100},
        {0, 0, false, 1, 1, 100, HOOK_DEST_BUSY, 100}, /* one at a time per destination */
        {0, 0, false, 1, 2, 100, HOOK_DEST_SEND, 100},
        {0, 0, false, 2, 2, 100, HOOK_DEST_BUSY, 100},
        {500, 900, false, 0, 4, 100, HOOK_DEST_OPEN, 900},  /* until it half-opens */
        {500, 900, false, 0, 4, 900, HOOK_DEST_SEND, 900},  /* half-open: the probe */
        {500, 900, true, 1, 4, 950, HOOK_DEST_OPEN, 1450},  /* the probe is out */
        {500, 900, false, 1, 4, 950, HOOK_DEST_OPEN, 1450}, /* an attempt from before */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hook_breaker b = {.cooldown_ms = cases[i].cooldown,
                                 .open_until_ms = cases[i].open_until,
                                 .probing = cases[i].probing};
        int64_t retry = -1;
        enum hook_dest_verdict v = hook_dest_decide(&b, cases[i].in_flight,
                                                    cases[i].per_destination, cases[i].now, &retry);
        if (v != cases[i].want || retry != cases[i].retry_at)
            fail_msg("case %zu: verdict %d retry %lld", i, (int)v, (long long)retry);
    }
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(hook_breaker_state_names[HOOK_BREAKER_CLOSED], "closed");
    assert_string_equal(hook_breaker_state_names[HOOK_BREAKER_OPEN], "open");
    assert_string_equal(hook_breaker_state_names[HOOK_BREAKER_HALF_OPEN], "half_open");
    assert_null(hook_breaker_state_names[HOOK_BREAKER_NSTATES]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key),     cmocka_unit_test(test_counts),
        cmocka_unit_test(test_breaker), cmocka_unit_test(test_decide),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
