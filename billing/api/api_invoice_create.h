/* api_invoice_create — POST /api/invoices: a purchase, a renewal or a free tenant. The route
 * table (api.c) calls it. */
#ifndef API_INVOICE_CREATE_H
#define API_INVOICE_CREATE_H

#include "xg_httpd.h"

enum xg_httpd_result api_handle_invoice_create(const struct xg_httpd_request *req);

#endif
