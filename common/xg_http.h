/* xg_http — a small blocking HTTP client on libcurl, for calls off the request path:
 * wallet-rpc, the exchange-rate source, readiness checks. One client keeps one
 * keep-alive connection; it is used by one thread at a time. (The gateway's hot path
 * to monerod uses its own curl multi loop, not this.) */
#ifndef XG_HTTP_H
#define XG_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Responses larger than this fail as a transport error (a peer gone wrong, not data). */
#define XG_HTTP_MAX_RESPONSE (64u << 20)

struct xg_http_client;

struct xg_http_response {
    long status; /* HTTP status; 0 when no answer arrived                 */
    char *body;  /* NUL-terminated, malloc'd; NULL when none              */
    size_t len;
    char error[256]; /* transport error text when status == 0              */
};

/* NULL when out of memory. The process calls curl_global_init once before threads. */
struct xg_http_client *xg_http_client_new(void);
void xg_http_client_free(struct xg_http_client *client);

/* Sends a request; body may be NULL (GET). Returns false only on a transport failure
 * (connect, timeout, TLS, a response over XG_HTTP_MAX_RESPONSE), with out->error set;
 * any HTTP status returns true. Redirects are not followed; proxy variables are ignored.
 * `out` is overwritten (not freed first); the caller frees it with
 * xg_http_response_clear, after success and failure alike. */
__attribute__((warn_unused_result)) bool xg_http_request(struct xg_http_client *client,
                                                         const char *method, const char *url,
                                                         const char *content_type, const char *body,
                                                         size_t body_len, long timeout_ms,
                                                         struct xg_http_response *out);

void xg_http_response_clear(struct xg_http_response *out);

/* JSON-RPC 2.0 call to `url` (a /json_rpc endpoint). params is stolen (may be NULL).
 * Returns the "result" member (new reference) or NULL with a message in err: transport
 * failure, non-200 status, unparsable body, or the RPC's "error" (code and message). */
json_t *xg_jsonrpc_call(struct xg_http_client *client, const char *url, const char *method,
                        json_t *params, long timeout_ms, char *err, size_t errlen);

#endif
