/* front_native — the own front end (front.c) behind the request path's interface
 * (front.h: struct front_ops for its connections, struct front_app for its handler). */
#include "http/front.h"

#include <stdbool.h>
#include <stddef.h>

/* ---- the request path behind this front end (front_app) ------------------------------ */

static bool native_respond(void *conn, unsigned status, const struct front_header *headers,
                           size_t nheaders, const char *body, size_t len, bool body_owned)
{
    return front_respond(conn, status, headers, nheaders, body, len, body_owned);
}

/* Nothing to do: a connection reads no further request until this one is answered. */
static void native_suspend(void *conn)
{
    (void)conn;
}

static void native_resume(void *conn)
{
    front_resume(conn);
}

static bool native_peer_left(const void *conn)
{
    return front_peer_left(conn);
}

static void native_client_address(const void *conn, char *out, size_t outlen)
{
    front_client_address(conn, out, outlen);
}

static const char *native_header(const void *conn, const char *name)
{
    return hreq_header(front_request_head(conn), name);
}

static bool native_header_join(const void *conn, const char *name, char *out, size_t outlen)
{
    return hreq_header_join(front_request_head(conn), name, out, outlen);
}

static size_t native_header_count(const void *conn, const char *name)
{
    return hreq_header_count(front_request_head(conn), name);
}

static bool native_query_arg(const void *conn, const char *name, char *out, size_t outlen)
{
    return hreq_query_arg(front_request_head(conn), name, out, outlen);
}

static bool native_stream_begin(void *conn, unsigned status, const struct front_header *headers,
                                size_t nheaders)
{
    return front_stream_begin(conn, status, headers, nheaders);
}

static bool native_stream_write(void *conn, const char *data, size_t len)
{
    return front_stream_write(conn, data, len);
}

static void native_stream_end(void *conn)
{
    front_stream_end(conn);
}

const struct front_ops front_native_ops = {
    .respond = native_respond,
    .suspend = native_suspend,
    .resume = native_resume,
    .peer_left = native_peer_left,
    .client_address = native_client_address,
    .header = native_header,
    .header_count = native_header_count,
    .header_join = native_header_join,
    .query_arg = native_query_arg,
    .stream_begin = native_stream_begin,
    .stream_write = native_stream_write,
    .stream_end = native_stream_end,
};

/* The app said to drop the connection: it is closed from the loop (front_abandon). */
static void native_result(struct front_conn *c, enum front_result r)
{
    if (r == FRONT_CLOSE)
        front_abandon(c);
}

static void *app_on_head(void *cls, struct front_conn *c, const struct hreq *head)
{
    const struct front_app *app = cls;
    struct front_head h = {.path = head->path,
                           .query = head->query,
                           .method = head->method,
                           .has_length = head->has_length,
                           .content_length = head->content_length,
                           .chunked = head->chunked,
                           .expect_continue = head->expect_continue};
    void *req = NULL;
    enum front_result r =
        app->on_head(app->cls, (struct front_client){&front_native_ops, c}, &h, &req);
    if (req)
        native_result(c, r);
    return req;
}

static void app_on_body(void *cls, struct front_conn *c, void *req, char *body, size_t len,
                        bool too_large)
{
    const struct front_app *app = cls;
    native_result(c, app->on_body(app->cls, req, body, len, too_large));
}

static void app_on_resume(void *cls, struct front_conn *c, void *req)
{
    const struct front_app *app = cls;
    native_result(c, app->on_resume(app->cls, req));
}

static void app_on_completed(void *cls, void *req)
{
    const struct front_app *app = cls;
    app->on_completed(app->cls, req);
}

struct front_handler front_native_handler(const struct front_app *app)
{
    return (struct front_handler){.cls = (void *)app,
                                  .on_head = app_on_head,
                                  .on_body = app_on_body,
                                  .on_resume = app_on_resume,
                                  .on_completed = app_on_completed};
}
