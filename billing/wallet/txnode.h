/* txnode — the cheap look before any wallet call on an XMR402 proof: does a monerod know
 * the transaction at all? A made-up txid is then answered from one plain daemon call
 * (POST <daemon_url>/get_transactions) and costs the single-threaded view-only wallet-rpc
 * nothing: no refresh, no get_transfer_by_txid, no check_tx_proof, no verify token.
 *
 * The daemon is [wallet] daemon_url (the monerod the stack already compares the wallet's
 * height with). Unset, or not answering, or answering something unexpected: the verdict is
 * TXNODE_UNKNOWN and the proof goes on to the wallet as before (the check only ever saves
 * work; it never refuses on a node's silence).
 *
 * Threads: one struct txnode is shared by the API threads; calls are serialized on one
 * keep-alive connection (a get_transactions of one hash takes a millisecond). */
#ifndef TXNODE_H
#define TXNODE_H

#include <stdbool.h>
#include <stddef.h>

enum txnode_verdict {
    TXNODE_FOUND,        /* in the node's pool or chain */
    TXNODE_DOUBLE_SPENT, /* in the node's pool, and the node saw another spend of its inputs */
    TXNODE_MISSING,      /* the node answered and does not have it */
    TXNODE_UNKNOWN,      /* no node configured, or no usable answer: ask the wallet */
};

/* Pure: the verdict of a get_transactions answer (status, its body) for txid (64 lower-case
 * hex digits). FOUND when "txs" lists it; DOUBLE_SPENT when it lists it in the pool with
 * double_spend_seen (monerod sets it when it refuses a transaction spending the same key
 * images; the view-only wallet does not learn it for a transaction it already holds); MISSING when
 * "missed_tx" does and status is OK; UNKNOWN for anything else (a non-200 status, BUSY, an
 * unparsable body, neither list). */
enum txnode_verdict txnode_verdict_of(const char *txid, long http_status, const char *body,
                                      size_t len);

struct txnode;

/* daemon_url like "http://127.0.0.1:18081" (copied); "" or NULL gives a txnode whose
 * every lookup is TXNODE_UNKNOWN. NULL only when out of memory. */
struct txnode *txnode_new(const char *daemon_url, long timeout_ms);
void txnode_free(struct txnode *t);

/* True when a daemon is configured. */
bool txnode_enabled(const struct txnode *t);

/* Asks the node about txid, once (a proof that waits for its transaction asks again from
 * billing's hold thread, api/verify_hold.h; nothing here sleeps). */
enum txnode_verdict txnode_lookup(struct txnode *t, const char *txid);

#endif
