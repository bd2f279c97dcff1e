/* request — one client request on its way through the gateway, shared by server (the
 * client side, through either front end: front.h) and proxy and the XMR402 flow (the node
 * and billing side). request.c holds the accessors to the client connection, so those
 * need only this header.
 *
 * Lifetime: created by server when the request head arrives, freed only when the front
 * end reports the request over. While proxy (or the XMR402 flow) holds it, nothing else
 * touches it; it hands it back by filling the answer and calling gw_request_resume. A
 * request the burst limit holds (server.c, hold.h) is suspended the same way, and resumed
 * by its loop's timer. */
#ifndef REQUEST_H
#define REQUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http/front.h"
#include "core/hold.h"
#include "limits/limits.h"
#include "rpc/methods.h"
#include "rpc/plan.h"
#include "nodes/nodes.h"
#include "xg_hex.h"

struct gw_context;

enum gw_endpoint { GW_EP_JSONRPC, GW_EP_JSON, GW_EP_BIN };

#define GW_MAX_ATTEMPTS      2     /* a read is tried on at most two nodes */
#define GW_REQUEST_MAX_HEAD  16384 /* request line and headers (431 beyond) */
#define GW_MAX_EXTRA_HEADERS 4     /* three WWW-Authenticate challenges, or proxy's three */
#define GW_HEADER_VALUE_SIZE 512   /* a Digest challenge (DIGEST_CHALLENGE_SIZE) fits */

struct proxy_work;
struct xmr402_work;
struct gw_head_auth;

struct gw_request {
    struct gw_context *ctx;
    /* The client connection, whichever front end holds it (front.h). */
    struct front_client client;
    bool is_post;
    char *path;       /* the path as received (owned) */
    char *target;     /* path?query as received (owned), what a Digest uri names */
    const char *rest; /* the monerod path to serve, inside path or static */

    char *body; /* received body (owned), NUL-terminated */
    size_t body_len, body_cap;
    bool body_too_large;

    int64_t deadline_us; /* monotonic */

    /* What is being served. */
    enum gw_endpoint endpoint;
    const struct method_info *info;
    json_t *rpc_id;     /* JSON-RPC id to echo in our own errors (owned ref), or NULL */
    char *forward_body; /* body sent to nodes (owned) */
    size_t forward_len;
    bool asks_pool;   /* the node's pool is asked for (plan_pool_rule): never cached */
    struct plan plan; /* set by server once classified; what proxy follows (rpc/plan.h) */
    /* The tenant served (its per-tenant read rules, rpc/consistency.h); 0: none (a pending
     * XMR402 allowance). */
    int64_t tenant_id;

    /* The credential's verdict, taken on the head (server.c's; owned, freed with req). */
    struct gw_head_auth *head_auth;

    /* Where it goes: proxy's own state (proxy.c; freed by proxy_request_free). */
    struct proxy_work *px;

    /* An XMR402 conversation with billing (xmr402_flow.c; xmr402_flow_request_free). */
    struct xmr402_work *xmr402;

    /* The daily quota as this request saw it: X-RateLimit-* on every answer (limits.h). */
    struct limits_view limit;

    /* Held by the burst limit until its token is due (server.c, hold.h): its timer in the
     * loop's set, and the tenant it was admitted as (owned; NULL when not held). */
    struct hold_entry hold;
    struct tenant_row *held_tenant;
    bool hold_over; /* the timer fired: serve it */

    /* Operations (gw_metrics.h): when it arrived (monotonic), its id in logs and in the
     * X-Request-Id answer header, and whether the answer came from the cache. */
    int64_t started_us;
    uint64_t id;
    bool from_cache;
    bool dispatched; /* handed to proxy: a node (or the broadcast) answers it */

    /* The answer (answer.h), filled before it is sent or the connection is resumed. */
    bool answered;
    unsigned status;
    char *answer_body; /* owned, malloc'd */
    size_t answer_len;
    char answer_type[96];
    /* Headers of the answer (answer.h): challenges, Retry-After, Allow, and proxy's
     * X-Xmrgate-Cache, -Degraded, -Broadcast. */
    struct gw_header {
        const char *name; /* static */
        char value[GW_HEADER_VALUE_SIZE];
    } extra_headers[GW_MAX_EXTRA_HEADERS];
    size_t nextra_headers;
};

/* What the client sent, whichever front end received it. */
const char *gw_request_header(const struct gw_request *req, const char *name);
/* How many times header name came (an Authorization sent twice is refused). */
size_t gw_request_header_count(const struct gw_request *req, const char *name);
/* Query argument name, undecoded, into out; false when absent or too long. */
bool gw_request_query_arg(const struct gw_request *req, const char *name, char *out, size_t outlen);
/* The client's address as text, "" when unknown: the connection's peer (the socket's, or
 * the source a trusted balancer's PROXY header named), or, when that peer is in
 * [server] trusted_proxies, the rightmost untrusted X-Forwarded-For address
 * (xg_proxy_client_addr). The one accessor for anything kept per client. */
void gw_request_client_address(const struct gw_request *req, char *out, size_t outlen);

/* The request waits for proxy, billing or the burst limit's timer: nothing more is read
 * or answered until gw_request_resume. */
void gw_request_suspend(struct gw_request *req);

/* The answer is in req (or the wait is over): the front end brings the request back to
 * server (from the loop, after this call). */
void gw_request_resume(struct gw_request *req);

/* Whether the client closed or shut its side since its request came. */
bool gw_request_client_left(const struct gw_request *req);

/* The request's id as X-Request-Id and the log show it: 16 lower-case hex digits. */
#define GW_REQUEST_ID_SIZE 17
static inline void gw_request_id_text(uint64_t id, char out[GW_REQUEST_ID_SIZE])
{
    uint8_t be[8];
    for (int i = 0; i < 8; i++)
        be[i] = (uint8_t)(id >> (56 - 8 * i));
    xg_hex_encode(be, sizeof be, out);
}

#endif
