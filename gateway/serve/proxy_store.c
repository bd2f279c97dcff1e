/* proxy_store — a read's answers in the cache (gateway/cache/cache.h): the key and what
 * may be stored at the quorum tip a request is sent at (plan_store), storing a node's
 * answer as plan_keep says, serving a hit (the id put back, tip-relative fields now), a
 * settled chain supplement, and the background refresh of a tip entry past half its TTL.
 * Under the tenant's read rules (gateway/rpc/consistency.h): a stored answer below the tip
 * the tenant was served is a miss for that tenant. */
#include "serve/proxy_store.h"

#include "serve/context.h"
#include "serve/answer.h"
#include "rpc/consistency.h"
#include "rpc/epee.h"
#include "rpc/jsonrpc.h"
#include "xg_clock.h"

#include <stdlib.h>
#include <string.h>

static bool request_key(const struct gw_request *req, const char *tip_hash,
                        uint8_t key[CACHE_KEY_LEN])
{
    bool rpc = req->endpoint == GW_EP_JSONRPC;
    return cache_key(rpc ? "rpc" : "path", req->info->name,
                     req->forward_body ? req->forward_body : "", req->forward_len,
                     req->endpoint != GW_EP_BIN, tip_hash, key);
}

void proxy_store_prepare(struct gw_request *req, const struct prober_quorum *q,
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

/* The height a tip entry's stored answer names for per-tenant monotonic reads
 * (consistency_answer_height; -1: none), read once when it is stored, so that a hit does not
 * parse the answer again. */
static int64_t tip_height(const struct method_info *info, enum gw_endpoint endpoint,
                          const char *stored, size_t len)
{
    return consistency_answer_height(info, stored, len, endpoint == GW_EP_BIN);
}

/* The chain as the prober sees it now, for the rules. */
static struct plan_chain chain_now(const struct gw_request *req)
{
    struct prober_quorum q = prober_quorum(req->ctx->prober);
    return (struct plan_chain){.known = q.known,
                               .degraded = q.degraded,
                               .height = q.height,
                               .min_depth = req->ctx->cache_min_depth};
}

void proxy_store_answer(struct gw_request *req, long http, const char *body, size_t len,
                        const struct proxy_answer_facts *f)
{
    struct proxy_work *px = req->px;
    const struct plan *plan = &req->plan;
    bool jsonrpc = req->endpoint == GW_EP_JSONRPC;
    struct plan_answer a = {.store = px->store.store,
                            .deep = px->store.deep,
                            .settles = px->store.settles,
                            .http = http,
                            .ok = f->ok,
                            .busy = f->busy,
                            .untrusted = f->untrusted,
                            .negatives = f->negatives,
                            .own_node = nodes_own(&px->current),
                            .agreed = px->agree.agreed,
                            .node_pruned = px->current.pruned,
                            .pruned = f->pruned,
                            .bin = req->endpoint == GW_EP_BIN,
                            .jsonrpc = jsonrpc,
                            .height = f->height,
                            .supplement = f->supplement,
                            .blocks = f->blocks};
    /* Read only where the rule reads it: a settled JSON-RPC answer by height. */
    if (a.store == PLAN_CACHE_SETTLED && plan->depth == PLAN_DEPTH_REQUEST && jsonrpc &&
        http == 200 && f->ok)
        a.names_block = proxy_answer_names_block(body, len);
    struct plan_chain now;
    if (a.settles && a.supplement)
        now = chain_now(req);
    int64_t height = 0;
    enum plan_keep keep = plan_keep(plan, &a, a.settles && a.supplement ? &now : NULL, &height);
    if (keep == PLAN_KEEP_NONE)
        return;
    if (keep == PLAN_KEEP_SUPPLEMENT) {
        if (!cache_put(req->ctx->cache, px->store.settled_key, body, len, 0, height,
                       px->store.generation, xg_monotonic_ms())) {
            /* a reorg since it was sent, or larger than the whole cache: served uncached */
        }
        return;
    }
    size_t stored_len = 0;
    char *stored = stored_form(req, body, len, &stored_len);
    if (!stored)
        return;
    int64_t ttl = 0;
    if (keep == PLAN_KEEP_TIP) {
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

bool proxy_store_serve(struct gw_request *req)
{
    if (req->plan.cache == PLAN_CACHE_NONE)
        return false;
    struct prober_quorum q = prober_quorum(req->ctx->prober);
    struct store_plan store;
    proxy_store_prepare(req, &q, &store);
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
    if (hit == CACHE_HIT_REFRESH && req->info->agree)
        cache_refresh_failed(req->ctx->cache, store.key); /* one node's answer is not kept */
    else if (hit == CACHE_HIT_REFRESH)
        start_refresh(req, store.key);
    if (!render_hit(req, stored, len, store.store == PLAN_CACHE_SETTLED, q.height))
        return false;
    if (served > 0)
        sessions_served_tip(req->ctx->sessions, req->tenant_id, served);
    proxy_mark_degraded(req, &q);
    return true;
}
