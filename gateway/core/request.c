/* request — the client connection as the request path sees it, whichever front end
 * holds it; see request.h. */
#include "core/request.h"

const char *gw_request_header(const struct gw_request *req, const char *name)
{
    return req->client.ops->header(req->client.conn, name);
}

size_t gw_request_header_count(const struct gw_request *req, const char *name)
{
    return req->client.ops->header_count(req->client.conn, name);
}

bool gw_request_query_arg(const struct gw_request *req, const char *name, char *out, size_t outlen)
{
    return req->client.ops->query_arg(req->client.conn, name, out, outlen);
}

void gw_request_client_address(const struct gw_request *req, char *out, size_t outlen)
{
    req->client.ops->client_address(req->client.conn, out, outlen);
}

void gw_request_suspend(struct gw_request *req)
{
    req->client.ops->suspend(req->client.conn);
}

void gw_request_resume(struct gw_request *req)
{
    req->client.ops->resume(req->client.conn);
}

bool gw_request_client_left(const struct gw_request *req)
{
    return req->client.ops->peer_left(req->client.conn);
}
