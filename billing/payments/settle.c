/* settle — see settle.h. */
#include "payments/settle.h"

#include "hooks/hook_outbox.h"
#include "invoice/invoice_row.h"
#include "core/pricing.h"
#include "xg_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const settle_queries[] = {"bl_invoice_lock",
                                      "bl_invoice_get",
                                      "bl_invoice_payment_sums",
                                      "bl_invoice_set_state",
                                      "bl_invoice_set_provisioned",
                                      "bl_tenant_from_invoice",
                                      "bl_tenant_renewal_facts",
                                      "bl_tenant_extend",
                                      "bl_hook_event_insert",
                                      NULL};

struct locked_invoice {
    struct invoice_row row;
    int64_t rate_e8; /* the locked quote's rate (fiat), else 0 */
};

static enum xg_tx_result lock_invoice(struct xg_pg *pg, const char *id, struct locked_invoice *li)
{
    const char *params[] = {id};
    PGresult *res = xg_pg_exec(pg, "bl_invoice_lock", 1, params);
    if (!res)
        return xg_pg_tx_classify(pg);
    bool found = PQntuples(res) == 1;
    PQclear(res);
    if (!found)
        return XG_TX_ROLLBACK;
    switch (invoice_row_load(pg, id, &li->row)) {
    case INVOICE_ROW_FOUND:
        break;
    case INVOICE_ROW_NOT_FOUND:
        return XG_TX_ROLLBACK;
    case INVOICE_ROW_DB_ERROR:
        return xg_pg_tx_classify(pg);
    }
    const char *rate = li->row.rate;
    if (!li->row.has_rate || !price_parse_rate(rate, strlen(rate), &li->rate_e8))
        li->rate_e8 = 0;
    return XG_TX_COMMIT;
}

bool settle_load_payments(struct xg_pg *pg, const char *invoice_id, int64_t late_grace_s,
                          struct invoice_payment **pays, size_t *npays)
{
    char grace[24];
    snprintf(grace, sizeof grace, "%lld", (long long)late_grace_s);
    const char *params[] = {invoice_id, grace};
    *pays = NULL;
    *npays = 0;
    PGresult *res = xg_pg_exec(pg, "bl_invoice_payment_sums", 2, params);
    if (!res)
        return false;
    int rows = PQntuples(res);
    bool ok = true;
    if (rows > 0 && !(*pays = calloc((size_t)rows, sizeof **pays))) {
        xg_log(XG_LOG_ERROR, "out_of_memory", "the payments of invoice %s", invoice_id);
        ok = false;
    }
    for (int i = 0; ok && i < rows; i++) {
        struct invoice_payment *p = &(*pays)[*npays];
        if (!invoice_pay_state_parse(PQgetvalue(res, i, 2), &p->state))
            continue; /* the schema allows no other state */
        p->amount = xg_pg_int64(res, i, 0);
        p->confirmations = xg_pg_int64(res, i, 1);
        p->unlock_time = xg_pg_int64(res, i, 3);
        p->first_seen = xg_pg_int64(res, i, 4);
        (*npays)++;
    }
    PQclear(res);
    return ok;
}

static bool exec_ok(struct xg_pg *pg, const char *name, int n, const char *const *params,
                    int64_t *first_value)
{
    PGresult *res = xg_pg_exec(pg, name, n, params);
    if (!res)
        return false;
    bool ok = !first_value || PQntuples(res) == 1;
    if (ok && first_value)
        *first_value = xg_pg_int64(res, 0, 0);
    PQclear(res);
    return ok;
}

enum xg_tx_result settle_renewal_facts_load(struct xg_pg *pg, const char *tenant_id,
                                            struct settle_renewal_facts *out)
{
    const char *params[] = {tenant_id};
    memset(out, 0, sizeof *out);
    PGresult *res = xg_pg_exec(pg, "bl_tenant_renewal_facts", 1, params);
    if (!res)
        return xg_pg_tx_classify(pg);
    enum xg_tx_result r = XG_TX_ROLLBACK;
    if (PQntuples(res) == 1) {
        snprintf(out->tier, sizeof out->tier, "%s", PQgetvalue(res, 0, 0));
        snprintf(out->currency, sizeof out->currency, "%s", PQgetvalue(res, 0, 1));
        out->price_minor = xg_pg_int64(res, 0, 2);
        out->remaining_us = xg_pg_int64(res, 0, 3);
        r = XG_TX_COMMIT;
    }
    PQclear(res);
    return r;
}

/* The time a renewal carries over, in microseconds (price_carry). The API refuses a tier
 * change it cannot price; one that gets here anyway (the operator moved the tenant to
 * another tier, or repriced one, after the quote) keeps the time as it is, logged. */
static bool carried_time(struct xg_pg *pg, const char *tenant, const struct locked_invoice *li,
                         int64_t *carried)
{
    struct settle_renewal_facts facts;
    if (settle_renewal_facts_load(pg, tenant, &facts) != XG_TX_COMMIT)
        return false;
    struct price_carry_input in = {
        .remaining = facts.remaining_us,
        .old_tier = facts.tier,
        .old_currency = facts.currency,
        .old_minor = facts.price_minor,
        .new_tier = li->row.tier,
        .new_currency = li->row.currency,
        .new_minor = li->row.price_minor,
        .rate_e8 = li->rate_e8,
    };
    if (!price_carry(&in, carried)) {
        *carried = in.remaining;
        xg_log(XG_LOG_WARN, "renewal_carry_unpriced",
               "tenant %s: the time left on tier %s (%s) cannot be priced on tier %s (%s); "
               "carried as it is",
               tenant, in.old_tier, in.old_currency, in.new_tier, in.new_currency);
    }
    return true;
}

static bool provision(struct xg_pg *pg, const char *id, const struct locked_invoice *li,
                      const struct invoice_outcome *o, int64_t *tenant_id)
{
    char tenant[24], months[24], paid[24], conf[24], carried[24];
    snprintf(months, sizeof months, "%lld", (long long)li->row.months);
    snprintf(paid, sizeof paid, "%lld", (long long)o->paid);
    snprintf(conf, sizeof conf, "%lld", (long long)o->confirmations);
    if (li->row.renewal) {
        int64_t carried_us;
        snprintf(tenant, sizeof tenant, "%lld", (long long)li->row.tenant_id);
        if (!carried_time(pg, tenant, li, &carried_us))
            return false;
        snprintf(carried, sizeof carried, "%lld", (long long)carried_us);
        const char *p[] = {tenant, li->row.tier, months, carried};
        if (!exec_ok(pg, "bl_tenant_extend", 4, p, tenant_id))
            return false;
    } else {
        const char *p[] = {id};
        if (!exec_ok(pg, "bl_tenant_from_invoice", 1, p, tenant_id))
            return false;
    }
    snprintf(tenant, sizeof tenant, "%lld", (long long)*tenant_id);
    const char *p[] = {id, tenant, paid, conf};
    return exec_ok(pg, "bl_invoice_set_provisioned", 4, p, NULL);
}

static bool write_state(struct xg_pg *pg, const char *id, const struct invoice_outcome *o)
{
    char paid[24], conf[24];
    snprintf(paid, sizeof paid, "%lld", (long long)o->paid);
    snprintf(conf, sizeof conf, "%lld", (long long)o->confirmations);
    const char *p[] = {id, invoice_state_name(o->state), paid, conf};
    return exec_ok(pg, "bl_invoice_set_state", 4, p, NULL);
}

/* The webhook events of this step, in its transaction (hook_outbox.h). */
static bool write_events(struct xg_pg *pg, const char *id, const struct locked_invoice *li,
                         const struct invoice_outcome *o, enum invoice_state after)
{
    if (!li->row.has_webhook)
        return true;
    struct hook_transition t = {.before = li->row.state,
                                .after = after,
                                .conf_before = li->row.confirmations,
                                .conf_after = o->confirmations};
    struct hook_event_facts f = {.invoice_id = id,
                                 .status = after,
                                 .amount = li->row.amount,
                                 .paid = o->paid,
                                 .confirmations_required = li->row.confirmations_required,
                                 .created = li->row.now};
    return hook_outbox_transition(pg, &t, &f);
}

enum xg_tx_result settle_invoice(struct xg_pg *pg, const char *invoice_id,
                                 const struct settle_policy *policy, struct settle_result *out)
{
    struct locked_invoice li = {0};
    struct invoice_payment *pays;
    size_t n;
    memset(out, 0, sizeof *out);
    enum xg_tx_result r = lock_invoice(pg, invoice_id, &li);
    if (r != XG_TX_COMMIT)
        return r;
    out->before = out->after = li.row.state;
    if (!settle_load_payments(pg, invoice_id, policy->late_grace_s, &pays, &n))
        return xg_pg_tx_classify(pg);
    struct invoice_input in = {
        .current = li.row.state,
        .amount = li.row.amount,
        .confirmations_required = li.row.confirmations_required,
        .expires_at = li.row.expires,
        .late_grace = policy->late_grace_s,
        .now = li.row.now,
        .chain_height = policy->chain_height,
        .payments = pays,
        .npayments = n,
    };
    struct invoice_outcome o = invoice_evaluate(&in);
    free(pays);
    if (o.provision) {
        if (!provision(pg, invoice_id, &li, &o, &out->tenant_id) ||
            !write_events(pg, invoice_id, &li, &o, INVOICE_PROVISIONED))
            return xg_pg_tx_classify(pg);
        out->after = INVOICE_PROVISIONED;
        out->provisioned = true;
        return XG_TX_COMMIT;
    }
    if (!write_state(pg, invoice_id, &o) || !write_events(pg, invoice_id, &li, &o, o.state))
        return xg_pg_tx_classify(pg);
    out->after = o.state;
    return XG_TX_COMMIT;
}
