/* Tests for billing/client_prefix: the keys an address is counted by, for both families,
 * at the default and at other lengths, IPv4-mapped IPv6, spellings of one address, and
 * text that is no address. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/client_prefix.h"

static const struct {
    const char *addr;
    int v4, v6;
    bool ip;
    const char *key;
} cases[] = {
    /* IPv4 by address, by /24 */
    {"203.0.113.7", 32, 64, true, "4:203.0.113.7/32"},
    {"203.0.113.7", 24, 48, true, "4:203.0.113.0/24"},
    {"203.0.113.255", 24, 48, true, "4:203.0.113.0/24"},
    {"203.0.113.7", 20, 48, true, "4:203.0.112.0/20"},
    {"203.0.113.7", 1, 48, true, "4:128.0.0.0/1"},
    {"127.0.5.9", 24, 48, true, "4:127.0.5.0/24"},
    /* IPv4-mapped IPv6 counts as IPv4, whatever the IPv6 length */
    {"::ffff:203.0.113.7", 32, 64, true, "4:203.0.113.7/32"},
    {"::ffff:203.0.113.7", 24, 48, true, "4:203.0.113.0/24"},
    {"::FFFF:cb00:7107", 24, 128, true, "4:203.0.113.0/24"},
    /* IPv6 by /64, by /48; spellings of one address meet */
    {"2001:db8:1:2:3:4:5:6", 32, 64, true, "6:2001:db8:1:2::/64"},
    {"2001:0db8:0001:0002:ffff::1", 32, 64, true, "6:2001:db8:1:2::/64"},
    {"2001:DB8:1:2::", 32, 64, true, "6:2001:db8:1:2::/64"},
    {"2001:db8:1:2:3:4:5:6", 24, 48, true, "6:2001:db8:1::/48"},
    {"2001:db8:1:ffff::9", 24, 56, true, "6:2001:db8:1:ff00::/56"},
    {"2001:db8:1:2:3:4:5:6", 32, 128, true, "6:2001:db8:1:2:3:4:5:6/128"},
    {"::1", 32, 64, true, "6:::/64"},
    /* lengths out of range are clamped to the family */
    {"203.0.113.7", 40, 200, true, "4:203.0.113.7/32"},
    {"2001:db8::1", 40, 200, true, "6:2001:db8::1/128"},
    /* no address: counted as itself */
    {"unknown", 32, 64, false, "unknown"},
    {"", 32, 64, false, ""},
    {"203.0.113", 32, 64, false, "203.0.113"},
    {"203.0.113.7:80", 32, 64, false, "203.0.113.7:80"},
    {"[::1]", 32, 64, false, "[::1]"},
};

static void test_keys(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char key[CLIENT_PREFIX_KEY_SIZE];
        bool ip = client_prefix_key(cases[i].addr, cases[i].v4, cases[i].v6, key);
        if (ip != cases[i].ip || strcmp(key, cases[i].key) != 0)
            fail_msg("%s /%d /%d: got %s \"%s\", want %s \"%s\"", cases[i].addr, cases[i].v4,
                     cases[i].v6, ip ? "ip" : "text", key, cases[i].ip ? "ip" : "text",
                     cases[i].key);
    }
}

static void test_both_keys_default(void **state)
{
    (void)state;
    struct client_prefix_policy p = CLIENT_PREFIX_POLICY_DEFAULT;
    char client[CLIENT_PREFIX_KEY_SIZE], network[CLIENT_PREFIX_KEY_SIZE];
    assert_true(client_prefix_policy_ok(&p));
    assert_true(client_prefix_keys("198.51.100.20", &p, client, network));
    assert_string_equal(client, "4:198.51.100.20/32");
    assert_string_equal(network, "4:198.51.100.0/24");
    assert_true(client_prefix_keys("2001:db8:aa:bb:1::2", &p, client, network));
    assert_string_equal(client, "6:2001:db8:aa:bb::/64");
    assert_string_equal(network, "6:2001:db8:aa::/48");
    assert_false(client_prefix_keys("unknown", &p, client, network));
    assert_string_equal(client, "unknown");
    assert_string_equal(network, "unknown");
}

static void test_policy_ok(void **state)
{
    (void)state;
    static const struct {
        struct client_prefix_policy p;
        bool ok;
    } policies[] = {
        {{32, 64, 24, 48}, true},   {{32, 128, 32, 128}, true}, {{24, 56, 16, 32}, true},
        {{24, 64, 32, 48}, false}, /* a network narrower than its client */
        {{32, 64, 24, 72}, false},  {{0, 64, 24, 48}, false},   {{33, 64, 24, 48}, false},
        {{32, 129, 24, 48}, false}, {{32, 64, 0, 48}, false},
    };
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        if (client_prefix_policy_ok(&policies[i].p) != policies[i].ok)
            fail_msg("policy %zu: want %s", i, policies[i].ok ? "ok" : "refused");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_both_keys_default),
        cmocka_unit_test(test_policy_ok),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
