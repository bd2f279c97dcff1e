/* api_xmr402 — POST /api/xmr402/challenge, POST /api/xmr402/verify and
 * GET /api/xmr402/receipt-key: the billing half of the XMR402 agent flow, called by the
 * gateway. The route table (api.c) calls it. */
#ifndef API_XMR402_H
#define API_XMR402_H

#include "xg_httpd.h"

enum xg_httpd_result api_handle_xmr402_challenge(const struct xg_httpd_request *req);
enum xg_httpd_result api_handle_xmr402_verify(const struct xg_httpd_request *req);
enum xg_httpd_result api_handle_xmr402_receipt_key(const struct xg_httpd_request *req);

#endif
