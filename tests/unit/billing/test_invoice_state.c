/* Tests for billing/invoice_state: every transition and edge of the invoice state
 * machine, as a table, plus the arithmetic edges (2% tolerance, overflow, time locks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "invoice_state.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define XMR      1000000000000LL /* piconero */
#define AMOUNT   XMR
#define EXPIRES  10000
#define GRACE    3600
#define NOW      5000 /* before expiry */
#define HEIGHT   500
#define REQUIRED 10

#define POOL(a, t)                                                                                 \
    {                                                                                              \
        (a), 0, INV_PAY_POOL, 0, (t)                                                               \
    }
#define CONF(a, k, t)                                                                              \
    {                                                                                              \
        (a), (k), INV_PAY_CONFIRMED, 0, (t)                                                        \
    }
#define GONE(a, t)                                                                                 \
    {                                                                                              \
        (a), 0, INV_PAY_GONE, 0, (t)                                                               \
    }
#define DSPEND(a, t)                                                                               \
    {                                                                                              \
        (a), 0, INV_PAY_DOUBLE_SPEND, 0, (t)                                                       \
    }
#define LOCKED(a, k, u, t)                                                                         \
    {                                                                                              \
        (a), (k), INV_PAY_CONFIRMED, (u), (t)                                                      \
    }

struct inv_case {
    const char *name;
    enum inv_state current;
    int64_t amount, required, now;
    struct inv_payment pays[4];
    size_t npays;
    /* expected */
    enum inv_state state;
    int64_t paid, remaining, confirmations, overpaid;
    enum inv_late late;
    bool provision;
};

static const struct inv_case cases[] = {
    {"nothing yet",
     INV_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {{0}},
     0,
     INV_PENDING,
     0,
     AMOUNT,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"nothing by the deadline: expired",
     INV_PENDING,
     AMOUNT,
     REQUIRED,
     EXPIRES + 1,
     {{0}},
     0,
     INV_EXPIRED,
     0,
     AMOUNT,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"exactly at the deadline: still pending",
     INV_PENDING,
     AMOUNT,
     REQUIRED,
     EXPIRES,
     {{0}},
     0,
     INV_PENDING,
     0,
     AMOUNT,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"exact payment in the pool: seen",
     INV_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {POOL(AMOUNT, 100)},
     1,
     INV_SEEN,
     AMOUNT,
     0,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"mined, 1 confirmation: confirming",
     INV_SEEN,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT, 1, 100)},
     1,
     INV_CONFIRMING,
     AMOUNT,
     0,
     1,
     0,
     INV_LATE_NONE,
     false},
    {"9 of 10: confirming",
     INV_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT, 9, 100)},
     1,
     INV_CONFIRMING,
     AMOUNT,
     0,
     9,
     0,
     INV_LATE_NONE,
     false},
    {"10 of 10: paid, provision",
     INV_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT, 10, 100)},
     1,
     INV_PAID,
     AMOUNT,
     0,
     10,
     0,
     INV_LATE_NONE,
     true},
    {"confirmations reached after the deadline: still paid",
     INV_CONFIRMING,
     AMOUNT,
     REQUIRED,
     EXPIRES + GRACE + 99,
     {CONF(AMOUNT, 12, 100)},
     1,
     INV_PAID,
     AMOUNT,
     0,
     12,
     0,
     INV_LATE_NONE,
     true},
    {"provisioned is sticky",
     INV_PROVISIONED,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT, 30, 100)},
     1,
     INV_PROVISIONED,
     AMOUNT,
     0,
     30,
     0,
     INV_LATE_NONE,
     false},
    {"provisioned stays even if the tx later vanished",
     INV_PROVISIONED,
     AMOUNT,
     REQUIRED,
     NOW,
     {GONE(AMOUNT, 100)},
     1,
     INV_PROVISIONED,
     0,
     0,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"free tier: provisioned at once",
     INV_PENDING,
     0,
     0,
     NOW,
     {{0}},
     0,
     INV_PAID,
     0,
     0,
     0,
     0,
     INV_LATE_NONE,
     true},
    {"zero confirmations required: pool payment provisions",
     INV_PENDING,
     AMOUNT,
     0,
     NOW,
     {POOL(AMOUNT, 100)},
     1,
     INV_PAID,
     AMOUNT,
     0,
     0,
     0,
     INV_LATE_NONE,
     true},
    {"1% short: accepted",
     INV_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT / 100 * 99, 10, 100)},
     1,
     INV_PAID,
     AMOUNT / 100 * 99,
     0,
     10,
     0,
     INV_LATE_NONE,
     true},
    {"exactly 2% short: accepted",
     INV_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {POOL(AMOUNT / 100 * 98, 100)},
     1,
     INV_SEEN,
     AMOUNT / 100 * 98,
     0,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"2% plus one piconero short: underpaid",
     INV_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {POOL(AMOUNT / 100 * 98 - 1, 100)},
     1,
     INV_UNDERPAID,
     AMOUNT / 100 * 98 - 1,
     AMOUNT / 50 + 1,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"5% short: underpaid with remaining",
     INV_SEEN,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT / 100 * 95, 3, 100)},
     1,
     INV_UNDERPAID,
     AMOUNT / 100 * 95,
     AMOUNT / 20,
     3,
     0,
     INV_LATE_NONE,
     false},
    {"second payment covers: seen at the lower count",
     INV_UNDERPAID,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT / 100 * 95, 3, 100), POOL(AMOUNT / 20, 200)},
     2,
     INV_SEEN,
     AMOUNT,
     0,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"two payments add up, both deep: provision at the smaller count",
     INV_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT / 2, 15, 100), CONF(AMOUNT / 2, 10, 200)},
     2,
     INV_PAID,
     AMOUNT,
     0,
     10,
     0,
     INV_LATE_NONE,
     true},
    {"two payments, the second shallower: confirming at its count",
     INV_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT / 2, 15, 100), CONF(AMOUNT / 2, 4, 200)},
     2,
     INV_CONFIRMING,
     AMOUNT,
     0,
     4,
     0,
     INV_LATE_NONE,
     false},
    {"overpaid: recorded",
     INV_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT + 12345, 10, 100)},
     1,
     INV_PAID,
     AMOUNT + 12345,
     0,
     10,
     12345,
     INV_LATE_NONE,
     true},
    {"full payment deep, an extra one in the pool does not hold it back",
     INV_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT, 11, 100), POOL(5, 300)},
     2,
     INV_PAID,
     AMOUNT + 5,
     0,
     11,
     5,
     INV_LATE_NONE,
     true},
    {"pool tx left the pool: reverted",
     INV_SEEN,
     AMOUNT,
     REQUIRED,
     NOW,
     {GONE(AMOUNT, 100)},
     1,
     INV_REVERTED,
     0,
     AMOUNT,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"confirmed tx reorged out: reverted",
     INV_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {GONE(AMOUNT, 100)},
     1,
     INV_REVERTED,
     0,
     AMOUNT,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"reverted, then paid again: seen",
     INV_REVERTED,
     AMOUNT,
     REQUIRED,
     NOW,
     {GONE(AMOUNT, 100), POOL(AMOUNT, 300)},
     2,
     INV_SEEN,
     AMOUNT,
     0,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"reverted past the deadline: expired",
     INV_REVERTED,
     AMOUNT,
     REQUIRED,
     EXPIRES + 1,
     {GONE(AMOUNT, 100)},
     1,
     INV_EXPIRED,
     0,
     AMOUNT,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"one of two gone: underpaid",
     INV_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {GONE(AMOUNT / 2, 100), CONF(AMOUNT / 2, 5, 100)},
     2,
     INV_UNDERPAID,
     AMOUNT / 2,
     AMOUNT / 2,
     5,
     0,
     INV_LATE_NONE,
     false},
    {"double spend seen: not counted",
     INV_SEEN,
     AMOUNT,
     REQUIRED,
     NOW,
     {DSPEND(AMOUNT, 100)},
     1,
     INV_REVERTED,
     0,
     AMOUNT,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"time-locked by height: not counted",
     INV_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {LOCKED(AMOUNT, 20, HEIGHT + 100, 100)},
     1,
     INV_PENDING,
     0,
     AMOUNT,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"time-locked by time: not counted",
     INV_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {LOCKED(AMOUNT, 20, 600000000 + NOW, 100)},
     1,
     INV_PENDING,
     0,
     AMOUNT,
     0,
     0,
     INV_LATE_NONE,
     false},
    {"unlock height already passed: counted",
     INV_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {LOCKED(AMOUNT, 20, HEIGHT - 1, 100)},
     1,
     INV_PAID,
     AMOUNT,
     0,
     20,
     0,
     INV_LATE_NONE,
     true},
    {"late, within grace, covers: late while confirming",
     INV_EXPIRED,
     AMOUNT,
     REQUIRED,
     EXPIRES + 60,
     {POOL(AMOUNT, EXPIRES + 30)},
     1,
     INV_LATE,
     AMOUNT,
     0,
     0,
     0,
     INV_LATE_HONOURED,
     false},
    {"late, within grace, confirmed: honoured, provision",
     INV_LATE,
     AMOUNT,
     REQUIRED,
     EXPIRES + GRACE * 2,
     {CONF(AMOUNT, 10, EXPIRES + 30)},
     1,
     INV_PAID,
     AMOUNT,
     0,
     10,
     0,
     INV_LATE_HONOURED,
     true},
    {"late, within grace, not enough yet: late with remaining",
     INV_EXPIRED,
     AMOUNT,
     REQUIRED,
     EXPIRES + 60,
     {POOL(AMOUNT / 2, EXPIRES + 30)},
     1,
     INV_LATE,
     AMOUNT / 2,
     AMOUNT / 2,
     0,
     0,
     INV_LATE_HONOURED,
     false},
    {"late, not enough, grace over: for the operator",
     INV_LATE,
     AMOUNT,
     REQUIRED,
     EXPIRES + GRACE + 1,
     {CONF(AMOUNT / 2, 3, EXPIRES + 30)},
     1,
     INV_LATE,
     AMOUNT / 2,
     AMOUNT / 2,
     3,
     0,
     INV_LATE_OPERATOR,
     false},
    {"paid after the grace period: recorded, never counted",
     INV_EXPIRED,
     AMOUNT,
     REQUIRED,
     EXPIRES + GRACE + 100,
     {CONF(AMOUNT, 20, EXPIRES + GRACE + 1)},
     1,
     INV_LATE,
     0,
     AMOUNT,
     0,
     0,
     INV_LATE_OPERATOR,
     false},
    {"on-time part plus late rest within grace: honoured",
     INV_UNDERPAID,
     AMOUNT,
     REQUIRED,
     EXPIRES + 100,
     {CONF(AMOUNT / 2, 12, 100), CONF(AMOUNT / 2, 10, EXPIRES + 50)},
     2,
     INV_PAID,
     AMOUNT,
     0,
     10,
     0,
     INV_LATE_HONOURED,
     true},
    {"underpaid, grace not over: still underpaid",
     INV_UNDERPAID,
     AMOUNT,
     REQUIRED,
     EXPIRES + GRACE,
     {CONF(AMOUNT / 2, 40, 100)},
     1,
     INV_UNDERPAID,
     AMOUNT / 2,
     AMOUNT / 2,
     40,
     0,
     INV_LATE_NONE,
     false},
    {"underpaid, grace over: expired with the money kept",
     INV_UNDERPAID,
     AMOUNT,
     REQUIRED,
     EXPIRES + GRACE + 1,
     {CONF(AMOUNT / 2, 40, 100)},
     1,
     INV_EXPIRED,
     AMOUNT / 2,
     AMOUNT / 2,
     40,
     0,
     INV_LATE_NONE,
     false},
    {"seen just before the deadline is on time",
     INV_PENDING,
     AMOUNT,
     REQUIRED,
     EXPIRES + 5,
     {POOL(AMOUNT, EXPIRES)},
     1,
     INV_SEEN,
     AMOUNT,
     0,
     0,
     0,
     INV_LATE_NONE,
     false},
};

static void check_case(const struct inv_case *c)
{
    struct inv_input in = {
        .current = c->current,
        .amount = c->amount,
        .confirmations_required = c->required,
        .expires_at = EXPIRES,
        .late_grace = GRACE,
        .now = c->now,
        .chain_height = HEIGHT,
        .payments = c->pays,
        .npayments = c->npays,
    };
    struct inv_outcome out = inv_evaluate(&in);
    if (out.state != c->state || out.paid != c->paid || out.remaining != c->remaining ||
        out.confirmations != c->confirmations || out.overpaid != c->overpaid ||
        out.late != c->late || out.provision != c->provision) {
        print_error("case \"%s\": got state %s paid %lld remaining %lld conf %lld over %lld "
                    "late %d provision %d\n",
                    c->name, inv_state_name(out.state), (long long)out.paid,
                    (long long)out.remaining, (long long)out.confirmations, (long long)out.overpaid,
                    (int)out.late, (int)out.provision);
        fail();
    }
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        check_case(&cases[i]);
}

/* The same verdict as the definition paid*100 >= amount*98, computed in 128 bits. */
static void test_min_accepted_matches_definition(void **state)
{
    (void)state;
    static const int64_t amounts[] = {0,
                                      1,
                                      49,
                                      50,
                                      51,
                                      99,
                                      100,
                                      101,
                                      12345,
                                      XMR,
                                      XMR + 7,
                                      INT64_MAX / 98,
                                      INT64_MAX / 50,
                                      INT64_MAX - 1,
                                      INT64_MAX};
    for (size_t i = 0; i < ARRAY_LEN(amounts); i++) {
        int64_t a = amounts[i];
        int64_t m = inv_min_accepted(a);
        assert_true((__int128)m * 100 >= (__int128)a * 98);
        if (m > 0)
            assert_false((__int128)(m - 1) * 100 >= (__int128)a * 98);
    }
}

static void test_huge_amounts_do_not_overflow(void **state)
{
    (void)state;
    struct inv_payment pays[] = {CONF(INT64_MAX - 10, 10, 1), CONF(INT64_MAX - 10, 10, 1)};
    struct inv_input in = {.current = INV_PENDING,
                           .amount = INT64_MAX,
                           .confirmations_required = 10,
                           .expires_at = EXPIRES,
                           .late_grace = INT64_MAX,
                           .now = NOW,
                           .chain_height = HEIGHT,
                           .payments = pays,
                           .npayments = 2};
    struct inv_outcome out = inv_evaluate(&in);
    assert_int_equal(out.state, INV_PAID);
    assert_true(out.provision);
    assert_true(out.paid == INT64_MAX); /* saturated, not wrapped */
    assert_int_equal(out.remaining, 0);
}

static void test_time_locked(void **state)
{
    (void)state;
    assert_false(inv_time_locked(0, 100, 1000));
    assert_false(inv_time_locked(100, 100, 1000));
    assert_true(inv_time_locked(101, 100, 1000));
    assert_true(inv_time_locked(499999999, 100, 1000));
    assert_false(inv_time_locked(500000000, 100, 600000000));
    assert_true(inv_time_locked(600000001, 100, 600000000));
}

static void test_names_round_trip(void **state)
{
    (void)state;
    for (int s = INV_PENDING; s <= INV_REVERTED; s++) {
        enum inv_state back;
        assert_true(inv_state_parse(inv_state_name((enum inv_state)s), &back));
        assert_int_equal(back, s);
    }
    for (int s = INV_PAY_POOL; s <= INV_PAY_DOUBLE_SPEND; s++) {
        enum inv_pay_state back;
        assert_true(inv_pay_state_parse(inv_pay_state_name((enum inv_pay_state)s), &back));
        assert_int_equal(back, s);
    }
    enum inv_state st;
    assert_false(inv_state_parse("active", &st));
    assert_false(inv_state_parse(NULL, &st));
    assert_true(inv_state_open(INV_REVERTED));
    assert_true(inv_state_open(INV_UNDERPAID));
    assert_false(inv_state_open(INV_PROVISIONED));
    assert_false(inv_state_open(INV_EXPIRED));
    assert_false(inv_state_open(INV_LATE));
}

/* Order of payments must not change the verdict. */
static void test_order_independent(void **state)
{
    (void)state;
    struct inv_payment a[] = {POOL(3, 1), CONF(AMOUNT - 3, 12, 1), GONE(AMOUNT, 1)};
    struct inv_payment b[] = {GONE(AMOUNT, 1), CONF(AMOUNT - 3, 12, 1), POOL(3, 1)};
    struct inv_input in = {.current = INV_SEEN,
                           .amount = AMOUNT,
                           .confirmations_required = 10,
                           .expires_at = EXPIRES,
                           .late_grace = GRACE,
                           .now = NOW,
                           .chain_height = HEIGHT,
                           .payments = a,
                           .npayments = 3};
    struct inv_outcome x = inv_evaluate(&in);
    in.payments = b;
    struct inv_outcome y = inv_evaluate(&in);
    assert_int_equal(x.state, INV_PAID);
    assert_int_equal(x.state, y.state);
    assert_int_equal(x.confirmations, 12);
    assert_int_equal(y.confirmations, 12);
    assert_true(x.paid == y.paid && x.paid == AMOUNT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_min_accepted_matches_definition),
        cmocka_unit_test(test_huge_amounts_do_not_overflow),
        cmocka_unit_test(test_time_locked),
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_order_independent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
