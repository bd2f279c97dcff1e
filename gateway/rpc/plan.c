/* plan — the plan for one request, from its method table row and its facts. See plan.h. */
#include "rpc/plan.h"

#include "rpc/epee.h"

#include <string.h>

static enum plan_route route_of(enum method_class cls)
{
    switch (cls) {
    case METHOD_DENIED:
        return PLAN_ROUTE_REFUSED;
    case METHOD_BROADCAST:
        return PLAN_ROUTE_BROADCAST;
    case METHOD_IMMUTABLE:
        return PLAN_ROUTE_HISTORICAL; /* a node a few blocks behind knows deep data too */
    case METHOD_TIP:
    case METHOD_PASSTHROUGH:
        break;
    }
    return PLAN_ROUTE_TIP;
}

static bool wants_full_node(const struct method_info *info, const struct plan_request *r)
{
    switch (info->needs_full_node) {
    case METHOD_FULL_NO:
        return false;
    case METHOD_FULL_YES:
        return true;
    case METHOD_FULL_UNLESS_PRUNED:
        break;
    }
    /* A binary body is not read for "prune": it prefers a full node too. */
    return info->kind == METHOD_BIN_PATH || !json_is_true(json_object_get(r->params, "prune"));
}

static bool param_int(const json_t *params, const char *name, int64_t *out)
{
    const json_t *v = json_object_get(params, name);
    if (!json_is_integer(v))
        return false;
    *out = json_integer_value(v);
    return true;
}

/* The heights a get_blocks_by_height.bin body asks for: at least one, every one an
 * unsigned integer; *highest the highest. */
static bool bin_heights(const char *body, size_t len, int64_t *highest)
{
    struct epee_section root;
    struct epee_value v, item;
    struct epee_array heights;
    if (!body || epee_open(body, len, &root) != EPEE_OK || !epee_find(&root, "heights", &v) ||
        !epee_get_array(&v, &heights) || heights.count == 0)
        return false;
    *highest = -1;
    while (epee_array_next(&heights, &item)) {
        uint64_t h;
        if (!epee_get_uint(&item, &h) || h > INT64_MAX)
            return false;
        if ((int64_t)h > *highest)
            *highest = (int64_t)h;
    }
    return true;
}

static void settled(struct plan *p, enum plan_key key, enum plan_depth depth, int64_t height)
{
    p->cache = PLAN_CACHE_SETTLED;
    p->key = key;
    p->depth = depth;
    p->height = height;
}

/* Fills the cache part of the plan from the row's key and the request's params; a request
 * that does not name its key as the row needs is not cached. */
static void plan_cache(struct plan *p, const struct plan_request *r)
{
    const json_t *params = r->params;
    int64_t h = 0, end = 0;
    switch (p->info->key) {
    case METHOD_KEY_NONE:
        return;
    case METHOD_KEY_TIP:
        p->cache = PLAN_CACHE_TIP;
        p->key = PLAN_KEY_TIP;
        return;
    case METHOD_KEY_HASH:
        settled(p, PLAN_KEY_HASH, PLAN_DEPTH_ANSWER, -1);
        return;
    case METHOD_KEY_INDEX:
        settled(p, PLAN_KEY_INDEX, PLAN_DEPTH_ANSWER, -1);
        return;
    case METHOD_KEY_HASH_OR_HEIGHT:
        if (json_object_get(params, "hash"))
            settled(p, PLAN_KEY_HASH, PLAN_DEPTH_ANSWER, -1);
        else if (param_int(params, "height", &h))
            settled(p, PLAN_KEY_HEIGHT, PLAN_DEPTH_ANSWER, h);
        return;
    case METHOD_KEY_HEIGHT:
        if (param_int(params, "height", &h))
            settled(p, PLAN_KEY_HEIGHT, PLAN_DEPTH_ANSWER, h);
        return;
    case METHOD_KEY_RANGE:
        if (param_int(params, "start_height", &h) && param_int(params, "end_height", &end) &&
            h <= end)
            settled(p, PLAN_KEY_RANGE, PLAN_DEPTH_ANSWER, end);
        return;
    case METHOD_KEY_HEIGHT_ARG:
        if (json_is_array(params) && json_array_size(params) == 1 &&
            json_is_integer(json_array_get(params, 0)))
            settled(p, PLAN_KEY_HEIGHT, PLAN_DEPTH_REQUEST,
                    json_integer_value(json_array_get(params, 0)));
        return;
    case METHOD_KEY_HEIGHTS:
        if (bin_heights(r->bin, r->bin_len, &h))
            settled(p, PLAN_KEY_HEIGHT, PLAN_DEPTH_REQUEST, h);
        return;
    }
}

void plan_for(const struct method_info *info, const struct plan_request *r, struct plan *out)
{
    static const struct plan_request no_facts = {0};
    if (!r)
        r = &no_facts;
    *out = (struct plan){.info = info, .route = route_of(info->cls), .height = -1};
    out->full_node = wants_full_node(info, r);
    out->prunable = info->needs_full_node != METHOD_FULL_NO;
    out->hedgeable =
        (out->route == PLAN_ROUTE_TIP || out->route == PLAN_ROUTE_HISTORICAL) && !info->writes;
    out->pool = info->pool_info && r->asks_pool;
    if (!out->pool)
        plan_cache(out, r);
    out->settles = info->pool_info && !out->pool && out->cache == PLAN_CACHE_TIP;
}

/* Whether the plan of a JSON row reads its params (most need only the row). */
static bool reads_params(const struct method_info *info)
{
    switch (info->key) {
    case METHOD_KEY_HEIGHT:
    case METHOD_KEY_HASH_OR_HEIGHT:
    case METHOD_KEY_RANGE:
    case METHOD_KEY_HEIGHT_ARG:
        return true;
    default:
        return info->needs_full_node == METHOD_FULL_UNLESS_PRUNED;
    }
}

void plan_for_body(const struct method_info *info, const char *body, size_t len, bool asks_pool,
                   struct plan *out)
{
    struct plan_request r = {.asks_pool = asks_pool};
    json_t *root = NULL;
    if (info->kind == METHOD_BIN_PATH) {
        r.bin = body;
        r.bin_len = len;
    } else if (body && reads_params(info)) {
        root = json_loadb(body, len, 0, NULL);
        r.params = info->kind == METHOD_JSON_RPC ? json_object_get(root, "params") : root;
    }
    plan_for(info, &r, out);
    json_decref(root);
}

enum plan_cache plan_store(const struct plan *p, const struct plan_chain *chain, int64_t *deep)
{
    *deep = chain->height - 1 - chain->min_depth;
    if (p->cache == PLAN_CACHE_NONE || !chain->known)
        return PLAN_CACHE_NONE;
    if (p->cache == PLAN_CACHE_TIP)
        return PLAN_CACHE_TIP;
    if (chain->degraded)
        return PLAN_CACHE_NONE; /* whose chain is settled is not known */
    switch (p->key) {
    case PLAN_KEY_HASH:
    case PLAN_KEY_INDEX:
        /* The answer's heights decide when it is stored; a .bin request is not even
         * planned for it while no block is settled. */
        return p->info->kind == METHOD_BIN_PATH && *deep < 0 ? PLAN_CACHE_NONE : PLAN_CACHE_SETTLED;
    case PLAN_KEY_HEIGHT:
    case PLAN_KEY_RANGE:
        return p->height <= *deep ? PLAN_CACHE_SETTLED : PLAN_CACHE_NONE;
    case PLAN_KEY_NONE:
    case PLAN_KEY_TIP:
        break;
    }
    return PLAN_CACHE_NONE;
}

bool plan_supplement_settled(const struct plan *p, const struct plan_chain *chain,
                             const struct plan_supplement *s, int64_t *top)
{
    if (!p->settles || !chain->known || chain->degraded || s->start_height < 0 || s->blocks < 1 ||
        s->start_height > INT64_MAX - s->blocks)
        return false;
    int64_t last = s->start_height + s->blocks - 1;
    if (last + 1 >= s->chain_height)
        return false; /* it reaches the node's tip: the next block would extend it */
    if (last > chain->height - 1 - chain->min_depth)
        return false; /* a short reorg could still change its blocks */
    *top = last;
    return true;
}

enum plan_keep plan_keep(const struct plan *p, const struct plan_answer *a,
                         const struct plan_chain *now, int64_t *height)
{
    if (a->store == PLAN_CACHE_NONE || a->http != 200 || !a->ok || a->busy || a->untrusted ||
        a->negatives > 0)
        return PLAN_KEEP_NONE;
    if (!a->own_node)
        return PLAN_KEEP_NONE; /* a third party's answer is served, never shared with other tenants
                                */
    if (p->info && p->info->agree && !a->agreed)
        return PLAN_KEEP_NONE; /* decoys and fees one node alone vouches for */
    if (a->settles && a->supplement && !a->node_pruned && now &&
        plan_supplement_settled(p, now, &a->blocks, height))
        return PLAN_KEEP_SUPPLEMENT;
    if (a->store == PLAN_CACHE_TIP)
        return PLAN_KEEP_TIP;
    if (p->prunable && (a->pruned || (a->bin && a->node_pruned)))
        return PLAN_KEEP_NONE; /* an epee answer is not read for pruned parts: a pruned node's is
                                  not kept */
    if (a->height == PLAN_HEIGHT_UNSETTLED)
        return PLAN_KEEP_NONE;
    int64_t named = a->height;
    if (p->depth == PLAN_DEPTH_REQUEST && p->height > named)
        named = p->height; /* the answer names no height: the request's stands */
    if (named > a->deep)
        return PLAN_KEEP_NONE; /* named by hash or index, but not settled yet: a short reorg could
                                  change it before the prober sees it (and bumps the epoch) */
    if (p->depth == PLAN_DEPTH_REQUEST && a->jsonrpc && !a->names_block)
        return PLAN_KEEP_NONE;
    if (named < 0)
        return PLAN_KEEP_NONE; /* no height named */
    *height = named;
    return PLAN_KEEP_SETTLED;
}

int64_t plan_tip_ttl(const struct plan *p, int64_t tip_ttl_ms, const struct plan_supplement *s,
                     int64_t quorum_height)
{
    if (p->settles && s && s->chain_height == quorum_height &&
        tip_ttl_ms < PLAN_SUPPLEMENT_TIP_TTL_MS)
        return PLAN_SUPPLEMENT_TIP_TTL_MS;
    return tip_ttl_ms;
}

bool plan_pool_rule(char *body, size_t *len, bool *asks_pool)
{
    bool removed;
    size_t stripped;
    if (epee_strip(body, *len, "pool_info_since", body, *len, &stripped, &removed) != EPEE_OK)
        return false;
    *len = stripped;
    struct epee_section root;
    struct epee_value v;
    uint64_t info = 0;
    *asks_pool = false;
    if (epee_open(body, *len, &root) == EPEE_OK && epee_find(&root, "requested_info", &v))
        *asks_pool = !epee_get_uint(&v, &info) || info != 0;
    return true;
}

const char *plan_route_name(enum plan_route route)
{
    switch (route) {
    case PLAN_ROUTE_REFUSED:
        return "refused";
    case PLAN_ROUTE_TIP:
        return "tip";
    case PLAN_ROUTE_HISTORICAL:
        return "historical";
    case PLAN_ROUTE_BROADCAST:
        return "broadcast";
    }
    return "?";
}

const char *plan_cache_name(enum plan_cache cache)
{
    switch (cache) {
    case PLAN_CACHE_NONE:
        return "none";
    case PLAN_CACHE_TIP:
        return "tip";
    case PLAN_CACHE_SETTLED:
        return "settled";
    }
    return "?";
}

const char *plan_key_name(enum plan_key key)
{
    switch (key) {
    case PLAN_KEY_NONE:
        return "none";
    case PLAN_KEY_TIP:
        return "tip";
    case PLAN_KEY_HASH:
        return "hash";
    case PLAN_KEY_INDEX:
        return "index";
    case PLAN_KEY_HEIGHT:
        return "height";
    case PLAN_KEY_RANGE:
        return "range";
    }
    return "?";
}

const char *plan_depth_name(enum plan_depth depth)
{
    switch (depth) {
    case PLAN_DEPTH_NONE:
        return "none";
    case PLAN_DEPTH_ANSWER:
        return "answer";
    case PLAN_DEPTH_REQUEST:
        return "request";
    }
    return "?";
}

json_t *plan_json(const struct plan *p)
{
    bool by_height = p->key == PLAN_KEY_HEIGHT || p->key == PLAN_KEY_RANGE;
    return json_pack("{s:s,s:b,s:b,s:b,s:b,s:s,s:s,s:s,s:o}", "route", plan_route_name(p->route),
                     "full_node", p->full_node, "prunable", p->prunable, "hedgeable", p->hedgeable,
                     "pool", p->pool, "cache", plan_cache_name(p->cache), "key",
                     plan_key_name(p->key), "depth", plan_depth_name(p->depth), "height",
                     by_height ? json_integer(p->height) : json_null());
}
