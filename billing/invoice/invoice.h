/* invoice — the invoice state machine, pure: no I/O, no clock, no allocation.
 * The poller and the API feed it an invoice and the payments stored for it and write
 * back what it decides; the state is always derived from the stored payments, so
 * re-running it after a crash gives the same answer (nothing is counted twice).
 *
 *   pending ──payment in pool──▶ seen ──mined──▶ confirming ──k ≥ N──▶ paid ──▶ provisioned
 *      │                          │                                              (sticky)
 *      │ (deadline)               └─tx left pool/chain, nothing else counted─▶ reverted
 *      ▼                                                              (waits again)
 *   expired ──payment within the grace period covering the amount──▶ late ──k ≥ N──▶ paid
 *
 *   underpaid: payments counted but below the accepted amount; shows `remaining`; more
 *              payments to the same subaddress add up.
 *
 * Counting. A payment counts when it is in the pool or confirmed, is not marked
 * double-spend, is not time-locked (unlock_time beyond the current height or time), and
 * was first seen no later than expires_at + late_grace. A payment that left the pool or
 * the chain (`gone`) counts for nothing. The amount is covered when
 * counted * 100 >= amount * 98 (an underpayment under 2% is accepted), computed without
 * overflow. Overpayment is reported (`overpaid`) and kept; it is never refunded here.
 *
 * Confirmations. The invoice's confirmation count is the largest k such that the counted
 * payments with at least k confirmations cover the amount: a later extra payment still
 * in the pool does not hold back one that already paid in full. Without cover it is the
 * minimum over the counted payments (0 when none).
 *
 * Late policy (paid after the quote expired; never dropped):
 *   - payments first seen after expires_at but within late_grace, that bring the total to
 *     cover the locked amount: honoured at the locked quote. The invoice shows `late`
 *     while it confirms and is provisioned at the tier's confirmations (late_honoured).
 *     While such late payments do not cover it yet, it shows `late` with `remaining` until
 *     the grace period ends.
 *   - otherwise (not enough, or first seen after the grace period): the invoice stays
 *     `late` for the operator, who refunds or credits by hand; payments first seen after
 *     the grace period are stored and reported as received but never counted.
 *   - an underpaid invoice (paid on time but not enough) keeps accepting payments until
 *     the grace period ends, then becomes `expired` with its payments kept for the
 *     operator.
 * Once provisioned an invoice never changes state again. */
#ifndef INVOICE_H
#define INVOICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum invoice_state {
    INVOICE_PENDING,
    INVOICE_SEEN,
    INVOICE_CONFIRMING,
    INVOICE_PAID,
    INVOICE_PROVISIONED,
    INVOICE_UNDERPAID,
    INVOICE_EXPIRED,
    INVOICE_LATE,
    INVOICE_REVERTED,
};

enum invoice_pay_state {
    INVOICE_PAY_POOL,
    INVOICE_PAY_CONFIRMED,
    INVOICE_PAY_GONE,
    INVOICE_PAY_DOUBLE_SPEND
};

enum invoice_late { INVOICE_LATE_NONE, INVOICE_LATE_HONOURED, INVOICE_LATE_OPERATOR };

struct invoice_payment {
    int64_t amount;        /* piconero, > 0                                   */
    int64_t confirmations; /* 0 in the pool                                   */
    enum invoice_pay_state state;
    int64_t unlock_time; /* from the transfer: 0, a block height, or a time */
    int64_t first_seen;  /* unix seconds                                    */
};

struct invoice_input {
    enum invoice_state current;
    int64_t amount;                 /* piconero, >= 0 (0: free)              */
    int64_t confirmations_required; /* >= 0                                   */
    int64_t expires_at;             /* unix seconds                           */
    int64_t late_grace;             /* seconds after expires_at, >= 0        */
    int64_t now;                    /* unix seconds                           */
    int64_t chain_height;           /* the wallet's height, for unlock_time   */
    const struct invoice_payment *payments;
    size_t npayments;
};

struct invoice_outcome {
    enum invoice_state state;
    int64_t received;      /* every payment in the pool or confirmed, counted or not */
    int64_t paid;          /* the counted payments                                   */
    int64_t remaining;     /* amount still to pay; 0 once covered                    */
    int64_t overpaid;      /* paid - amount when positive                            */
    int64_t confirmations; /* see the header comment                                 */
    enum invoice_late late;
    bool provision; /* provision now (in the same transaction as the state)  */
};

/* Decides the invoice's state from its payments. Never fails; an input that breaks the
 * documented ranges (negative amounts) is our bug and asserts in debug builds. */
struct invoice_outcome invoice_evaluate(const struct invoice_input *in);

/* Pure: the accepted minimum for an amount, i.e. the least p with p * 100 >= amount * 98. */
int64_t invoice_min_accepted(int64_t amount);

/* True when a transfer with this unlock_time is still time-locked (heights below
 * 500000000, times from there, as monerod reads it). */
bool invoice_time_locked(int64_t unlock_time, int64_t chain_height, int64_t now);

/* Names as stored in the database ("pending", …) and back. */
const char *invoice_state_name(enum invoice_state s);
__attribute__((warn_unused_result)) bool invoice_state_parse(const char *text,
                                                             enum invoice_state *out);
const char *invoice_pay_state_name(enum invoice_pay_state s);
__attribute__((warn_unused_result)) bool invoice_pay_state_parse(const char *text,
                                                                 enum invoice_pay_state *out);

/* Pure: the state a stored payment takes when the wallet or the node sees it again as
 * `seen`. A double spend once seen stays seen while the transaction is in the pool:
 * monerod clears its double_spend_seen mark whenever it adds the transaction again on a
 * relay upgrade (a Dandelion++ stem transaction that comes back fluffed, tx_pool.cpp's
 * add_tx), though the conflicting transaction is still out there. Mined or gone replaces
 * it. */
enum invoice_pay_state invoice_pay_state_after(enum invoice_pay_state stored,
                                               enum invoice_pay_state seen);

/* True for the states in which an invoice still waits for money on its subaddress (the
 * database keeps one such invoice per subaddress). */
bool invoice_state_open(enum invoice_state s);

#endif
