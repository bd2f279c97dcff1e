/* server — the tenant-facing listener and the request path up to dispatch.
 *
 * Longer than the ~700 lines a module should be: it reads top to bottom as the request
 * path (authenticate, limit, classify, plan, cache, dispatch, answer) followed by the
 * loops' start and stop; each step calls the module that owns its rule. */
#define _LGPL_SOURCE
#include "serve/server.h"

#include "serve/answer.h"
#include "auth/auth.h"
#include "auth/auth_gate.h"
#include "serve/context.h"
#include "rpc/epee.h"
#include "auth/digest.h"
#include "http/front.h"
#include "http/mhd_front.h"
#include "ops/gw_metrics.h"
#include "core/hold.h"
#include "rpc/jsonrpc.h"
#include "rpc/plan.h"
#include "limits/limits.h"
#include "serve/proxy.h"
#include "serve/request.h"
#include "token.h"
#include "serve/xmr402_flow.h"
#include "xg_file.h"
#include "xg_log.h"
#include "xg_proxy_addr.h"
#include "xg_str.h"
#include "xg_clock.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One event loop: a listener on the shared port (SO_REUSEPORT spreads the connections),
 * the own front end for plain HTTP or libmicrohttpd (mhd_front.h), run by one upstream
 * engine's thread. A request stays on its loop. */
struct gw_loop {
    struct gw_server *srv;
    struct gw_context ctx;        /* the shared context, with this loop's engine as ctx.up */
    struct front_app app;         /* the request path, as both front ends call it */
    struct front *front;          /* the own front end, or NULL */
    struct mhd_front *mhd;        /* libmicrohttpd, or NULL */
    struct hold_set *holds;       /* requests held by the burst limit until their token */
    struct up_engine *own_engine; /* loops after the first start their own; NULL for loop 0 */
    /* The last token this loop hashed and its SHA-256: a client on a kept-alive connection
     * sends the same token with every request, so it is hashed once, not per request.
     * Compared in constant time; loop thread only; wiped at stop. */
    struct token_memo {
        size_t len;
        char text[TOKEN_TEXT_SIZE];
        uint8_t hash[TOKEN_HASH_LEN];
    } token_memo;
};

struct gw_server {
    struct gw_loop loops[GW_SERVER_MAX_LOOPS];
    struct xg_addrcap *addrcap; /* connections per client address, shared by the loops */
    size_t nloops;
    atomic_long inflight;
    atomic_uint_fast64_t next_id; /* request ids: a random prefix, then a counter */
    struct tls_cert *tls;         /* NULL: plain HTTP */
};

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- answers ------------------------------------------------------------------------ */

/* The headers of one answer, whichever front end sends it. */
#define ANSWER_MAX_HEADERS 16
struct answer_headers {
    struct front_header h[ANSWER_MAX_HEADERS];
    size_t n;
    char request_id[GW_REQUEST_ID_SIZE];
};

static void answer_header(void *ctx, const char *name, const char *value)
{
    struct answer_headers *a = ctx;
    if (a->n < ANSWER_MAX_HEADERS)
        a->h[a->n++] = (struct front_header){name, value};
}

/* What every answer ends with: the daily quota to an authenticated tenant
 * (gateway/limits/limits.h), the XMR402 headers, and X-Request-Id, the id that error lines in
 * the log carry. */
static void answer_common_headers(const struct gw_request *req, struct answer_headers *a)
{
    if (req->limit.set) {
        answer_header(a, "X-RateLimit-Limit", req->limit.limit);
        answer_header(a, "X-RateLimit-Remaining", req->limit.remaining);
        answer_header(a, "X-RateLimit-Reset", req->limit.reset);
    }
    xmr402_flow_each_header(req, answer_header, a);
    gw_request_id_text(req->id, a->request_id);
    answer_header(a, "X-Request-Id", a->request_id);
}

/* Sends an answer through the request's front end; the body is copied, or taken (and
 * freed) when owned. */
static enum front_result emit(struct gw_request *req, unsigned status,
                              const struct answer_headers *a, const char *body, size_t len,
                              bool owned)
{
    req->status = status;
    const struct front_client *c = &req->client;
    return c->ops->respond(c->conn, status, a->h, a->n, body, len, owned) ? FRONT_QUEUED
                                                                          : FRONT_CLOSE;
}

/* Sends req's answer (answer.h) through its front end, with the headers every answer
 * ends with; the body goes with it (nothing is copied). */
static enum front_result send_answer(struct gw_request *req)
{
    struct answer_headers a = {.n = 0};
    if (req->answer_type[0])
        answer_header(&a, "Content-Type", req->answer_type);
    for (size_t i = 0; i < req->nextra_headers; i++)
        answer_header(&a, req->extra_headers[i].name, req->extra_headers[i].value);
    answer_common_headers(req, &a);
    char *body = req->answer_body;
    req->answer_body = NULL; /* the answer owns it now */
    return emit(req, req->status, &a, body ? body : "", req->answer_len, body != NULL);
}

/* Sends our error code (errors.h) in the client's shape; message NULL: the registry's. */
static enum front_result reply_error(struct gw_request *req, enum errors_code code,
                                     const char *message)
{
    answer_error(req, code, message);
    return send_answer(req);
}

/* 401 with monerod's two Digest challenges, MD5 then MD5-sess with one nonce, in
 * monerod's spelling of the header name too (digest.h says why this exact shape). On the
 * root paths nothing else: those are the monerod paths that wallets and libraries written
 * against monerod call, and some of them read all WWW-Authenticate values as one string
 * (Python requests makes one dict of it), so any other scheme there can only confuse them;
 * curl -u sends Basic without asking, and Basic is accepted everywhere anyway. On /v1/
 * paths (token in the path, agents, /v1/usage) Basic comes third: no wallet gets there
 * (wallet-rpc drops any path of --daemon-address), the clients there are generic HTTP
 * clients for which "the token is the password" is the simplest login, and after both
 * Digest challenges it still leaves a reader of the first one, a splitter at ", Digest"
 * and Python requests' merged dict on MD5 or MD5-sess. */
static enum front_result answer_unauthorized(struct gw_request *req, bool stale)
{
    static const char www_authenticate[] = "WWW-authenticate"; /* epee's server_auth_field */
    struct digest_challenges digest;
    char basic[256] = "";
    bool offer_basic = strncmp(req->path, "/v1/", 4) == 0;
    if (!digest_challenge(req->ctx->digest, wall_ms(), stale, &digest) ||
        (offer_basic && !auth_challenge_basic(basic, sizeof basic, req->ctx->cfg->realm)))
        return reply_error(req, ERR_CHALLENGE_FAILED, NULL);
    answer_header_add(req, www_authenticate, digest.md5);
    answer_header_add(req, www_authenticate, digest.md5_sess);
    if (offer_basic)
        answer_header_add(req, www_authenticate, basic);
    return reply_error(req, ERR_UNAUTHORIZED, NULL);
}

/* ---- authentication ----------------------------------------------------------------- */

enum auth_verdict { VERDICT_OK, VERDICT_UNAUTHORIZED, VERDICT_STALE, VERDICT_MALFORMED };

static struct gw_loop *loop_of(const struct gw_request *req)
{
    return (struct gw_loop *)(void *)((char *)req->ctx - offsetof(struct gw_loop, ctx));
}

/* token_hash, through the loop's one-entry memo. */
static bool hash_token(struct gw_loop *loop, const char *token, uint8_t out[TOKEN_HASH_LEN])
{
    struct token_memo *m = &loop->token_memo;
    size_t len = strlen(token);
    if (len >= sizeof m->text)
        return token_hash(token, len, out);
    if (m->len == len && CRYPTO_memcmp(m->text, token, len) == 0) {
        memcpy(out, m->hash, TOKEN_HASH_LEN);
        return true;
    }
    if (!token_hash(token, len, out))
        return false;
    memcpy(m->text, token, len);
    m->len = len;
    memcpy(m->hash, out, TOKEN_HASH_LEN);
    return true;
}

/* Finds the tenant behind the credential and copies it into *tenant. */
static enum auth_verdict authenticate(struct gw_request *req, struct auth_credential *cred,
                                      struct tenant_row *tenant)
{
    struct auth_request areq = {
        .path = req->path,
        .authorization = gw_request_header(req, "Authorization"),
        .authorization_repeated = gw_request_header_count(req, "Authorization") > 1,
        .api_key = gw_request_header(req, "X-Api-Key"),
    };
    enum auth_kind kind = auth_parse(&areq, cred);
    req->rest = cred->rest_path;
    if (kind == AUTH_MALFORMED)
        return VERDICT_MALFORMED;

    enum auth_verdict verdict = VERDICT_UNAUTHORIZED;
    uint8_t hash[TOKEN_HASH_LEN];
    bool found = false;
    switch (kind) {
    case AUTH_PATH_TOKEN:
    case AUTH_BEARER:
    case AUTH_API_KEY:
    case AUTH_BASIC:
        if (hash_token(loop_of(req), cred->token, hash))
            found = tenants_find_token(req->ctx->tenants, hash, tenant);
        if (found && kind == AUTH_BASIC && !auth_basic_user_ok(cred, tenant->handle))
            found = false;
        break;
    case AUTH_DIGEST: {
        static const uint8_t no_ha1[TOKEN_HA1_LEN];
        found = tenants_find_handle(req->ctx->tenants, cred->digest.username, tenant);
        /* A HA1 that did not unwrap is all zero: treat it as no tenant. */
        const uint8_t *ha1 = found && memcmp(tenant->digest_ha1, no_ha1, TOKEN_HA1_LEN) != 0
                                 ? tenant->digest_ha1
                                 : NULL;
        enum digest_result dr =
            digest_verify(req->ctx->digest, &cred->digest, ha1, req->is_post ? "POST" : "GET",
                          req->target, wall_ms());
        if (dr == DIGEST_BAD_URI) {
            cred->detail = "the Digest uri does not match the request";
            verdict = VERDICT_MALFORMED;
        } else if (digest_result_is_stale(dr)) {
            verdict = VERDICT_STALE;
        }
        if (dr != DIGEST_OK)
            found = false;
        break;
    }
    default:
        break;
    }
    if (found)
        verdict = VERDICT_OK;
    else
        memset(tenant, 0, sizeof *tenant); /* nothing of a tenant whose check failed */
    return verdict;
}

/* ---- classification ----------------------------------------------------------------- */

/* Prepares req->forward_body for /json_rpc; answers the client itself when the request
 * never reaches a node. Returns true when the request should be dispatched. */
static bool prepare_jsonrpc(struct gw_request *req, enum front_result *rc)
{
    req->endpoint = GW_EP_JSONRPC;
    struct jsonrpc_request rpc;
    enum jsonrpc_parse parsed = jsonrpc_parse(req->body, req->body_len, &rpc);
    if (rpc.id)
        req->rpc_id = json_incref((json_t *)rpc.id);
    switch (parsed) {
    case JSONRPC_NOT_JSON:
        *rc = reply_error(req, ERR_PARSE_ERROR, NULL);
        return false;
    case JSONRPC_BATCH:
        *rc = reply_error(req, ERR_BATCH_UNSUPPORTED, NULL);
        return false;
    case JSONRPC_NOT_REQUEST:
        jsonrpc_request_clear(&rpc);
        *rc = reply_error(req, ERR_INVALID_REQUEST, NULL);
        return false;
    case JSONRPC_OK:
        break;
    }
    req->info = methods_find_jsonrpc(rpc.method, strlen(rpc.method));
    if (!req->info || req->info->cls == METHOD_DENIED) {
        jsonrpc_request_clear(&rpc);
        *rc = reply_error(req, ERR_METHOD_NOT_FOUND, NULL);
        return false;
    }
    jsonrpc_strip_client(rpc.root);
    req->forward_body = jsonrpc_dump(rpc.root, &req->forward_len);
    jsonrpc_request_clear(&rpc);
    return true;
}

static bool prepare_path(struct gw_request *req, enum front_result *rc)
{
    req->info = methods_find_path(req->rest, strlen(req->rest));
    if (!req->info || req->info->cls == METHOD_DENIED) {
        req->endpoint = GW_EP_BIN; /* monerod answers an unknown path with a bare 404 */
        *rc = reply_error(req, ERR_NO_SUCH_PATH, NULL);
        return false;
    }
    if (req->info->kind == METHOD_BIN_PATH) {
        req->endpoint = GW_EP_BIN;
        /* The received body is what goes to the node, but for the wallet's "client" field
         * (an RPC-payment signature that identifies it), stripped in place as from JSON
         * bodies. A body that is not portable storage (an empty one included) cannot be
         * stripped, so it is never forwarded: the gateway refuses it itself with what
         * monerod answers such a body (MAP_URI_AUTO_BIN2: 400, no body). Bytes after the
         * root section, which monerod ignores (load_from_binary), are dropped as monerod
         * drops them: nothing the gateway did not read reaches a node. */
        bool removed;
        size_t stripped_len, whole;
        if (epee_measure(req->body, req->body_len, &whole) == EPEE_OK)
            req->body_len = whole;
        enum epee_status st = epee_strip(req->body, req->body_len, "client", req->body,
                                         req->body_len, &stripped_len, &removed);
        if (st != EPEE_OK ||
            (req->info->pool_info && !plan_pool_rule(req->body, &stripped_len, &req->asks_pool))) {
            *rc = reply_error(req, ERR_BAD_BIN_BODY, NULL);
            return false;
        }
        req->forward_body = req->body;
        req->forward_len = stripped_len;
        req->body = NULL;
        req->body_len = req->body_cap = 0;
        return true;
    }
    req->endpoint = GW_EP_JSON;
    if (req->body_len == 0)
        return true;
    json_t *root = jsonrpc_load_body(req->body, req->body_len);
    if (!root) {
        *rc = reply_error(req, ERR_BAD_JSON_BODY, NULL);
        return false;
    }
    jsonrpc_strip_client(root);
    req->forward_body = jsonrpc_dump(root, &req->forward_len);
    json_decref(root);
    return true;
}

/* ---- limits (gateway/limits/limits.h) ------------------------------------------------------- */

/* 429 in the client's shape; a burst refusal comes before classification, so the
 * shape (.bin or not) and the JSON-RPC id to echo are found here. */
static enum front_result answer_over_limit(struct gw_request *req, const struct limits_refusal *why)
{
    if (req->endpoint == GW_EP_JSON) {
        const struct method_info *m = methods_find_path(req->rest, strlen(req->rest));
        if (m && m->kind == METHOD_BIN_PATH)
            req->endpoint = GW_EP_BIN;
    }
    if (req->endpoint == GW_EP_JSONRPC && !req->rpc_id) {
        struct jsonrpc_request rpc;
        (void)jsonrpc_parse(req->body, req->body_len, &rpc);
        if (rpc.id)
            req->rpc_id = json_incref((json_t *)rpc.id);
        jsonrpc_request_clear(&rpc);
    }
    answer_header_add(req, "Retry-After", why->retry_after);
    return reply_error(req, ERR_LIMIT_EXCEEDED, why->message);
}

static bool is_usage_path(const char *rest)
{
    return strcmp(rest, LIMITS_USAGE_PATH) == 0 || strcmp(rest, LIMITS_USAGE_TOKEN_PATH) == 0;
}

/* GET /v1/usage: the tenant's own plan and today's usage. */
static enum front_result answer_usage(struct gw_request *req, const struct tenant_row *tenant)
{
    req->endpoint = GW_EP_JSON;
    struct quota_status quota;
    limits_status(req->ctx->limits, tenant, (int64_t)time(NULL), &quota);
    size_t len = 0;
    char *body = limits_usage_body(tenant, &quota, &len);
    if (!body)
        return reply_error(req, ERR_OUT_OF_MEMORY, NULL);
    answer_set(req, 200, body, len, "application/json");
    return send_answer(req);
}

/* ---- the request path --------------------------------------------------------------- */

static void remember_rpc_id(struct gw_request *req)
{
    struct jsonrpc_request rpc;
    if (jsonrpc_parse(req->body, req->body_len, &rpc) != JSONRPC_NOT_JSON && rpc.id)
        req->rpc_id = json_incref((json_t *)rpc.id);
    jsonrpc_request_clear(&rpc);
}

static enum front_result serve_tenant(struct gw_request *req, const struct tenant_row *tenant);
static enum front_result serve_admitted(struct gw_request *req, const struct tenant_row *tenant);

/* ---- held requests (burst limit) --------------------------------------------------- */

static void on_hold_due(struct hold_entry *e)
{
    struct gw_request *req =
        (struct gw_request *)(void *)((char *)e - offsetof(struct gw_request, hold));
    req->hold_over = true;
    gw_request_resume(req);
    /* A timer is no node job, after which the engine runs its host anyway: libmicrohttpd
     * takes the resumed connection back in the next run (the own front end asked for one
     * already). */
    loop_host_due(up_engine_loop(req->ctx->up));
}

/* Holds an admitted request over its tenant's burst bucket until due_us, when its token
 * is there: the connection stays suspended, as for a node's answer, and the loop's timer
 * set wakes it on the same loop. It costs a timer entry and a copy of the tenant row; no
 * thread, no node connection. False when memory runs out (nothing is held then). */
static bool hold_request(struct gw_request *req, const struct tenant_row *tenant, int64_t due_us)
{
    req->held_tenant = malloc(sizeof *req->held_tenant);
    if (!req->held_tenant || !hold_add(loop_of(req)->holds, &req->hold, due_us, on_hold_due)) {
        free(req->held_tenant);
        req->held_tenant = NULL;
        return false;
    }
    *req->held_tenant = *tenant;
    gw_request_suspend(req);
    return true;
}

/* A held request's token is due: on with the request path, unless its client left while
 * it waited; that request ends here, without a node call and without an answer. */
static enum front_result continue_held(struct gw_request *req)
{
    struct tenant_row tenant = *req->held_tenant;
    free(req->held_tenant);
    req->held_tenant = NULL;
    req->hold_over = false;
    /* As nginx does for a request it waits on (ngx_http_upstream_check_broken_connection),
     * a client that shut its side counts as gone. */
    if (gw_request_client_left(req))
        return FRONT_CLOSE;
    return serve_admitted(req, &tenant);
}

/* An agent endpoint without a credential, or with XMR402 proof: billing is asked while
 * the connection waits (xmr402_flow.h). */
static enum front_result start_xmr402(struct gw_request *req, const struct auth_credential *cred)
{
    gw_request_suspend(req);
    if (!xmr402_flow_begin(req, cred))
        gw_request_resume(req); /* the answer is in req */
    return FRONT_DONE;
}

/* The credential's verdict, taken once on the head (authenticate consumes a Digest
 * nonce count, so it never runs twice for a request). */
struct gw_head_auth {
    enum auth_verdict verdict;
    struct auth_credential cred;
    struct tenant_row tenant; /* when VERDICT_OK */
    const char *agent_path;   /* an XMR402 agent endpoint to serve through billing, or NULL */
};

static enum auth_gate_verdict gate_verdict(enum auth_verdict v)
{
    switch (v) {
    case VERDICT_OK:
        return AUTH_GATE_OK;
    case VERDICT_STALE:
        return AUTH_GATE_STALE;
    case VERDICT_MALFORMED:
        return AUTH_GATE_MALFORMED;
    case VERDICT_UNAUTHORIZED:
        break;
    }
    return AUTH_GATE_UNAUTHORIZED;
}

/* Authenticates req on its head into req->head_auth. False when memory ran out. */
static bool authenticate_head(struct gw_request *req)
{
    struct gw_head_auth *a = calloc(1, sizeof *a);
    if (!a)
        return false;
    req->head_auth = a;
    a->verdict = authenticate(req, &a->cred, &a->tenant);
    a->agent_path = a->verdict == VERDICT_OK ? NULL : xmr402_flow_applies(req, &a->cred);
    if (a->agent_path)
        req->rest = a->agent_path;
    /* Errors before classification use the shape the path asks for. */
    req->endpoint = strcmp(req->rest, METHODS_JSONRPC_PATH) == 0 ? GW_EP_JSONRPC : GW_EP_JSON;
    return true;
}

/* The answer to a request whose credential failed (not an agent path): 400 for a
 * malformed one, else 401 with the challenges. A JSON-RPC error echoes the body's id when
 * the body was read. */
static enum front_result refuse_credential(struct gw_request *req)
{
    const struct gw_head_auth *a = req->head_auth;
    if (req->endpoint == GW_EP_JSONRPC)
        remember_rpc_id(req);
    if (a->verdict == VERDICT_MALFORMED) {
        gw_metrics_auth_failure(req->ctx->metrics, "malformed");
        return reply_error(req, ERR_MALFORMED_CREDENTIALS, a->cred.detail);
    }
    gw_metrics_auth_failure(req->ctx->metrics, gw_metrics_auth_scheme(a->cred.kind));
    return answer_unauthorized(req, a->verdict == VERDICT_STALE);
}

/* The shape of an answer given before the request is classified (a body over the limit),
 * by the path's last segment: a JSON-RPC error on /json_rpc, a bare status on an epee
 * endpoint, {"status"} elsewhere, as each endpoint's clients read errors. */
static enum gw_endpoint endpoint_of_path(const char *path)
{
    const char *last = strrchr(path, '/');
    if (!last)
        return GW_EP_JSON;
    if (strcmp(last, METHODS_JSONRPC_PATH) == 0)
        return GW_EP_JSONRPC;
    const struct method_info *info = methods_find_path(last, strlen(last));
    return info && info->kind == METHOD_BIN_PATH ? GW_EP_BIN : GW_EP_JSON;
}

/* The body arrived: on with the request the head's verdict admitted, or refuse it. */
static enum front_result handle_request(struct gw_request *req)
{
    if (req->body_too_large) {
        req->endpoint = endpoint_of_path(req->path);
        return reply_error(req, ERR_BODY_TOO_LARGE, NULL);
    }
    struct gw_head_auth *a = req->head_auth;
    if (a->verdict == VERDICT_MALFORMED || (a->verdict != VERDICT_OK && !a->agent_path))
        return refuse_credential(req);
    if (a->agent_path) {
        if (req->endpoint == GW_EP_JSONRPC)
            remember_rpc_id(req);
        return start_xmr402(req, &a->cred);
    }
    return serve_tenant(req, &a->tenant);
}

/* The request path after authentication: status checks, limits, classification, cache
 * and the nodes. Also where an XMR402 purchase continues once billing provisioned it. */
static enum front_result serve_tenant(struct gw_request *req, const struct tenant_row *tenant_in)
{
    struct tenant_row tenant = *tenant_in;
    if (tenant.suspended)
        return reply_error(req, ERR_SUSPENDED, NULL);
    if (tenant.valid_until < (int64_t)time(NULL)) {
        char message[512];
        const char *where = req->ctx->cfg->renew_url;
        snprintf(message, sizeof message, "this plan expired; renew it with your token at %s",
                 where[0] ? where : "the billing page");
        return reply_error(req, ERR_PLAN_EXPIRED, message);
    }

    struct limits_refusal over;
    int64_t now_us = xg_monotonic_us(), delay_us;
    switch (limits_burst(req->ctx->limits, &tenant, now_us, req->deadline_us, (int64_t)time(NULL),
                         &req->limit, &delay_us, &over)) {
    case LIMITS_BURST_REFUSED:
        gw_metrics_rate_limited(req->ctx->metrics, false);
        return answer_over_limit(req, &over);
    case LIMITS_BURST_HOLD:
        if (hold_request(req, &tenant, now_us + delay_us)) {
            gw_metrics_burst_delayed(req->ctx->metrics, (double)delay_us / 1e6);
            return FRONT_DONE;
        }
        break; /* out of memory: served at once, not refused */
    case LIMITS_BURST_NOW:
        break;
    }
    return serve_admitted(req, &tenant);
}

/* The request path once the burst limit admitted the request: usage, classification,
 * quota, cache and the nodes. */
static enum front_result serve_admitted(struct gw_request *req, const struct tenant_row *tenant)
{
    if (is_usage_path(req->rest))
        return answer_usage(req, tenant);

    struct limits_refusal over;
    int64_t now_unix = (int64_t)time(NULL);
    enum front_result rc = FRONT_CLOSE;
    bool dispatch =
        req->endpoint == GW_EP_JSONRPC ? prepare_jsonrpc(req, &rc) : prepare_path(req, &rc);
    if (!dispatch)
        return rc;
    /* a pending XMR402 allowance has no tenant row to charge: billing counts it */
    if (!xmr402_flow_pending(req) &&
        !limits_charge(req->ctx->limits, tenant, req->info->weight, now_unix, &req->limit, &over)) {
        gw_metrics_rate_limited(req->ctx->metrics, true);
        return answer_over_limit(req, &over);
    }
    if (req->forward_len && !req->forward_body)
        return reply_error(req, ERR_OUT_OF_MEMORY, NULL);
    plan_for_body(req->info, req->forward_body, req->forward_len, req->asks_pool, &req->plan);
    req->tenant_id = xmr402_flow_pending(req) ? 0 : tenant->id;
    if (proxy_answer_from_cache(req)) {
        req->from_cache = true;
        return send_answer(req);
    }
    gw_request_suspend(req);
    req->dispatched = true;
    if (!proxy_dispatch(req))
        gw_request_resume(req); /* the answer is in req */
    return FRONT_DONE;
}

/* The answer is ready, or billing provisioned the tenant an XMR402 request waited for. */
static enum front_result continue_resumed(struct gw_request *req)
{
    struct tenant_row bought;
    enum front_result streamed;
    if (xmr402_flow_stream_open(req, &streamed))
        return streamed;
    if (xmr402_flow_take_tenant(req, &bought)) {
        /* served now as the tenant billing just provisioned */
        json_decref(req->rpc_id); /* classification reads the id again */
        req->rpc_id = NULL;
        return serve_tenant(req, &bought);
    }
    if (req->hold_over)
        return continue_held(req);
    if (!req->answered)
        return FRONT_DONE; /* spurious wake-up; the answer is not ready */
    return send_answer(req);
}

static struct gw_request *request_new(struct gw_loop *loop, struct front_client client,
                                      const char *url, const char *query, const char *method)
{
    struct gw_server *srv = loop->srv;
    struct gw_request *req = calloc(1, sizeof *req);
    if (!req)
        return NULL;
    req->ctx = &loop->ctx;
    req->client = client;
    req->is_post = strcmp(method, "POST") == 0;
    req->path = strdup(url);
    req->rest = req->path;
    if (asprintf(&req->target, "%s%s%s", url, *query ? "?" : "", query) < 0)
        req->target = NULL;
    req->started_us = xg_monotonic_us();
    req->deadline_us = req->started_us + loop->ctx.request_timeout_ms * 1000;
    req->body = malloc(1);
    if (!req->path || !req->target || !req->body) {
        free(req->path);
        free(req->target);
        free(req->body);
        free(req);
        return NULL;
    }
    req->body[0] = '\0';
    req->body_cap = 1;
    req->id = atomic_fetch_add(&srv->next_id, 1);
    atomic_fetch_add(&srv->inflight, 1);
    return req;
}

/* Answers at once what is refused on the head alone: a method monerod does not serve
 * (405), or a declared body over the limit (413); FRONT_DONE when there is nothing to
 * refuse. */
static enum front_result refuse_on_head(struct gw_request *req, const char *method, bool too_large)
{
    bool allowed = strcmp(method, "GET") == 0 || strcmp(method, "POST") == 0;
    if (!allowed) {
        req->endpoint = GW_EP_BIN;
        answer_header_add(req, "Allow", "GET, POST");
        return reply_error(req, ERR_METHOD_NOT_ALLOWED, NULL);
    }
    if (too_large) {
        req->endpoint = endpoint_of_path(req->path);
        return reply_error(req, ERR_BODY_TOO_LARGE, NULL);
    }
    return FRONT_DONE;
}

/* One client request in the metrics, once it is over (answered, or the client left). */
static void record_request(const struct gw_request *req)
{
    if (req->status == 0)
        return; /* nothing was answered: the client left first */
    enum gw_outcome outcome = req->from_cache      ? GW_OUTCOME_CACHE
                              : !req->dispatched   ? GW_OUTCOME_REFUSED
                              : req->status >= 500 ? GW_OUTCOME_FAILED
                                                   : GW_OUTCOME_NODE;
    if (req->status == 402)
        gw_metrics_payment_required(req->ctx->metrics);
    gw_metrics_request(req->ctx->metrics, req->info, req->status, outcome,
                       (double)(xg_monotonic_us() - req->started_us) / 1e6);
}

static void request_free(struct gw_loop *loop, struct gw_request *req)
{
    hold_cancel(loop->holds, &req->hold); /* the client left while its request was held */
    free(req->held_tenant);
    if (req->head_auth) /* it may hold a token, a password's Digest response */
        OPENSSL_cleanse(req->head_auth, sizeof *req->head_auth);
    free(req->head_auth);
    record_request(req);
    free(req->path);
    free(req->target);
    free(req->body);
    proxy_request_free(req);
    xmr402_flow_request_free(req);
    free(req->forward_body);
    free(req->answer_body);
    json_decref(req->rpc_id);
    free(req);
    atomic_fetch_sub(&loop->srv->inflight, 1);
}

/* ---- the request path behind either front end (front_app, front.h) ------------------- */

static enum front_result app_on_head(void *cls, struct front_client client,
                                     const struct front_head *head, void **request)
{
    struct gw_loop *loop = cls;
    struct gw_request *req =
        request_new(loop, client, head->path, head->query ? head->query : "", head->method);
    *request = req;
    if (!req)
        return FRONT_CLOSE;
    /* an answer here is sent by the front end, which then skips the body */
    enum front_result rc = refuse_on_head(
        req, head->method, head->has_length && head->content_length > (uint64_t)loop->ctx.max_body);
    if (rc != FRONT_DONE)
        return rc;
    if (!authenticate_head(req))
        return reply_error(req, ERR_OUT_OF_MEMORY, NULL);
    struct auth_gate_head gate = {.verdict = gate_verdict(req->head_auth->verdict),
                                  .agent_path = req->head_auth->agent_path != NULL,
                                  .chunked = head->chunked,
                                  .has_length = head->has_length,
                                  .content_length = head->content_length,
                                  .expect_continue = head->expect_continue};
    if (auth_gate_decide(&gate) == AUTH_GATE_ANSWER_NOW)
        return refuse_credential(req);
    return FRONT_DONE;
}

static enum front_result app_on_body(void *cls, void *request, char *body, size_t len,
                                     bool too_large)
{
    (void)cls;
    struct gw_request *req = request;
    if (too_large) {
        req->body_too_large = true;
        free(body);
    } else if (body) {
        free(req->body);
        req->body = body;
        req->body_len = len;
        req->body_cap = len + 1;
    }
    return handle_request(req);
}

static enum front_result app_on_resume(void *cls, void *request)
{
    (void)cls;
    return continue_resumed(request);
}

static void app_on_completed(void *cls, void *request)
{
    request_free(cls, request);
}

struct up_engine_options gw_server_engine_options(const struct gw_config *cfg)
{
    /* The node cap is shared by the loops: together they stay within it. */
    unsigned loops = (unsigned)cfg->loops;
    unsigned per_loop = (unsigned)cfg->max_connections_per_node / loops;
    return (struct up_engine_options){
        .max_connections_per_node = per_loop ? per_loop : 1,
        .cap_share = loops,
        .connect_timeout_ms = (long)cfg->node_connect_timeout_ms,
        .ca_file = cfg->node_ca_file,
        .tls_pins = cfg->node_tls_pins,
    };
}

/* The slow-client rule's settings ([server] header_timeout, body_min_rate, body_grace,
 * body_window, body_timeout, send_min_rate). */
static struct xg_guard_limits server_guard_limits(const struct gw_config *cfg)
{
    return (struct xg_guard_limits){.header_timeout_ms = cfg->header_timeout_ms,
                                    .body_grace_ms = cfg->body_grace_ms,
                                    .body_min_rate = (uint64_t)cfg->body_min_rate,
                                    .body_window_ms = cfg->body_window_ms,
                                    .body_timeout_ms = cfg->body_timeout_ms,
                                    .send_min_rate = (uint64_t)cfg->send_min_rate};
}

/* The own front end on the shared port, run by the loop's engine. */
static bool loop_start_front(struct gw_loop *loop, const struct sockaddr_storage *addr, char *err,
                             size_t errlen)
{
    const struct gw_config *cfg = loop->ctx.cfg;
    struct front_options opt = {
        .addr = *addr,
        .max_head = GW_SERVER_MAX_HEAD,
        .max_body = loop->ctx.max_body,
        .idle_timeout_ms = (long)cfg->connection_timeout_ms,
        .max_connections = GW_SERVER_MAX_CONNECTIONS,
        .linger = LINGER_BUDGET_DEFAULT,
        .max_lingering = LINGER_MAX_SOCKETS,
        .send_buffer = (int)cfg->send_buffer,
        .proxy_protocol = cfg->proxy_protocol,
        .trusted_proxies = cfg->trust,
        .guard = server_guard_limits(cfg),
        .addrcap = loop->srv->addrcap,
        .counts = gw_metrics_client_counts(loop->ctx.metrics),
    };
    struct front_handler handler = front_native_handler(&loop->app);
    char why[256];
    loop->front = front_start(&opt, &handler, up_engine_loop(loop->ctx.up), why, sizeof why);
    if (!loop->front) {
        snprintf(err, errlen, "cannot listen on %s:%ld: %s", cfg->bind, (long)cfg->port, why);
        return false;
    }
    struct loop_host host = {
        .fd = -1, .run = front_run, .timeout_ms = front_timeout_ms, .ctx = loop->front};
    loop_attach_host(up_engine_loop(loop->ctx.up), &host);
    return true;
}

/* Starts loop i's listener on the shared port and hands it to the loop's engine. */
static bool loop_start(struct gw_server *srv, size_t i, struct gw_context *ctx,
                       const struct sockaddr_storage *addr, char *err, size_t errlen)
{
    const struct gw_config *cfg = ctx->cfg;
    struct gw_loop *loop = &srv->loops[i];
    loop->srv = srv;
    loop->ctx = *ctx;
    loop->app = (struct front_app){.cls = loop,
                                   .on_head = app_on_head,
                                   .on_body = app_on_body,
                                   .on_resume = app_on_resume,
                                   .on_completed = app_on_completed};
    if (i > 0) {
        struct up_engine_options uopt = gw_server_engine_options(cfg);
        loop->own_engine = up_engine_start(&uopt, err, errlen);
        if (!loop->own_engine)
            return false;
        loop->ctx.up = loop->own_engine;
    }
    loop->holds = hold_set_new(up_engine_loop(loop->ctx.up));
    if (!loop->holds) {
        snprintf(err, errlen, "cannot create the burst limit's timer");
        return false;
    }
    loop->ctx.timers = loop->holds; /* proxy's hedge timers share the set */
    bool tls = srv->tls != NULL;
    if (!tls && strcmp(cfg->front_end, "native") == 0)
        return loop_start_front(loop, addr, err, errlen);
    char where[128];
    snprintf(where, sizeof where, "%s:%ld", cfg->bind, (long)cfg->port);
    struct mhd_front_options opt = {
        .addr = *addr,
        .name = where,
        .tls = srv->tls,
        .connection_timeout_s = (long)(cfg->connection_timeout_ms / 1000),
        .max_connections = GW_SERVER_MAX_CONNECTIONS,
        .max_head = GW_SERVER_MAX_HEAD,
        .max_body = loop->ctx.max_body,
        .guard = server_guard_limits(cfg),
        .addrcap = srv->addrcap,
        .counts = gw_metrics_client_counts(loop->ctx.metrics),
        .trust = &cfg->trust,
        .proxy_protocol = cfg->proxy_protocol,
        .proxy = {.max_pending = (size_t)cfg->proxy_max_pending,
                  .reserve = (size_t)cfg->proxy_reserve,
                  .per_network = (size_t)cfg->max_connections_per_address,
                  .header_timeout_ms = cfg->proxy_header_timeout_ms},
    };
    loop->mhd = mhd_front_start(&opt, &loop->app, up_engine_loop(loop->ctx.up), err, errlen);
    return loop->mhd != NULL;
}

struct gw_server *gw_server_start(struct gw_context *ctx, char *err, size_t errlen)
{
    const struct gw_config *cfg = ctx->cfg;
    struct gw_server *srv = calloc(1, sizeof *srv);
    if (!srv) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    uint32_t prefix = 0;
    if (RAND_bytes((unsigned char *)&prefix, sizeof prefix) != 1)
        prefix = (uint32_t)getpid();
    atomic_init(&srv->next_id, (uint64_t)prefix << 32);
    if (cfg->max_connections_per_address > 0) {
        srv->addrcap = xg_addrcap_new((size_t)cfg->max_connections_per_address);
        if (!srv->addrcap) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
    }
    struct sockaddr_storage addr;
    if (xg_bind_addr_parse(cfg->bind, (uint16_t)cfg->port, &addr) == 0) {
        snprintf(err, errlen, "[server] bind: not an IPv4 or IPv6 address: %s", cfg->bind);
        goto fail;
    }
    if (cfg->tls_cert[0] != '\0') {
        char why[400];
        srv->tls = tls_cert_load(cfg->tls_cert, cfg->tls_key, why, sizeof why);
        if (!srv->tls) {
            snprintf(err, errlen, "[server] tls_cert, tls_key: %s", why);
            goto fail;
        }
    }
    size_t loops = (size_t)cfg->loops;
    for (size_t i = 0; i < loops && i < GW_SERVER_MAX_LOOPS; i++) {
        srv->nloops = i + 1;
        if (!loop_start(srv, i, ctx, &addr, err, errlen))
            goto fail;
    }
    return srv;
fail:
    /* Loop 0's engine may already run a front end freed below: stop it first (the caller's
     * later up_engine_stop is idempotent). */
    if (srv->nloops > 0)
        up_engine_stop(ctx->up);
    gw_server_stop(srv);
    return NULL;
}

const struct tls_cert *gw_server_tls(const struct gw_server *srv)
{
    return srv ? srv->tls : NULL;
}

bool gw_server_reload_tls(struct gw_server *srv, char *err, size_t errlen)
{
    return tls_cert_reload(srv->tls, err, errlen);
}

uint16_t gw_server_port(const struct gw_server *srv)
{
    if (srv->loops[0].front)
        return front_port(srv->loops[0].front);
    return srv->loops[0].mhd ? mhd_front_port(srv->loops[0].mhd) : 0;
}

void gw_server_quiesce(struct gw_server *srv)
{
    for (size_t i = 0; i < srv->nloops; i++) {
        if (srv->loops[i].front)
            front_quiesce(srv->loops[i].front);
        if (srv->loops[i].mhd)
            mhd_front_quiesce(srv->loops[i].mhd);
    }
}

long gw_server_inflight(const struct gw_server *srv)
{
    return atomic_load(&srv->inflight);
}

void gw_server_stop(struct gw_server *srv)
{
    if (!srv)
        return;
    /* The loops' own engines first: they run the front ends (loop 0's engine is the
     * caller's, stopped before this call). */
    for (size_t i = 0; i < srv->nloops; i++)
        if (srv->loops[i].own_engine)
            up_engine_stop(srv->loops[i].own_engine);
    for (size_t i = 0; i < srv->nloops; i++) {
        OPENSSL_cleanse(&srv->loops[i].token_memo, sizeof srv->loops[i].token_memo);
        if (srv->loops[i].mhd) {
            /* libmicrohttpd must not stop with suspended connections: held ones (the drain
             * gave up on them) are resumed, then closed by the stop. */
            if (srv->loops[i].holds)
                (void)hold_run(srv->loops[i].holds, INT64_MAX);
            mhd_front_stop(srv->loops[i].mhd);
        }
        front_stop(srv->loops[i].front); /* closes held requests too */
        hold_set_free(srv->loops[i].holds);
        up_engine_free(srv->loops[i].own_engine);
    }
    xg_addrcap_free(srv->addrcap); /* after the fronts: they give their places back */
    tls_cert_free(srv->tls);       /* after the listeners that hand it to handshakes */
    free(srv);
}
