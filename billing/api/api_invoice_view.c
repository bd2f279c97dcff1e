/* api_invoice_view — see api_invoice_view.h. */
#include "api/api_invoice_view.h"

#include "invoice/invoice.h"
#include "invoice/invoice_row.h"
#include "payments/settle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHOWN_PAYMENTS 256

/* Loads the payments to show, as JSON. */
static bool load_payments(struct xg_pg *pg, const char *id, json_t *list)
{
    const char *params[] = {id};
    PGresult *res = xg_pg_exec(pg, "bl_invoice_payments_list", 1, params);
    if (!res)
        return false;
    for (int i = 0; i < PQntuples(res) && i < MAX_SHOWN_PAYMENTS; i++)
        json_array_append_new(
            list, json_pack("{s:s, s:o, s:I, s:s, s:s}", "txid", PQgetvalue(res, i, 0), "amount",
                            api_json_piconero(xg_pg_int64(res, i, 1)), "confirmations",
                            (json_int_t)xg_pg_int64(res, i, 2), "state", PQgetvalue(res, i, 3),
                            "first_seen_at", PQgetvalue(res, i, 6)));
    PQclear(res);
    return true;
}

static json_t *text_or_null(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? json_null() : json_string(PQgetvalue(res, row, col));
}

/* "webhook": {"url", "events": [...]} (hook_outbox.h writes them, hook_sender.h sends). */
static bool load_webhook(struct xg_pg *pg, const char *id, const char *url, json_t *inv)
{
    const char *params[] = {id};
    PGresult *res = xg_pg_exec(pg, "bl_hook_events_list", 1, params);
    if (!res)
        return false;
    json_t *events = json_array();
    for (int i = 0; i < PQntuples(res); i++) {
        const char *state = !PQgetisnull(res, i, 9)    ? "delivered"
                            : !PQgetisnull(res, i, 10) ? "failed"
                                                       : "pending";
        int64_t status = xg_pg_int64(res, i, 4);
        json_t *ev = json_pack(
            "{s:s, s:s, s:I, s:s, s:I, s:o, s:o, s:s, s:o, s:o, s:o, s:o}", "id",
            PQgetvalue(res, i, 0), "type", PQgetvalue(res, i, 1), "confirmations",
            (json_int_t)xg_pg_int64(res, i, 2), "state", state, "attempts",
            (json_int_t)xg_pg_int64(res, i, 3), "last_status",
            status ? json_integer(status) : json_null(), "last_error", text_or_null(res, i, 5),
            "created_at", PQgetvalue(res, i, 6), "next_attempt_at",
            strcmp(state, "pending") == 0 ? json_string(PQgetvalue(res, i, 7)) : json_null(),
            "last_attempt_at", text_or_null(res, i, 8), "delivered_at", text_or_null(res, i, 9),
            "failed_at", text_or_null(res, i, 10));
        json_array_append_new(events, ev);
    }
    PQclear(res);
    json_object_set_new(inv, "webhook", json_pack("{s:s, s:o}", "url", url, "events", events));
    return true;
}

static void add_access(struct api *api, json_t *inv, const struct invoice_row *row)
{
    const char *url = api->gateway_url;
    const char *host = strstr(url, "://") ? strstr(url, "://") + 3 : url;
    json_object_set_new(inv, "valid_until", json_string(row->valid_until));
    json_object_set_new(inv, "connection",
                        json_pack("{s:s, s:s%, s:s, s:s}", "gateway_url", url, "daemon_address",
                                  host, strcspn(host, "/"), "username", row->handle, "login",
                                  "--daemon-login <username>:<token>"));
}

static const char *late_name(enum invoice_late l)
{
    return l == INVOICE_LATE_HONOURED ? "honoured" : l == INVOICE_LATE_OPERATOR ? "operator" : NULL;
}

static json_t *invoice_json(struct api *api, const struct invoice_row *row, json_t *payments,
                            const struct invoice_outcome *o)
{
    int64_t amount = row->amount;
    const char *address = row->has_subaddress ? row->subaddress : NULL;
    json_t *inv = json_pack(
        "{s:s, s:s, s:s, s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:s, s:s, s:o}", "id",
        row->id, "kind", row->renewal ? "renewal" : "purchase", "tier", row->tier, "months",
        (json_int_t)row->months, "status", invoice_state_name(row->state), "amount",
        api_json_piconero(amount), "amount_xmr", api_json_xmr(amount), "paid",
        api_json_piconero(row->paid), "received", api_json_piconero(o->received), "remaining",
        api_json_piconero(o->remaining), "confirmations", (json_int_t)row->confirmations,
        "confirmations_required", (json_int_t)row->confirmations_required, "expires_at",
        row->expires_at, "created_at", row->created_at, "payments", payments);
    json_object_set_new(inv, "address", address ? json_string(address) : json_null());
    json_object_set_new(inv, "uri", address ? api_json_monero_uri(address, amount) : json_null());
    if (address && o->remaining > 0 && o->remaining < amount)
        json_object_set_new(inv, "remaining_uri", api_json_monero_uri(address, o->remaining));
    if (o->overpaid > 0)
        json_object_set_new(inv, "overpaid", api_json_piconero(o->overpaid));
    json_object_set_new(inv, "price",
                        json_pack("{s:s, s:I, s:o}", "currency", row->currency, "minor_units",
                                  (json_int_t)row->price_minor, "rate",
                                  row->has_rate ? json_string(row->rate) : json_null()));
    if (row->state == INVOICE_LATE && late_name(o->late))
        json_object_set_new(inv, "late_policy", json_string(late_name(o->late)));
    if (row->state == INVOICE_PROVISIONED && row->has_valid_until)
        add_access(api, inv, row);
    return inv;
}

enum api_load api_invoice_view_load(struct api *api, struct xg_pg *pg, const char *id, json_t **out)
{
    struct invoice_row stored, *row = &stored;
    struct invoice_payment *pays = NULL;
    size_t npays = 0;
    json_t *payments = NULL;
    enum api_load r = API_LOAD_DB_ERROR;
    *out = NULL;
    switch (invoice_row_load(pg, id, row)) {
    case INVOICE_ROW_FOUND:
        break;
    case INVOICE_ROW_NOT_FOUND:
        r = API_LOAD_NOT_FOUND;
        goto out;
    case INVOICE_ROW_DB_ERROR:
        goto out;
    }
    payments = json_array();
    if (!load_payments(pg, id, payments) ||
        !settle_load_payments(pg, id, api->late_grace_s, &pays, &npays))
        goto out;
    struct invoice_input in = {.current = row->state,
                               .amount = row->amount,
                               .confirmations_required = row->confirmations_required,
                               .expires_at = row->expires,
                               .late_grace = api->late_grace_s,
                               .now = row->now,
                               .payments = pays,
                               .npayments = npays};
    struct invoice_outcome o = invoice_evaluate(&in);
    *out = invoice_json(api, row, payments, &o);
    payments = NULL; /* the invoice holds it */
    if (*out && row->has_webhook && !load_webhook(pg, id, row->webhook_url, *out)) {
        json_decref(*out);
        *out = NULL;
    }
    r = *out ? API_LOAD_OK : API_LOAD_DB_ERROR;
out:
    json_decref(payments);
    free(pays);
    return r;
}
