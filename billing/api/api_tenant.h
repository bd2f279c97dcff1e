/* api_tenant — GET /api/tenant: plan, valid_until and usage today (Bearer token). The route
 * table (api.c) calls it. */
#ifndef API_TENANT_H
#define API_TENANT_H

#include "xg_httpd.h"

enum xg_httpd_result api_handle_tenant(const struct xg_httpd_request *req);

#endif
