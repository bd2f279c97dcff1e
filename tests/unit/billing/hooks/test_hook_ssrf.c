/* Tests for billing/hook_ssrf: the class of every kind of address a webhook URL could
 * lead to (IPv4, IPv6, IPv4 inside IPv6), the operator's allow list, and the URL's
 * shape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "hooks/hook_ssrf.h"

static const struct {
    const char *addr;
    enum hook_ssrf_class cls;
} classes[] = {
    {"8.8.8.8", HOOK_SSRF_PUBLIC},
    {"1.1.1.1", HOOK_SSRF_PUBLIC},
    {"100.63.255.255", HOOK_SSRF_PUBLIC},
    {"100.128.0.0", HOOK_SSRF_PUBLIC},
    {"172.15.255.255", HOOK_SSRF_PUBLIC},
    {"172.32.0.0", HOOK_SSRF_PUBLIC},
    {"223.255.255.255", HOOK_SSRF_PUBLIC},
    {"127.0.0.1", HOOK_SSRF_LOOPBACK},
    {"127.255.255.254", HOOK_SSRF_LOOPBACK},
    {"10.0.0.1", HOOK_SSRF_PRIVATE},
    {"172.16.0.1", HOOK_SSRF_PRIVATE},
    {"172.31.255.255", HOOK_SSRF_PRIVATE},
    {"192.168.1.1", HOOK_SSRF_PRIVATE},
    {"169.254.169.254", HOOK_SSRF_LINK_LOCAL},
    {"100.64.0.1", HOOK_SSRF_CGNAT},
    {"100.127.255.255", HOOK_SSRF_CGNAT},
    {"224.0.0.1", HOOK_SSRF_MULTICAST},
    {"239.255.255.250", HOOK_SSRF_MULTICAST},
    {"0.0.0.0", HOOK_SSRF_UNSPECIFIED},
    {"0.1.2.3", HOOK_SSRF_UNSPECIFIED},
    {"255.255.255.255", HOOK_SSRF_RESERVED},
    {"240.0.0.1", HOOK_SSRF_RESERVED},
    {"192.0.2.10", HOOK_SSRF_RESERVED},
    {"198.18.0.1", HOOK_SSRF_RESERVED},
    {"192.0.0.8", HOOK_SSRF_RESERVED},
    {"2001:4860:4860::8888", HOOK_SSRF_PUBLIC},
    {"2606:4700::1111", HOOK_SSRF_PUBLIC},
    {"::", HOOK_SSRF_UNSPECIFIED},
    {"::1", HOOK_SSRF_LOOPBACK},
    {"fe80::1", HOOK_SSRF_LINK_LOCAL},
    {"febf::1", HOOK_SSRF_LINK_LOCAL},
    {"fc00::1", HOOK_SSRF_PRIVATE},
    {"fd12:3456::1", HOOK_SSRF_PRIVATE},
    {"fec0::1", HOOK_SSRF_PRIVATE},
    {"ff02::1", HOOK_SSRF_MULTICAST},
    {"2001:db8::1", HOOK_SSRF_RESERVED},
    {"2001:0::1", HOOK_SSRF_RESERVED},
    {"100::1", HOOK_SSRF_RESERVED},
    {"::7f00:1", HOOK_SSRF_RESERVED}, /* IPv4-compatible (deprecated) */
    /* IPv4 carried in IPv6 is judged as that IPv4 */
    {"::ffff:127.0.0.1", HOOK_SSRF_LOOPBACK},
    {"::ffff:10.1.2.3", HOOK_SSRF_PRIVATE},
    {"::ffff:8.8.8.8", HOOK_SSRF_PUBLIC},
    {"64:ff9b::7f00:1", HOOK_SSRF_LOOPBACK},
    {"64:ff9b::a9fe:a9fe", HOOK_SSRF_LINK_LOCAL},
    {"64:ff9b::808:808", HOOK_SSRF_PUBLIC},
    {"64:ff9b:1::1", HOOK_SSRF_PRIVATE},
    {"2002:7f00:1::1", HOOK_SSRF_LOOPBACK},
    {"2002:c0a8:101::1", HOOK_SSRF_PRIVATE},
    {"2002:808:808::1", HOOK_SSRF_PUBLIC},
    /* IPv4-translated (SIIT, RFC 2765): ::ffff:0:a.b.c.d */
    {"::ffff:0:127.0.0.1", HOOK_SSRF_LOOPBACK},
    {"::ffff:0:7f00:1", HOOK_SSRF_LOOPBACK},
    {"::ffff:0:10.0.0.1", HOOK_SSRF_PRIVATE},
    {"::ffff:0:169.254.169.254", HOOK_SSRF_LINK_LOCAL},
    {"::ffff:0:0.0.0.0", HOOK_SSRF_UNSPECIFIED},
    {"::ffff:0:8.8.8.8", HOOK_SSRF_PUBLIC},
    /* IPv4-compatible (deprecated): reserved whatever it carries */
    {"::127.0.0.1", HOOK_SSRF_RESERVED},
    {"::8.8.8.8", HOOK_SSRF_RESERVED},
    /* NAT64 written with a dotted tail */
    {"64:ff9b::127.0.0.1", HOOK_SSRF_LOOPBACK},
    {"64:ff9b::192.168.0.1", HOOK_SSRF_PRIVATE},
    /* ISATAP under a public prefix: judged by its IPv4 end when that is not public */
    {"2a00:1450::5efe:127.0.0.1", HOOK_SSRF_LOOPBACK},
    {"2a00:1450::200:5efe:10.1.2.3", HOOK_SSRF_PRIVATE},
    {"2a00:1450::5efe:8.8.8.8", HOOK_SSRF_PUBLIC},
    {"fe80::5efe:8.8.8.8", HOOK_SSRF_LINK_LOCAL},
    /* a look-alike that is no embedding stays public */
    {"2a00:1450::ffff:0:7f00:1", HOOK_SSRF_PUBLIC},
};

static struct xg_proxy_ip ip_of(const char *text)
{
    struct xg_proxy_ip ip;
    assert_true(xg_proxy_ip_parse(text, strlen(text), &ip));
    return ip;
}

static void test_classes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        struct xg_proxy_ip ip = ip_of(classes[i].addr);
        enum hook_ssrf_class got = hook_ssrf_classify(&ip);
        if (got != classes[i].cls)
            fail_msg("%s: %s, expected %s", classes[i].addr, hook_ssrf_class_name(got),
                     hook_ssrf_class_name(classes[i].cls));
        const char *why = NULL;
        assert_int_equal(hook_ssrf_allowed(NULL, &ip, &why), classes[i].cls == HOOK_SSRF_PUBLIC);
        assert_string_equal(why, hook_ssrf_class_name(classes[i].cls));
    }
}

static void test_no_family_refused(void **state)
{
    (void)state;
    struct xg_proxy_ip none = {0};
    assert_int_equal(hook_ssrf_classify(&none), HOOK_SSRF_UNSPECIFIED);
    struct xg_proxy_trust all;
    char err[128];
    assert_true(xg_proxy_trust_parse("0.0.0.0/0, ::/0", &all, err, sizeof err));
    assert_false(hook_ssrf_allowed(&all, &none, NULL));
}

static void test_allow_list(void **state)
{
    (void)state;
    struct xg_proxy_trust allow;
    char err[128];
    assert_true(xg_proxy_trust_parse("127.0.0.0/8, ::1, 10.1.0.0/16", &allow, err, sizeof err));
    static const struct {
        const char *addr;
        bool allowed;
    } rows[] = {
        {"127.0.0.1", true},        {"127.8.9.10", true},       {"::1", true},
        {"::ffff:127.0.0.1", true}, {"10.1.200.3", true},       {"10.2.0.1", false},
        {"192.168.0.1", false},     {"169.254.169.254", false}, {"fe80::1", false},
        {"8.8.8.8", true}, /* public stays allowed */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct xg_proxy_ip ip = ip_of(rows[i].addr);
        if (hook_ssrf_allowed(&allow, &ip, NULL) != rows[i].allowed)
            fail_msg("%s: expected %s", rows[i].addr, rows[i].allowed ? "allowed" : "refused");
    }
    struct xg_proxy_trust empty;
    assert_true(xg_proxy_trust_parse("", &empty, err, sizeof err));
    struct xg_proxy_ip lo = ip_of("127.0.0.1");
    assert_false(hook_ssrf_allowed(&empty, &lo, NULL));
}

static void test_url_shape(void **state)
{
    (void)state;
    static const struct {
        const char *url;
        const char *host; /* NULL: refused */
    } rows[] = {
        {"https://example.com/hook", "example.com"},
        {"http://example.com", "example.com"},
        {"HTTPS://Example.COM:8443/x?y=1", "Example.COM"},
        {"http://127.0.0.1:9000/hook", "127.0.0.1"},
        {"http://[::1]:9000/hook", "::1"},
        {"http://[2001:db8::1]", "2001:db8::1"},
        {"http://example.com#frag", "example.com"},
        {"ftp://example.com/", NULL},
        {"file:///etc/passwd", NULL},
        {"gopher://127.0.0.1:6379/_x", NULL},
        {"example.com/hook", NULL},
        {"http://", NULL},
        {"http:///path", NULL},
        {"http://:80/", NULL},
        {"http://user:pw@example.com/", NULL},
        {"http://example.com@127.0.0.1/", NULL},
        {"http://exa mple.com/", NULL},
        {"http://example.com/\r\nX-Injected: 1", NULL},
        {"http://[::1/", NULL},
        {"http://[::1]junk/", NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char host[HOOK_SSRF_HOST_MAX] = "", err[128] = "";
        bool ok = hook_ssrf_url_check(rows[i].url, host, sizeof host, err, sizeof err);
        if (ok != (rows[i].host != NULL))
            fail_msg("%s: %s", rows[i].url, ok ? "accepted" : err);
        if (ok)
            assert_string_equal(host, rows[i].host);
        else
            assert_true(strncmp(err, "webhook_url ", 12) == 0);
    }
}

static void test_url_length(void **state)
{
    (void)state;
    char url[HOOK_SSRF_URL_MAX + 2], host[HOOK_SSRF_HOST_MAX], err[128];
    memset(url, 'a', sizeof url);
    memcpy(url, "https://example.com/", 20);
    url[HOOK_SSRF_URL_MAX] = '\0';
    assert_true(hook_ssrf_url_check(url, host, sizeof host, err, sizeof err));
    url[HOOK_SSRF_URL_MAX] = 'a';
    url[HOOK_SSRF_URL_MAX + 1] = '\0';
    assert_false(hook_ssrf_url_check(url, host, sizeof host, err, sizeof err));
    char longhost[HOOK_SSRF_HOST_MAX + 20];
    memset(longhost, 'h', sizeof longhost);
    memcpy(longhost, "http://", 7);
    longhost[sizeof longhost - 1] = '\0';
    assert_false(hook_ssrf_url_check(longhost, host, sizeof host, err, sizeof err));
}

/* At creation: shape and written addresses only; a name passes without a resolver call
 * (one that does not exist, or whose name server never answers, costs the API nothing). */
static void test_url_admit(void **state)
{
    (void)state;
    struct xg_proxy_trust allow;
    char err[160];
    assert_true(xg_proxy_trust_parse("10.1.0.0/16", &allow, err, sizeof err));
    static const struct {
        const char *url;
        bool ok;
    } rows[] = {
        {"https://hooks.example.com/x", true},
        {"https://no-such-host.invalid/x", true}, /* judged at delivery, not here */
        {"http://8.8.8.8/x", true},
        {"http://[2a00:1450::1]:8080/x", true},
        {"http://127.0.0.1/x", false},
        {"http://[::1]/x", false},
        {"http://[::ffff:0:127.0.0.1]/x", false}, /* IPv4-translated */
        {"http://[::ffff:0:7f00:1]/x", false},
        {"http://[64:ff9b::10.0.0.1]/x", false},
        {"http://[2002:7f00:1::1]/x", false},
        {"http://169.254.169.254/latest", false},
        {"http://2130706433/x", false}, /* 127.0.0.1 as a resolver reads it */
        {"http://0x7f.1/x", false},
        {"http://127.1/x", false},
        {"http://017700000001/x", false}, /* octal */
        {"http://0/x", false},
        {"http://localhost/x", false},
        {"http://LocalHost./x", false},
        {"http://api.localhost:9/x", false},
        {"http://notlocalhost/x", true},
        {"http://10.1.2.3/x", true}, /* the allow list */
        {"http://10.2.0.1/x", false},
        {"ftp://8.8.8.8/x", false},
        {"http://user@8.8.8.8/x", false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        err[0] = '\0';
        bool ok = hook_ssrf_url_admit(&allow, rows[i].url, err, sizeof err);
        if (ok != rows[i].ok)
            fail_msg("%s: %s (%s)", rows[i].url, ok ? "admitted" : "refused", err);
        if (!ok)
            assert_true(strncmp(err, "webhook_url", 11) == 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),    cmocka_unit_test(test_no_family_refused),
        cmocka_unit_test(test_allow_list), cmocka_unit_test(test_url_shape),
        cmocka_unit_test(test_url_length), cmocka_unit_test(test_url_admit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
