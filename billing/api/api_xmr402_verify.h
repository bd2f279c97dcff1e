/* api_xmr402_verify — POST /api/xmr402/verify: a payment's proof, and what it buys
 * (api_xmr402.h). The route table (api.c) calls it. */
#ifndef API_XMR402_VERIFY_H
#define API_XMR402_VERIFY_H

#include "xg_httpd.h"

enum xg_httpd_result api_handle_xmr402_verify(const struct xg_httpd_request *req);

#endif
