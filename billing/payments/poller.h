/* poller — the thread that watches the view-only wallet and settles invoices.
 *
 * Every poll interval, on the leader only (leader.h): refresh, one get_transfers (in and
 * pool) from the stored cursor minus a safety margin, get_height; compare with the live
 * payments stored for that window; for each subaddress whose transfers are new or
 * changed (state, height, confirmations) or gone, one transaction upserts its payments
 * (keyed by txid and subaddress index), settles the affected invoices (settle.h) and
 * commits; then invoices whose deadline passed are settled; then the cursor advances to
 * the lowest height a not-yet-final payment can have. Confirmations = wallet height −
 * tx height + 1 (get_height counts blocks, so: get_height − tx height).
 *
 * The work per cycle grows with the transfers in the window (new blocks, the pool, the
 * deepest confirmation threshold) and the invoices that fall due, never with the stored
 * history. A crash at any point loses nothing: the cursor only moves after every
 * transaction of the cycle committed, and replaying a window is idempotent. The same holds
 * for a PostgreSQL restart or a primary that moves: a transaction broken before COMMIT is
 * rerun by xg_pg_transaction on a new connection; one whose COMMIT answer was lost fails
 * the cycle (never repeated blindly), and the next cycle re-reads the window from the
 * cursor it finds on whichever server is the primary then.
 *
 * When the wallet fails, the next attempt backs off (1 s doubling to max_backoff) and
 * readiness fails with the reason; on every instance (leader or not) the thread also
 * checks the wallet's height for readiness. */
#ifndef POLLER_H
#define POLLER_H

#include "wallet/wallet.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct poller_options {
    const char *conninfo;          /* copied                                          */
    struct wallet *wallet;         /* borrowed; outlives the poller                    */
    int64_t interval_ms;           /* between two polls                                */
    int64_t safety_margin;         /* blocks re-read below the cursor                  */
    int64_t late_grace_s;          /* invoice.h                                  */
    int64_t max_backoff_ms;        /* longest pause after a failure                    */
    int64_t max_lag_blocks;        /* readiness: wallet this far behind the daemon fails */
    const char *daemon_url;        /* monerod to compare heights with ("" = don't)      */
    int64_t challenge_retention_s; /* unpaid XMR402 challenges kept past expiry (sweep.h) */
    int64_t free_retention_s;      /* lapsed free tenants kept past valid_until (sweep.h) */
    int64_t usage_retention_s;     /* usage counts kept this long; 0: for ever (sweep.h) */
};

struct poller_stats {
    int64_t cycles, failures;
    int64_t last_cycle_us;  /* duration of the last completed cycle           */
    int64_t last_transfers; /* transfers in its get_transfers answer          */
    int64_t last_changed;   /* payments written                               */
    int64_t last_settled;   /* invoices settled                               */
    int64_t wallet_height, cursor;
    int64_t swept;      /* unpaid XMR402 challenges deleted since start */
    int64_t free_swept; /* lapsed free tenants deleted since start */
    bool leader;
};

struct poller;

/* Creates a poller (connections open lazily). NULL when out of memory. */
struct poller *poller_new(const struct poller_options *opt);

/* Starts the polling thread (leader election included). False if it cannot start. */
__attribute__((warn_unused_result)) bool poller_start(struct poller *p);

/* Stops the thread if started (giving up the leader lock) and frees everything. */
void poller_free(struct poller *p);

/* Readiness: the wallet answered recently and is not far behind. */
bool poller_ready(struct poller *p, char *reason, size_t len);

void poller_stats(struct poller *p, struct poller_stats *out);

/* Changes the poll interval (configuration reload); takes effect after the current pause. */
void poller_set_interval(struct poller *p, int64_t interval_ms);

/* One poll cycle on the caller's thread, without the leader lock (benchmarks, tools).
 * Returns false when the wallet or the database failed. */
__attribute__((warn_unused_result)) bool poller_run_once(struct poller *p);

#endif
