/* api_xmr402 — see api_xmr402.h. */
#include "api/api_xmr402.h"

#include "xg_clock.h"
#include "xg_xmr402.h"
#include "xmr402/bl_xmr402.h"

#include <stdio.h>
#include <string.h>

/* The address billing's limiter counts (by its prefix, client_limit.h): the agent's, when
 * the gateway vouches for it, else the peer's. */
void api_xmr402_client_key(const struct xg_httpd_request *req, char *out, size_t len)
{
    struct api *api = api_of(req);
    const char *named = xg_httpd_header(req, XG_XMR402_CLIENT_HDR);
    const char *sig = xg_httpd_header(req, XG_XMR402_SIG_HDR);
    if (named && strlen(named) < 200 && bl_keys_client_sig_ok(&api->keys, named, sig)) {
        snprintf(out, len, "%s", named);
        return;
    }
    xg_httpd_client_addr(req, out, len);
}

void api_xmr402_network_key(const struct xg_httpd_request *req, char out[CLIENT_PREFIX_KEY_SIZE])
{
    char addr[256], client[CLIENT_PREFIX_KEY_SIZE];
    api_xmr402_client_key(req, addr, sizeof addr);
    (void)client_prefix_keys(addr[0] ? addr : "unknown", &api_of(req)->clients, client, out);
}

enum api_load api_xmr402_load_invoice(struct xg_pg *pg, const char *id, struct invoice_row *inv)
{
    switch (invoice_row_load(pg, id, inv)) {
    case INVOICE_ROW_FOUND:
        return API_LOAD_OK;
    case INVOICE_ROW_NOT_FOUND:
        return API_LOAD_NOT_FOUND;
    case INVOICE_ROW_DB_ERROR:
        break;
    }
    return API_LOAD_DB_ERROR;
}

int64_t api_xmr402_remaining(const struct invoice_row *inv)
{
    return inv->paid >= inv->amount ? 0 : inv->amount - inv->paid;
}

/* The challenge an agent pays: what the gateway turns into WWW-Authenticate and a body.
 * For an underpaid invoice the amount asked is what is left, on the same address and
 * message. The timestamp is the invoice's creation in unix milliseconds, as the draft's
 * README, its v1.0.1 SPEC and both reference implementations send it; the draft's own body
 * names (version, amount_atomic, nonce, expires_in_seconds) come beside ours. */
json_t *api_xmr402_challenge_json(const struct api *api, const struct invoice_row *inv)
{
    int64_t ask = inv->state == INVOICE_UNDERPAID || inv->state == INVOICE_LATE
                      ? api_xmr402_remaining(inv)
                      : inv->amount;
    char status_path[96];
    snprintf(status_path, sizeof status_path, "/api/invoices/%s", inv->id);
    int64_t ttl = inv->expires > inv->now ? inv->expires - inv->now : 0;
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:s, s:o, s:s, s:I, s:s, s:I, "
                     "s:I, s:s, s:s, s:s, s:o, s:s, s:I}",
                     "protocol", "XMR402", "invoice", inv->id, "tier", inv->tier, "state",
                     invoice_state_name(inv->state), "amount", api_json_piconero(ask), "amount_xmr",
                     api_json_xmr(ask), "invoice_amount", api_json_piconero(inv->amount), "paid",
                     api_json_piconero(inv->paid), "address", inv->subaddress, "uri",
                     api_json_monero_uri(inv->subaddress, ask), "message", inv->nonce, "timestamp",
                     (json_int_t)inv->created_ms, "expires_at", inv->expires_at, "expires_at_unix",
                     (json_int_t)inv->expires, "confirmations_required",
                     (json_int_t)inv->confirmations_required, "status_path", status_path,
                     "receipt_key", api->receipt_public_hex, "version", BL_XMR402_DRAFT_VERSION,
                     "amount_atomic", api_json_piconero(ask), "nonce", inv->nonce,
                     "expires_in_seconds", (json_int_t)ttl);
}

/* A token from table for this client (global: one bucket for all); false with the 429
 * queued. */
bool api_xmr402_take_limit(const struct xg_httpd_request *req, struct client_limit_table *table,
                           const char *what, bool global, enum xg_httpd_result *mr)
{
    char client[256], message[128];
    int64_t retry = 0;
    if (global)
        snprintf(client, sizeof client, "all");
    else
        api_xmr402_client_key(req, client, sizeof client);
    if (client_limit_table_take(table, client, xg_monotonic_ms(), &retry))
        return true;
    snprintf(message, sizeof message, "too many XMR402 %s from %s; try again later", what,
             global ? "all clients" : "this address");
    *mr = api_error_reply(req, BL_ERROR_RATE_LIMITED, message,
                          json_pack("{s:I}", "retry_after", (json_int_t)retry), retry);
    return false;
}
