/* sweep — deleting XMR402 challenges nobody paid, once they are old enough to be of no
 * use to anyone. Each credential-less agent request may open a challenge (an invoice row
 * and a wallet subaddress); most are never paid. The leader's poller deletes, once per
 * cycle and in a bounded batch, the invoices that are
 *     channel 'xmr402', state 'expired', paid 0, no payment recorded for them, no tenant,
 *     expired more than sweep_keep_s(retention, late_grace) ago.
 * A challenge still inside [invoices] late_grace is never deleted: money that reaches its
 * subaddress late is still honoured (invoice.h). Paid, underpaid, late, provisioned and
 * web-form invoices are never touched. The wallet keeps the subaddress (monero-wallet-rpc
 * cannot forget one); a payment that arrives after the row is gone is still recorded,
 * unattributed, for the operator (payments.invoice_id NULL).
 *
 * Starvation: one DELETE of at most SWEEP_BATCH rows per cycle (index on (state,
 * expires_at)), no wallet call; the poller's own work comes first in the cycle. */
#ifndef SWEEP_H
#define SWEEP_H

#include "xg_pg.h"

#include <stdbool.h>
#include <stdint.h>

#define SWEEP_BATCH 500

/* Pure: how long after its expiry an unpaid challenge is kept: the retention, but never
 * less than the late grace period (both in seconds, negative taken as 0). */
int64_t sweep_keep_s(int64_t retention_s, int64_t late_grace_s);

/* Deletes up to batch such invoices with the named query bl_xmr402_challenges_sweep
 * (prepared on pg by its owner, the poller); *deleted says how many. False on a database
 * error. */
__attribute__((warn_unused_result)) bool sweep_run(struct xg_pg *pg, int64_t keep_s, int batch,
                                                   int64_t *deleted);

#endif
