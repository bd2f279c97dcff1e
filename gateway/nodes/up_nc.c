/* up_nc — jobs through nodeconn; see up_nc.h. */
#include "nodes/up_nc.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/http1.h"

#define UP_NC_MAX_HEADERS 32

static bool up_nc_on_body(void *ctx, const char *data, size_t n)
{
    struct up_xfer *x = ctx;
    const struct h1_parser *p = &x->nx.parser;
    /* A declared length sizes the buffer once, exactly: the body is usually handed on to
     * the client without a copy, so the buffer is new for most transfers. */
    if (x->resp_len == 0 && p->has_length && !p->chunked && !p->until_close &&
        p->content_length < x->opt->max_response_bytes && p->content_length + 1 > x->resp_cap) {
        char *buf = realloc(x->resp, (size_t)p->content_length + 1);
        if (!buf) {
            x->out_of_memory = true;
            return false;
        }
        x->resp = buf;
        x->resp_cap = (size_t)p->content_length + 1;
    }
    return up_xfer_append(x, data, n);
}

static void up_nc_on_end(struct nc_exchange *nx, enum nc_end end, const char *error)
{
    struct up_xfer *x = (struct up_xfer *)((char *)nx - offsetof(struct up_xfer, nx));
    struct up_result *r = &x->result;
    memset(r, 0, sizeof *r);
    if (end == NC_ANSWERED) {
        r->outcome = UP_OK;
        r->http_status = nx->parser.status;
        r->body = x->resp ? x->resp : "";
        r->body_len = x->resp_len;
        r->content_type = nx->parser.content_type[0] ? nx->parser.content_type : NULL;
    } else if (x->too_large) {
        r->outcome = UP_TOO_LARGE;
        r->error = up_xfer_too_large_why(x);
    } else if (x->out_of_memory) {
        r->outcome = UP_INTERNAL_ERROR;
        r->error = "out of memory";
    } else {
        r->outcome = end == NC_CONNECT_FAILED ? UP_CONNECT_ERROR : UP_PROTOCOL_ERROR;
        r->http_status = nx->parser.status;
        r->error = error;
    }
    x->finish(x);
}

bool up_nc_prepare(struct up_xfer *x, const struct up_job *job, bool *served)
{
    *served = nc_target_of(job->url, &x->target);
    if (!*served)
        return false;
    struct h1_header headers[UP_NC_MAX_HEADERS];
    if (job->nheaders > UP_NC_MAX_HEADERS)
        return false;
    for (size_t i = 0; i < job->nheaders; i++)
        headers[i] = (struct h1_header){job->headers[i].name, job->headers[i].value};
    bool post = strcmp(job->method, "POST") == 0;
    size_t head = h1_request_head_size(job->method, x->target.path, x->target.authority, headers,
                                       job->nheaders, post, job->body_len);
    if (!up_xfer_reserve(&x->req, &x->req_cap, head + job->body_len + 1))
        return false;
    h1_format_request_head(x->req, job->method, x->target.path, x->target.authority, headers,
                           job->nheaders, post, job->body_len);
    if (post && job->body_len > 0)
        memcpy(x->req + head, job->body, job->body_len);
    /* Field by field: the exchange embeds the parser's line buffer, not worth zeroing. */
    x->nx.request = x->req;
    x->nx.request_len = head + (post ? job->body_len : 0);
    x->nx.on_body = up_nc_on_body;
    x->nx.on_end = up_nc_on_end;
    x->nx.ctx = x;
    x->nx.max_conns =
        up_job_node_cap(job->max_connections, x->opt->cap_share, x->opt->max_connections_per_node);
    x->nx.node = NULL;
    x->nx.conn = NULL;
    return true;
}

void up_nc_start(struct nc_client *c, struct up_xfer *x)
{
    nc_start(c, &x->nx, &x->target);
}

void up_nc_abandon(struct nc_client *c, struct up_xfer *x)
{
    nc_abandon(c, &x->nx);
}
