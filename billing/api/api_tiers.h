/* api_tiers — GET /api/tiers: the public plans with their current XMR quote. The route table
 * (api.c) calls it. */
#ifndef API_TIERS_H
#define API_TIERS_H

#include "xg_httpd.h"

enum xg_httpd_result api_handle_tiers(const struct xg_httpd_request *req);

#endif
