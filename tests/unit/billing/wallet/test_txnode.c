/* Tests for billing/txnode's pure part: what a monerod get_transactions answer says about
 * one txid, and a lookup with no daemon configured. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "wallet/txnode.h"

#define TXID  "6d1bb64a7ed52a6bfc8a4b2ed4a9e3cfb1a2d1f1b1a1e7a7b2b3c4d5e6f70809"
#define OTHER "0000000000000000000000000000000000000000000000000000000000000001"

static void test_verdicts(void **state)
{
    (void)state;
    static const struct {
        long status;
        const char *body;
        enum txnode_verdict want;
    } rows[] = {
        {200, "{\"status\":\"OK\",\"txs\":[{\"tx_hash\":\"" TXID "\",\"in_pool\":true}]}",
         TXNODE_FOUND},
        {200, "{\"status\":\"OK\",\"txs\":[{\"tx_hash\":\"" TXID "\",\"block_height\":12}]}",
         TXNODE_FOUND},
        {200, "{\"status\":\"OK\",\"missed_tx\":[\"" TXID "\"]}", TXNODE_MISSING},
        {200,
         "{\"status\":\"OK\",\"txs\":[{\"tx_hash\":\"" TXID
         "\",\"in_pool\":true,\"double_spend_seen\":true}]}",
         TXNODE_DOUBLE_SPENT},
        /* mined after all: the chain decided, the flag is history */
        {200,
         "{\"status\":\"OK\",\"txs\":[{\"tx_hash\":\"" TXID
         "\",\"in_pool\":false,\"double_spend_seen\":true}]}",
         TXNODE_FOUND},
        {200, "{\"status\":\"OK\",\"missed_tx\":[\"" OTHER "\"]}", TXNODE_UNKNOWN},
        {200, "{\"status\":\"OK\",\"txs\":[{\"tx_hash\":\"" OTHER "\"}]}", TXNODE_UNKNOWN},
        {200, "{\"status\":\"OK\"}", TXNODE_UNKNOWN},
        /* a busy or failing node says nothing: the wallet is asked as before */
        {200, "{\"status\":\"BUSY\",\"missed_tx\":[\"" TXID "\"]}", TXNODE_UNKNOWN},
        {500, "{\"status\":\"OK\",\"missed_tx\":[\"" TXID "\"]}", TXNODE_UNKNOWN},
        {200, "not json", TXNODE_UNKNOWN},
        {200, "[\"" TXID "\"]", TXNODE_UNKNOWN},
        {200, "{\"status\":\"OK\",\"missed_tx\":\"" TXID "\"}", TXNODE_UNKNOWN},
        {0, NULL, TXNODE_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *b = rows[i].body;
        assert_int_equal(txnode_verdict_of(TXID, rows[i].status, b, b ? strlen(b) : 0),
                         rows[i].want);
    }
}

static void test_no_daemon_is_unknown(void **state)
{
    (void)state;
    struct txnode *t = txnode_new("", 1000);
    assert_non_null(t);
    assert_false(txnode_enabled(t));
    assert_int_equal(txnode_lookup(t, TXID), TXNODE_UNKNOWN);
    txnode_free(t);
    t = txnode_new("http://127.0.0.1:1/", 1000);
    assert_non_null(t);
    assert_true(txnode_enabled(t));
    txnode_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_no_daemon_is_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
