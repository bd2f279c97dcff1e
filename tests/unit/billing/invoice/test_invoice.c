/* Tests for billing/invoice: every transition and edge of the invoice state
 * machine, as a table, plus the arithmetic edges (2% tolerance, overflow, time locks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "invoice/invoice.h"

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
        (a), 0, INVOICE_PAY_POOL, 0, (t)                                                           \
    }
#define CONF(a, k, t)                                                                              \
    {                                                                                              \
        (a), (k), INVOICE_PAY_CONFIRMED, 0, (t)                                                    \
    }
#define GONE(a, t)                                                                                 \
    {                                                                                              \
        (a), 0, INVOICE_PAY_GONE, 0, (t)                                                           \
    }
#define DSPEND(a, t)                                                                               \
    {                                                                                              \
        (a), 0, INVOICE_PAY_DOUBLE_SPEND, 0, (t)                                                   \
    }
#define LOCKED(a, k, u, t)                                                                         \
    {                                                                                              \
        (a), (k), INVOICE_PAY_CONFIRMED, (u), (t)                                                  \
    }

struct invoice_case {
    const char *name;
    enum invoice_state current;
    int64_t amount, required, now;
    struct invoice_payment pays[4];
    size_t npays;
    /* expected */
    enum invoice_state state;
    int64_t paid, remaining, confirmations, overpaid;
    enum invoice_late late;
    bool provision;
};

static const struct invoice_case cases[] = {
    {"nothing yet",
     INVOICE_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {{0}},
     0,
     INVOICE_PENDING,
     0,
     AMOUNT,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"nothing by the deadline: expired",
     INVOICE_PENDING,
     AMOUNT,
     REQUIRED,
     EXPIRES + 1,
     {{0}},
     0,
     INVOICE_EXPIRED,
     0,
     AMOUNT,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"exactly at the deadline: still pending",
     INVOICE_PENDING,
     AMOUNT,
     REQUIRED,
     EXPIRES,
     {{0}},
     0,
     INVOICE_PENDING,
     0,
     AMOUNT,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"exact payment in the pool: seen",
     INVOICE_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {POOL(AMOUNT, 100)},
     1,
     INVOICE_SEEN,
     AMOUNT,
     0,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"mined, 1 confirmation: confirming",
     INVOICE_SEEN,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT, 1, 100)},
     1,
     INVOICE_CONFIRMING,
     AMOUNT,
     0,
     1,
     0,
     INVOICE_LATE_NONE,
     false},
    {"9 of 10: confirming",
     INVOICE_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT, 9, 100)},
     1,
     INVOICE_CONFIRMING,
     AMOUNT,
     0,
     9,
     0,
     INVOICE_LATE_NONE,
     false},
    {"10 of 10: paid, provision",
     INVOICE_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT, 10, 100)},
     1,
     INVOICE_PAID,
     AMOUNT,
     0,
     10,
     0,
     INVOICE_LATE_NONE,
     true},
    {"confirmations reached after the deadline: still paid",
     INVOICE_CONFIRMING,
     AMOUNT,
     REQUIRED,
     EXPIRES + GRACE + 99,
     {CONF(AMOUNT, 12, 100)},
     1,
     INVOICE_PAID,
     AMOUNT,
     0,
     12,
     0,
     INVOICE_LATE_NONE,
     true},
    {"provisioned is sticky",
     INVOICE_PROVISIONED,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT, 30, 100)},
     1,
     INVOICE_PROVISIONED,
     AMOUNT,
     0,
     30,
     0,
     INVOICE_LATE_NONE,
     false},
    {"provisioned stays even if the tx later vanished",
     INVOICE_PROVISIONED,
     AMOUNT,
     REQUIRED,
     NOW,
     {GONE(AMOUNT, 100)},
     1,
     INVOICE_PROVISIONED,
     0,
     0,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"free tier: provisioned at once",
     INVOICE_PENDING,
     0,
     0,
     NOW,
     {{0}},
     0,
     INVOICE_PAID,
     0,
     0,
     0,
     0,
     INVOICE_LATE_NONE,
     true},
    {"zero confirmations required: pool payment provisions",
     INVOICE_PENDING,
     AMOUNT,
     0,
     NOW,
     {POOL(AMOUNT, 100)},
     1,
     INVOICE_PAID,
     AMOUNT,
     0,
     0,
     0,
     INVOICE_LATE_NONE,
     true},
    {"1% short: accepted",
     INVOICE_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT / 100 * 99, 10, 100)},
     1,
     INVOICE_PAID,
     AMOUNT / 100 * 99,
     0,
     10,
     0,
     INVOICE_LATE_NONE,
     true},
    {"exactly 2% short: accepted",
     INVOICE_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {POOL(AMOUNT / 100 * 98, 100)},
     1,
     INVOICE_SEEN,
     AMOUNT / 100 * 98,
     0,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"2% plus one piconero short: underpaid",
     INVOICE_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {POOL(AMOUNT / 100 * 98 - 1, 100)},
     1,
     INVOICE_UNDERPAID,
     AMOUNT / 100 * 98 - 1,
     AMOUNT / 50 + 1,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"5% short: underpaid with remaining",
     INVOICE_SEEN,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT / 100 * 95, 3, 100)},
     1,
     INVOICE_UNDERPAID,
     AMOUNT / 100 * 95,
     AMOUNT / 20,
     3,
     0,
     INVOICE_LATE_NONE,
     false},
    {"second payment covers: seen at the lower count",
     INVOICE_UNDERPAID,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT / 100 * 95, 3, 100), POOL(AMOUNT / 20, 200)},
     2,
     INVOICE_SEEN,
     AMOUNT,
     0,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"two payments add up, both deep: provision at the smaller count",
     INVOICE_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT / 2, 15, 100), CONF(AMOUNT / 2, 10, 200)},
     2,
     INVOICE_PAID,
     AMOUNT,
     0,
     10,
     0,
     INVOICE_LATE_NONE,
     true},
    {"two payments, the second shallower: confirming at its count",
     INVOICE_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT / 2, 15, 100), CONF(AMOUNT / 2, 4, 200)},
     2,
     INVOICE_CONFIRMING,
     AMOUNT,
     0,
     4,
     0,
     INVOICE_LATE_NONE,
     false},
    {"overpaid: recorded",
     INVOICE_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT + 12345, 10, 100)},
     1,
     INVOICE_PAID,
     AMOUNT + 12345,
     0,
     10,
     12345,
     INVOICE_LATE_NONE,
     true},
    {"full payment deep, an extra one in the pool does not hold it back",
     INVOICE_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {CONF(AMOUNT, 11, 100), POOL(5, 300)},
     2,
     INVOICE_PAID,
     AMOUNT + 5,
     0,
     11,
     5,
     INVOICE_LATE_NONE,
     true},
    {"pool tx left the pool: reverted",
     INVOICE_SEEN,
     AMOUNT,
     REQUIRED,
     NOW,
     {GONE(AMOUNT, 100)},
     1,
     INVOICE_REVERTED,
     0,
     AMOUNT,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"confirmed tx reorged out: reverted",
     INVOICE_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {GONE(AMOUNT, 100)},
     1,
     INVOICE_REVERTED,
     0,
     AMOUNT,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"reverted, then paid again: seen",
     INVOICE_REVERTED,
     AMOUNT,
     REQUIRED,
     NOW,
     {GONE(AMOUNT, 100), POOL(AMOUNT, 300)},
     2,
     INVOICE_SEEN,
     AMOUNT,
     0,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"reverted past the deadline: expired",
     INVOICE_REVERTED,
     AMOUNT,
     REQUIRED,
     EXPIRES + 1,
     {GONE(AMOUNT, 100)},
     1,
     INVOICE_EXPIRED,
     0,
     AMOUNT,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"one of two gone: underpaid",
     INVOICE_CONFIRMING,
     AMOUNT,
     REQUIRED,
     NOW,
     {GONE(AMOUNT / 2, 100), CONF(AMOUNT / 2, 5, 100)},
     2,
     INVOICE_UNDERPAID,
     AMOUNT / 2,
     AMOUNT / 2,
     5,
     0,
     INVOICE_LATE_NONE,
     false},
    {"double spend seen: not counted",
     INVOICE_SEEN,
     AMOUNT,
     REQUIRED,
     NOW,
     {DSPEND(AMOUNT, 100)},
     1,
     INVOICE_REVERTED,
     0,
     AMOUNT,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"time-locked by height: not counted",
     INVOICE_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {LOCKED(AMOUNT, 20, HEIGHT + 100, 100)},
     1,
     INVOICE_PENDING,
     0,
     AMOUNT,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"time-locked by time: not counted",
     INVOICE_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {LOCKED(AMOUNT, 20, 600000000 + NOW, 100)},
     1,
     INVOICE_PENDING,
     0,
     AMOUNT,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
    {"unlock height already passed: counted",
     INVOICE_PENDING,
     AMOUNT,
     REQUIRED,
     NOW,
     {LOCKED(AMOUNT, 20, HEIGHT - 1, 100)},
     1,
     INVOICE_PAID,
     AMOUNT,
     0,
     20,
     0,
     INVOICE_LATE_NONE,
     true},
    {"late, within grace, covers: late while confirming",
     INVOICE_EXPIRED,
     AMOUNT,
     REQUIRED,
     EXPIRES + 60,
     {POOL(AMOUNT, EXPIRES + 30)},
     1,
     INVOICE_LATE,
     AMOUNT,
     0,
     0,
     0,
     INVOICE_LATE_HONOURED,
     false},
    {"late, within grace, confirmed: honoured, provision",
     INVOICE_LATE,
     AMOUNT,
     REQUIRED,
     EXPIRES + GRACE * 2,
     {CONF(AMOUNT, 10, EXPIRES + 30)},
     1,
     INVOICE_PAID,
     AMOUNT,
     0,
     10,
     0,
     INVOICE_LATE_HONOURED,
     true},
    {"late, within grace, not enough yet: late with remaining",
     INVOICE_EXPIRED,
     AMOUNT,
     REQUIRED,
     EXPIRES + 60,
     {POOL(AMOUNT / 2, EXPIRES + 30)},
     1,
     INVOICE_LATE,
     AMOUNT / 2,
     AMOUNT / 2,
     0,
     0,
     INVOICE_LATE_HONOURED,
     false},
    {"late, not enough, grace over: for the operator",
     INVOICE_LATE,
     AMOUNT,
     REQUIRED,
     EXPIRES + GRACE + 1,
     {CONF(AMOUNT / 2, 3, EXPIRES + 30)},
     1,
     INVOICE_LATE,
     AMOUNT / 2,
     AMOUNT / 2,
     3,
     0,
     INVOICE_LATE_OPERATOR,
     false},
    {"paid after the grace period: recorded, never counted",
     INVOICE_EXPIRED,
     AMOUNT,
     REQUIRED,
     EXPIRES + GRACE + 100,
     {CONF(AMOUNT, 20, EXPIRES + GRACE + 1)},
     1,
     INVOICE_LATE,
     0,
     AMOUNT,
     0,
     0,
     INVOICE_LATE_OPERATOR,
     false},
    {"on-time part plus late rest within grace: honoured",
     INVOICE_UNDERPAID,
     AMOUNT,
     REQUIRED,
     EXPIRES + 100,
     {CONF(AMOUNT / 2, 12, 100), CONF(AMOUNT / 2, 10, EXPIRES + 50)},
     2,
     INVOICE_PAID,
     AMOUNT,
     0,
     10,
     0,
     INVOICE_LATE_HONOURED,
     true},
    {"underpaid, grace not over: still underpaid",
     INVOICE_UNDERPAID,
     AMOUNT,
     REQUIRED,
     EXPIRES + GRACE,
     {CONF(AMOUNT / 2, 40, 100)},
     1,
     INVOICE_UNDERPAID,
     AMOUNT / 2,
     AMOUNT / 2,
     40,
     0,
     INVOICE_LATE_NONE,
     false},
    {"underpaid, grace over: expired with the money kept",
     INVOICE_UNDERPAID,
     AMOUNT,
     REQUIRED,
     EXPIRES + GRACE + 1,
     {CONF(AMOUNT / 2, 40, 100)},
     1,
     INVOICE_EXPIRED,
     AMOUNT / 2,
     AMOUNT / 2,
     40,
     0,
     INVOICE_LATE_NONE,
     false},
    {"seen just before the deadline is on time",
     INVOICE_PENDING,
     AMOUNT,
     REQUIRED,
     EXPIRES + 5,
     {POOL(AMOUNT, EXPIRES)},
     1,
     INVOICE_SEEN,
     AMOUNT,
     0,
     0,
     0,
     INVOICE_LATE_NONE,
     false},
};

static void check_case(const struct invoice_case *c)
{
    struct invoice_input in = {
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
    struct invoice_outcome out = invoice_evaluate(&in);
    if (out.state != c->state || out.paid != c->paid || out.remaining != c->remaining ||
        out.confirmations != c->confirmations || out.overpaid != c->overpaid ||
        out.late != c->late || out.provision != c->provision) {
        print_error("case \"%s\": got state %s paid %lld remaining %lld conf %lld over %lld "
                    "late %d provision %d\n",
                    c->name, invoice_state_name(out.state), (long long)out.paid,
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
        int64_t m = invoice_min_accepted(a);
        assert_true((__int128)m * 100 >= (__int128)a * 98);
        if (m > 0)
            assert_false((__int128)(m - 1) * 100 >= (__int128)a * 98);
    }
}

static void test_huge_amounts_do_not_overflow(void **state)
{
    (void)state;
    struct invoice_payment pays[] = {CONF(INT64_MAX - 10, 10, 1), CONF(INT64_MAX - 10, 10, 1)};
    struct invoice_input in = {.current = INVOICE_PENDING,
                               .amount = INT64_MAX,
                               .confirmations_required = 10,
                               .expires_at = EXPIRES,
                               .late_grace = INT64_MAX,
                               .now = NOW,
                               .chain_height = HEIGHT,
                               .payments = pays,
                               .npayments = 2};
    struct invoice_outcome out = invoice_evaluate(&in);
    assert_int_equal(out.state, INVOICE_PAID);
    assert_true(out.provision);
    assert_true(out.paid == INT64_MAX); /* saturated, not wrapped */
    assert_int_equal(out.remaining, 0);
}

static void test_time_locked(void **state)
{
    (void)state;
    assert_false(invoice_time_locked(0, 100, 1000));
    assert_false(invoice_time_locked(100, 100, 1000));
    assert_true(invoice_time_locked(101, 100, 1000));
    assert_true(invoice_time_locked(499999999, 100, 1000));
    assert_false(invoice_time_locked(500000000, 100, 600000000));
    assert_true(invoice_time_locked(600000001, 100, 600000000));
}

static void test_names_round_trip(void **state)
{
    (void)state;
    for (int s = INVOICE_PENDING; s <= INVOICE_REVERTED; s++) {
        enum invoice_state back;
        assert_true(invoice_state_parse(invoice_state_name((enum invoice_state)s), &back));
        assert_int_equal(back, s);
    }
    for (int s = INVOICE_PAY_POOL; s <= INVOICE_PAY_DOUBLE_SPEND; s++) {
        enum invoice_pay_state back;
        assert_true(
            invoice_pay_state_parse(invoice_pay_state_name((enum invoice_pay_state)s), &back));
        assert_int_equal(back, s);
    }
    enum invoice_state st;
    assert_false(invoice_state_parse("active", &st));
    assert_false(invoice_state_parse(NULL, &st));
    assert_true(invoice_state_open(INVOICE_REVERTED));
    assert_true(invoice_state_open(INVOICE_UNDERPAID));
    assert_false(invoice_state_open(INVOICE_PROVISIONED));
    assert_false(invoice_state_open(INVOICE_EXPIRED));
    assert_false(invoice_state_open(INVOICE_LATE));
}

/* A double spend seen once stays seen while the transaction is in the pool (monerod drops
 * its mark when the transaction is added again on a relay upgrade); every other sighting
 * is taken as it is. */
static void test_pay_state_after(void **state)
{
    (void)state;
    static const struct {
        enum invoice_pay_state stored, seen, want;
    } rows[] = {
        /* the node forgot its mark: still double-spent */
        {INVOICE_PAY_DOUBLE_SPEND, INVOICE_PAY_POOL, INVOICE_PAY_DOUBLE_SPEND},
        {INVOICE_PAY_DOUBLE_SPEND, INVOICE_PAY_DOUBLE_SPEND, INVOICE_PAY_DOUBLE_SPEND},
        /* mined after all: it counts */
        {INVOICE_PAY_DOUBLE_SPEND, INVOICE_PAY_CONFIRMED, INVOICE_PAY_CONFIRMED},
        {INVOICE_PAY_DOUBLE_SPEND, INVOICE_PAY_GONE, INVOICE_PAY_GONE},
        {INVOICE_PAY_POOL, INVOICE_PAY_DOUBLE_SPEND, INVOICE_PAY_DOUBLE_SPEND},
        {INVOICE_PAY_POOL, INVOICE_PAY_POOL, INVOICE_PAY_POOL},
        {INVOICE_PAY_POOL, INVOICE_PAY_CONFIRMED, INVOICE_PAY_CONFIRMED},
        /* reorganized back into the pool */
        {INVOICE_PAY_CONFIRMED, INVOICE_PAY_POOL, INVOICE_PAY_POOL},
        /* back in the pool after it left: seen again */
        {INVOICE_PAY_GONE, INVOICE_PAY_POOL, INVOICE_PAY_POOL},
        {INVOICE_PAY_GONE, INVOICE_PAY_DOUBLE_SPEND, INVOICE_PAY_DOUBLE_SPEND},
        {INVOICE_PAY_CONFIRMED, INVOICE_PAY_DOUBLE_SPEND, INVOICE_PAY_DOUBLE_SPEND},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(invoice_pay_state_after(rows[i].stored, rows[i].seen), rows[i].want);
}

/* Order of payments must not change the verdict. */
static void test_order_independent(void **state)
{
    (void)state;
    struct invoice_payment a[] = {POOL(3, 1), CONF(AMOUNT - 3, 12, 1), GONE(AMOUNT, 1)};
    struct invoice_payment b[] = {GONE(AMOUNT, 1), CONF(AMOUNT - 3, 12, 1), POOL(3, 1)};
    struct invoice_input in = {.current = INVOICE_SEEN,
                               .amount = AMOUNT,
                               .confirmations_required = 10,
                               .expires_at = EXPIRES,
                               .late_grace = GRACE,
                               .now = NOW,
                               .chain_height = HEIGHT,
                               .payments = a,
                               .npayments = 3};
    struct invoice_outcome x = invoice_evaluate(&in);
    in.payments = b;
    struct invoice_outcome y = invoice_evaluate(&in);
    assert_int_equal(x.state, INVOICE_PAID);
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
        cmocka_unit_test(test_pay_state_after),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
