/* settle — applies the invoice state machine to one invoice inside the caller's
 * transaction: locks the invoice row, reads it (invoice_row.h) and its stored payments (summed in
 * SQL, so any number of them counts), runs invoice_evaluate, and writes the outcome. When the
 * outcome says provision it also creates the tenant (a purchase: the invoice's handle, token hash
 * and wrapped HA1, and its subaddress for life) or extends it (a renewal: valid_until = now + the
 * time left, converted by price at a tier change (price_carry) + months, at the invoice's tier),
 * and marks the invoice provisioned — all in the same transaction, so the tenants trigger's NOTIFY
 * reaches the gateway exactly when the money is final. An invoice with a webhook_url also gets the
 * webhook events of the step written to the outbox in the same transaction (hook_outbox.h).
 *
 * Idempotent: the state is derived from the stored payments only and `provisioned` is
 * sticky, so settling twice (a retry, a restarted or second poller) provisions once.
 * The row lock serializes two instances settling the same invoice. */
#ifndef SETTLE_H
#define SETTLE_H

#include "invoice/invoice.h"
#include "invoice/invoice_row.h"
#include "xg_pg.h"

#include <stdint.h>

struct settle_policy {
    int64_t late_grace_s; /* see invoice.h                          */
    int64_t chain_height; /* the wallet's height, for time-locked payments */
};

struct settle_result {
    enum invoice_state before, after;
    bool provisioned; /* this call provisioned it                        */
    int64_t tenant_id;
};

/* To be called inside xg_pg_transaction's function. XG_TX_ROLLBACK when the invoice does
 * not exist; XG_TX_COMMIT otherwise (also when nothing changed); RETRY/ERROR from the
 * database. */
__attribute__((warn_unused_result)) enum xg_tx_result
settle_invoice(struct xg_pg *pg, const char *invoice_id, const struct settle_policy *policy,
               struct settle_result *out);

/* The invoice's stored payments as invoice_evaluate's input: summed per class it tells apart
 * (bl_invoice_payment_sums), so that however many there are, all count. *pays is
 * malloc'd (the caller frees it; NULL when there are none), *npays its length. False on a
 * database error or out of memory. */
__attribute__((warn_unused_result)) bool
settle_load_payments(struct xg_pg *pg, const char *invoice_id, int64_t late_grace_s,
                     struct invoice_payment **pays, size_t *npays);

/* What a renewal of a tenant carries over (bl_tenant_renewal_facts; the tenant's row is
 * locked until the caller's transaction ends): its tier now, that tier's monthly price,
 * and the time left in microseconds (0 once lapsed). The API quotes a renewal with it, and
 * settling applies the same rule to it (price_carry). */
struct settle_renewal_facts {
    char tier[INVOICE_TIER_SIZE];
    char currency[8];
    int64_t price_minor, remaining_us;
};

/* For tenant_id (decimal text), inside the caller's transaction: XG_TX_COMMIT with out
 * filled, XG_TX_ROLLBACK when there is no such tenant, RETRY or ERROR from the database. */
__attribute__((warn_unused_result)) enum xg_tx_result
settle_renewal_facts_load(struct xg_pg *pg, const char *tenant_id,
                          struct settle_renewal_facts *out);

/* The named queries settle_invoice uses (for the owner's xg_pg_new list). */
extern const char *const settle_queries[];

#endif
