/* api_web — GET /, /renew, /invoice/<id> and /assets/<name>: the web pages (web.h). The route
 * table (api.c) calls it. */
#ifndef API_WEB_H
#define API_WEB_H

#include "xg_httpd.h"

enum xg_httpd_result api_handle_web_page(const struct xg_httpd_request *req);
enum xg_httpd_result api_handle_web_asset(const struct xg_httpd_request *req);

#endif
