/* api_invoice_get — GET /api/invoices/<id>: the invoice (api_invoice_view.h). The route table
 * (api.c) calls it. */
#ifndef API_INVOICE_GET_H
#define API_INVOICE_GET_H

#include "xg_httpd.h"

enum xg_httpd_result api_handle_invoice_get(const struct xg_httpd_request *req);

#endif
