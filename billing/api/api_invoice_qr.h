/* api_invoice_qr — GET /api/invoices/<id>/qr.svg: the QR code of what is left to pay. The route
 * table (api.c) calls it. */
#ifndef API_INVOICE_QR_H
#define API_INVOICE_QR_H

#include "xg_httpd.h"

#include <stdbool.h>

/* True when the path after /api/invoices/ asks for the QR code ("<id>/qr.svg"): the route
 * table sends those here, the rest of the pattern to api_invoice_get.h. */
bool api_invoice_qr_path(const char *rest);
enum xg_httpd_result api_handle_invoice_qr(const struct xg_httpd_request *req);

#endif
