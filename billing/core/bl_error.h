/* bl_error — billing's error registry: every error code a client of billing's API can
 * receive, each with its HTTP status and its default message, in one table (bl_error.c).
 * A reply is {"error":{"code":"<code>","message":"<message>"}} with that status; a call
 * site names the error by its enum and may word the message for the case at hand, and add
 * members after "error" (api_shared.h: api_error_reply, which every error answer of the
 * API and the pages goes through). The codes and statuses are a contract with clients (the web
 * pages, the gateway's XMR402 flow, agents): change one only with them. Pure: no I/O. */
#ifndef BL_ERROR_H
#define BL_ERROR_H

#include <jansson.h>

enum bl_error {
    /* the request */
    BL_ERROR_MALFORMED_JSON,
    BL_ERROR_INVALID_IDEMPOTENCY_KEY,
    BL_ERROR_IDEMPOTENCY_KEY_REUSED,
    BL_ERROR_TOKEN_REQUIRED,
    BL_ERROR_UNKNOWN_TOKEN,
    BL_ERROR_NOT_FOUND,
    BL_ERROR_RATE_LIMITED,
    BL_ERROR_FREE_TIER_EXHAUSTED,
    /* plans and invoices */
    BL_ERROR_UNKNOWN_TIER,
    BL_ERROR_TIER_NOT_FOR_SALE,
    BL_ERROR_TIER_CHANGE_UNPRICED,
    BL_ERROR_FREE_TIER_NOT_RENEWABLE,
    BL_ERROR_MONTHS_OUT_OF_RANGE,
    BL_ERROR_INVOICE_OPEN,
    BL_ERROR_INVOICE_NOT_FOUND,
    BL_ERROR_NOTHING_TO_PAY,
    /* webhooks (hook_ssrf.h) */
    BL_ERROR_INVALID_WEBHOOK_URL,
    BL_ERROR_WEBHOOK_URL_REFUSED,
    /* XMR402 proofs (api_xmr402_verify.c) */
    BL_ERROR_MALFORMED_PROOF,
    BL_ERROR_UNKNOWN_INVOICE,
    BL_ERROR_TXID_UNKNOWN,
    BL_ERROR_NOT_XMR402,
    BL_ERROR_TXID_USED,
    BL_ERROR_PROOF_INVALID,
    BL_ERROR_UNDERPAID,
    BL_ERROR_LATE,
    BL_ERROR_NOT_COUNTED,
    BL_ERROR_INVOICE_EXPIRED,
    BL_ERROR_PENDING_SPENT,
    BL_ERROR_CREDENTIALS_ROTATED,
    /* our side */
    BL_ERROR_INTERNAL_ERROR,
    BL_ERROR_DATABASE_UNAVAILABLE,
    BL_ERROR_WALLET_UNAVAILABLE,
    BL_ERROR_RATE_UNAVAILABLE,
    BL_ERROR_VERIFY_BUSY,
    BL_ERROR_COUNT
};

struct bl_error_info {
    const char *code;    /* snake_case, the "code" clients match on */
    unsigned int status; /* the HTTP status it is answered with */
    const char *message; /* the default "message" */
};

/* The registry entry of e; e must be one of the enum's errors (asserted). */
const struct bl_error_info *bl_error_info(enum bl_error e);

/* The entry's fields. */
const char *bl_error_code(enum bl_error e);
unsigned int bl_error_status(enum bl_error e);
const char *bl_error_message(enum bl_error e);

/* {"error":{"code":…,"message":…}}, message NULL for the default one (new reference;
 * NULL when out of memory). Callers may add members after "error". */
json_t *bl_error_json(enum bl_error e, const char *message);

#endif
