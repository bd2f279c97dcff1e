/* Table tests for common/xg_proxy_admit: the places of a PROXY-protocol reader (the
 * balancer's reserve, the untrusted share, one network's cap), an untrusted peer's network
 * and what accept4's errors mean for the listener. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "xg_proxy_admit.h"

static void test_admit(void **state)
{
    (void)state;
    const struct xg_proxy_admit_limits l = {
        .max_pending = 10, .reserve = 3, .per_network = 2, .header_timeout_ms = 2000};
    static const struct {
        bool trusted;
        size_t pending, untrusted, network;
        enum xg_proxy_admit_verdict want;
    } cases[] = {
        {false, 0, 0, 0, XG_PROXY_ADMIT_OK},      {false, 1, 1, 1, XG_PROXY_ADMIT_OK},
        {false, 2, 2, 2, XG_PROXY_ADMIT_NETWORK}, /* its network holds per_network */
        {false, 6, 6, 1, XG_PROXY_ADMIT_OK},      /* the last untrusted place (7 = 10 - 3) */
        {false, 7, 7, 0, XG_PROXY_ADMIT_FULL},    /* the reserve is the balancer's */
        {false, 7, 7, 2, XG_PROXY_ADMIT_FULL},    /* full is said first */
        {false, 9, 2, 0, XG_PROXY_ADMIT_OK},      /* the balancer holds 7: one place left */
        {false, 10, 0, 0, XG_PROXY_ADMIT_FULL},   /* every place taken by the balancer */
        {true, 7, 7, 0, XG_PROXY_ADMIT_OK},       /* the reserve */
        {true, 9, 7, 0, XG_PROXY_ADMIT_OK},       {true, 10, 7, 0, XG_PROXY_ADMIT_FULL},
        {true, 5, 0, 99, XG_PROXY_ADMIT_OK}, /* the balancer has no network cap */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct xg_proxy_admit_state s = {cases[i].pending, cases[i].untrusted, cases[i].network};
        if (xg_proxy_admit(&l, cases[i].trusted, &s) != cases[i].want)
            fail_msg("case %zu", i);
    }
    /* no network cap: only the places count */
    const struct xg_proxy_admit_limits open = {.max_pending = 4, .reserve = 1};
    struct xg_proxy_admit_state s = {2, 2, 50};
    assert_int_equal(xg_proxy_admit(&open, false, &s), XG_PROXY_ADMIT_OK);
    s = (struct xg_proxy_admit_state){3, 3, 0};
    assert_int_equal(xg_proxy_admit(&open, false, &s), XG_PROXY_ADMIT_FULL);
    /* a reserve of every place leaves none to untrusted peers */
    const struct xg_proxy_admit_limits all = {.max_pending = 4, .reserve = 4};
    s = (struct xg_proxy_admit_state){0, 0, 0};
    assert_int_equal(xg_proxy_admit(&all, false, &s), XG_PROXY_ADMIT_FULL);
    assert_int_equal(xg_proxy_admit(&all, true, &s), XG_PROXY_ADMIT_OK);
}

static void test_resolve(void **state)
{
    (void)state;
    struct xg_proxy_admit_limits zero = {0};
    struct xg_proxy_admit_limits r = xg_proxy_admit_resolve(&zero);
    assert_int_equal(r.max_pending, XG_PROXY_PENDING_DEFAULT);
    assert_int_equal(r.reserve, 0);
    assert_int_equal(r.per_network, 0);
    assert_int_equal(r.header_timeout_ms, XG_PROXY_HEADER_TIMEOUT_DEFAULT);
    assert_int_equal(r.ipv4_bits, 32);
    assert_int_equal(r.ipv6_bits, 64);
    struct xg_proxy_admit_limits big = {.max_pending = 8, .reserve = 20, .ipv4_bits = 24};
    r = xg_proxy_admit_resolve(&big);
    assert_int_equal(r.reserve, 8);
    assert_int_equal(r.ipv4_bits, 24);
}

static void test_network(void **state)
{
    (void)state;
    static const struct {
        const char *addr;
        int v4, v6;
        const char *want;
    } cases[] = {
        {"203.0.113.77", 32, 64, "203.0.113.77"},
        {"203.0.113.77", 24, 64, "203.0.113.0"},
        {"203.0.113.77", 20, 64, "203.0.112.0"},
        {"::ffff:203.0.113.77", 24, 64, "203.0.113.0"}, /* mapped counts as IPv4 */
        {"2001:db8:1:2:3:4:5:6", 32, 64, "2001:db8:1:2::"},
        {"2001:db8:1:2:ffff::1", 32, 64, "2001:db8:1:2::"}, /* the same /64 */
        {"2001:db8:1:2:3:4:5:6", 32, 48, "2001:db8:1::"},
        {"2001:db8:1:2:3:4:5:6", 32, 60, "2001:db8:1::"},
        {"2001:db8:1:2:3:4:5:6", 32, 128, "2001:db8:1:2:3:4:5:6"},
        {"2001:db8:1:2:3:4:5:6", 32, 999, "2001:db8:1:2:3:4:5:6"}, /* clamped */
        {"127.0.0.9", 0, 0, "0.0.0.0"},                            /* clamped to /1 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct xg_proxy_ip ip, net;
        assert_true(xg_proxy_ip_parse(cases[i].addr, strlen(cases[i].addr), &ip));
        net = xg_proxy_ip_network(&ip, cases[i].v4, cases[i].v6);
        char text[XG_PROXY_ADDR_TEXT];
        xg_proxy_ip_format(&net, text, sizeof text);
        if (strcmp(text, cases[i].want) != 0)
            fail_msg("case %zu: %s, want %s", i, text, cases[i].want);
    }
}

static void test_accept_error(void **state)
{
    (void)state;
    static const struct {
        int err;
        enum xg_accept_step want;
    } cases[] = {
        {EMFILE, XG_ACCEPT_PAUSE}, {ENFILE, XG_ACCEPT_PAUSE}, {ENOBUFS, XG_ACCEPT_PAUSE},
        {ENOMEM, XG_ACCEPT_PAUSE}, {EAGAIN, XG_ACCEPT_IDLE},  {EWOULDBLOCK, XG_ACCEPT_IDLE},
        {EBADF, XG_ACCEPT_IDLE},   {EINTR, XG_ACCEPT_RETRY},  {ECONNABORTED, XG_ACCEPT_RETRY},
        {EPROTO, XG_ACCEPT_RETRY},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (xg_accept_error(cases[i].err) != cases[i].want)
            fail_msg("case %zu (errno %d)", i, cases[i].err);
}

/* The [server] PROXY settings: each refusal names its key. */
static void test_settings_check(void **state)
{
    (void)state;
    static const struct {
        const char *trusted;
        int64_t reserve, max_pending;
        bool proxy_protocol;
        const char *err; /* NULL: accepted */
    } cases[] = {
        {"", 128, 1024, false, NULL},
        {"10.0.0.0/8, 127.0.0.1", 128, 1024, true, NULL},
        {"10.0.0.1/8", 128, 1024, false, "[server] trusted_proxies: "},
        {"127.0.0.1", 1024, 1024, true, "[server] proxy_reserve: must be less than"},
        {"", 0, 1, true, "[server] proxy_protocol: set trusted_proxies"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct xg_proxy_trust trust;
        char err[256] = "";
        bool ok = xg_proxy_settings_check(cases[i].trusted, cases[i].reserve, cases[i].max_pending,
                                          cases[i].proxy_protocol, &trust, err, sizeof err);
        assert_int_equal(ok, cases[i].err == NULL);
        if (cases[i].err)
            assert_memory_equal(err, cases[i].err, strlen(cases[i].err));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admit),          cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_network),        cmocka_unit_test(test_accept_error),
        cmocka_unit_test(test_settings_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
