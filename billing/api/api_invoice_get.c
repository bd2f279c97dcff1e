/* GET /api/invoices/<id> — an invoice's status, amounts, payments and, once provisioned,
 * the tenant's validity and connection settings. The stored state is the poller's
 * verdict; `remaining` and the late disposition come from the same pure state machine
 * over the stored payments, all of them summed as settle reads them (invoice.h,
 * settle.h); the list shows the first MAX_SHOWN_PAYMENTS. An invoice created with a
 * webhook_url shows "webhook": its URL and each event's delivery status (attempts, last
 * status and error, next attempt, delivered or given up), never its secret. */
#include "api/api_invoice_get.h"

#include "api/api_invoice_view.h"
#include "api/api_shared.h"
#include "xg_reply.h"
#include "xg_str.h"

#include <string.h>

enum xg_httpd_result api_handle_invoice_get(const struct xg_httpd_request *req)
{
    struct api *api = api_of(req);
    const char *id = req->path + strlen("/api/invoices/");
    if (!xg_str_is_uuid(id))
        return api_error(req, BL_ERROR_INVOICE_NOT_FOUND);
    struct xg_pg *pg = pgpool_get(api->pool);
    json_t *inv = NULL;
    enum api_load r = api_invoice_view_load(api, pg, id, &inv);
    enum xg_httpd_result mr;
    if (r == API_LOAD_OK)
        mr = xg_reply_json(req->conn, 200, inv);
    else if (r == API_LOAD_NOT_FOUND)
        mr = api_error(req, BL_ERROR_INVOICE_NOT_FOUND);
    else
        mr = api_db_error(req, pg);
    pgpool_put(api->pool, pg);
    return mr;
}
