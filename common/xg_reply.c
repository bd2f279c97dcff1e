/* xg_reply — building and queueing MHD responses. Each response is destroyed right after
 * queueing: MHD keeps its own reference until the answer is sent. */
#include "xg_reply.h"

#include "xg_log.h"

#include <stdlib.h>
#include <string.h>

static enum xg_httpd_result queue(struct MHD_Connection *conn, unsigned int status,
                                  struct MHD_Response *resp, const char *content_type,
                                  const char *const *headers)
{
    if (!resp) {
        xg_log(XG_LOG_ERROR, "reply_failed", "cannot create a response (out of memory)");
        return XG_HTTPD_CLOSE;
    }
    if (content_type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    for (; headers && headers[0] && headers[1]; headers += 2)
        MHD_add_response_header(resp, headers[0], headers[1]);
    enum MHD_Result queued = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return queued == MHD_YES ? XG_HTTPD_QUEUED : XG_HTTPD_CLOSE;
}

enum xg_httpd_result xg_reply_json(struct MHD_Connection *conn, unsigned int status, json_t *body)
{
    return xg_reply_json_with(conn, status, body, NULL);
}

enum xg_httpd_result xg_reply_json_with(struct MHD_Connection *conn, unsigned int status,
                                        json_t *body, const char *const *headers)
{
    char *text = body ? json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_decref(body);
    if (!text) {
        xg_log(XG_LOG_ERROR, "reply_failed", "cannot serialize a JSON reply");
        return XG_HTTPD_CLOSE;
    }
    /* jansson allocates with malloc, so MHD may free() the text itself */
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp)
        free(text);
    return queue(conn, status, resp, "application/json", headers);
}

enum xg_httpd_result xg_reply_bytes(struct MHD_Connection *conn, unsigned int status,
                                    const char *content_type, const void *body, size_t len)
{
    return xg_reply_bytes_with(conn, status, content_type, body, len, NULL);
}

enum xg_httpd_result xg_reply_bytes_with(struct MHD_Connection *conn, unsigned int status,
                                         const char *content_type, const void *body, size_t len,
                                         const char *const *headers)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    return queue(conn, status, resp, content_type, headers);
}
