/* transfer_diff — the poller's pure core: given the payments stored for the poll window
 * and the wallet's answer for the same window, which rows to write (new or changed
 * transfers) and which to mark gone (stored as live, absent from the answer: the
 * transaction left the pool or was reorganized out of the chain).
 *
 * A transfer becomes a row keyed by (txid, subaddress index): pool → `pool` (or
 * `double_spend` when the wallet flags it, and while it stays in the pool once flagged:
 * invoice_pay_state_after), mined → `confirmed` with confirmations = wallet height
 * (get_height, a block count) − tx height, at least 1. Transfers to subaddress 0 (the
 * merchant's own address, never an invoice's) are ignored; a pool entry whose transaction
 * the same answer also lists as mined is superseded by the mined one. */
#ifndef TRANSFER_DIFF_H
#define TRANSFER_DIFF_H

#include "invoice/invoice.h"
#include "wallet/wallet.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct transfer_diff_row {
    char txid[WALLET_TXID_SIZE];
    int64_t subaddr, amount, height, confirmations, unlock_time;
    enum invoice_pay_state state;
    bool gone; /* in a write list: mark the stored row gone instead of upserting */
};

/* Pure: the row a transfer should be stored as. */
struct transfer_diff_row transfer_diff_row_of_transfer(const struct wallet_transfer *t,
                                                       int64_t wallet_height);

/* Pure (sorts `stored` in place): the rows to write, sorted by subaddress then txid, so
 * that one transaction per subaddress can take a run of them. Returns a malloc'd array
 * (caller frees; non-NULL even when *count is 0) or NULL when out of memory. */
struct transfer_diff_row *transfer_diff_compute(struct transfer_diff_row *stored, size_t nstored,
                                                const struct wallet_transfer *transfers,
                                                size_t ntransfers, int64_t wallet_height,
                                                size_t *count);

#endif
