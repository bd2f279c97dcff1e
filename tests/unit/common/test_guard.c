/* Table tests for common/xg_guard (the header timeout and the minimum body rate) and
 * common/xg_addrcap (which address a connection counts against, and the cap). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "xg_addrcap.h"
#include "xg_guard.h"

static const struct xg_guard_limits lim = {
    .header_timeout_ms = 10000, .body_grace_ms = 5000, .body_min_rate = 1000};

static void test_head_timeout(void **state)
{
    (void)state;
    static const struct {
        int64_t started, later_bytes, now;
        enum xg_guard_verdict want;
        int64_t due;
    } cases[] = {
        {1000, 0, 1000, XG_GUARD_OK, 11000},
        {1000, 0, 10999, XG_GUARD_OK, 11000},
        {1000, 0, 11000, XG_GUARD_HEAD_TIMEOUT, INT64_MAX},
        /* bytes trickling in later do not move the clock */
        {1000, 9000, 10999, XG_GUARD_OK, 11000},
        {1000, 10500, 11000, XG_GUARD_HEAD_TIMEOUT, INT64_MAX},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct xg_guard g = {0};
        xg_guard_head(&g, cases[i].started);
        if (cases[i].later_bytes)
            xg_guard_head(&g, cases[i].later_bytes);
        int64_t due;
        assert_int_equal(xg_guard_check(&lim, &g, cases[i].now, &due), cases[i].want);
        if (cases[i].want == XG_GUARD_OK)
            assert_int_equal(due, cases[i].due);
    }
}

static void test_body_rate(void **state)
{
    (void)state;
    static const struct {
        uint64_t bytes;
        int64_t now; /* the body began at 0 */
        enum xg_guard_verdict want;
        int64_t due;
    } cases[] = {
        {0, 0, XG_GUARD_OK, 5001},    /* the grace */
        {0, 5000, XG_GUARD_OK, 5001}, /* the grace's last moment */
        {0, 5001, XG_GUARD_BODY_TOO_SLOW, 0},
        {3, 20000, XG_GUARD_BODY_TOO_SLOW, 0}, /* one byte every few seconds */
        {10000, 9000, XG_GUARD_OK, 10001},     /* 10 s worth of bytes at the rate */
        {10000, 10000, XG_GUARD_OK, 10001},
        {10000, 10001, XG_GUARD_BODY_TOO_SLOW, 0},
        {1500, 3000, XG_GUARD_OK, 5001},       /* under the rate, but within the grace */
        {UINT64_MAX, 1000000, XG_GUARD_OK, 0}, /* no overflow */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct xg_guard g = {0};
        xg_guard_body(&g, 0);
        xg_guard_bytes(&g, cases[i].bytes);
        int64_t due;
        assert_int_equal(xg_guard_check(&lim, &g, cases[i].now, &due), cases[i].want);
        if (cases[i].want == XG_GUARD_OK && cases[i].due)
            assert_int_equal(due, cases[i].due);
    }
    struct xg_guard_limits any_rate = lim;
    any_rate.body_min_rate = 0;
    struct xg_guard g = {0};
    xg_guard_body(&g, 0);
    int64_t due;
    assert_int_equal(xg_guard_check(&any_rate, &g, 1000000, &due), XG_GUARD_OK);
    assert_true(due == INT64_MAX);
}

static void test_idle_and_counts(void **state)
{
    (void)state;
    struct xg_guard g = {0};
    xg_guard_head(&g, 0);
    xg_guard_idle(&g);
    int64_t due;
    assert_int_equal(xg_guard_check(&lim, &g, 1000000, &due), XG_GUARD_OK);
    assert_true(due == INT64_MAX);
    xg_guard_bytes(&g, 5); /* not in a body: not counted */
    assert_int_equal(g.bytes, 0);

    struct xg_guard_counts c = {0};
    xg_guard_count(&c, XG_GUARD_HEAD_TIMEOUT);
    xg_guard_count(&c, XG_GUARD_BODY_TOO_SLOW);
    xg_guard_count(&c, XG_GUARD_BODY_TOO_SLOW);
    xg_guard_count(&c, XG_GUARD_OK);
    xg_guard_count(NULL, XG_GUARD_HEAD_TIMEOUT);
    atomic_fetch_add(&c.refused_over_cap, 4);
    uint64_t n[XG_GUARD_NREASONS];
    xg_guard_counts_read(&c, n);
    assert_int_equal(n[0], 1);
    assert_int_equal(n[1], 2);
    assert_int_equal(n[2], 4);
    assert_string_equal(xg_guard_count_reasons[0], "header_timeout");
    assert_null(xg_guard_count_reasons[XG_GUARD_NREASONS]);
}

static struct xg_proxy_ip ip(const char *text)
{
    struct xg_proxy_ip out;
    assert_true(xg_proxy_ip_parse(text, strlen(text), &out));
    return out;
}

static void test_key_rule(void **state)
{
    (void)state;
    struct xg_proxy_trust trust;
    char err[128];
    assert_true(xg_proxy_trust_parse("10.0.0.0/8", &trust, err, sizeof err));
    struct xg_proxy_ip client = ip("198.51.100.7"), lb = ip("10.1.2.3"), none = {0};
    static const struct {
        const char *peer;
        bool proxy_protocol;
        int named; /* 0: header not read, 1: names the client, 2: names none */
        enum xg_addrcap_key_kind want;
        const char *key;
    } cases[] = {
        {"198.51.100.7", false, 0, XG_ADDRCAP_COUNT, "198.51.100.7"},
        {"198.51.100.7", true, 0, XG_ADDRCAP_COUNT, "198.51.100.7"}, /* untrusted: itself */
        {"198.51.100.9", true, 1, XG_ADDRCAP_COUNT, "198.51.100.9"}, /* its header is ignored */
        {"10.1.2.3", false, 0, XG_ADDRCAP_EXEMPT, NULL},             /* X-Forwarded-For balancer */
        {"10.1.2.3", true, 0, XG_ADDRCAP_LATER, NULL},
        {"10.1.2.3", true, 1, XG_ADDRCAP_COUNT, "198.51.100.7"},
        {"10.1.2.3", true, 2, XG_ADDRCAP_EXEMPT, NULL}, /* the balancer's health check */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct xg_proxy_ip peer = ip(cases[i].peer), key;
        const struct xg_proxy_ip *named = cases[i].named == 0   ? NULL
                                          : cases[i].named == 1 ? &client
                                                                : &none;
        assert_int_equal(xg_addrcap_key(&trust, &peer, cases[i].proxy_protocol, named, &key),
                         cases[i].want);
        if (cases[i].key) {
            char text[XG_PROXY_ADDR_TEXT];
            xg_proxy_ip_format(&key, text, sizeof text);
            assert_string_equal(text, cases[i].key);
        }
    }
    struct xg_proxy_ip key;
    assert_int_equal(xg_addrcap_key(NULL, &lb, true, NULL, &key), XG_ADDRCAP_COUNT);
    assert_int_equal(xg_addrcap_key(&trust, &none, false, NULL, &key), XG_ADDRCAP_EXEMPT);
}

static void test_cap_table(void **state)
{
    (void)state;
    struct xg_addrcap *t = xg_addrcap_new(3);
    assert_non_null(t);
    struct xg_proxy_ip a = ip("127.0.0.2"), b = ip("127.0.0.3"), a6 = ip("::ffff:127.0.0.2");
    for (int i = 0; i < 3; i++)
        assert_true(xg_addrcap_acquire(t, &a));
    assert_false(xg_addrcap_has_room(t, &a));
    assert_false(xg_addrcap_acquire(t, &a));  /* the fourth from one address */
    assert_false(xg_addrcap_acquire(t, &a6)); /* the same address, mapped */
    assert_true(xg_addrcap_has_room(t, &b));
    assert_true(xg_addrcap_acquire(t, &b)); /* another address still connects */
    assert_int_equal(xg_addrcap_held(t, &a), 3);
    xg_addrcap_release(t, &a);
    assert_true(xg_addrcap_acquire(t, &a)); /* a place given back is taken again */
    for (int i = 0; i < 3; i++)
        xg_addrcap_release(t, &a);
    assert_int_equal(xg_addrcap_held(t, &a), 0);
    xg_addrcap_release(t, &a); /* nothing held: harmless */
    assert_int_equal(xg_addrcap_held(t, &b), 1);
    xg_addrcap_free(t);

    struct xg_addrcap *none = xg_addrcap_new(0); /* no cap */
    for (int i = 0; i < 1000; i++)
        assert_true(xg_addrcap_acquire(none, &a));
    xg_addrcap_free(none);
    assert_true(xg_addrcap_acquire(NULL, &a));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_head_timeout),    cmocka_unit_test(test_body_rate),
        cmocka_unit_test(test_idle_and_counts), cmocka_unit_test(test_key_rule),
        cmocka_unit_test(test_cap_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
