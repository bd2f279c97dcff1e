/* api_xmr402_receipt_key — GET /api/xmr402/receipt-key: the key receipts are signed with. The
 * route table (api.c) calls it. */
#ifndef API_XMR402_RECEIPT_KEY_H
#define API_XMR402_RECEIPT_KEY_H

#include "xg_httpd.h"

enum xg_httpd_result api_handle_xmr402_receipt_key(const struct xg_httpd_request *req);

#endif
