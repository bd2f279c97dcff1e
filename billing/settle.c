/* settle — see settle.h. */
#include "settle.h"

#include "xg_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SETTLE_MAX_PAYMENTS 256 /* more transfers to one invoice is abuse: the rest wait */

const char *const settle_queries[] = {"bl_invoice_lock",
                                      "bl_invoice_payment_facts",
                                      "bl_invoice_set_state",
                                      "bl_invoice_set_provisioned",
                                      "bl_tenant_from_invoice",
                                      "bl_tenant_extend",
                                      NULL};

struct locked_invoice {
    bool renewal;
    enum inv_state state;
    int64_t amount, required, expires_at, now, months, tenant_id;
    char tier[40];
};

static enum xg_tx_result lock_invoice(struct xg_pg *pg, const char *id, struct locked_invoice *li)
{
    const char *params[] = {id};
    PGresult *res = xg_pg_exec(pg, "bl_invoice_lock", 1, params);
    if (!res)
        return xg_pg_tx_classify(pg);
    enum xg_tx_result r = XG_TX_ROLLBACK;
    if (PQntuples(res) == 1 && inv_state_parse(PQgetvalue(res, 0, 1), &li->state)) {
        li->renewal = strcmp(PQgetvalue(res, 0, 0), "renewal") == 0;
        li->amount = xg_pg_int64(res, 0, 2);
        li->required = xg_pg_int64(res, 0, 3);
        li->expires_at = xg_pg_int64(res, 0, 4);
        snprintf(li->tier, sizeof li->tier, "%s", PQgetvalue(res, 0, 5));
        li->months = xg_pg_int64(res, 0, 6);
        li->tenant_id = xg_pg_int64(res, 0, 7);
        li->now = xg_pg_int64(res, 0, 8);
        r = XG_TX_COMMIT;
    }
    PQclear(res);
    return r;
}

/* Fills pays (up to cap) from the stored payments; returns the count or -1. */
static long load_payments(struct xg_pg *pg, const char *id, struct inv_payment *pays, size_t cap)
{
    const char *params[] = {id};
    PGresult *res = xg_pg_exec(pg, "bl_invoice_payment_facts", 1, params);
    if (!res)
        return -1;
    size_t n = 0;
    for (int i = 0; i < PQntuples(res) && n < cap; i++) {
        struct inv_payment *p = &pays[n];
        if (!inv_pay_state_parse(PQgetvalue(res, i, 2), &p->state))
            continue;
        p->amount = xg_pg_int64(res, i, 0);
        p->confirmations = xg_pg_int64(res, i, 1);
        p->unlock_time = xg_pg_int64(res, i, 3);
        p->first_seen = xg_pg_int64(res, i, 4);
        n++;
    }
    PQclear(res);
    return (long)n;
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

static bool provision(struct xg_pg *pg, const char *id, const struct locked_invoice *li,
                      const struct inv_outcome *o, int64_t *tenant_id)
{
    char tenant[24], months[24], paid[24], conf[24];
    snprintf(months, sizeof months, "%lld", (long long)li->months);
    snprintf(paid, sizeof paid, "%lld", (long long)o->paid);
    snprintf(conf, sizeof conf, "%lld", (long long)o->confirmations);
    if (li->renewal) {
        snprintf(tenant, sizeof tenant, "%lld", (long long)li->tenant_id);
        const char *p[] = {tenant, li->tier, months};
        if (!exec_ok(pg, "bl_tenant_extend", 3, p, tenant_id))
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

static bool write_state(struct xg_pg *pg, const char *id, const struct inv_outcome *o)
{
    char paid[24], conf[24];
    snprintf(paid, sizeof paid, "%lld", (long long)o->paid);
    snprintf(conf, sizeof conf, "%lld", (long long)o->confirmations);
    const char *p[] = {id, inv_state_name(o->state), paid, conf};
    return exec_ok(pg, "bl_invoice_set_state", 4, p, NULL);
}

enum xg_tx_result settle_invoice(struct xg_pg *pg, const char *invoice_id,
                                 const struct settle_policy *policy, struct settle_result *out)
{
    struct locked_invoice li = {0};
    struct inv_payment pays[SETTLE_MAX_PAYMENTS];
    memset(out, 0, sizeof *out);
    enum xg_tx_result r = lock_invoice(pg, invoice_id, &li);
    if (r != XG_TX_COMMIT)
        return r;
    out->before = out->after = li.state;
    long n = load_payments(pg, invoice_id, pays, SETTLE_MAX_PAYMENTS);
    if (n < 0)
        return xg_pg_tx_classify(pg);
    struct inv_input in = {
        .current = li.state,
        .amount = li.amount,
        .confirmations_required = li.required,
        .expires_at = li.expires_at,
        .late_grace = policy->late_grace_s,
        .now = li.now,
        .chain_height = policy->chain_height,
        .payments = pays,
        .npayments = (size_t)n,
    };
    struct inv_outcome o = inv_evaluate(&in);
    if (o.provision) {
        if (!provision(pg, invoice_id, &li, &o, &out->tenant_id))
            return xg_pg_tx_classify(pg);
        out->after = INV_PROVISIONED;
        out->provisioned = true;
        return XG_TX_COMMIT;
    }
    if (!write_state(pg, invoice_id, &o))
        return xg_pg_tx_classify(pg);
    out->after = o.state;
    return XG_TX_COMMIT;
}
