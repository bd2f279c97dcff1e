/* bl_error — see bl_error.h. */
#include "core/bl_error.h"

#include <assert.h>

/* Ordered as the enum; designated so a missing or misplaced entry is a NULL code, which
 * the unit test catches. */
static const struct bl_error_info bl_error_table[BL_ERROR_COUNT] = {
    [BL_ERROR_MALFORMED_JSON] = {"malformed_json", 400, "the body must be a JSON object"},
    [BL_ERROR_INVALID_IDEMPOTENCY_KEY] = {"invalid_idempotency_key", 400,
                                          "Idempotency-Key must be 1 to 255 visible ASCII "
                                          "characters"},
    [BL_ERROR_IDEMPOTENCY_KEY_REUSED] = {"idempotency_key_reused", 409,
                                         "this Idempotency-Key was used with a different "
                                         "request"},
    [BL_ERROR_TOKEN_REQUIRED] = {"token_required", 401,
                                 "send the tenant's token as Authorization: Bearer <token>"},
    [BL_ERROR_UNKNOWN_TOKEN] = {"unknown_token", 404, "that token belongs to no tenant"},
    [BL_ERROR_NOT_FOUND] = {"not_found", 404, "no such page"},
    [BL_ERROR_RATE_LIMITED] = {"rate_limited", 429,
                               "too many invoices from this address; try again later"},
    [BL_ERROR_FREE_TIER_EXHAUSTED] = {"free_tier_exhausted", 429,
                                      "no more free tenants for now; try again later"},
    [BL_ERROR_UNKNOWN_TIER] = {"unknown_tier", 400, "no such tier"},
    [BL_ERROR_TIER_NOT_FOR_SALE] = {"tier_not_for_sale", 400, "this tier is not sold this way"},
    [BL_ERROR_TIER_CHANGE_UNPRICED] = {"tier_change_unpriced", 400,
                                       "the time left on the tenant's tier cannot be carried "
                                       "onto the new tier"},
    [BL_ERROR_FREE_TIER_NOT_RENEWABLE] = {"free_tier_not_renewable", 400,
                                          "the free tier cannot be renewed; buy a new free "
                                          "token"},
    [BL_ERROR_MONTHS_OUT_OF_RANGE] = {"months_out_of_range", 400,
                                      "months is out of range for this tier"},
    [BL_ERROR_INVOICE_OPEN] = {"invoice_open", 409,
                               "an invoice is still waiting for its payment on this tenant's "
                               "subaddress; pay it or let it expire"},
    [BL_ERROR_INVOICE_NOT_FOUND] = {"invoice_not_found", 404, "no such invoice"},
    [BL_ERROR_NOTHING_TO_PAY] = {"nothing_to_pay", 404, "this invoice has no payment address"},
    [BL_ERROR_INVALID_WEBHOOK_URL] = {"invalid_webhook_url", 400,
                                      "webhook_url must be an http:// or https:// URL of at most "
                                      "2048 characters"},
    [BL_ERROR_WEBHOOK_URL_REFUSED] = {"webhook_url_refused", 400,
                                      "webhook_url points at an address billing does not send "
                                      "to (loopback, private, link-local or reserved)"},
    [BL_ERROR_MALFORMED_PROOF] = {"malformed_proof", 400,
                                  "the body must be a JSON object with txid and proof"},
    [BL_ERROR_UNKNOWN_INVOICE] = {"unknown_invoice", 402, "no such invoice"},
    [BL_ERROR_TXID_UNKNOWN] = {"txid_unknown", 402,
                               "the payment wallet sees no XMR402 invoice paid by this "
                               "transaction (yet); retry shortly or add invoice=\"<id>\""},
    [BL_ERROR_NOT_XMR402] = {"not_xmr402", 402,
                             "that invoice was not created by an XMR402 challenge"},
    [BL_ERROR_TXID_USED] = {"txid_used", 409, "this transaction already paid another invoice"},
    [BL_ERROR_PROOF_INVALID] = {"proof_invalid", 402, "the transaction proof does not hold"},
    [BL_ERROR_UNDERPAID] = {"underpaid", 402,
                            "underpaid: the rest is still to pay to the same address"},
    [BL_ERROR_LATE] = {"late", 402, "paid after the quote expired; some is still missing"},
    [BL_ERROR_NOT_COUNTED] = {"not_counted", 402,
                              "the payment does not count (it left the pool or the chain, or "
                              "is time-locked); pay the invoice again"},
    [BL_ERROR_INVOICE_EXPIRED] = {"invoice_expired", 410,
                                  "this invoice expired before it was paid; ask for a new "
                                  "challenge"},
    [BL_ERROR_PENDING_SPENT] = {"pending_spent", 429,
                                "this payment's pending allowance is spent; it is served "
                                "again once it has the tier's confirmations"},
    [BL_ERROR_CREDENTIALS_ROTATED] = {"credentials_rotated", 402,
                                      "the tenant this payment provisioned has rotated its "
                                      "token: the proof no longer stands for it; use the new "
                                      "token"},
    [BL_ERROR_INTERNAL_ERROR] = {"internal_error", 500, "internal error"},
    [BL_ERROR_DATABASE_UNAVAILABLE] = {"database_unavailable", 503,
                                       "the database is not answering; try again shortly"},
    [BL_ERROR_WALLET_UNAVAILABLE] = {"wallet_unavailable", 503,
                                     "the payment wallet is not answering; try again in a "
                                     "minute"},
    [BL_ERROR_RATE_UNAVAILABLE] = {"rate_unavailable", 503,
                                   "no current exchange rate; fiat-priced plans cannot be "
                                   "quoted right now"},
    [BL_ERROR_VERIFY_BUSY] = {"verify_busy", 503,
                              "too many proofs are waiting for their transaction; send the "
                              "proof again after Retry-After"},
};

const struct bl_error_info *bl_error_info(enum bl_error e)
{
    assert((unsigned)e < BL_ERROR_COUNT);
    return &bl_error_table[e];
}

const char *bl_error_code(enum bl_error e)
{
    return bl_error_info(e)->code;
}

unsigned int bl_error_status(enum bl_error e)
{
    return bl_error_info(e)->status;
}

const char *bl_error_message(enum bl_error e)
{
    return bl_error_info(e)->message;
}

json_t *bl_error_json(enum bl_error e, const char *message)
{
    const struct bl_error_info *info = bl_error_info(e);
    return json_pack("{s:{s:s, s:s}}", "error", "code", info->code, "message",
                     message ? message : info->message);
}
