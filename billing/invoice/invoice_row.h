/* invoice_row — an invoice as its row gives it, the one decoder every reader of billing
 * uses: the API's view of an invoice (api_invoice_view.h), XMR402's proofs
 * (api_xmr402_verify.c) and settling (settle.h). One query, bl_invoice_get
 * (sql/queries_billing.sql), names each column after invoice_row_columns below, in that
 * order; the decoder checks the names of the result it is handed, so a query and this list that
 * drifted apart fail loudly instead of reading one column for another.
 *
 * Text columns are copied into the struct; one longer than its field (none is, within the
 * schema's checks) fails the decoding rather than being cut. A NULL text is "" and its
 * has_* flag false; a NULL number is 0. Times are the database's clock. */
#ifndef INVOICE_ROW_H
#define INVOICE_ROW_H

#include "invoice/invoice.h"
#include "token.h"
#include "xg_pg.h"

#include <stdbool.h>
#include <stdint.h>

#define INVOICE_ID_SIZE          40   /* a UUID's text and its NUL, with room */
#define INVOICE_TIER_SIZE        40   /* tiers.id: at most 32 characters */
#define INVOICE_TIME_TEXT_SIZE   32   /* "YYYY-MM-DDTHH:MM:SSZ" */
#define INVOICE_NONCE_SIZE       80   /* an XMR402 challenge nonce (bl_xmr402.h: 32 hex) */
#define INVOICE_RATE_TEXT_SIZE   48   /* numeric(24, 8) as text */
#define INVOICE_WEBHOOK_URL_SIZE 2049 /* the schema's 2048 characters and the NUL */
#define INVOICE_ADDRESS_SIZE     128  /* a subaddress (95 characters), as wallet.h holds one */

struct invoice_row {
    char id[INVOICE_ID_SIZE];
    bool renewal; /* kind 'renewal', else a purchase */
    enum invoice_state state;
    char tier[INVOICE_TIER_SIZE];
    int64_t months;
    int64_t amount, paid; /* piconero */
    int64_t confirmations, confirmations_required;
    /* the subaddress to pay (none for a free invoice) */
    bool has_subaddress;
    int64_t subaddress_index;
    char subaddress[INVOICE_ADDRESS_SIZE];
    /* an XMR402 invoice: the challenge nonce its proof signs */
    bool xmr402;
    char nonce[INVOICE_NONCE_SIZE];
    char token_hash[TOKEN_HASH_HEX_SIZE]; /* lower-case hex; "" for a renewal */
    int64_t tenant_id;                    /* 0 until a purchase is provisioned */
    char handle[TOKEN_HANDLE_SIZE];       /* the tenant's, else the invoice's own */
    bool has_valid_until;                 /* it has a tenant */
    char valid_until[INVOICE_TIME_TEXT_SIZE];
    /* the locked quote: the tier's monthly price and, for fiat, the rate (fiat per XMR) */
    char currency[8];
    int64_t price_minor;
    bool has_rate;
    char rate[INVOICE_RATE_TEXT_SIZE];
    int64_t expires; /* unix seconds */
    char expires_at[INVOICE_TIME_TEXT_SIZE];
    int64_t created_ms; /* unix milliseconds */
    char created_at[INVOICE_TIME_TEXT_SIZE];
    int64_t provisioned_at; /* unix seconds; 0 before */
    bool has_webhook;
    char webhook_url[INVOICE_WEBHOOK_URL_SIZE];
    int64_t now; /* unix seconds: the statement's time */
};

/* The column names bl_invoice_get gives, in order (INVOICE_ROW_NCOLUMNS of them). */
#define INVOICE_ROW_NCOLUMNS 26
extern const char *const invoice_row_columns[INVOICE_ROW_NCOLUMNS];

/* Decodes row `row` of res (a bl_invoice_get result) into out. False, with the reason in
 * why, when the result's columns are not invoice_row_columns, a state is unknown or a text
 * does not fit: our bug or a schema the code does not know, never a client's fault. */
__attribute__((warn_unused_result)) bool
invoice_row_decode(const PGresult *res, int row, struct invoice_row *out, char *why, size_t whylen);

enum invoice_row_load { INVOICE_ROW_FOUND, INVOICE_ROW_NOT_FOUND, INVOICE_ROW_DB_ERROR };

/* Reads invoice id (a UUID) with bl_invoice_get, prepared on pg by its owner (the API's
 * pool, the poller); id may be out->id (a row read again). Once the query answered, out
 * is zeroed and stays so when there is no such invoice. A row that does not decode is
 * logged and answered INVOICE_ROW_DB_ERROR. */
__attribute__((warn_unused_result)) enum invoice_row_load
invoice_row_load(struct xg_pg *pg, const char *id, struct invoice_row *out);

#endif
