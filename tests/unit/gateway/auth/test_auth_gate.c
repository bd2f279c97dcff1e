/* Table test for gateway/auth/auth_gate: a failed credential is answered on the head, or
 * after a small body. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>

#include "auth/auth_gate.h"

static void test_decide(void **state)
{
    (void)state;
#define R AUTH_GATE_READ_BODY
#define N AUTH_GATE_ANSWER_NOW
    static const struct {
        struct auth_gate_head h;
        enum auth_gate_action want;
    } cases[] = {
        /* an admitted request reads its body, whatever its size */
        {{AUTH_GATE_OK, false, false, true, 1 << 20, false}, R},
        {{AUTH_GATE_OK, false, true, false, 0, true}, R},
        /* a stale nonce: the password was right */
        {{AUTH_GATE_STALE, false, false, true, 1 << 20, false}, R},
        /* no credential: no body, a small one (id echo, wallets' retry), a large one */
        {{AUTH_GATE_UNAUTHORIZED, false, false, false, 0, false}, N},
        {{AUTH_GATE_UNAUTHORIZED, false, false, true, 0, false}, N},
        {{AUTH_GATE_UNAUTHORIZED, false, false, true, 60, false}, R},
        {{AUTH_GATE_UNAUTHORIZED, false, false, true, AUTH_GATE_SMALL_BODY, false}, R},
        {{AUTH_GATE_UNAUTHORIZED, false, false, true, AUTH_GATE_SMALL_BODY + 1, false}, N},
        {{AUTH_GATE_UNAUTHORIZED, false, false, true, 1 << 20, false}, N},
        {{AUTH_GATE_UNAUTHORIZED, false, true, false, 0, false}, N}, /* chunked */
        {{AUTH_GATE_UNAUTHORIZED, false, false, true, 60, true}, N}, /* Expect: 100-continue */
        {{AUTH_GATE_MALFORMED, false, false, true, 60, false}, R},
        {{AUTH_GATE_MALFORMED, false, false, true, 1 << 20, false}, N},
        {{AUTH_GATE_MALFORMED, true, false, true, 1 << 20, false}, N},
        /* an XMR402 agent path: billing may serve it once paid */
        {{AUTH_GATE_UNAUTHORIZED, true, false, true, 1 << 20, false}, R},
        {{AUTH_GATE_UNAUTHORIZED, true, true, false, 0, true}, R},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(auth_gate_decide(&cases[i].h), cases[i].want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_decide)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
