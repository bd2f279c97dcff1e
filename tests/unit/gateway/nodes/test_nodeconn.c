/* Table test for gateway/nodeconn's URL rule: which node URLs the gateway's own HTTP/1.1
 * client serves (http://, an IPv4 or [IPv6] literal, an optional port 1–65535, a path) and
 * which it leaves to curl. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdbool.h>

#include "nodes/nodeconn.h"

static uint16_t port_of(const struct nc_target *t)
{
    const struct sockaddr *sa = (const struct sockaddr *)&t->addr;
    return ntohs(sa->sa_family == AF_INET6 ? ((const struct sockaddr_in6 *)sa)->sin6_port
                                           : ((const struct sockaddr_in *)sa)->sin_port);
}

static void test_target_table(void **state)
{
    (void)state;
    struct {
        const char *url;
        bool native;
        uint16_t port;
    } rows[] = {
        {"http://127.0.0.1:18081", true, 18081},
        {"http://127.0.0.1", true, 80},
        {"http://127.0.0.1/", true, 80},
        {"http://127.0.0.1:1/json_rpc", true, 1},
        {"http://127.0.0.1:65535", true, 65535},
        {"http://[::1]:18081", true, 18081},
        {"http://[::1]", true, 80},
        {"http://127.0.0.1:0", false, 0},
        {"http://127.0.0.1:65536", false, 0},
        {"http://127.0.0.1:018081", false, 0}, /* six digits */
        {"http://127.0.0.1:", false, 0},
        {"http://127.0.0.1:80a", false, 0},
        {"http://127.0.0.1:-1", false, 0},
        {"http://[::1]x", false, 0},
        {"http://user@127.0.0.1:18081", false, 0},
        {"http://node.example:18081", false, 0}, /* a host name: curl resolves it */
        {"https://127.0.0.1:18081", false, 0},
        {"http://127.0.0.1:18081?x", false, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct nc_target t;
        print_message("# %s\n", rows[i].url);
        assert_int_equal(nc_target_of(rows[i].url, &t), rows[i].native);
        if (rows[i].native)
            assert_int_equal(port_of(&t), rows[i].port);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
