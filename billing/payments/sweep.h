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
 * expires_at)), no wallet call; the poller's own work comes first in the cycle.
 *
 * Lapsed free tenants go the same way (sweep_free_run): a free-tier tenant that never had a
 * subaddress nor an invoice asking for money, whose valid_until is more than [invoices]
 * free_retention past, is deleted with its invoices (bl_free_tenants_sweep), SWEEP_BATCH
 * a cycle; the delete's NOTIFY makes every gateway drop it from memory
 * (gateway/state/pgsync.c). A paid tenant is never deleted. Free grants older than the
 * longest window they count in are pruned with them (free_grant.h).
 *
 * Usage counts are kept [usage] retention (400 days), then deleted oldest first
 * (sweep_usage_run), SWEEP_USAGE_BATCH rows of each table a cycle. Invoices and payments are
 * the operator's accounts: never deleted here (docs/OPERATIONS.md says how to prune them). */
#ifndef SWEEP_H
#define SWEEP_H

#include "xg_pg.h"

#include <stdbool.h>
#include <stdint.h>

#define SWEEP_BATCH 500
/* Usage rows a cycle: more than a day's inflow (a row per active tenant and day) over the
 * cycles of a day, so a backlog shrinks; each delete is an index probe (migration 0009). */
#define SWEEP_USAGE_BATCH 5000

/* Pure: how long after its expiry an unpaid challenge is kept: the retention, but never
 * less than the late grace period (both in seconds, negative taken as 0). */
int64_t sweep_keep_s(int64_t retention_s, int64_t late_grace_s);

/* Deletes up to batch such invoices with the named query bl_xmr402_challenges_sweep
 * (prepared on pg by its owner, the poller); *deleted says how many. False on a database
 * error. */
__attribute__((warn_unused_result)) bool sweep_run(struct xg_pg *pg, int64_t keep_s, int batch,
                                                   int64_t *deleted);

/* Deletes up to batch lapsed free tenants (bl_free_tenants_sweep) kept keep_s past their
 * valid_until, then up to batch stale free grants (bl_free_grants_prune); *deleted says
 * how many tenants. False on a database error. */
__attribute__((warn_unused_result)) bool sweep_free_run(struct xg_pg *pg, int64_t keep_s, int batch,
                                                        int64_t *deleted);

/* Pure: [usage] retention in whole days, rounded up (a part of a day keeps that day); 0
 * (keep for ever) for 0 or less. */
int64_t sweep_usage_keep_days(int64_t retention_s);

/* Deletes up to batch usage_daily and up to batch usage_regional rows older than keep_days
 * (bl_usage_prune); *daily and *regional say how many. False on a database error. */
__attribute__((warn_unused_result)) bool
sweep_usage_run(struct xg_pg *pg, int64_t keep_days, int batch, int64_t *daily, int64_t *regional);

#endif
