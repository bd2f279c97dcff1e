/* api_invoice_view — an invoice as the API shows it, the body of GET /api/invoices/<id>:
 * status, amounts, payments and, once provisioned, the tenant's validity and connection
 * settings. The stored state is the poller's verdict; `remaining` and the late disposition
 * come from the same pure state machine over the stored payments, all of them summed as
 * settle reads them (invoice.h, settle.h); the list shows the first 256 payments. An
 * invoice created with a webhook_url shows "webhook": its URL and each event's delivery
 * status (attempts, last status and error, next attempt, delivered or given up), never its
 * secret. Read by the invoice's own endpoint, its QR code and the answer that creates it. */
#ifndef API_INVOICE_VIEW_H
#define API_INVOICE_VIEW_H

#include "api/api_shared.h"
#include "xg_pg.h"

#include <jansson.h>

/* The invoice id (a UUID) as the view (new reference in *out, the caller's). */
__attribute__((warn_unused_result)) enum api_load
api_invoice_view_load(struct api *api, struct xg_pg *pg, const char *id, json_t **out);

#endif
