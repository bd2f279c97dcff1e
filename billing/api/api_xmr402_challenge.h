/* api_xmr402_challenge — POST /api/xmr402/challenge: a new XMR402 invoice to pay
 * (api_xmr402.h). The route table (api.c) calls it. */
#ifndef API_XMR402_CHALLENGE_H
#define API_XMR402_CHALLENGE_H

#include "xg_httpd.h"

enum xg_httpd_result api_handle_xmr402_challenge(const struct xg_httpd_request *req);

#endif
