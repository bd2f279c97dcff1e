/* GET /, /renew, /invoice/<id>, /assets/<name> — the web pages (web.h). */
#include "api/api_web.h"

#include "api/api_shared.h"
#include "api/web.h"

#include <string.h>

enum xg_httpd_result api_handle_web_page(const struct xg_httpd_request *req)
{
    const char *page = web_page_for_path(req->path);
    if (!page)
        return api_error(req, BL_ERROR_NOT_FOUND);
    return web_serve(api_of(req)->web, req, NULL, page);
}

enum xg_httpd_result api_handle_web_asset(const struct xg_httpd_request *req)
{
    const char *name = req->path + strlen("/assets/");
    return web_serve(api_of(req)->web, req, "assets", name);
}
