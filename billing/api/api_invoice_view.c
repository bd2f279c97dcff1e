/* api_invoice_view — see api_invoice_view.h. */
#include "api/api_invoice_view.h"

#include "invoice/invoice.h"
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

static void add_access(struct api *api, json_t *inv, const PGresult *res)
{
    const char *url = api->gateway_url;
    const char *host = strstr(url, "://") ? strstr(url, "://") + 3 : url;
    json_object_set_new(inv, "valid_until", json_string(PQgetvalue(res, 0, 12)));
    json_object_set_new(inv, "connection",
                        json_pack("{s:s, s:s%, s:s, s:s}", "gateway_url", url, "daemon_address",
                                  host, strcspn(host, "/"), "username", PQgetvalue(res, 0, 11),
                                  "login", "--daemon-login <username>:<token>"));
}

static const char *late_name(enum invoice_late l)
{
    return l == INVOICE_LATE_HONOURED ? "honoured" : l == INVOICE_LATE_OPERATOR ? "operator" : NULL;
}

static json_t *invoice_json(struct api *api, const PGresult *res, json_t *payments,
                            const struct invoice_outcome *o)
{
    int64_t amount = xg_pg_int64(res, 0, 5);
    const char *state = PQgetvalue(res, 0, 4);
    const char *address = PQgetisnull(res, 0, 9) ? NULL : PQgetvalue(res, 0, 9);
    json_t *inv =
        json_pack("{s:s, s:s, s:s, s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:s, s:s, s:o}",
                  "id", PQgetvalue(res, 0, 0), "kind", PQgetvalue(res, 0, 1), "tier",
                  PQgetvalue(res, 0, 2), "months", (json_int_t)xg_pg_int64(res, 0, 3), "status",
                  state, "amount", api_json_piconero(amount), "amount_xmr", api_json_xmr(amount),
                  "paid", api_json_piconero(xg_pg_int64(res, 0, 6)), "received",
                  api_json_piconero(o->received), "remaining", api_json_piconero(o->remaining),
                  "confirmations", (json_int_t)xg_pg_int64(res, 0, 7), "confirmations_required",
                  (json_int_t)xg_pg_int64(res, 0, 8), "expires_at", PQgetvalue(res, 0, 10),
                  "created_at", PQgetvalue(res, 0, 18), "payments", payments);
    json_object_set_new(inv, "address", address ? json_string(address) : json_null());
    json_object_set_new(inv, "uri", address ? api_json_monero_uri(address, amount) : json_null());
    if (address && o->remaining > 0 && o->remaining < amount)
        json_object_set_new(inv, "remaining_uri", api_json_monero_uri(address, o->remaining));
    if (o->overpaid > 0)
        json_object_set_new(inv, "overpaid", api_json_piconero(o->overpaid));
    json_object_set_new(
        inv, "price",
        json_pack("{s:s, s:I, s:o}", "currency", PQgetvalue(res, 0, 13), "minor_units",
                  (json_int_t)xg_pg_int64(res, 0, 14), "rate",
                  PQgetisnull(res, 0, 15) ? json_null() : json_string(PQgetvalue(res, 0, 15))));
    if (strcmp(state, "late") == 0 && late_name(o->late))
        json_object_set_new(inv, "late_policy", json_string(late_name(o->late)));
    if (strcmp(state, "provisioned") == 0 && !PQgetisnull(res, 0, 12))
        add_access(api, inv, res);
    return inv;
}

enum api_load api_invoice_view_load(struct api *api, struct xg_pg *pg, const char *id, json_t **out)
{
    const char *params[] = {id};
    struct invoice_payment *pays = NULL;
    size_t npays = 0;
    PGresult *res = xg_pg_exec(pg, "bl_invoice_get", 1, params);
    if (!res)
        return API_LOAD_DB_ERROR;
    if (PQntuples(res) != 1) {
        PQclear(res);
        return API_LOAD_NOT_FOUND;
    }
    json_t *payments = json_array();
    if (!load_payments(pg, id, payments) ||
        !settle_load_payments(pg, id, api->late_grace_s, &pays, &npays)) {
        json_decref(payments);
        PQclear(res);
        return API_LOAD_DB_ERROR;
    }
    struct invoice_input in = {.amount = xg_pg_int64(res, 0, 5),
                               .confirmations_required = xg_pg_int64(res, 0, 8),
                               .expires_at = xg_pg_int64(res, 0, 16),
                               .late_grace = api->late_grace_s,
                               .now = xg_pg_int64(res, 0, 17),
                               .payments = pays,
                               .npayments = npays};
    if (!invoice_state_parse(PQgetvalue(res, 0, 4), &in.current))
        in.current = INVOICE_PENDING;
    struct invoice_outcome o = invoice_evaluate(&in);
    free(pays);
    *out = invoice_json(api, res, payments, &o);
    bool ok = *out != NULL;
    if (ok && !PQgetisnull(res, 0, 19) && !load_webhook(pg, id, PQgetvalue(res, 0, 19), *out)) {
        json_decref(*out);
        *out = NULL;
        PQclear(res);
        return API_LOAD_DB_ERROR;
    }
    PQclear(res);
    return ok ? API_LOAD_OK : API_LOAD_DB_ERROR;
}
