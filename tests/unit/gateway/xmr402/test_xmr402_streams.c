/* Tests for gateway/xmr402/xmr402_streams: a payment holds at most streams_per_payment
 * event streams, places come back when given, and the table never holds more txids than
 * its capacity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "xmr402/xmr402_streams.h"

#define TX_A "aa00000000000000000000000000000000000000000000000000000000000000"
#define TX_B "bb00000000000000000000000000000000000000000000000000000000000000"
#define TX_C "cc00000000000000000000000000000000000000000000000000000000000000"

static void test_admit(void **state)
{
    (void)state;
    static const struct {
        int held, per_payment;
        bool want;
    } rows[] = {
        {0, 2, true}, {1, 2, true}, {2, 2, false}, {3, 2, false}, {0, 1, true}, {1, 1, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(xmr402_streams_admit(rows[i].held, rows[i].per_payment), rows[i].want);
}

static void test_per_payment(void **state)
{
    (void)state;
    struct xmr402_streams *s = xmr402_streams_new(8, 2);
    assert_non_null(s);
    assert_true(xmr402_streams_take(s, TX_A));
    assert_true(xmr402_streams_take(s, TX_A));
    assert_false(xmr402_streams_take(s, TX_A)); /* the payment's share is taken */
    assert_int_equal(xmr402_streams_held(s, TX_A), 2);
    assert_true(xmr402_streams_take(s, TX_B)); /* another payment is not held up */
    xmr402_streams_give(s, TX_A);
    assert_int_equal(xmr402_streams_held(s, TX_A), 1);
    assert_true(xmr402_streams_take(s, TX_A)); /* a place given back is there again */
    xmr402_streams_give(s, TX_A);
    xmr402_streams_give(s, TX_A);
    assert_int_equal(xmr402_streams_held(s, TX_A), 0);
    xmr402_streams_give(s, TX_C); /* one never taken: nothing happens */
    assert_int_equal(xmr402_streams_held(s, TX_B), 1);
    xmr402_streams_free(s);
}

static void test_capacity(void **state)
{
    (void)state;
    struct xmr402_streams *s = xmr402_streams_new(2, 1);
    assert_non_null(s);
    assert_true(xmr402_streams_take(s, TX_A));
    assert_true(xmr402_streams_take(s, TX_B));
    assert_false(xmr402_streams_take(s, TX_C)); /* full: as many txids as places */
    xmr402_streams_give(s, TX_A);
    assert_true(xmr402_streams_take(s, TX_C)); /* the freed entry is reused */
    xmr402_streams_free(s);
    assert_true(xmr402_streams_take(NULL, TX_A)); /* no table: no streams rule */
    xmr402_streams_give(NULL, TX_A);
    xmr402_streams_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admit),
        cmocka_unit_test(test_per_payment),
        cmocka_unit_test(test_capacity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
