/* xg_reply — queueing answers on a libmicrohttpd connection for xg_httpd's handlers: JSON
 * bodies and plain bytes (errors are JSON bodies of a registry: bl_error.h, xg_admin_error.h). Each
 * returns XG_HTTPD_QUEUED, or XG_HTTPD_CLOSE when no answer could be queued (out of memory, or
 * libmicrohttpd refused it), so a handler can `return xg_reply_json(...)`. */
#ifndef XG_REPLY_H
#define XG_REPLY_H

#include "xg_httpd.h"

#include <jansson.h>
#include <microhttpd.h>
#include <stddef.h>

/* Serializes body (stolen; compact) with Content-Type application/json. */
enum xg_httpd_result xg_reply_json(struct MHD_Connection *conn, unsigned int status, json_t *body);

/* As xg_reply_json, adding extra headers from a NULL-terminated name,value,… list. */
enum xg_httpd_result xg_reply_json_with(struct MHD_Connection *conn, unsigned int status,
                                        json_t *body, const char *const *headers);

/* Copies `len` bytes of body; content_type may be NULL (no header). */
enum xg_httpd_result xg_reply_bytes(struct MHD_Connection *conn, unsigned int status,
                                    const char *content_type, const void *body, size_t len);

/* As xg_reply_bytes, adding extra headers from a NULL-terminated name,value,… list. */
enum xg_httpd_result xg_reply_bytes_with(struct MHD_Connection *conn, unsigned int status,
                                         const char *content_type, const void *body, size_t len,
                                         const char *const *headers);

#endif
