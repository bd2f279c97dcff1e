/* api_tenant_rotate — POST /api/tenant/rotate: a new token and login for a leaked one. The
 * route table (api.c) calls it. */
#ifndef API_TENANT_ROTATE_H
#define API_TENANT_ROTATE_H

#include "xg_httpd.h"

enum xg_httpd_result api_handle_tenant_rotate(const struct xg_httpd_request *req);

#endif
