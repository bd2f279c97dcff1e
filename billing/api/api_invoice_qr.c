/* GET /api/invoices/<id>/qr.svg — the QR code of what is left to pay on an invoice: its
 * `remaining_uri` when a partial payment arrived, else its `uri` (both monero: URIs with
 * tx_amount). Not cached: it changes when a payment lands. 404 once there is nothing
 * to pay to (an invoice without a subaddress). */
#include "api/api_invoice_qr.h"

#include "api/api_invoice_view.h"
#include "api/api_shared.h"
#include "api/qr.h"
#include "xg_reply.h"
#include "xg_str.h"

#include <stdlib.h>
#include <string.h>

#define QR_SUFFIX "/qr.svg"

bool api_invoice_qr_path(const char *rest)
{
    size_t n = strlen(rest), s = strlen(QR_SUFFIX);
    return n > s && strcmp(rest + n - s, QR_SUFFIX) == 0;
}

static enum xg_httpd_result reply_svg(const struct xg_httpd_request *req, const char *uri)
{
    char *svg = qr_svg(uri, "Monero payment QR code");
    if (!svg)
        return api_errorf(req, BL_ERROR_INTERNAL_ERROR, "cannot draw the QR code");
    const char *headers[] = {"Cache-Control", "no-store", "X-Content-Type-Options", "nosniff",
                             NULL};
    enum xg_httpd_result mr =
        xg_reply_bytes_with(req->conn, 200, "image/svg+xml", svg, strlen(svg), headers);
    free(svg);
    return mr;
}

enum xg_httpd_result api_handle_invoice_qr(const struct xg_httpd_request *req)
{
    struct api *api = api_of(req);
    const char *rest = req->path + strlen("/api/invoices/");
    char id[API_INVOICE_ID_SIZE];
    size_t idlen = strlen(rest) - strlen(QR_SUFFIX);
    if (idlen >= sizeof id)
        return api_error(req, BL_ERROR_INVOICE_NOT_FOUND);
    memcpy(id, rest, idlen);
    id[idlen] = '\0';
    if (!xg_str_is_uuid(id))
        return api_error(req, BL_ERROR_INVOICE_NOT_FOUND);
    struct xg_pg *pg = pgpool_get(api->pool);
    json_t *inv = NULL;
    enum api_load r = api_invoice_view_load(api, pg, id, &inv);
    enum xg_httpd_result mr;
    if (r == API_LOAD_DB_ERROR) {
        mr = api_db_error(req, pg);
        goto out;
    }
    if (r == API_LOAD_NOT_FOUND) {
        mr = api_error(req, BL_ERROR_INVOICE_NOT_FOUND);
        goto out;
    }
    const char *uri = json_string_value(json_object_get(inv, "remaining_uri"));
    if (!uri)
        uri = json_string_value(json_object_get(inv, "uri"));
    mr = uri ? reply_svg(req, uri) : api_error(req, BL_ERROR_NOTHING_TO_PAY);
out:
    json_decref(inv);
    pgpool_put(api->pool, pg);
    return mr;
}
