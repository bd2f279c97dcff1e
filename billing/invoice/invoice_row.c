/* invoice_row — see invoice_row.h. */
#include "invoice/invoice_row.h"

#include "xg_log.h"

#include <stdio.h>
#include <string.h>

enum column {
    COL_ID,
    COL_KIND,
    COL_STATE,
    COL_TIER,
    COL_MONTHS,
    COL_AMOUNT,
    COL_PAID,
    COL_CONFIRMATIONS,
    COL_CONFIRMATIONS_REQUIRED,
    COL_SUBADDRESS_INDEX,
    COL_SUBADDRESS,
    COL_CHALLENGE_NONCE,
    COL_TOKEN_HASH,
    COL_TENANT_ID,
    COL_HANDLE,
    COL_VALID_UNTIL,
    COL_PRICE_CURRENCY,
    COL_PRICE_MINOR,
    COL_RATE,
    COL_EXPIRES,
    COL_EXPIRES_AT,
    COL_CREATED_MS,
    COL_CREATED_AT,
    COL_PROVISIONED_AT,
    COL_WEBHOOK_URL,
    COL_NOW,
    COL_COUNT
};
_Static_assert(COL_COUNT == INVOICE_ROW_NCOLUMNS, "one name per column");

const char *const invoice_row_columns[INVOICE_ROW_NCOLUMNS] = {
    [COL_ID] = "id",
    [COL_KIND] = "kind",
    [COL_STATE] = "state",
    [COL_TIER] = "tier",
    [COL_MONTHS] = "months",
    [COL_AMOUNT] = "amount",
    [COL_PAID] = "paid",
    [COL_CONFIRMATIONS] = "confirmations",
    [COL_CONFIRMATIONS_REQUIRED] = "confirmations_required",
    [COL_SUBADDRESS_INDEX] = "subaddress_index",
    [COL_SUBADDRESS] = "subaddress",
    [COL_CHALLENGE_NONCE] = "challenge_nonce",
    [COL_TOKEN_HASH] = "token_hash",
    [COL_TENANT_ID] = "tenant_id",
    [COL_HANDLE] = "handle",
    [COL_VALID_UNTIL] = "valid_until",
    [COL_PRICE_CURRENCY] = "price_currency",
    [COL_PRICE_MINOR] = "price_minor",
    [COL_RATE] = "rate",
    [COL_EXPIRES] = "expires",
    [COL_EXPIRES_AT] = "expires_at",
    [COL_CREATED_MS] = "created_ms",
    [COL_CREATED_AT] = "created_at",
    [COL_PROVISIONED_AT] = "provisioned_at",
    [COL_WEBHOOK_URL] = "webhook_url",
    [COL_NOW] = "now",
};

/* The text of a column into out; false when it does not fit. *present (may be NULL) says
 * whether it was not NULL. */
static bool text(const PGresult *res, int row, enum column c, char *out, size_t size, bool *present)
{
    bool null = PQgetisnull(res, row, c);
    if (present)
        *present = !null;
    size_t n = null ? 0 : (size_t)PQgetlength(res, row, c);
    if (n >= size)
        return false;
    memcpy(out, PQgetvalue(res, row, c), n);
    out[n] = '\0';
    return true;
}

static bool columns_match(const PGresult *res, char *why, size_t whylen)
{
    if (PQnfields(res) != COL_COUNT) {
        snprintf(why, whylen, "%d columns, not %d", PQnfields(res), COL_COUNT);
        return false;
    }
    for (int c = 0; c < COL_COUNT; c++) {
        const char *name = PQfname(res, c);
        if (!name || strcmp(name, invoice_row_columns[c]) != 0) {
            snprintf(why, whylen, "column %d is \"%s\", not \"%s\"", c + 1, name ? name : "",
                     invoice_row_columns[c]);
            return false;
        }
    }
    return true;
}

bool invoice_row_decode(const PGresult *res, int row, struct invoice_row *out, char *why,
                        size_t whylen)
{
    memset(out, 0, sizeof *out);
    if (!columns_match(res, why, whylen))
        return false;
    const char *state = PQgetvalue(res, row, COL_STATE);
    if (!invoice_state_parse(state, &out->state)) {
        snprintf(why, whylen, "unknown state \"%s\"", state);
        return false;
    }
    out->renewal = strcmp(PQgetvalue(res, row, COL_KIND), "renewal") == 0;
    out->months = xg_pg_int64(res, row, COL_MONTHS);
    out->amount = xg_pg_int64(res, row, COL_AMOUNT);
    out->paid = xg_pg_int64(res, row, COL_PAID);
    out->confirmations = xg_pg_int64(res, row, COL_CONFIRMATIONS);
    out->confirmations_required = xg_pg_int64(res, row, COL_CONFIRMATIONS_REQUIRED);
    out->subaddress_index = xg_pg_int64(res, row, COL_SUBADDRESS_INDEX);
    out->tenant_id = xg_pg_int64(res, row, COL_TENANT_ID);
    out->price_minor = xg_pg_int64(res, row, COL_PRICE_MINOR);
    out->expires = xg_pg_int64(res, row, COL_EXPIRES);
    out->created_ms = xg_pg_int64(res, row, COL_CREATED_MS);
    out->provisioned_at = xg_pg_int64(res, row, COL_PROVISIONED_AT);
    out->now = xg_pg_int64(res, row, COL_NOW);
    bool fits = text(res, row, COL_ID, out->id, sizeof out->id, NULL) &&
                text(res, row, COL_TIER, out->tier, sizeof out->tier, NULL) &&
                text(res, row, COL_SUBADDRESS, out->subaddress, sizeof out->subaddress,
                     &out->has_subaddress) &&
                text(res, row, COL_CHALLENGE_NONCE, out->nonce, sizeof out->nonce, &out->xmr402) &&
                text(res, row, COL_TOKEN_HASH, out->token_hash, sizeof out->token_hash, NULL) &&
                text(res, row, COL_HANDLE, out->handle, sizeof out->handle, NULL) &&
                text(res, row, COL_VALID_UNTIL, out->valid_until, sizeof out->valid_until,
                     &out->has_valid_until) &&
                text(res, row, COL_PRICE_CURRENCY, out->currency, sizeof out->currency, NULL) &&
                text(res, row, COL_RATE, out->rate, sizeof out->rate, &out->has_rate) &&
                text(res, row, COL_EXPIRES_AT, out->expires_at, sizeof out->expires_at, NULL) &&
                text(res, row, COL_CREATED_AT, out->created_at, sizeof out->created_at, NULL) &&
                text(res, row, COL_WEBHOOK_URL, out->webhook_url, sizeof out->webhook_url,
                     &out->has_webhook);
    if (!fits)
        snprintf(why, whylen, "a text longer than its field");
    return fits;
}

enum invoice_row_load invoice_row_load(struct xg_pg *pg, const char *id, struct invoice_row *out)
{
    char named[INVOICE_ID_SIZE]; /* for the log: id may be out's own */
    snprintf(named, sizeof named, "%s", id);
    const char *params[] = {id};
    PGresult *res = xg_pg_exec(pg, "bl_invoice_get", 1, params);
    if (!res)
        return INVOICE_ROW_DB_ERROR;
    memset(out, 0, sizeof *out); /* only now: id may be out's own, read again */
    enum invoice_row_load r = INVOICE_ROW_NOT_FOUND;
    char why[128];
    if (PQntuples(res) == 1) {
        r = invoice_row_decode(res, 0, out, why, sizeof why) ? INVOICE_ROW_FOUND
                                                             : INVOICE_ROW_DB_ERROR;
        if (r == INVOICE_ROW_DB_ERROR)
            xg_log(XG_LOG_ERROR, "invoice_row_unreadable", "invoice %s: %s", named, why);
    }
    PQclear(res);
    return r;
}
