/* request — the client connection as the request path sees it, whichever front end
 * holds it; see request.h. */
#include "serve/request.h"

#include <string.h>

#include "serve/context.h"
#include "xg_proxy_addr.h"

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
    char text[XG_PROXY_ADDR_TEXT];
    struct xg_proxy_ip peer;
    const struct xg_proxy_trust *trust = &req->ctx->cfg->trust;
    if (outlen > 0)
        out[0] = '\0';
    req->client.ops->client_address(req->client.conn, text, sizeof text);
    if (!xg_proxy_ip_parse(text, strlen(text), &peer))
        return;
    char xff[GW_REQUEST_MAX_HEAD];
    /* X-Forwarded-For is read only from a trusted peer; one too long to hold is none */
    bool forwarded =
        xg_proxy_trusted(trust, &peer) &&
        req->client.ops->header_join(req->client.conn, "X-Forwarded-For", xff, sizeof xff);
    (void)xg_proxy_client_addr(trust, &peer, forwarded ? xff : NULL, out, outlen);
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
