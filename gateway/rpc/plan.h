/* plan — the plan for one request: which nodes may answer it, whether it may be hedged,
 * whether and under what its answer is cached, what depth makes that answer settled, and
 * whether it carries the node's pool. One pure function of the method table row
 * (gateway/rpc/methods.h) and the few facts of the request that change it (its params, the
 * heights of a .bin body, whether a .bin body asks for the pool). proxy (gateway/serve/proxy.h)
 * follows the plan; the admin API's route explainer (gateway/ops/admin_api.h) prints it.
 *
 * The plan does not look at the chain: plan_store() adds the quorum tip and says whether an
 * answer may be stored now, and how deep is settled; plan_keep() reads the answer that came
 * and says whether and how it is stored (proxy stores it in gateway/cache/cache.h).
 *
 * Ownership: a plan points into the static method table and owns nothing; nothing is
 * allocated but by plan_json(). All functions are pure and thread-safe. */
#ifndef PLAN_H
#define PLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc/methods.h"

/* Which nodes are asked. */
enum plan_route {
    PLAN_ROUTE_REFUSED,    /* denied: answered as restricted monerod answers, no node asked */
    PLAN_ROUTE_TIP,        /* one node on the quorum tip; once a second on a failure */
    PLAN_ROUTE_HISTORICAL, /* one node on the quorum tip or within the historical lag */
    PLAN_ROUTE_BROADCAST,  /* every healthy node in parallel, never retried */
};

/* Whether the answer is cached. */
enum plan_cache {
    PLAN_CACHE_NONE,
    PLAN_CACHE_TIP,     /* under the quorum tip hash, for one tip TTL (stale-while-revalidate) */
    PLAN_CACHE_SETTLED, /* as immutable, under the reorg epoch, once deep below the quorum tip */
};

/* What the cached answer is keyed by, for this request. */
enum plan_key {
    PLAN_KEY_NONE,
    PLAN_KEY_TIP,    /* the whole request, at the quorum tip */
    PLAN_KEY_HASH,   /* block or transaction hashes */
    PLAN_KEY_INDEX,  /* global output indices */
    PLAN_KEY_HEIGHT, /* one or more block heights (plan.height: the highest) */
    PLAN_KEY_RANGE,  /* start to end height (plan.height: the end) */
};

/* Which heights must be deep below the quorum tip for a settled answer to be stored. */
enum plan_depth {
    PLAN_DEPTH_NONE,    /* not stored as settled */
    PLAN_DEPTH_ANSWER,  /* the highest height the answer names (those the request names, too) */
    PLAN_DEPTH_REQUEST, /* the answer names none: the request's heights stand for it */
};

struct plan {
    const struct method_info *info; /* the row planned for */
    enum plan_route route;
    /* A full (unpruned) node first, and a pruned answer asked again of a full node: the row
     * needs one, or needs one unless the request sets "prune": true (a .bin body is not
     * read for it). */
    bool full_node;
    /* The row's complete answer holds prunable data (needs_full_node is not "no"): an
     * answer without it is never stored, whatever the request asked. */
    bool prunable;
    /* An idempotent read: a second node may be asked alongside the first. Never a write. */
    bool hedgeable;
    /* The answer carries the node's pool relative to an earlier answer of that node
     * (plan_pool_rule): never cached. */
    bool pool;
    /* A chain supplement (get_blocks.bin without the pool): cached per tip like any tip
     * row, and also as settled, under the request alone, once its answer's blocks are
     * deep and more follow them (plan_supplement_settled): the same body then gets the
     * same blocks at every later tip, so wallets restoring at different tips share it. */
    bool settles;
    enum plan_cache cache;
    enum plan_key key;
    enum plan_depth depth;
    int64_t height; /* the highest block height the request names; -1: none */
};

/* The request facts the plan reads. */
struct plan_request {
    /* JSON rows: the JSON-RPC "params" or the JSON endpoint's body; NULL: none sent. */
    const json_t *params;
    /* .bin rows: the portable-storage body as forwarded; NULL: none read. */
    const char *bin;
    size_t bin_len;
    /* plan_pool_rule found the .bin body asking for the pool. */
    bool asks_pool;
};

/* The plan for a request to `info` (not NULL) with facts `r` (NULL: none known). */
void plan_for(const struct method_info *info, const struct plan_request *r, struct plan *out);

/* plan_for over a body as the gateway forwards it: for a JSON-RPC row the whole request
 * (its "params" are read), for a JSON endpoint its body object, for a .bin row the
 * portable-storage body. body NULL: none. A JSON body that does not parse reads as none. */
void plan_for_body(const struct method_info *info, const char *body, size_t len, bool asks_pool,
                   struct plan *out);

/* The chain as the prober sees it, for plan_store. */
struct plan_chain {
    bool known;        /* a quorum tip is known */
    bool degraded;     /* no majority agrees on it */
    int64_t height;    /* the quorum height (blocks in the chain; the top is height - 1) */
    int64_t min_depth; /* blocks below the top before a height counts as settled */
};

/* What may be stored of the answer to the planned request now: PLAN_CACHE_TIP while a
 * quorum tip is known; PLAN_CACHE_SETTLED while it is known and not degraded and every
 * height the request names is at most *deep (set then: the highest settled block height;
 * the answer's own heights are checked against it when it is stored). A .bin request keyed
 * by index is not planned for storing while no block is settled (*deep < 0). */
enum plan_cache plan_store(const struct plan *p, const struct plan_chain *chain, int64_t *deep);

/* What a chain supplement answer (get_blocks.bin) says of itself. */
struct plan_supplement {
    int64_t start_height; /* its first block's height */
    int64_t blocks;       /* how many blocks it holds */
    int64_t chain_height; /* its current_height: the blocks in the answering node's chain */
};

/* Whether the answer s to a request planned with `settles` may be stored as settled at
 * chain: the quorum is known and not degraded, the answer holds a block, more blocks follow
 * its last one on the node's chain (so a block, transaction or size limit ended it, not
 * the tip: monerod answers the same body with the same blocks at any later tip), and its
 * last block is at most chain's settled height. *top is then that last block's height, the
 * height the entry is stored under (a reorg below it makes the entry stale). */
bool plan_supplement_settled(const struct plan *p, const struct plan_chain *chain,
                             const struct plan_supplement *s, int64_t *top);

/* An answer height for something not fixed yet (a pool transaction, a locked output). */
#define PLAN_HEIGHT_UNSETTLED -2

/* What of a node's answer the rule for storing it reads (proxy fills it from the answer's
 * facts, gateway/serve/proxy_facts.h, and the node that served it). */
struct plan_answer {
    enum plan_cache store; /* what plan_store allowed when the request was sent */
    int64_t deep;          /* plan_store's *deep then: the highest settled block height */
    bool settles;          /* a chain supplement's settled key is ready (plan.settles, quorum
                              not degraded when it was sent) */
    long http;             /* the node's HTTP status */
    bool ok, busy, untrusted;
    size_t negatives; /* transactions missing, key images unspent */
    bool own_node;    /* served by one of our own nodes (nodes_own) */
    bool agreed;      /* a checked row's answer (methods.h agree) that two own nodes gave */
    bool node_pruned; /* served by a pruned node */
    bool pruned;      /* a transaction came back without its prunable part */
    bool bin;         /* a .bin answer: epee is not read for pruned parts */
    bool jsonrpc;     /* a JSON-RPC answer */
    /* Read only for a JSON-RPC answer planned with PLAN_DEPTH_REQUEST: it names a block
     * (on_get_block_hash's hash is not all zero). */
    bool names_block;
    int64_t height;  /* the highest height it describes; -1 none; PLAN_HEIGHT_UNSETTLED */
    bool supplement; /* a chain supplement: blocks holds what it says of itself */
    struct plan_supplement blocks;
};

/* How an answer is kept. */
enum plan_keep {
    PLAN_KEEP_NONE,       /* served, never stored */
    PLAN_KEEP_TIP,        /* as a tip entry, under the quorum tip's key */
    PLAN_KEEP_SETTLED,    /* as immutable, at *height, under the reorg epoch */
    PLAN_KEEP_SUPPLEMENT, /* as a settled chain supplement under the request alone, at *height */
};

/* Pure: whether and how answer a to the planned request p may be stored; now is the chain
 * as the prober sees it when the answer came (NULL: not asked, read as unknown; it is read
 * only when a->settles and a->supplement). Never stored: anything plan_store did not allow,
 * an HTTP status other than 200, an answer not OK, BUSY, untrusted (a bootstrap daemon's)
 * or with negatives to confirm, a checked row's answer that two own nodes did not agree on
 * (rpc/agree.h), and an answer a node not our own served (a public node's
 * answer reaches the one request it was asked for, never the cache every tenant shares).
 * A settled chain supplement (plan_supplement_settled at now) from an unpruned node is
 * PLAN_KEEP_SUPPLEMENT. Otherwise a tip answer is PLAN_KEEP_TIP; a settled one is
 * PLAN_KEEP_SETTLED at the highest height it or (PLAN_DEPTH_REQUEST) the request names,
 * when that height is known, at most a->deep (a short reorg could still change a block
 * above it), the answer holds its prunable part where the row has one (an epee answer from
 * a pruned node is not read for it, so it is not kept), nothing in it is unsettled, and a
 * JSON-RPC answer by height names a block. *height is set for SETTLED and SUPPLEMENT. */
enum plan_keep plan_keep(const struct plan *p, const struct plan_answer *a,
                         const struct plan_chain *now, int64_t *height);

/* A chain supplement's tip entry lives this long at most: its answer at one quorum tip is
 * a function of the body and that tip's chain alone (no pool, nothing that moves between
 * blocks), and the tip hash in its key makes it unreachable once the tip moves. */
#define PLAN_SUPPLEMENT_TIP_TTL_MS INT64_C(600000)

/* How long a tip entry of the planned request is served: tip_ttl_ms (the probe interval),
 * or for a chain supplement (plan.settles) answer s (NULL: none read) from a node exactly
 * at the quorum's height PLAN_SUPPLEMENT_TIP_TTL_MS if that is longer: wallets reaching
 * the tip seconds apart share its last batch. A node ahead of the quorum may hold a block
 * the quorum never takes: its answer is kept no longer than any tip answer. */
int64_t plan_tip_ttl(const struct plan *p, int64_t tip_ttl_ms, const struct plan_supplement *s,
                     int64_t quorum_height);

/* The pool rule for a .bin request body of a row with pool_info (methods.h; the reasons are
 * at get_blocks.bin in methods.c). Strips pool_info_since from the portable-storage body in
 * place (*len becomes the new length) and sets *asks_pool when the body's requested_info is
 * not 0 (blocks only), or is not a plain integer: such an answer must not be cached. False,
 * nothing changed, for a body that is not portable storage. */
__attribute__((warn_unused_result)) bool plan_pool_rule(char *body, size_t *len, bool *asks_pool);

/* "refused", "tip", "historical", "broadcast"; "?" for an out-of-range value. */
const char *plan_route_name(enum plan_route route);
/* "none", "tip", "settled"; "?" for an out-of-range value. */
const char *plan_cache_name(enum plan_cache cache);
/* "none", "tip", "hash", "index", "height", "range"; "?" for an out-of-range value. */
const char *plan_key_name(enum plan_key key);
/* "none", "answer", "request"; "?" for an out-of-range value. */
const char *plan_depth_name(enum plan_depth depth);

/* The plan as the route explainer shows it: {route, full_node, prunable, hedgeable, pool,
 * cache, key, depth, height (null: none)}. A new reference the caller owns; NULL when out of
 * memory. */
json_t *plan_json(const struct plan *p);

#endif
