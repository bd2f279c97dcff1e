/* request — one client request on its way through the gateway, shared by server (the
 * client side: the own front end or libmicrohttpd) and proxy (the node side).
 *
 * Lifetime: created by server when the request head arrives, freed only when the front
 * end reports the request over. While proxy (or the XMR402 flow) holds it, nothing else
 * touches it; it hands it back by filling the answer and calling gw_request_resume. A
 * request the burst limit holds (server.c, hold.h) is suspended the same way, and resumed
 * by its loop's timer. */
#ifndef REQUEST_H
#define REQUEST_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "limits/hold.h"
#include "limits/limits.h"
#include "rpc/methods.h"
#include "rpc/plan.h"
#include "nodes/nodes.h"
#include "xg_hex.h"

struct gw_context;

enum gw_endpoint { GW_EP_JSONRPC, GW_EP_JSON, GW_EP_BIN };

#define GW_MAX_ATTEMPTS      2 /* a read is tried on at most two nodes */
#define GW_MAX_EXTRA_HEADERS 3

struct proxy_work;
struct xmr402_work;
struct front_conn;
struct hreq;

struct gw_request {
    struct gw_context *ctx;
    /* The client connection: libmicrohttpd's, or the own front end's (with its head). */
    struct MHD_Connection *conn;
    struct front_conn *fc;
    const struct hreq *head;
    bool is_post;
    char *path;       /* the path as received (owned) */
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

    /* Where it goes: proxy's own state (proxy.c; freed by proxy_request_free). */
    struct proxy_work *px;

    /* An XMR402 conversation with billing (xmr402_flow.c; xmr402_flow_request_free). */
    struct xmr402_work *x402;

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

    /* The answer, filled before the connection is resumed. */
    bool suspended;
    bool answered;
    unsigned status;
    char *answer_body; /* owned, malloc'd */
    size_t answer_len;
    char answer_type[96];
    /* Headers proxy adds to the answer (X-Xmrgate-Cache, -Degraded, -Broadcast). */
    struct gw_header {
        const char *name; /* static */
        char value[256];
    } extra_headers[GW_MAX_EXTRA_HEADERS];
    size_t nextra_headers;
};

/* What the client sent, whichever front end received it (server.c). */
const char *gw_request_header(const struct gw_request *req, const char *name);
/* Query argument name, undecoded, into out; false when absent or too long. */
bool gw_request_query_arg(const struct gw_request *req, const char *name, char *out, size_t outlen);
void gw_request_client_address(const struct gw_request *req, char *out, size_t outlen);

/* The answer is in req: the front end sends it (from the loop, after this call). */
void gw_request_resume(struct gw_request *req);

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
