/* proxy_facts — the pure rules of proxy's node side that read one answer or one outcome:
 * what a node's answer says (JSON-RPC, plain JSON or epee), whether a failed call may go
 * to the next node, and the opaque name a tenant sees for a node. Whether an answer so
 * read may be stored is plan_keep's (gateway/rpc/plan.h); what a read does with it next,
 * proxy_confirm's (gateway/serve/proxy_confirm.h).
 *
 * Ownership: nothing is allocated; bodies are only read. All functions are thread-safe. */
#ifndef PROXY_FACTS_H
#define PROXY_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "rpc/plan.h"

/* The JSON-RPC error code of a node that limits its clients' rate (a gateway's or a public
 * node's "too many requests"): like BUSY and HTTP 429, it moves the request on. */
#define PROXY_NODE_BUSY_CODE (-32005)

/* An answer describes something not fixed yet (a pool transaction, a locked output). */
#define PROXY_HEIGHT_UNSETTLED PLAN_HEIGHT_UNSETTLED

/* What a node's answer says, as the routing and caching rules read it. */
struct proxy_answer_facts {
    bool json;        /* a JSON object */
    bool ok;          /* status "OK" (or a JSON-RPC result without a status), no error */
    bool busy;        /* status "BUSY", or error PROXY_NODE_BUSY_CODE: ask another node */
    bool untrusted;   /* "untrusted": a bootstrap daemon's answer, never stored */
    bool pruned;      /* a transaction came back without its prunable part */
    size_t negatives; /* transactions missing, key images unspent: to be confirmed */
    /* The highest block height it describes (a reorg above it changes the answer; below it
     * does not); -1 none, PROXY_HEIGHT_UNSETTLED. */
    int64_t height;
    /* A chain supplement (get_blocks.bin: start_height and current_height present): what
     * it says of its blocks (plan_supplement_settled reads it). */
    bool supplement;
    struct plan_supplement blocks;
    /* A JSON-RPC answer whose "id" is not the request's (proxy_read_rpc_facts): a node
     * failure, the read asked elsewhere. */
    bool wrong_id;
};

/* Pure: reads an answer body (JSON-RPC or plain JSON; anything else is not json): the
 * heights of headers, blocks, transactions (a pool one unsettles) and outputs (a locked one
 * unsettles). */
void proxy_read_facts(const char *body, size_t len, struct proxy_answer_facts *f);

/* Pure: as proxy_read_facts, and for a JSON-RPC answer to a request whose id is want (NULL:
 * not checked) whether the answer's "id" is another one (wrong_id). Numbers are compared by
 * value, since a node may echo 1.0 as 1. */
void proxy_read_rpc_facts(const char *body, size_t len, const json_t *want,
                          struct proxy_answer_facts *f);

/* Pure: reads a .bin answer (epee portable storage; json stays false): its status and
 * untrusted flag, for get_outs.bin the outputs' highest height, or
 * PROXY_HEIGHT_UNSETTLED while one of them is locked, and for get_blocks.bin its blocks. A body
 * that is not portable storage is neither ok nor busy. */
void proxy_read_bin_facts(const char *body, size_t len, struct proxy_answer_facts *f);

#define PROXY_NODE_REF_SIZE 16

/* Pure: the name a tenant sees for node `id` (its nodes.id, which the admin API's GET /nodes
 * lists): "n" and the id, stable while the node's name or URL changes, naming no host. */
void proxy_node_ref(int32_t id, char out[PROXY_NODE_REF_SIZE]);

/* Pure: whether an attempt's outcome allows trying the next node for a read. */
bool proxy_retryable(int outcome, long http_status);

/* Pure: the "status" of a node answer (top level, or inside "result" for JSON-RPC) when it
 * is one of the JSON answers monerod gives, copied into out; false otherwise. */
bool proxy_answer_status(const char *body, size_t len, char *out, size_t outlen);

/* Pure: on_get_block_hash's answer (a bare hash) names a block: false for an all-zero hash
 * ("no block at that height", yet) or no hash. */
bool proxy_answer_names_block(const char *body, size_t len);

#endif
