/* methods — the gateway's table of every monerod 0.18.0.0 RPC method and endpoint: how it is
 * reached (JSON-RPC method inside /json_rpc, plain JSON path, epee binary path), every alias
 * monerod accepts, its cache/dispatch class, what its cached answer is keyed by, whether it
 * needs an unpruned node, whether it writes, whether it may carry the node's pool, and its
 * quota weight. This table is the single source of truth: the plan for a request
 * (gateway/rpc/plan.h: routing and caching), quotas and docs/methods.md
 * (tools/gen_methods_doc.c) all read it.
 *
 * Ownership: every pointer returned here points into static read-only data; nothing is ever
 * allocated and nothing needs freeing. All functions are pure and thread-safe.
 *
 * Unknown names return NULL: answer them as monerod answers an unknown name (JSON-RPC error
 * -32601 "Method not found" with HTTP 200; HTTP 404 for a path). Answer METHOD_DENIED rows
 * exactly the same way, so a tenant cannot tell a denied method from a missing one — that is
 * what a restricted monerod does. */
#ifndef XG_GATEWAY_METHODS_H
#define XG_GATEWAY_METHODS_H

#include <stdbool.h>
#include <stddef.h>

/* The JSON-RPC endpoint itself. It is not a row: route it to methods_find_jsonrpc() by the
 * "method" member before calling methods_find_path(), which returns NULL for it. */
#define METHODS_JSONRPC_PATH "/json_rpc"

/* Enough for monerod 0.18, where no method has more than one alias. */
#define METHODS_MAX_ALIASES 2

/* The longest name or alias in the table is shorter than this; longer input cannot match. */
#define METHODS_NAME_MAX 64

enum method_kind {
    METHOD_JSON_RPC,  /* a "method" inside POST /json_rpc (epee MAP_JON_RPC*) */
    METHOD_JSON_PATH, /* a plain JSON endpoint (MAP_URI_AUTO_JON2*), even if named *.bin */
    METHOD_BIN_PATH,  /* an epee portable-storage binary endpoint (MAP_URI_AUTO_BIN2) */
};

enum method_class {
    /* The answer is fixed once the data it names is mined deeper than the reorg window (named
     * by hash, or by height well below the quorum tip). The router still decides per request:
     * pool answers, "missed"/"Failed" answers and heights near the tip are not immutable, and
     * tip-relative fields (block_header.depth, txs[].confirmations, outs[].unlocked) must be
     * refreshed or the entry served only while they are still true. */
    METHOD_IMMUTABLE,
    /* The answer moves with the chain tip or node state: serve briefly from cache with
     * stale-while-revalidate. */
    METHOD_TIP,
    /* Forward to one node and never cache: pool views, spent checks, sync from a moving start. */
    METHOD_PASSTHROUGH,
    /* A transaction broadcast: fan out to every healthy node, never blindly retried. */
    METHOD_BROADCAST,
    /* Refused as a restricted monerod refuses it (-32601 or 404). */
    METHOD_DENIED,
};

/* Whether a complete answer needs a node that keeps prunable transaction data. */
enum method_full_node {
    METHOD_FULL_NO,            /* any node, pruned or full, answers completely */
    METHOD_FULL_YES,           /* only a full node answers completely */
    METHOD_FULL_UNLESS_PRUNED, /* full node unless the request sets "prune": true */
};

/* What a cached answer is keyed by: where the request names the data the answer holds, and so
 * what makes the answer settled (gateway/rpc/plan.h turns it into the plan of one request). */
enum method_key {
    METHOD_KEY_NONE,   /* never cached (also: an immutable row that cannot tell its depth) */
    METHOD_KEY_TIP,    /* the whole request at the current quorum tip (every tip row) */
    METHOD_KEY_HASH,   /* block or transaction hashes; the answer names the heights */
    METHOD_KEY_INDEX,  /* global output indices; the answer names the heights */
    METHOD_KEY_HEIGHT, /* params "height"; the answer names it too */
    METHOD_KEY_HASH_OR_HEIGHT, /* params "hash" when present, else "height"; as those two */
    METHOD_KEY_RANGE,          /* params "start_height" to "end_height"; the answer names them */
    METHOD_KEY_HEIGHT_ARG,     /* params [height]; the answer (a bare hash) names none */
    METHOD_KEY_HEIGHTS,        /* a .bin body's "heights"; its answer is not read for them */
};

/* Quota weight scale, per request (the limiter does not look inside bodies; the per-request
 * item caps of restricted monerod bound what one request can cost):
 *   1  tip or node state, or one record by key (get_info, a header, o_indexes)
 *   2  a batch of point lookups or one block (get_transactions, get_outs, key images, pool hashes)
 *   5  ranges and whole-pool dumps; a broadcast (it fans out and every node verifies it)
 *   10 sync-sized bulk transfers (get_blocks.bin, the output distribution)
 * A denied call weighs 1: a flood of refused calls still drains the bucket. */
enum {
    METHOD_WEIGHT_POINT = 1,
    METHOD_WEIGHT_BATCH = 2,
    METHOD_WEIGHT_RANGE = 5,
    METHOD_WEIGHT_BULK = 10,
};

struct method_info {
    const char *name;                         /* canonical name; paths start with '/' */
    const char *aliases[METHODS_MAX_ALIASES]; /* other names monerod maps here; NULL-padded */
    enum method_kind kind;
    enum method_class cls;
    enum method_key key; /* METHOD_KEY_TIP exactly for tip rows; NONE for all but immutable */
    enum method_full_node needs_full_node;
    bool writes; /* changes node or network state (broadcasts, relays, mines, reconfigures) */
    unsigned weight;
    const char *description; /* one line; for denied rows it ends with why */
    /* Its request may ask for the node's transaction pool relative to an earlier answer
     * of the same node (get_blocks.bin's requested_info and pool_info_since, wallets >=
     * 0.18.3): see plan_pool_rule (gateway/rpc/plan.h). */
    bool pool_info;
    /* Per-tenant reads (gateway/rpc/consistency.h). names_tip: the answer names the chain
     * height, so it raises the tip the tenant has been served and is checked against it.
     * own_writes: a pool or transaction query that, after the tenant's broadcast, goes to
     * the nodes that accepted the transaction. */
    bool names_tip;
    bool own_writes;
    /* A positive answer is served, and cached, only when two own nodes gave the same one
     * (gateway/rpc/agree.h): the decoys and fees a wallet cannot check for itself. */
    bool agree;
};

/* The row for a JSON-RPC method name (canonical or alias), or NULL. `name` need not be
 * NUL-terminated; matching is exact and case-sensitive, as in monerod. */
const struct method_info *methods_find_jsonrpc(const char *name, size_t len)
    __attribute__((warn_unused_result));

/* The row for an endpoint path such as "/getblocks.bin" (canonical or alias), or NULL. The path
 * must not carry a query string: monerod matches the whole request-target and 404s on one. */
const struct method_info *methods_find_path(const char *path, size_t len)
    __attribute__((warn_unused_result));

/* "immutable", "tip", "passthrough", "broadcast", "denied"; "?" for an out-of-range value. */
const char *methods_class_name(enum method_class cls);

/* "json-rpc", "json", "bin"; "?" for an out-of-range value. */
const char *methods_kind_name(enum method_kind kind);

/* "none", "tip", "hash", "index", "height", "hash or height", "range", "[height]", "heights";
 * "?" for an out-of-range value. */
const char *methods_key_name(enum method_key key);

/* "no", "yes", "unless prune"; "?" for an out-of-range value. */
const char *methods_full_node_name(enum method_full_node need);

/* Iteration in table order: JSON-RPC methods sorted by name, then paths sorted by name.
 * methods_at() returns NULL when i >= methods_count(). */
size_t methods_count(void);
const struct method_info *methods_at(size_t i);

#endif
