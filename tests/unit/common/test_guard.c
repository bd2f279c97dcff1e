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

static const struct xg_guard_limits lim = {.header_timeout_ms = 10000,
                                           .body_grace_ms = 5000,
                                           .body_min_rate = 1000,
                                           .body_window_ms = 10000};

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

/* A body: bytes arriving at times (the body began at 0), then the verdict at now. */
struct arrival {
    int64_t at;
    uint64_t bytes;
};

static enum xg_guard_verdict body_after(const struct xg_guard_limits *l, enum xg_guard_phase ph,
                                        const struct arrival *a, size_t n, int64_t now,
                                        int64_t *due)
{
    struct xg_guard g = {0};
    if (ph == XG_GUARD_SEND)
        xg_guard_send(l, &g, 0);
    else
        xg_guard_body(l, &g, 0);
    for (size_t i = 0; i < n && a[i].at <= now; i++)
        xg_guard_bytes(l, &g, a[i].bytes, a[i].at);
    return xg_guard_check(l, &g, now, due);
}

static void test_body_rate(void **state)
{
    (void)state;
    static const struct {
        uint64_t bytes; /* all at 0 */
        int64_t now;
        enum xg_guard_verdict want;
        int64_t due;
    } cases[] = {
        {0, 0, XG_GUARD_OK, 5001},    /* the grace */
        {0, 5000, XG_GUARD_OK, 5001}, /* the grace's last moment */
        {0, 5001, XG_GUARD_BODY_TOO_SLOW, 0},
        {3, 20000, XG_GUARD_BODY_TOO_SLOW, 0}, /* a few bytes */
        {1500, 3000, XG_GUARD_OK, 6501},       /* bytes buy time after the grace */
        {3000, 8000, XG_GUARD_OK, 8001},       /* the grace and 3 s worth at the rate */
        {3000, 8001, XG_GUARD_BODY_TOO_SLOW, 0},
        /* a burst buys at most the window (10 s), however large */
        {10000, 10000, XG_GUARD_OK, 10001},
        {1 << 20, 10000, XG_GUARD_OK, 10001},
        {1 << 20, 10001, XG_GUARD_BODY_TOO_SLOW, 0},
        {UINT64_MAX, 10001, XG_GUARD_BODY_TOO_SLOW, 0}, /* no overflow */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct arrival a = {0, cases[i].bytes};
        int64_t due;
        assert_int_equal(body_after(&lim, XG_GUARD_BODY, &a, 1, cases[i].now, &due), cases[i].want);
        if (cases[i].want == XG_GUARD_OK && cases[i].due)
            assert_int_equal(due, cases[i].due);
    }
    struct xg_guard_limits any_rate = lim;
    any_rate.body_min_rate = 0;
    struct xg_guard g = {0};
    xg_guard_body(&any_rate, &g, 0);
    int64_t due;
    assert_int_equal(xg_guard_check(&any_rate, &g, 1000000, &due), XG_GUARD_OK);
    assert_true(due == INT64_MAX);
}

/* The trickle after a burst (#30): 1 MiB minus one byte at once, then one byte every 10 s.
 * The average since the start stays over 1 KiB/s for 17 minutes; the window closes it
 * 10 s after the burst. An honest client at 2x the rate over 10 minutes is never closed,
 * and a steady client in one-byte writes exactly at the rate keeps up too (the carry). */
static void test_body_window(void **state)
{
    (void)state;
    struct xg_guard_limits l = lim;
    l.body_min_rate = 1024;
    struct arrival trickle[64] = {{0, (1 << 20) - 1}};
    for (size_t i = 1; i < 64; i++)
        trickle[i] = (struct arrival){(int64_t)i * 10000, 1};
    int64_t due;
    assert_int_equal(body_after(&l, XG_GUARD_BODY, trickle, 64, 10000, &due), XG_GUARD_OK);
    assert_int_equal(due, 10001);
    assert_int_equal(body_after(&l, XG_GUARD_BODY, trickle, 64, 10001, &due),
                     XG_GUARD_BODY_TOO_SLOW);
    /* the average would still pass: (1 MiB) / 10.001 s is far over 1 KiB/s */

    static struct arrival steady[600];
    for (size_t i = 0; i < 600; i++)
        steady[i] = (struct arrival){(int64_t)i * 1000, 2048};
    assert_int_equal(body_after(&l, XG_GUARD_BODY, steady, 600, 599999, &due), XG_GUARD_OK);
    assert_int_equal(body_after(&l, XG_GUARD_BODY, steady, 600, 599000 + 10001, &due),
                     XG_GUARD_BODY_TOO_SLOW); /* it stopped at 599 s: the window ran out */

    struct xg_guard_limits k = lim; /* 1000 B/s: one byte a millisecond */
    struct xg_guard g = {0};
    xg_guard_body(&k, &g, 0);
    for (int64_t t = 0; t < 20000; t++)
        xg_guard_bytes(&k, &g, 1, t);
    assert_int_equal(xg_guard_check(&k, &g, 20000, &due), XG_GUARD_OK);

    struct xg_guard_limits m = lim; /* 1024 B/s: a byte buys 0.977 ms, the carry adds up */
    m.body_min_rate = 1024;
    xg_guard_body(&m, &g, 0);
    for (int64_t t = 0; t < 20000; t++)
        xg_guard_bytes(&m, &g, 2, t); /* 2000 B/s */
    assert_int_equal(xg_guard_check(&m, &g, 20000, &due), XG_GUARD_OK);
    assert_int_equal(g.paid_until_ms, 20000 - 1 + 10000);
}

/* The absolute deadline: a body as fast as it likes is closed at body_timeout. */
static void test_body_timeout(void **state)
{
    (void)state;
    struct xg_guard_limits l = lim;
    l.body_timeout_ms = 60000;
    static struct arrival fast[120];
    for (size_t i = 0; i < 120; i++)
        fast[i] = (struct arrival){(int64_t)i * 500, 1 << 20};
    static const struct {
        int64_t now;
        enum xg_guard_verdict want;
        int64_t due;
    } cases[] = {
        {0, XG_GUARD_OK, 10001},     {20000, XG_GUARD_OK, 30001},
        {54000, XG_GUARD_OK, 60000}, /* the deadline comes before the window */
        {59999, XG_GUARD_OK, 60000}, {60000, XG_GUARD_BODY_TOO_SLOW, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t due;
        assert_int_equal(body_after(&l, XG_GUARD_BODY, fast, 120, cases[i].now, &due),
                         cases[i].want);
        if (cases[i].want == XG_GUARD_OK)
            assert_int_equal(due, cases[i].due);
    }
    /* an answer has no deadline, and falls under send_min_rate */
    l.send_min_rate = 1000;
    int64_t due;
    assert_int_equal(body_after(&l, XG_GUARD_SEND, fast, 120, 60000, &due), XG_GUARD_OK);
    assert_int_equal(body_after(&l, XG_GUARD_SEND, fast, 120, 59500 + 10001, &due),
                     XG_GUARD_SEND_TOO_SLOW);
    struct arrival none = {0, 0};
    assert_int_equal(body_after(&l, XG_GUARD_SEND, &none, 1, 5001, &due), XG_GUARD_SEND_TOO_SLOW);
    l.send_min_rate = 0;
    assert_int_equal(body_after(&l, XG_GUARD_SEND, &none, 1, 1000000, &due), XG_GUARD_OK);
}

/* The body buffer doubles as bytes arrive, never past the whole body. */
static void test_body_cap(void **state)
{
    (void)state;
    static const struct {
        size_t cap, need, first, want;
    } cases[] = {
        {0, 100, 16384, 100},                  /* a small body: just its size */
        {0, (64 << 20) + 1, 16384, 16384},     /* 64 MiB declared: 16 KiB first */
        {16384, (64 << 20) + 1, 16384, 32768}, /* then doubling */
        {32 << 20, (64 << 20) + 1, 16384, 64 << 20},
        {64 << 20, (64 << 20) + 1, 16384, (64 << 20) + 1}, /* capped at the body */
        {4096, 4000, 16384, 4096},                         /* room already */
        {0, 40000, 40000, 40000},
        {SIZE_MAX / 2 + 1, SIZE_MAX, 1, SIZE_MAX}, /* no overflow */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(xg_guard_body_cap(cases[i].cap, cases[i].need, cases[i].first),
                         cases[i].want);
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
    xg_guard_bytes(&lim, &g, 5, 0); /* not in a body: not counted */
    assert_int_equal(g.bytes, 0);

    struct xg_guard_counts c = {0};
    xg_guard_count(&c, XG_GUARD_HEAD_TIMEOUT);
    xg_guard_count(&c, XG_GUARD_BODY_TOO_SLOW);
    xg_guard_count(&c, XG_GUARD_BODY_TOO_SLOW);
    xg_guard_count(&c, XG_GUARD_OK);
    xg_guard_count(&c, XG_GUARD_SEND_TOO_SLOW);
    xg_guard_count(NULL, XG_GUARD_HEAD_TIMEOUT);
    atomic_fetch_add(&c.refused_over_cap, 4);
    uint64_t n[XG_GUARD_NREASONS];
    xg_guard_counts_read(&c, n);
    assert_int_equal(n[0], 1);
    assert_int_equal(n[1], 2);
    assert_int_equal(n[2], 4);
    assert_int_equal(n[3], 1);
    assert_string_equal(xg_guard_count_reasons[3], "slow_reader");
    assert_string_equal(xg_guard_count_reasons[4], "proxy_full");
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
        cmocka_unit_test(test_head_timeout), cmocka_unit_test(test_body_rate),
        cmocka_unit_test(test_body_window),  cmocka_unit_test(test_body_timeout),
        cmocka_unit_test(test_body_cap),     cmocka_unit_test(test_idle_and_counts),
        cmocka_unit_test(test_key_rule),     cmocka_unit_test(test_cap_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
