/* cache — answers the gateway may serve again without asking a node.
 *
 * Two kinds of entry share one memory bound (LRU eviction, bytes counted as body plus
 * entry overhead):
 *   - tip entries (get_info, get_height, …): the key includes the quorum tip hash, so a new
 *     block makes them unreachable; each is served for at most the TTL the caller gives
 *     (the probe interval) and flags one background refresh once half of it has passed;
 *   - immutable entries (blocks and transactions mined deep enough): stored with the block
 *     height they describe and that height's cache epoch. A reorg bumps the epoch of every
 *     height above its fork point (cache_reorg), a cheap purge: entries of older epochs are
 *     never served again and are dropped when met.
 *
 * Keys are SHA-256 digests of the request as a node sees it, canonicalised (JSON object
 * keys sorted, the wallet's per-request "client" signature and the JSON-RPC "id" left
 * out), plus the tip hash for tip entries. JSON-RPC answers are stored without their "id";
 * cache_render_jsonrpc puts the client's id back on the way out.
 *
 * Thread-safe: one mutex; every function may be called from any thread. Bodies handed in
 * are copied; bodies handed out are malloc'd copies the caller frees. */
#ifndef CACHE_H
#define CACHE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CACHE_KEY_LEN 32

struct cache;

struct cache_stats {
    uint64_t hits, misses, evictions, inserts, purged;
    uint64_t settled_hits; /* of hits: immutable entries (settled blocks, ranges, ...) */
    size_t bytes, entries, max_bytes;
    uint64_t epoch; /* number of reorgs seen */
};

struct cache *cache_new(size_t max_bytes);
void cache_free(struct cache *c);

/* ---- keys (pure) -------------------------------------------------------------------- */

/* The key of a request: scope is "rpc" (name = JSON-RPC method, body = the whole request;
 * only its params count) or "path" (name = endpoint path, body = the request body, JSON or
 * binary). tip_hash is NULL for immutable entries. False when a JSON body does not parse. */
__attribute__((warn_unused_result)) bool cache_key(const char *scope, const char *name,
                                                   const char *body, size_t len, bool json,
                                                   const char *tip_hash,
                                                   uint8_t out[CACHE_KEY_LEN]);

/* A JSON-RPC answer without its "id", compact (malloc'd), ready to store; NULL when the
 * body is not a JSON object. */
char *cache_strip_id(const char *body, size_t len, size_t *out_len);

/* A stored JSON-RPC answer with the client's id put back (id NULL: 0). malloc'd. */
char *cache_render_jsonrpc(const char *stored, size_t len, const json_t *id, size_t *out_len);

/* Rewrites the tip-relative fields of an answer for a chain of `chain_length` blocks:
 * block_header.depth, block_headers[].depth, txs[].confirmations (also inside "result"). */
void cache_patch_tip_fields(json_t *answer, int64_t chain_length);

/* ---- entries ------------------------------------------------------------------------ */

enum cache_lookup { CACHE_MISS, CACHE_HIT, CACHE_HIT_REFRESH };

/* Looks key up. Tip entries (ttl_ms > 0 at insertion) older than their TTL are misses;
 * past half of it the first caller gets CACHE_HIT_REFRESH and should refresh in the
 * background. *body is a malloc'd copy the caller frees; *height (when height is not NULL)
 * the height given to cache_put, so that a hit need not read its body for it. */
enum cache_lookup cache_get(struct cache *c, const uint8_t key[CACHE_KEY_LEN], int64_t now_ms,
                            char **body, size_t *len, int64_t *height);

/* The reorg generation: read it before sending the request whose answer will be stored. */
uint64_t cache_generation(struct cache *c);

/* A tip entry lives one probe interval: one larger than this (a wallet's sync batch) is
 * rarely asked for twice in that time and would push settled answers out. */
#define CACHE_TIP_MAX_BYTES ((size_t)1 << 20)

/* Stores a tip entry (ttl_ms > 0, at most CACHE_TIP_MAX_BYTES) or an immutable entry for
 * block height `height` (ttl_ms = 0). A tip entry's `height` is only kept and handed back
 * by cache_get (the chain height its answer names, -1: none). An immutable entry is refused
 * when a reorg happened since `generation` was read. Replaces an entry with the same key.
 * False when refused or too large. */
__attribute__((warn_unused_result)) bool
cache_put(struct cache *c, const uint8_t key[CACHE_KEY_LEN], const char *body, size_t len,
          int64_t ttl_ms, int64_t height, uint64_t generation, int64_t now_ms);

/* Ends a refresh that was handed out without a cache_put (it failed): the next lookup
 * past half the TTL may refresh again. */
void cache_refresh_failed(struct cache *c, const uint8_t key[CACHE_KEY_LEN]);

/* A reorg: every height above fork_height changed. fork_height < 0 purges everything. */
void cache_reorg(struct cache *c, int64_t fork_height);

/* The epoch of a block height (pure function of the reorgs seen so far). */
uint64_t cache_epoch_for(struct cache *c, int64_t height);

struct cache_stats cache_stats(struct cache *c);

#endif
