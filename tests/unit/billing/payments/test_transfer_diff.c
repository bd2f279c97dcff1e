/* Tests for billing/transfer_diff: what the poller writes for each combination of the
 * stored window and the wallet's answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "payments/transfer_diff.h"

#define TX_A          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define TX_B          "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define WALLET_HEIGHT 200 /* get_height: blocks 0..199 */

static struct wallet_transfer pool_tx(const char *txid, int64_t sub, int64_t amount)
{
    struct wallet_transfer t = {.subaddr_index = sub, .amount = amount, .pool = true};
    snprintf(t.txid, sizeof t.txid, "%s", txid);
    return t;
}

static struct wallet_transfer mined_tx(const char *txid, int64_t sub, int64_t amount,
                                       int64_t height)
{
    struct wallet_transfer t = pool_tx(txid, sub, amount);
    t.pool = false;
    t.height = height;
    return t;
}

static struct transfer_diff_row stored_row(const struct wallet_transfer *t)
{
    return transfer_diff_row_of_transfer(t, WALLET_HEIGHT);
}

static struct transfer_diff_row *run(struct transfer_diff_row *stored, size_t ns,
                                     const struct wallet_transfer *t, size_t nt, size_t *count)
{
    struct transfer_diff_row *w = transfer_diff_compute(stored, ns, t, nt, WALLET_HEIGHT, count);
    assert_non_null(w);
    return w;
}

static void test_row_of_transfer(void **state)
{
    (void)state;
    struct wallet_transfer p = pool_tx(TX_A, 3, 500);
    struct transfer_diff_row r = transfer_diff_row_of_transfer(&p, WALLET_HEIGHT);
    assert_int_equal(r.state, INVOICE_PAY_POOL);
    assert_int_equal(r.confirmations, 0);
    assert_int_equal(r.height, 0);
    p.double_spend_seen = true;
    r = transfer_diff_row_of_transfer(&p, WALLET_HEIGHT);
    assert_int_equal(r.state, INVOICE_PAY_DOUBLE_SPEND);
    /* mined in the top block (199): 1 confirmation; 10 blocks deeper: 11 */
    struct wallet_transfer m = mined_tx(TX_A, 3, 500, 199);
    assert_int_equal(transfer_diff_row_of_transfer(&m, WALLET_HEIGHT).confirmations, 1);
    m.height = 189;
    assert_int_equal(transfer_diff_row_of_transfer(&m, WALLET_HEIGHT).confirmations, 11);
    /* a wallet that has not scanned the block yet still says 1, never 0 or less */
    m.height = 205;
    assert_int_equal(transfer_diff_row_of_transfer(&m, WALLET_HEIGHT).confirmations, 1);
    assert_int_equal(transfer_diff_row_of_transfer(&m, WALLET_HEIGHT).state, INVOICE_PAY_CONFIRMED);
}

static void test_new_and_unchanged(void **state)
{
    (void)state;
    struct wallet_transfer t[] = {pool_tx(TX_A, 3, 500), mined_tx(TX_B, 4, 700, 150)};
    size_t n;
    struct transfer_diff_row *w = run(NULL, 0, t, 2, &n);
    assert_int_equal(n, 2);
    assert_int_equal(w[0].subaddr, 3);
    assert_int_equal(w[0].state, INVOICE_PAY_POOL);
    assert_false(w[0].gone);
    assert_int_equal(w[1].subaddr, 4);
    assert_int_equal(w[1].confirmations, 50);
    free(w);
    /* stored exactly as the wallet says: nothing to write */
    struct transfer_diff_row stored[] = {stored_row(&t[1]), stored_row(&t[0])};
    w = run(stored, 2, t, 2, &n);
    assert_int_equal(n, 0);
    free(w);
}

static void test_changes(void **state)
{
    (void)state;
    struct wallet_transfer before[] = {pool_tx(TX_A, 3, 500), mined_tx(TX_B, 4, 700, 150)};
    struct wallet_transfer after[] = {mined_tx(TX_A, 3, 500, 199), mined_tx(TX_B, 4, 700, 150)};
    struct transfer_diff_row stored[] = {stored_row(&before[0]), stored_row(&before[1])};
    size_t n;
    /* the pool transaction was mined */
    struct transfer_diff_row *w = run(stored, 2, after, 2, &n);
    assert_int_equal(n, 1);
    assert_string_equal(w[0].txid, TX_A);
    assert_int_equal(w[0].state, INVOICE_PAY_CONFIRMED);
    assert_int_equal(w[0].confirmations, 1);
    free(w);
    /* a new block: the stored confirmation count is stale */
    struct transfer_diff_row stale[] = {stored_row(&after[0]), stored_row(&after[1])};
    w = transfer_diff_compute(stale, 2, after, 2, WALLET_HEIGHT + 1, &n);
    assert_int_equal(n, 2);
    assert_int_equal(w[0].confirmations, 2);
    assert_int_equal(w[1].confirmations, 51);
    free(w);
}

static void test_gone(void **state)
{
    (void)state;
    struct wallet_transfer was[] = {pool_tx(TX_A, 3, 500), mined_tx(TX_B, 4, 700, 195)};
    struct transfer_diff_row stored[] = {stored_row(&was[0]), stored_row(&was[1])};
    size_t n;
    /* the pool entry was evicted and the block with TX_B reorganized away */
    struct transfer_diff_row *w = run(stored, 2, NULL, 0, &n);
    assert_int_equal(n, 2);
    assert_true(w[0].gone && w[1].gone);
    assert_int_equal(w[0].subaddr, 3);
    assert_int_equal(w[1].subaddr, 4);
    free(w);
}

static void test_ignored(void **state)
{
    (void)state;
    /* subaddress 0, and a pool twin of a mined transaction */
    struct wallet_transfer t[] = {pool_tx(TX_A, 0, 500), pool_tx(TX_B, 5, 900),
                                  mined_tx(TX_B, 5, 900, 190)};
    size_t n;
    struct transfer_diff_row *w = run(NULL, 0, t, 3, &n);
    assert_int_equal(n, 1);
    assert_int_equal(w[0].subaddr, 5);
    assert_int_equal(w[0].state, INVOICE_PAY_CONFIRMED);
    free(w);
}

static void test_one_tx_two_subaddresses(void **state)
{
    (void)state;
    /* one transaction paying two invoices: two rows, in subaddress order */
    struct wallet_transfer t[] = {mined_tx(TX_A, 9, 100, 190), mined_tx(TX_A, 2, 200, 190)};
    size_t n;
    struct transfer_diff_row *w = run(NULL, 0, t, 2, &n);
    assert_int_equal(n, 2);
    assert_int_equal(w[0].subaddr, 2);
    assert_int_equal(w[1].subaddr, 9);
    assert_int_equal(w[1].amount, 100);
    free(w);
}

static void test_double_spend_sticks(void **state)
{
    (void)state;
    /* the wallet flagged TX_A once; its node then added it again and forgot the flag */
    struct wallet_transfer flagged = pool_tx(TX_A, 3, 500);
    flagged.double_spend_seen = true;
    struct transfer_diff_row stored[] = {stored_row(&flagged)};
    struct wallet_transfer now[] = {pool_tx(TX_A, 3, 500)};
    size_t n;
    struct transfer_diff_row *w = run(stored, 1, now, 1, &n);
    assert_int_equal(n, 0); /* nothing to write: it stays double_spend */
    free(w);
    /* mined after all: written as confirmed */
    struct wallet_transfer mined[] = {mined_tx(TX_A, 3, 500, 199)};
    w = run(stored, 1, mined, 1, &n);
    assert_int_equal(n, 1);
    assert_int_equal(w[0].state, INVOICE_PAY_CONFIRMED);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_of_transfer),
        cmocka_unit_test(test_new_and_unchanged),
        cmocka_unit_test(test_changes),
        cmocka_unit_test(test_gone),
        cmocka_unit_test(test_ignored),
        cmocka_unit_test(test_one_tx_two_subaddresses),
        cmocka_unit_test(test_double_spend_sticks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
