/* proxy — ranked dispatch, retries, hedges, confirmations, caching and broadcast, as the
 * request's plan (rpc/plan.h) says, under the tenant's read rules (rpc/consistency.h: its
 * served tip and the nodes that accepted its last transaction, kept in state/sessions.h).
 *
 * Longer than a module should be (about 1,400 lines): reads, their hedges, the cache, the
 * following of another read's flight (cache/flight.h) and the broadcast all work on the
 * request's proxy_work. The broadcast (struct broadcast and its calls) shares only
 * answer_unavailable and fallback_nodes with the rest and is the first to move into a
 * module of its own. */
#include "rpc/proxy.h"

#include "cache/flight.h"
#include "core/context.h"
#include "http/answer.h"
#include "limits/hold.h"
#include "rpc/consistency.h"
#include "rpc/epee.h"
#include "ops/gw_metrics.h"
#include "rpc/jsonrpc.h"
#include "rpc/plan.h"
#include "xg_log.h"
#include "xg_str.h"
#include "xg_clock.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROXY_MAX_CANDIDATES 8
#define PROXY_MAX_BROADCAST  16

enum proxy_phase {
    PHASE_READ,      /* rank 1, then once rank 2 on a failure */
    PHASE_FULL_NODE, /* a pruned answer, asked again of a full node */
    PHASE_CONFIRM,   /* a negative answer, asked again of a second node on the tip */
};

/* Whether and under which key this request's answer may be stored, at the quorum tip the
 * request was dispatched at. */
struct store_plan {
    enum plan_cache store;
    uint8_t key[CACHE_KEY_LEN];
    uint64_t generation;
    int64_t deep; /* settled: the highest block height that counts as settled */
    /* A chain supplement (plan.settles) may also be stored as settled, under this key (the
     * request alone), at generation. */
    bool settles;
    uint8_t settled_key[CACHE_KEY_LEN];
};

/* How often a request that follows another one's flight (cache/flight.h) looks again. */
#define PROXY_FOLLOW_POLL_US 5000

struct broadcast_slot {
    struct node_info node;
    long http;
    char *body; /* owned until the answer is chosen */
    size_t len;
    char type[96];
    enum { BC_PENDING, BC_ACCEPTED, BC_REJECTED, BC_FAILED } outcome;
};

/* A broadcast's calls. The request is answered once an own node accepted the transaction
 * and the others had a grace of one hedge delay to answer too; the calls still out then go
 * on in the background, with their outcome in the metrics, and the state outlives the
 * request until the last one ends. */
struct broadcast {
    struct gw_request *req; /* NULL once the request let go of it */
    struct gw_context *ctx;
    int64_t tenant_id; /* whose transaction it is (read-your-writes); 0: none */
    uint64_t accepted; /* nodes_bit of every node that accepted it so far */
    bool answered;
    struct hold_entry grace; /* after the first own acceptance */
    struct broadcast_slot *slots;
    size_t nslots;
    atomic_size_t pending; /* calls not ended (one more while they are being sent) */
};

struct broadcast_call {
    struct broadcast *bc;
    size_t slot;
};

#define PROXY_MAX_INFLIGHT 2 /* a read's attempt and its hedge */

/* One call of a read to one node. It outlives its request when the request no longer
 * waits for it (a hedge's loser, a client gone): req is then NULL, and the callback only
 * reports the node's outcome and frees it. */
struct proxy_attempt {
    struct gw_request *req;
    struct gw_context *ctx;
    struct node_info node;
    enum gw_endpoint endpoint; /* how its answer is read */
    bool hedge;
};

struct proxy_work {
    enum proxy_phase phase;
    struct node_info candidates[PROXY_MAX_CANDIDATES];
    size_t ncandidates, next; /* next: the candidate the next attempt uses */
    struct node_info current; /* the node of the attempt in flight */
    unsigned failures;        /* failed attempts so far (a retry is allowed after 1) */
    bool need_tip;            /* plan route tip: only nodes on the quorum tip */
    /* The tenant's rules (rpc/consistency.h): the chain height an answer must not be
     * below, the nodes that accepted its last transaction (0: any), and whether the read
     * has already waited for the nodes to reach the floor. */
    int64_t floor;
    uint64_t only_nodes;
    bool waited;
    struct hold_entry tip_wait;
    /* A negative or pruned answer held while a second node is asked. */
    char *held_body;
    size_t held_len;
    long held_status;
    char held_type[96];
    struct proxy_answer_facts held_facts;
    struct store_plan store; /* caching of this request's answer */
    /* Identical misses in flight (cache/flight.h): this request leads its key's flight, or
     * follows it and looks again at follow_timer. */
    bool leading;
    struct hold_entry follow_timer;
    /* Attempts in flight, and the hedge timer of the phase's first one. */
    struct gw_request *req;
    struct proxy_attempt *inflight[PROXY_MAX_INFLIGHT];
    size_t ninflight;
    struct hold_entry hedge_timer;
    /* Nodes given up on as too slow (a hedge won): not asked again for this request. */
    int32_t slow[PROXY_MAX_INFLIGHT];
    size_t nslow;
    struct broadcast *bc; /* a broadcast's calls (NULL for reads) */
};

bool proxy_retryable(int outcome, long http_status)
{
    switch ((enum up_outcome)outcome) {
    case UP_CONNECT_ERROR:
    case UP_TIMEOUT:
    case UP_PROTOCOL_ERROR:
        return true;
    case UP_OK:
        return http_status >= 500 || http_status == 429; /* 429: the node's own rate limit */
    default:
        return false;
    }
}

/* ---- reading answers (pure) ----------------------------------------------------------- */

static const json_t *answer_object(const json_t *root)
{
    const json_t *result = json_object_get(root, "result");
    return json_is_object(result) ? result : root;
}

bool proxy_answer_status(const char *body, size_t len, char *out, size_t outlen)
{
    json_t *root = body ? json_loadb(body, len, 0, NULL) : NULL;
    const char *status = json_string_value(json_object_get(answer_object(root), "status"));
    if (status)
        snprintf(out, outlen, "%s", status);
    json_decref(root);
    return status != NULL;
}

static bool is_zero_hash(const char *s)
{
    if (!s || !*s)
        return true;
    for (; *s; s++)
        if (*s != '0')
            return false;
    return true;
}

static void note_height(struct proxy_answer_facts *f, const json_t *h)
{
    if (json_is_integer(h) && f->height != PROXY_HEIGHT_UNSETTLED &&
        json_integer_value(h) > f->height)
        f->height = json_integer_value(h);
}

void proxy_read_facts(const char *body, size_t len, struct proxy_answer_facts *f)
{
    memset(f, 0, sizeof *f);
    f->height = -1;
    json_t *root = body && len ? json_loadb(body, len, 0, NULL) : NULL;
    if (!json_is_object(root))
        goto out;
    f->json = true;
    const json_t *obj = answer_object(root);
    const char *status = json_string_value(json_object_get(obj, "status"));
    /* A JSON-RPC result that is not an object (on_get_block_hash's hash) has no status. */
    bool is_rpc_result = json_object_get(root, "result") != NULL;
    /* BUSY (syncing), or -32005 (the node's own rate limit, in the JSON-RPC shape): ask
     * another node. */
    f->busy = (status && strcmp(status, "BUSY") == 0) ||
              json_integer_value(json_object_get(json_object_get(root, "error"), "code")) ==
                  PROXY_NODE_BUSY_CODE;
    f->ok = !json_object_get(root, "error") && (status ? strcmp(status, "OK") == 0 : is_rpc_result);
    f->untrusted = json_is_true(json_object_get(obj, "untrusted"));
    size_t i;
    const json_t *item;
    /* get_transactions: missing ones, pool ones (not immutable), pruned ones. */
    f->negatives += json_array_size(json_object_get(obj, "missed_tx"));
    json_array_foreach(json_object_get(obj, "txs"), i, item)
    {
        const char *hex = json_string_value(json_object_get(item, "as_hex"));
        const char *prunable = json_string_value(json_object_get(item, "prunable_hash"));
        if (hex && !*hex && !is_zero_hash(prunable))
            f->pruned = true;
        if (json_is_true(json_object_get(item, "in_pool")))
            f->height = PROXY_HEIGHT_UNSETTLED; /* a pool transaction: never cached */
        else
            note_height(f, json_object_get(item, "block_height"));
    }
    /* on_get_block_hash: an all-zero hash means "no block at that height" (yet). */
    const char *bare = json_string_value(json_object_get(root, "result"));
    if (bare && is_zero_hash(bare))
        f->negatives++;
    /* is_key_image_spent: 0 = unspent. */
    json_array_foreach(json_object_get(obj, "spent_status"), i,
                       item) if (json_integer_value(item) == 0) f->negatives++;
    /* /get_outs: unsettled while an output is locked (it unlocks as the chain grows). */
    json_array_foreach(json_object_get(obj, "outs"), i, item)
    {
        if (!json_is_true(json_object_get(item, "unlocked")) ||
            !json_is_integer(json_object_get(item, "height")))
            f->height = PROXY_HEIGHT_UNSETTLED;
        else
            note_height(f, json_object_get(item, "height"));
    }
    note_height(f, json_object_get(json_object_get(obj, "block_header"), "height"));
    json_array_foreach(json_object_get(obj, "headers"), i, item)
        note_height(f, json_object_get(item, "height"));
    json_array_foreach(json_object_get(obj, "block_headers"), i, item)
        note_height(f, json_object_get(item, "height"));
out:
    json_decref(root);
}

/* get_outs.bin: the outputs' highest height; unsettled while one is locked (a coinbase
 * output, or one with an unlock time, becomes spendable as the chain grows). */
static void note_outs(struct proxy_answer_facts *f, const struct epee_section *root)
{
    struct epee_value v, out_v, field;
    struct epee_array outs;
    if (!epee_find(root, "outs", &v) || !epee_get_array(&v, &outs) || outs.type != EPEE_OBJECT)
        return;
    while (epee_array_next(&outs, &out_v)) {
        struct epee_section out;
        uint64_t height;
        bool unlocked;
        if (!epee_get_object(&out_v, &out) || !epee_find(&out, "height", &field) ||
            !epee_get_uint(&field, &height) || height > INT64_MAX ||
            !epee_find(&out, "unlocked", &field) || !epee_get_bool(&field, &unlocked) ||
            !unlocked) {
            f->height = PROXY_HEIGHT_UNSETTLED;
            return;
        }
        if ((int64_t)height > f->height)
            f->height = (int64_t)height;
    }
}

/* get_blocks.bin: where its blocks start, how many, and the node's chain height. */
static void note_supplement(struct proxy_answer_facts *f, const struct epee_section *root)
{
    struct epee_value v;
    struct epee_array blocks = {0};
    uint64_t start, chain;
    if (!epee_find(root, "start_height", &v) || !epee_get_uint(&v, &start) || start > INT64_MAX ||
        !epee_find(root, "current_height", &v) || !epee_get_uint(&v, &chain) || chain > INT64_MAX ||
        (epee_find(root, "blocks", &v) && !epee_get_array(&v, &blocks)))
        return;
    f->supplement = true;
    f->blocks = (struct plan_supplement){.start_height = (int64_t)start,
                                         .blocks = (int64_t)blocks.count,
                                         .chain_height = (int64_t)chain};
}

void proxy_read_bin_facts(const char *body, size_t len, struct proxy_answer_facts *f)
{
    memset(f, 0, sizeof *f);
    f->height = -1;
    struct epee_section root;
    struct epee_value v;
    const char *status;
    size_t status_len;
    if (!body || epee_open(body, len, &root) != EPEE_OK || !epee_find(&root, "status", &v) ||
        !epee_get_string(&v, &status, &status_len))
        return;
    f->ok = status_len == 2 && memcmp(status, "OK", 2) == 0;
    f->busy = status_len == 4 && memcmp(status, "BUSY", 4) == 0;
    bool untrusted = false;
    f->untrusted = epee_find(&root, "untrusted", &v) && epee_get_bool(&v, &untrusted) && untrusted;
    note_outs(f, &root);
    note_supplement(f, &root);
}

/* ---- answering ------------------------------------------------------------------------ */

void proxy_node_ref(int32_t id, char out[PROXY_NODE_REF_SIZE])
{
    snprintf(out, PROXY_NODE_REF_SIZE, "n%" PRId32, id);
}

/* 502 in the client's shape. why is ours and fit for a tenant: it names a node by its
 * proxy_node_ref at most. node (NULL: none) and detail (the node client's error text,
 * which may carry host names and addresses; NULL: none) go to the operators' line only. */
static void answer_unavailable(struct gw_request *req, const char *why,
                               const struct node_info *node, const char *detail)
{
    char message[256], id[GW_REQUEST_ID_SIZE];
    snprintf(message, sizeof message, "no node could answer: %s", why);
    /* An error line for operators, with the id the client sees in X-Request-Id. */
    gw_request_id_text(req->id, id);
    json_t *fields =
        json_pack("{s:s,s:s}", "request_id", id, "method", req->info ? req->info->name : "?");
    if (fields && node)
        json_object_set_new(fields, "node", json_string(node->name));
    if (fields && detail)
        json_object_set_new(fields, "detail", json_string(detail));
    xg_log_fields(XG_LOG_WARN, "request_failed", fields, "%s", message);
    answer_error(req, ERR_NO_NODE, message);
}

/* The last attempt failed without an answer to pass on: the node's id and outcome for the
 * tenant, the node client's error text for the log. */
static void answer_node_failed(struct gw_request *req, const struct up_result *res)
{
    char ref[PROXY_NODE_REF_SIZE], why[64];
    proxy_node_ref(req->px->current.id, ref);
    snprintf(why, sizeof why, "node %s: %s", ref, up_outcome_name(res->outcome));
    answer_unavailable(req, why, &req->px->current, res->error);
}

static void release_held(struct proxy_work *px)
{
    free(px->held_body);
    px->held_body = NULL;
    px->held_len = 0;
}

/* The request no longer waits for its attempts in flight (a good answer came, the phase
 * changed, or it ends): each finishes on its own; the hedge timer is stopped. slow: the
 * nodes are remembered as too slow to ask again. */
static void abandon_inflight(struct gw_request *req, bool slow)
{
    struct proxy_work *px = req->px;
    if (req->ctx->timers)
        hold_cancel(req->ctx->timers, &px->hedge_timer);
    for (size_t i = 0; i < px->ninflight; i++) {
        if (slow && px->nslow < PROXY_MAX_INFLIGHT)
            px->slow[px->nslow++] = px->inflight[i]->node.id;
        px->inflight[i]->req = NULL;
    }
    px->ninflight = 0;
}

/* The key a request's flight is led under: a chain supplement's settled key (the same at
 * every tip), else its cache key. */
static const uint8_t *flight_key(const struct proxy_work *px)
{
    return px->store.settles ? px->store.settled_key : px->store.key;
}

static void land_flight(struct gw_request *req)
{
    if (req->px->leading)
        flight_land(req->ctx->flight, flight_key(req->px));
    req->px->leading = false;
}

/* The answer is in req: the held one is let go and the request handed back to server. */
static void hand_back(struct gw_request *req)
{
    land_flight(req);
    abandon_inflight(req, false);
    release_held(req->px);
    req->answered = true;
    gw_request_resume(req);
}

/* ---- the cache ------------------------------------------------------------------------ */

static bool request_key(const struct gw_request *req, const char *tip_hash,
                        uint8_t key[CACHE_KEY_LEN])
{
    bool rpc = req->endpoint == GW_EP_JSONRPC;
    return cache_key(rpc ? "rpc" : "path", req->info->name,
                     req->forward_body ? req->forward_body : "", req->forward_len,
                     req->endpoint != GW_EP_BIN, tip_hash, key);
}

/* What of the answer may be stored at quorum q (plan_store), and its key. */
static void store_prepare(struct gw_request *req, const struct prober_quorum *q,
                          struct store_plan *store)
{
    struct plan_chain chain = {.known = q->known,
                               .degraded = q->degraded,
                               .height = q->height,
                               .min_depth = req->ctx->cache_min_depth};
    *store = (struct store_plan){.store = PLAN_CACHE_NONE};
    enum plan_cache may = plan_store(&req->plan, &chain, &store->deep);
    if (may == PLAN_CACHE_TIP && request_key(req, q->hash, store->key)) {
        store->store = PLAN_CACHE_TIP;
        if (req->plan.settles && !q->degraded && request_key(req, NULL, store->settled_key)) {
            store->settles = true;
            store->generation = cache_generation(req->ctx->cache);
        }
    } else if (may == PLAN_CACHE_SETTLED && request_key(req, NULL, store->key)) {
        store->store = PLAN_CACHE_SETTLED;
        store->generation = cache_generation(req->ctx->cache);
    }
}

/* on_get_block_hash's answer: a bare hash; an all-zero one means "no such height". */
static bool answer_names_block(const char *body, size_t len)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    const char *hash = json_string_value(json_object_get(root, "result"));
    bool known = hash && !is_zero_hash(hash);
    json_decref(root);
    return known;
}

/* The stored form of an answer: JSON-RPC answers without their id. */
static char *stored_form(const struct gw_request *req, const char *body, size_t len,
                         size_t *out_len)
{
    if (req->endpoint == GW_EP_JSONRPC)
        return cache_strip_id(body, len, out_len);
    char *copy = malloc(len + 1);
    if (copy) {
        memcpy(copy, body, len);
        copy[len] = '\0';
        *out_len = len;
    }
    return copy;
}

/* A chain supplement whose blocks are settled (plan_supplement_settled, at the quorum now)
 * is stored under its settled key, as immutable at its last block's height: true. A pruned
 * node's answer is never stored so (an epee answer is not read for pruned parts). */
static bool store_settled_supplement(struct gw_request *req, const char *body, size_t len,
                                     const struct proxy_answer_facts *f)
{
    struct prober_quorum q = prober_quorum(req->ctx->prober);
    struct plan_chain chain = {.known = q.known,
                               .degraded = q.degraded,
                               .height = q.height,
                               .min_depth = req->ctx->cache_min_depth};
    int64_t top;
    if (!plan_supplement_settled(&req->plan, &chain, &f->blocks, &top))
        return false;
    if (!cache_put(req->ctx->cache, req->px->store.settled_key, body, len, 0, top,
                   req->px->store.generation, xg_monotonic_ms())) {
        /* a reorg since it was sent, or larger than the whole cache: served uncached */
    }
    return true;
}

/* The height a tip entry's stored answer names for per-tenant monotonic reads
 * (consistency_answer_height; -1: none), read once when it is stored, so that a hit does not
 * parse the answer again. */
static int64_t tip_height(const struct method_info *info, enum gw_endpoint endpoint,
                          const char *stored, size_t len)
{
    return consistency_answer_height(info, stored, len, endpoint == GW_EP_BIN);
}

static void store_answer(struct gw_request *req, long http, const char *body, size_t len,
                         const struct proxy_answer_facts *f)
{
    struct proxy_work *px = req->px;
    const struct plan *plan = &req->plan;
    if (px->store.store == PLAN_CACHE_NONE || http != 200 || !f->ok || f->busy || f->untrusted ||
        f->negatives > 0)
        return;
    if (!nodes_own(&px->current))
        return; /* a third party's answer is served, never shared with other tenants */
    if (px->store.settles && f->supplement && !px->current.pruned &&
        store_settled_supplement(req, body, len, f))
        return;
    int64_t height = 0;
    if (px->store.store == PLAN_CACHE_SETTLED) {
        if (plan->prunable && (f->pruned || (req->endpoint == GW_EP_BIN && px->current.pruned)))
            return; /* an epee answer is not read for pruned parts: a pruned node's is not kept */
        if (f->height == PROXY_HEIGHT_UNSETTLED)
            return;
        height = f->height;
        if (plan->depth == PLAN_DEPTH_REQUEST && plan->height > height)
            height = plan->height; /* the answer names no height: the request's stands */
        if (height > px->store.deep)
            return; /* named by hash or index, but not settled yet: a short reorg could
                       change it before the prober sees it (and bumps the epoch) */
        if (plan->depth == PLAN_DEPTH_REQUEST && req->endpoint == GW_EP_JSONRPC &&
            !answer_names_block(body, len))
            return;
        if (height < 0)
            return; /* no height named */
    }
    size_t stored_len = 0;
    char *stored = stored_form(req, body, len, &stored_len);
    if (!stored)
        return;
    int64_t ttl = 0;
    if (px->store.store == PLAN_CACHE_TIP) {
        ttl = plan_tip_ttl(plan, req->ctx->tip_ttl_ms, f->supplement ? &f->blocks : NULL,
                           prober_quorum(req->ctx->prober).height);
        height = tip_height(req->info, req->endpoint, stored, stored_len);
    }
    if (!cache_put(req->ctx->cache, px->store.key, stored, stored_len, ttl, height,
                   px->store.generation, xg_monotonic_ms())) {
        /* refused (a reorg since the request was sent, or too large to keep): the client
         * still gets this answer, only uncached */
    }
    free(stored);
}

/* Turns a stored answer into the client's: the id back in, tip-relative fields now. */
static bool render_hit(struct gw_request *req, char *stored, size_t len, bool immutable,
                       int64_t chain_length)
{
    char *body = NULL;
    size_t out_len = 0;
    if (req->endpoint == GW_EP_BIN) {
        /* Stored as the node sent it: no id, and no field relative to the tip. */
        answer_set(req, 200, stored, len, "application/octet-stream");
        answer_header_set(req, "X-Xmrgate-Cache", "hit");
        return true;
    }
    if (!immutable && req->endpoint == GW_EP_JSONRPC) {
        body = cache_render_jsonrpc(stored, len, req->rpc_id, &out_len);
        free(stored);
    } else if (!immutable) {
        body = stored;
        out_len = len;
    } else {
        json_t *root = json_loadb(stored, len, 0, NULL);
        free(stored);
        if (!root)
            return false;
        cache_patch_tip_fields(root, chain_length);
        if (req->endpoint == GW_EP_JSONRPC)
            json_object_set_new(root, "id",
                                req->rpc_id ? json_incref(req->rpc_id) : json_integer(0));
        body = jsonrpc_dump(root, &out_len);
        json_decref(root);
    }
    if (!body)
        return false;
    answer_set(req, 200, body, out_len, "application/json");
    answer_header_set(req, "X-Xmrgate-Cache", "hit");
    return true;
}

/* ---- the background refresh of a tip entry -------------------------------------------- */

struct refresh_job {
    struct gw_context *ctx;
    uint8_t key[CACHE_KEY_LEN];
    enum gw_endpoint endpoint;
    int32_t node_id;
    bool own;     /* an own node: its answer may be stored */
    bool settles; /* a chain supplement: served as long as plan_tip_ttl says */
    const struct method_info *info;
};

static void on_refresh_done(const struct up_result *res, void *arg)
{
    struct refresh_job *job = arg;
    struct proxy_answer_facts f;
    bool stored = false;
    if (res->outcome == UP_OK && res->http_status == 200) {
        bool jsonrpc = job->endpoint == GW_EP_JSONRPC;
        if (job->endpoint == GW_EP_BIN)
            proxy_read_bin_facts(res->body, res->body_len, &f);
        else
            proxy_read_facts(res->body, res->body_len, &f);
        if (f.ok && !f.busy && !f.untrusted && job->own) {
            size_t len = 0;
            char *body = jsonrpc ? cache_strip_id(res->body, res->body_len, &len) : NULL;
            if (!jsonrpc && (body = malloc(res->body_len + 1))) {
                memcpy(body, res->body, res->body_len + 1);
                len = res->body_len;
            }
            int64_t ttl = job->settles
                              ? plan_tip_ttl(&(struct plan){.settles = true}, job->ctx->tip_ttl_ms,
                                             f.supplement ? &f.blocks : NULL,
                                             prober_quorum(job->ctx->prober).height)
                              : job->ctx->tip_ttl_ms;
            stored = body && cache_put(job->ctx->cache, job->key, body, len, ttl,
                                       tip_height(job->info, job->endpoint, body, len), 0,
                                       xg_monotonic_ms());
            free(body);
        }
    }
    prober_answered(job->ctx->prober, job->node_id, res->outcome == UP_OK && res->http_status < 500,
                    -1);
    if (!stored)
        cache_refresh_failed(job->ctx->cache, job->key);
    free(job);
}

static void start_refresh(struct gw_request *req, const uint8_t key[CACHE_KEY_LEN])
{
    struct node_info node;
    struct prober_pick pick = {.need_tip = true};
    struct refresh_job *job = malloc(sizeof *job);
    if (!job || prober_rank(req->ctx->prober, &pick, &node, 1) == 0) {
        free(job);
        cache_refresh_failed(req->ctx->cache, key);
        return;
    }
    *job = (struct refresh_job){.ctx = req->ctx,
                                .info = req->info,
                                .endpoint = req->endpoint,
                                .node_id = node.id,
                                .own = nodes_own(&node),
                                .settles = req->plan.settles};
    memcpy(job->key, key, CACHE_KEY_LEN);
    char url[512];
    static const struct up_header headers[] = {{"Content-Type", "application/json"}};
    struct up_job uj;
    if (!up_job_init(&uj, url, sizeof url, node.url, req->rest, (long)req->ctx->node_timeout_ms,
                     on_refresh_done, job)) { /* never sent cut short */
        cache_refresh_failed(req->ctx->cache, key);
        free(job);
        return;
    }
    uj.max_connections = node.max_connections;
    if (req->is_post || req->forward_len)
        up_job_post(&uj, req->forward_body, req->forward_len);
    if (req->endpoint != GW_EP_BIN)
        up_job_headers(&uj, headers, 1);
    prober_sent(req->ctx->prober, node.id, 1);
    if (!up_submit(req->ctx->up, &uj)) {
        prober_sent(req->ctx->prober, node.id, -1);
        cache_refresh_failed(req->ctx->cache, key);
        free(job);
    }
}

static bool ensure_work(struct gw_request *req)
{
    if (!req->px && (req->px = calloc(1, sizeof *req->px)))
        req->px->req = req;
    return req->px != NULL;
}

static void mark_degraded(struct gw_request *req, const struct prober_quorum *q)
{
    if (q->known && q->degraded)
        answer_header_set(req, "X-Xmrgate-Degraded", "no-quorum");
}

/* The tenant's floor refuses an answer naming chain height `served` (a miss for it). */
static bool below_tenant_floor(const struct gw_request *req, int64_t served)
{
    return served >= 0 &&
           consistency_below(
               consistency_floor(&req->plan,
                                 sessions_get(req->ctx->sessions, req->tenant_id).served_tip),
               served);
}

/* A settled chain supplement from the cache, its current_height made the quorum's (what a
 * node on the quorum tip answers the same body with now): true when req is answered. */
static bool answer_settled_supplement(struct gw_request *req, const struct prober_quorum *q,
                                      const struct store_plan *store)
{
    char *stored;
    size_t len;
    struct proxy_answer_facts f;
    if (!store->settles || cache_get(req->ctx->cache, store->settled_key, xg_monotonic_ms(),
                                     &stored, &len, NULL) == CACHE_MISS)
        return false;
    proxy_read_bin_facts(stored, len, &f);
    /* Its blocks must still end below the quorum's top (no reorg the prober has not seen
     * yet shortened the chain), and the tenant must not have been served a higher tip. */
    if (!f.supplement || f.blocks.start_height + f.blocks.blocks >= q->height ||
        !epee_patch_uint64(stored, len, "current_height", (uint64_t)q->height) ||
        (req->tenant_id && below_tenant_floor(req, q->height))) {
        free(stored);
        return false;
    }
    answer_set(req, 200, stored, len, "application/octet-stream");
    answer_header_set(req, "X-Xmrgate-Cache", "hit");
    if (req->tenant_id)
        sessions_served_tip(req->ctx->sessions, req->tenant_id, q->height);
    return true;
}

bool proxy_answer_from_cache(struct gw_request *req)
{
    if (req->plan.cache == PLAN_CACHE_NONE)
        return false;
    struct prober_quorum q = prober_quorum(req->ctx->prober);
    struct store_plan store;
    store_prepare(req, &q, &store);
    if (store.store == PLAN_CACHE_NONE)
        return false;
    if (answer_settled_supplement(req, &q, &store))
        return true;
    char *stored;
    size_t len;
    int64_t named = -1;
    enum cache_lookup hit =
        cache_get(req->ctx->cache, store.key, xg_monotonic_ms(), &stored, &len, &named);
    if (hit == CACHE_MISS)
        return false;
    /* A stored tip below the one the tenant was served is a miss for this tenant. A tip
     * entry carries the height its answer names (tip_height, read once when stored). */
    int64_t served =
        !req->tenant_id ? -1
        : store.store == PLAN_CACHE_TIP
            ? named
            : consistency_answer_height(req->info, stored, len, req->endpoint == GW_EP_BIN);
    if (below_tenant_floor(req, served)) {
        free(stored);
        return false;
    }
    if (hit == CACHE_HIT_REFRESH)
        start_refresh(req, store.key);
    if (!render_hit(req, stored, len, store.store == PLAN_CACHE_SETTLED, q.height))
        return false;
    if (served > 0)
        sessions_served_tip(req->ctx->sessions, req->tenant_id, served);
    mark_degraded(req, &q);
    return true;
}

/* ---- reads ---------------------------------------------------------------------------- */

static bool submit_attempt(struct gw_request *req, const char **why);

static size_t pick_nodes(struct gw_request *req, bool need_tip, bool want_full, int32_t exclude_id,
                         bool full_only)
{
    struct proxy_work *px = req->px;
    struct prober_pick pick = {.need_tip = need_tip,
                               .want_full = want_full,
                               .exclude_id = exclude_id,
                               .min_height = px->floor,
                               .only_nodes = px->only_nodes};
    /* only_nodes: when none of the nodes that accepted the tenant's transaction may
     * serve, prober_rank returns the others */
    px->ncandidates = prober_rank(req->ctx->prober, &pick, px->candidates, PROXY_MAX_CANDIDATES);
    size_t n = 0;
    for (size_t i = 0; i < px->ncandidates; i++) {
        bool slow = false;
        for (size_t j = 0; j < px->nslow; j++)
            slow |= px->slow[j] == px->candidates[i].id;
        if (!slow && !(full_only && px->candidates[i].pruned))
            px->candidates[n++] = px->candidates[i];
    }
    px->ncandidates = n;
    px->next = 0;
    return px->ncandidates;
}

/* No node healthy yet (start-up, or all down): the configured order, said loudly. */
static size_t fallback_nodes(struct gw_request *req)
{
    struct proxy_work *px = req->px;
    nodes_read_lock();
    const struct node_set *set = nodes_current(req->ctx->nodes);
    px->ncandidates = 0;
    for (size_t i = 0; i < set->count && px->ncandidates < PROXY_MAX_CANDIDATES; i++)
        px->candidates[px->ncandidates++] = set->nodes[i];
    nodes_read_unlock();
    px->next = 0;
    if (px->ncandidates)
        answer_header_set(req, "X-Xmrgate-Degraded", "no-healthy-node");
    return px->ncandidates;
}

/* Returns an answer held for a confirmation, as it was. */
static void answer_held(struct gw_request *req)
{
    struct proxy_work *px = req->px;
    answer_set(req, px->held_status, px->held_body, px->held_len, px->held_type);
    px->held_body = NULL;
}

static void hold_answer(struct proxy_work *px, const struct up_result *res,
                        const struct proxy_answer_facts *f)
{
    release_held(px);
    px->held_status = res->http_status;
    px->held_len = res->body_len;
    px->held_body = up_result_take_body(res);
    px->held_facts = *f;
    xg_str_copy(px->held_type, sizeof px->held_type, res->content_type);
}

/* Asks the next node for the phase just entered; false when there is none. */
static bool start_phase(struct gw_request *req, enum proxy_phase phase)
{
    struct proxy_work *px = req->px;
    int32_t first = px->current.id;
    px->phase = phase;
    size_t n = phase == PHASE_FULL_NODE ? pick_nodes(req, px->need_tip, true, first, true)
                                        : pick_nodes(req, true, req->plan.full_node, first, false);
    const char *why;
    return n > 0 && submit_attempt(req, &why);
}

static bool may_retry(const struct gw_request *req)
{
    const struct proxy_work *px = req->px;
    /* A write is never sent twice (broadcasts have their own path). */
    return !req->info->writes && px->failures < GW_MAX_ATTEMPTS && px->next < px->ncandidates &&
           xg_monotonic_us() < req->deadline_us;
}

/* A usable answer in the read phase: checks it for pruned data and negatives first. */
static void on_read_answer(struct gw_request *req, const struct up_result *res,
                           const struct proxy_answer_facts *f)
{
    struct proxy_work *px = req->px;
    if (px->phase == PHASE_READ && req->plan.full_node && f->ok && f->pruned) {
        hold_answer(px, res, f);
        if (start_phase(req, PHASE_FULL_NODE))
            return;
        answer_error(req, ERR_PRUNED_ONLY, NULL);
        hand_back(req);
        return;
    }
    /* Negatives must be confirmed; so must an error to a historical read, which may have
     * gone to a node a few blocks behind ("height too big" from a lagging node). */
    bool lagging_error = !px->need_tip && !f->ok;
    if (px->phase == PHASE_READ && ((f->ok && f->negatives > 0) || lagging_error)) {
        hold_answer(px, res, f);
        if (start_phase(req, PHASE_CONFIRM))
            return;
        answer_held(req); /* the only node on the tip: its answer stands */
        hand_back(req);
        return;
    }
    bool better = f->ok && (!px->held_facts.ok || f->negatives < px->held_facts.negatives);
    if (px->phase == PHASE_CONFIRM && px->held_body && !better) {
        answer_held(req); /* the second node found no more: the first answer stands */
        hand_back(req);
        return;
    }
    store_answer(req, res->http_status, res->body, res->body_len, f);
    answer_set(req, res->http_status, up_result_take_body(res), res->body_len, res->content_type);
    hand_back(req);
}

/* Takes a from its request's attempts in flight. */
static void attempt_detach(struct proxy_work *px, const struct proxy_attempt *a)
{
    for (size_t i = 0; i < px->ninflight; i++)
        if (px->inflight[i] == a) {
            px->inflight[i] = px->inflight[--px->ninflight];
            return;
        }
}

/* The read is answered 503 behind_served_tip: no node could answer at the chain tip the
 * tenant has already been served. */
static void answer_behind(struct gw_request *req)
{
    answer_error(req, ERR_BEHIND_SERVED_TIP, NULL);
    answer_header_set(req, "Retry-After", "1");
    gw_metrics_behind_tip(req->ctx->metrics);
}

static void on_tip_wait_due(struct hold_entry *e)
{
    struct proxy_work *px =
        (struct proxy_work *)(void *)((char *)e - offsetof(struct proxy_work, tip_wait));
    struct gw_request *req = px->req;
    const char *why;
    px->failures = 0;
    if (pick_nodes(req, px->need_tip, req->plan.full_node, 0, false) > 0 &&
        submit_attempt(req, &why))
        return;
    answer_behind(req);
    hand_back(req);
}

/* Once, for a read whose nodes are all below its floor: it waits tip_wait (at most half
 * the time it has left) for the prober to see a node at the tenant's tip, then is ranked
 * and sent again. False when it has waited already, or cannot. */
static bool wait_for_tip(struct gw_request *req)
{
    struct proxy_work *px = req->px;
    int64_t now_us = xg_monotonic_us();
    int64_t wait_us = req->ctx->tip_wait_ms * 1000;
    if (wait_us > (req->deadline_us - now_us) / 2)
        wait_us = (req->deadline_us - now_us) / 2;
    if (px->waited || wait_us <= 0 || !req->ctx->timers)
        return false;
    px->waited = true;
    return hold_add(req->ctx->timers, &px->tip_wait, now_us + wait_us, on_tip_wait_due);
}

/* The last answer names a tip below the tenant's floor (consistency_below): it is never
 * sent. Another node is asked (a node behind is no failure of it), or the read waits once
 * for the nodes to catch up, or it is refused. */
static void on_behind(struct gw_request *req)
{
    struct proxy_work *px = req->px;
    const char *why;
    abandon_inflight(req, false);
    if (px->next < px->ncandidates && xg_monotonic_us() < req->deadline_us &&
        submit_attempt(req, &why))
        return;
    if (wait_for_tip(req))
        return;
    answer_behind(req);
    hand_back(req);
}

static void on_node_done(const struct up_result *res, void *arg)
{
    struct proxy_attempt *a = arg;
    struct gw_context *ctx = a->ctx;
    struct gw_request *req = a->req;
    if (!req && res->outcome == UP_CANCELLED) {
        free(a); /* the gateway stops: the prober may be gone already */
        return;
    }
    struct proxy_answer_facts f = {.height = -1};
    if (res->outcome == UP_OK && a->endpoint == GW_EP_BIN)
        proxy_read_bin_facts(res->body, res->body_len, &f);
    else if (res->outcome == UP_OK)
        proxy_read_facts(res->body, res->body_len, &f);
    bool failed =
        proxy_retryable(res->outcome, res->http_status) || f.busy || res->outcome != UP_OK;
    /* An abandoned attempt still tells the breaker how its node did (a frozen node's
     * timeout), but its answer goes nowhere. */
    prober_answered(ctx->prober, a->node.id, !failed, res->seconds * 1000.0);
    gw_metrics_node_call(ctx->metrics, a->node.name,
                         gw_metrics_node_outcome(res->outcome, res->http_status, f.busy),
                         res->seconds);
    if (!req) {
        free(a);
        return;
    }
    struct proxy_work *px = req->px;
    attempt_detach(px, a);
    px->current = a->node;
    bool hedge = a->hedge;
    free(a);
    if (!failed) {
        int64_t served = consistency_answer_height(req->info, res->body, res->body_len,
                                                   req->endpoint == GW_EP_BIN);
        if (consistency_below(px->floor, served)) {
            if (px->ninflight == 0)
                on_behind(req); /* else the other attempt may have the tenant's tip */
            return;
        }
        if (served > 0 && req->tenant_id)
            sessions_served_tip(ctx->sessions, req->tenant_id, served);
    }
    if (failed && px->ninflight > 0) {
        px->failures++; /* the other attempt may still answer: wait for it */
        return;
    }
    if (!failed && hedge) {
        /* The hedge won: the first node did not answer in its own p95 and then some. The
         * breaker hears it now, not at the node's timeout, when the node has gone silent
         * (prober_overtaken). */
        for (size_t i = 0; i < px->ninflight; i++)
            if (!px->inflight[i]->hedge)
                prober_overtaken(ctx->prober, px->inflight[i]->node.id);
        gw_metrics_hedge(ctx->metrics, GW_HEDGE_WON);
    }
    if (!failed)
        abandon_inflight(req, true); /* the first good answer wins */
    if (failed) {
        px->failures++;
        xg_log(XG_LOG_DEBUG, "node_attempt_failed", "node %s: %s (HTTP %ld)", px->current.name,
               f.busy       ? "BUSY"
               : res->error ? res->error
                            : up_outcome_name(res->outcome),
               res->http_status);
        const char *why;
        if (may_retry(req) && submit_attempt(req, &why))
            return;
        if (px->held_body) { /* a confirmation or full-node retry failed: the first stands */
            if (px->phase == PHASE_CONFIRM) {
                answer_held(req);
                hand_back(req);
                return;
            }
        }
        if (res->outcome == UP_OK) { /* a 5xx or BUSY: pass the node's own answer on */
            answer_set(req, res->http_status, up_result_take_body(res), res->body_len,
                       res->content_type);
        } else {
            answer_node_failed(req, res);
        }
        hand_back(req);
        return;
    }
    if (req->endpoint == GW_EP_BIN) {
        store_answer(req, res->http_status, res->body, res->body_len, &f);
        answer_set(req, res->http_status, up_result_take_body(res), res->body_len,
                   res->content_type);
        hand_back(req);
        return;
    }
    on_read_answer(req, res, &f);
}

static void arm_hedge(struct gw_request *req, int32_t id);

/* Sends req to its next candidate (hedge: alongside the attempt in flight). False with the
 * reason in *why when none can take it. */
static bool submit_one(struct gw_request *req, bool hedge, const char **why)
{
    struct proxy_work *px = req->px;
    /* Skip candidates whose breaker opened since ranking. */
    while (px->next < px->ncandidates &&
           !prober_attempt_begin(req->ctx->prober, px->candidates[px->next].id))
        px->next++;
    if (px->next >= px->ncandidates) {
        *why = "every node that could take it is failing (circuit breaker open)";
        return false;
    }
    if (px->ninflight >= PROXY_MAX_INFLIGHT) {
        *why = "too many attempts in flight"; /* our bug: callers check */
        return false;
    }
    struct proxy_attempt *a = malloc(sizeof *a);
    if (!a) {
        *why = "out of memory";
        return false;
    }
    *a = (struct proxy_attempt){.req = req,
                                .ctx = req->ctx,
                                .node = px->candidates[px->next++],
                                .endpoint = req->endpoint,
                                .hedge = hedge};
    px->current = a->node;
    /* The allow-list: nothing of the client's reaches a node but its body. */
    static const struct up_header json_headers[] = {{"Content-Type", "application/json"}};
    int64_t left_ms = (req->deadline_us - xg_monotonic_us()) / 1000;
    char url[512];
    struct up_job job;
    if (!up_job_init(&job, url, sizeof url, a->node.url, req->rest,
                     up_timeout_within(left_ms, (long)req->ctx->node_timeout_ms), on_node_done,
                     a)) {
        *why = "the node URL and the request path are too long together";
        free(a);
        return false; /* a URL cut short is never sent */
    }
    job.max_connections = a->node.max_connections;
    if (req->is_post || req->forward_len)
        up_job_post(&job, req->forward_body, req->forward_len);
    if (req->endpoint != GW_EP_BIN)
        up_job_headers(&job, json_headers, 1);
    *why = "the gateway is stopping, or out of memory";
    prober_sent(req->ctx->prober, a->node.id, 1); /* before: the answer may come first */
    if (!up_submit(req->ctx->up, &job)) {
        prober_sent(req->ctx->prober, a->node.id, -1);
        free(a);
        return false;
    }
    px->inflight[px->ninflight++] = a;
    if (!hedge && px->ninflight == 1 && px->failures == 0)
        arm_hedge(req, a->node.id);
    return true;
}

/* The hedge delay passed and the phase's first attempt has not answered: the same read to
 * the next node, budget allowing. Runs on the loop's thread (hold.h). */
static void on_hedge_due(struct hold_entry *e)
{
    struct proxy_work *px =
        (struct proxy_work *)(void *)((char *)e - offsetof(struct proxy_work, hedge_timer));
    struct gw_request *req = px->req;
    if (px->ninflight != 1 || px->next >= px->ncandidates || xg_monotonic_us() >= req->deadline_us)
        return;
    if (!prober_hedge_take(req->ctx->prober)) {
        gw_metrics_hedge(req->ctx->metrics, GW_HEDGE_NO_BUDGET);
        return;
    }
    const char *why;
    if (submit_one(req, true, &why))
        gw_metrics_hedge(req->ctx->metrics, GW_HEDGE_SENT);
}

/* Arms the hedge timer for an idempotent read just sent to node id, when another node
 * could take it. */
static void arm_hedge(struct gw_request *req, int32_t id)
{
    struct proxy_work *px = req->px;
    if (!req->plan.hedgeable || req->info->writes || !req->ctx->timers ||
        px->next >= px->ncandidates || hold_queued(&px->hedge_timer))
        return;
    int64_t delay_ms = prober_hedge_delay(req->ctx->prober, id);
    if (delay_ms < 0)
        return;
    if (!hold_add(req->ctx->timers, &px->hedge_timer, xg_monotonic_us() + delay_ms * 1000,
                  on_hedge_due)) {
        /* out of memory: this read is not hedged */
    }
}

static bool submit_attempt(struct gw_request *req, const char **why)
{
    return submit_one(req, false, why);
}

/* Sends a read that did not follow another one's flight; false with the answer in req. */
static bool send_read(struct gw_request *req)
{
    if (req->px->store.store != PLAN_CACHE_NONE)
        answer_header_set(req, "X-Xmrgate-Cache", "miss");
    const char *why;
    if (!submit_attempt(req, &why)) {
        answer_unavailable(req, why, NULL, NULL);
        return false;
    }
    return true;
}

static void on_follow_due(struct hold_entry *e);

/* Looks again in PROXY_FOLLOW_POLL_US, while the request has time left to ask a node
 * itself after that (a node timeout); false when it has not, or cannot wait. */
static bool arm_follow(struct gw_request *req)
{
    int64_t due_us = xg_monotonic_us() + PROXY_FOLLOW_POLL_US;
    if (due_us + req->ctx->node_timeout_ms * 1000 >= req->deadline_us)
        return false;
    return hold_add(req->ctx->timers, &req->px->follow_timer, due_us, on_follow_due);
}

/* Joins the flight of the request's key (cache/flight.h): true when it follows another
 * request's and waits; false when it leads (or may not wait) and asks a node now. */
static bool follow_flight(struct gw_request *req)
{
    struct proxy_work *px = req->px;
    if (!req->ctx->flight || !req->ctx->timers || px->store.store == PLAN_CACHE_NONE)
        return false;
    int64_t now_us = xg_monotonic_us();
    int64_t lease_ms = (req->deadline_us - now_us) / 1000;
    if (flight_join(req->ctx->flight, flight_key(px), now_us / 1000, lease_ms) == FLIGHT_LEAD) {
        px->leading = true;
        return false;
    }
    return arm_follow(req);
}

/* A follower looks again: while the lead is open it waits on; once the lead landed it
 * serves the stored answer, or, when none was stored, joins again (and mostly leads). */
static void on_follow_due(struct hold_entry *e)
{
    struct proxy_work *px =
        (struct proxy_work *)(void *)((char *)e - offsetof(struct proxy_work, follow_timer));
    struct gw_request *req = px->req;
    if (flight_open(req->ctx->flight, flight_key(px), xg_monotonic_ms()) && arm_follow(req))
        return;
    if (proxy_answer_from_cache(req)) {
        req->from_cache = true;
        gw_metrics_coalesced(req->ctx->metrics);
        hand_back(req);
        return;
    }
    if (follow_flight(req))
        return;
    if (!send_read(req))
        hand_back(req);
}

static bool dispatch_read(struct gw_request *req, const struct prober_quorum *q)
{
    struct proxy_work *px = req->px;
    px->phase = PHASE_READ;
    struct session_view tenant = sessions_get(req->ctx->sessions, req->tenant_id);
    px->floor = consistency_floor(&req->plan, tenant.served_tip);
    if (req->ctx->read_your_writes_ms > 0)
        px->only_nodes = consistency_writes_nodes(&req->plan, tenant.accepted,
                                                  tenant.accepted_until_ms, xg_monotonic_ms());
    /* Historical reads may use a node a few blocks behind; everything else the tip. */
    px->need_tip = req->plan.route != PLAN_ROUTE_HISTORICAL;
    if (pick_nodes(req, px->need_tip, req->plan.full_node, 0, false) == 0 &&
        fallback_nodes(req) == 0) {
        answer_unavailable(req, "no node is configured", NULL, NULL);
        return false;
    }
    mark_degraded(req, q);
    store_prepare(req, q, &px->store);
    if (follow_flight(req))
        return true;
    return send_read(req);
}

/* ---- broadcast ------------------------------------------------------------------------ */

static const char *slot_word(int outcome)
{
    switch (outcome) {
    case BC_ACCEPTED:
        return "ok";
    case BC_REJECTED:
        return "rejected";
    case BC_PENDING:
        return "pending"; /* still out when the answer went: its outcome is in the metrics */
    default:
        return "fail";
    }
}

/* Every node has answered, or an own node accepted and the grace passed: the first
 * acceptance is the answer, else the first rejection (the node's reason), else our error.
 * Runs once, on the engine's loop thread (upstream.h: every callback runs there, and so do
 * the request's handler and the loop's timers): in a node's callback, in the grace timer,
 * or at the end of dispatch_broadcast should every call have ended before it. */
static void broadcast_finish(struct broadcast *bc)
{
    struct gw_request *req = bc->req;
    bc->answered = true;
    if (req->ctx->timers)
        hold_cancel(req->ctx->timers, &bc->grace);
    char header[256] = "";
    size_t used = 0;
    struct broadcast_slot *best = NULL;
    for (size_t i = 0; i < bc->nslots; i++) {
        struct broadcast_slot *s = &bc->slots[i];
        char ref[PROXY_NODE_REF_SIZE];
        proxy_node_ref(s->node.id, ref);
        int w = snprintf(header + used, sizeof header - used, "%s%s=%s", i ? "," : "", ref,
                         slot_word(s->outcome));
        if (w > 0 && (size_t)w < sizeof header - used)
            used += (size_t)w;
        if (s->outcome == BC_ACCEPTED && (!best || best->outcome != BC_ACCEPTED))
            best = s;
        else if (s->outcome == BC_REJECTED && !best)
            best = s;
    }
    answer_header_set(req, "X-Xmrgate-Broadcast", header);
    gw_metrics_broadcast(req->ctx->metrics, best && best->outcome == BC_ACCEPTED);
    if (best) {
        answer_set(req, best->http, best->body, best->len, best->type);
        best->body = NULL;
    } else {
        answer_unavailable(req, "no node accepted the connection", NULL, NULL);
    }
    for (size_t i = 0; i < bc->nslots; i++) {
        free(bc->slots[i].body);
        bc->slots[i].body = NULL;
    }
    hand_back(req);
}

static void broadcast_free(struct broadcast *bc)
{
    for (size_t i = 0; i < bc->nslots; i++)
        free(bc->slots[i].body);
    free(bc->slots);
    free(bc);
}

static void on_broadcast_grace(struct hold_entry *e)
{
    struct broadcast *bc =
        (struct broadcast *)(void *)((char *)e - offsetof(struct broadcast, grace));
    if (bc->req && !bc->answered)
        broadcast_finish(bc);
}

static void on_broadcast_done(const struct up_result *res, void *arg)
{
    struct broadcast_call *call = arg;
    struct broadcast *bc = call->bc;
    struct broadcast_slot *s = &bc->slots[call->slot];
    free(call);
    if (res->outcome == UP_CANCELLED && !bc->req) { /* the gateway stops */
        if (atomic_fetch_sub(&bc->pending, 1) == 1)
            broadcast_free(bc);
        return;
    }
    struct gw_context *ctx = bc->ctx;
    s->http = res->http_status;
    s->outcome = BC_FAILED;
    if (res->outcome == UP_OK && res->http_status == 200) {
        struct proxy_answer_facts f;
        proxy_read_facts(res->body, res->body_len, &f);
        /* status OK covers "already in the pool" (not_relayed) too. */
        s->outcome = f.ok ? BC_ACCEPTED : f.json ? BC_REJECTED : BC_FAILED;
        s->len = res->body_len;
        s->body = up_result_take_body(res);
        xg_str_copy(s->type, sizeof s->type, res->content_type);
    }
    if (s->outcome == BC_ACCEPTED && bc->tenant_id && ctx->read_your_writes_ms > 0) {
        /* the tenant's pool and transaction queries go to these nodes for a while */
        bc->accepted |= nodes_bit(s->node.id);
        sessions_accepted(ctx->sessions, bc->tenant_id, bc->accepted,
                          xg_monotonic_ms() + ctx->read_your_writes_ms);
    }
    if (s->outcome == BC_FAILED)
        xg_log(XG_LOG_DEBUG, "broadcast_node_failed", "node %s: %s (HTTP %ld)", s->node.name,
               res->error ? res->error : up_outcome_name(res->outcome), res->http_status);
    prober_report(ctx->prober, s->node.id, s->outcome != BC_FAILED);
    gw_metrics_node_call(ctx->metrics, s->node.name,
                         gw_metrics_node_outcome(res->outcome, res->http_status, false),
                         res->seconds);
    gw_metrics_broadcast_node(ctx->metrics, s->node.name,
                              s->outcome == BC_ACCEPTED   ? GW_BCAST_ACCEPTED
                              : s->outcome == BC_REJECTED ? GW_BCAST_REJECTED
                                                          : GW_BCAST_FAILED);
    bool last = atomic_fetch_sub(&bc->pending, 1) == 1;
    if (!bc->req) { /* answered and let go: a background call */
        if (last)
            broadcast_free(bc);
        return;
    }
    if (bc->answered)
        return;
    if (last) {
        broadcast_finish(bc);
        return;
    }
    /* An own node took it: the others get one hedge delay more, then the answer goes. */
    if (s->outcome == BC_ACCEPTED && nodes_own(&s->node) && ctx->timers &&
        !hold_queued(&bc->grace)) {
        int64_t grace_ms = prober_hedge_delay(ctx->prober, -1);
        if (grace_ms >= 0 && !hold_add(ctx->timers, &bc->grace, xg_monotonic_us() + grace_ms * 1000,
                                       on_broadcast_grace)) {
            /* out of memory: the answer waits for every node */
        }
    }
}

static bool dispatch_broadcast(struct gw_request *req, const struct prober_quorum *q)
{
    struct proxy_work *px = req->px;
    struct node_info nodes[PROXY_MAX_BROADCAST];
    size_t n = prober_healthy(req->ctx->prober, nodes, PROXY_MAX_BROADCAST);
    if (n == 0) { /* the configured nodes that take broadcasts (never a public one unasked) */
        size_t configured = fallback_nodes(req);
        for (size_t i = 0; i < configured && n < PROXY_MAX_BROADCAST; i++)
            if (px->candidates[i].broadcast)
                nodes[n++] = px->candidates[i];
    }
    if (n == 0) {
        answer_unavailable(req, "no node is configured", NULL, NULL);
        return false;
    }
    mark_degraded(req, q);
    struct broadcast *bc = calloc(1, sizeof *bc);
    if (bc && !(bc->slots = calloc(n, sizeof *bc->slots))) {
        free(bc);
        bc = NULL;
    }
    if (!bc) {
        answer_error(req, ERR_OUT_OF_MEMORY, NULL);
        return false;
    }
    bc->req = req;
    bc->ctx = req->ctx;
    bc->tenant_id = req->tenant_id;
    px->bc = bc;
    for (size_t i = 0; i < n; i++)
        bc->slots[i] = (struct broadcast_slot){.node = nodes[i], .outcome = BC_PENDING};
    bc->nslots = n;
    /* One count more than the calls, dropped after the loop: the last callback cannot
     * finish the request while calls are still being submitted. */
    atomic_init(&bc->pending, n + 1);
    size_t submitted = 0;
    static const struct up_header json_headers[] = {{"Content-Type", "application/json"}};
    for (size_t i = 0; i < n; i++) {
        struct broadcast_call *call = malloc(sizeof *call);
        int64_t left_ms = (req->deadline_us - xg_monotonic_us()) / 1000;
        char url[512];
        struct up_job job;
        if (call && !up_job_init(&job, url, sizeof url, nodes[i].url, req->rest,
                                 up_timeout_within(left_ms, (long)req->ctx->node_timeout_ms),
                                 on_broadcast_done, call)) {
            free(call); /* a URL cut short is never sent: counted as not submitted */
            call = NULL;
        }
        if (call) {
            job.max_connections = nodes[i].max_connections;
            up_job_post(&job, req->forward_body, req->forward_len);
            up_job_headers(&job, json_headers, 1);
        }
        if (call)
            *call = (struct broadcast_call){bc, i};
        if (call && up_submit(req->ctx->up, &job)) {
            submitted++;
            continue;
        }
        free(call);
        bc->slots[i].outcome = BC_FAILED;
        atomic_fetch_sub(&bc->pending, 1);
    }
    if (submitted == 0) {
        answer_unavailable(req,
                           "no broadcast could be sent (the gateway is stopping, or out of memory)",
                           NULL, NULL);
        return false;
    }
    if (atomic_fetch_sub(&bc->pending, 1) == 1)
        broadcast_finish(bc);
    return true;
}

/* ---- entry points ----------------------------------------------------------------------- */

bool proxy_dispatch(struct gw_request *req)
{
    if (!ensure_work(req)) {
        answer_error(req, ERR_OUT_OF_MEMORY, NULL);
        return false;
    }
    struct prober_quorum q = prober_quorum(req->ctx->prober);
    if (req->plan.route == PLAN_ROUTE_BROADCAST)
        return dispatch_broadcast(req, &q);
    return dispatch_read(req, &q);
}

void proxy_request_free(struct gw_request *req)
{
    if (!req->px)
        return;
    abandon_inflight(req, false);
    land_flight(req);
    if (req->ctx->timers) {
        hold_cancel(req->ctx->timers, &req->px->tip_wait);
        hold_cancel(req->ctx->timers, &req->px->follow_timer);
    }
    release_held(req->px);
    struct broadcast *bc = req->px->bc;
    if (bc) { /* calls still out go on without the request */
        if (req->ctx->timers)
            hold_cancel(req->ctx->timers, &bc->grace);
        bc->req = NULL;
        if (atomic_load(&bc->pending) == 0)
            broadcast_free(bc);
    }
    free(req->px);
    req->px = NULL;
}
