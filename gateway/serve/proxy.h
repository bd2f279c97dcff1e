/* proxy — sends a classified request to the nodes and turns their answers into the
 * client's answer.
 *
 * It follows the request's plan (gateway/rpc/plan.h: which nodes, whether and how the answer
 * is cached, how deep is settled), set by server once the request is classified. Per class
 * (gateway/rpc/methods.h):
 *   - tip: served from the tip cache when it holds an answer for the current quorum tip
 *     (refreshed in the background past half its TTL); otherwise from a node on the tip,
 *     and stored;
 *   - immutable: served from the immutable cache (tip-relative fields such as depth and
 *     confirmations recomputed, the JSON-RPC id put back); otherwise from a node on the
 *     tip or within the historical lag, and stored when the answer names blocks deep
 *     enough below the quorum tip — never in degraded mode, never an error, BUSY or
 *     "not found";
 *   - passthrough: a node, never cached;
 *   - broadcast: every healthy node that takes broadcasts in parallel (a public node only
 *     when its row opts in); accepted if any node accepted (status OK,
 *     "already in pool" included); answered once every node answered, or once an own node
 *     accepted and one hedge delay (the cap) passed, the calls still out going on in the
 *     background (their outcome in the metrics, "pending" in the header); the outcome per
 *     node in X-Xmrgate-Broadcast; never retried.
 * A tenant sees a node only by its opaque id (proxy_node_ref): in X-Xmrgate-Broadcast and
 * in a 502, which names the failed node and its outcome but never the node client's own
 * error text (it carries host names and addresses). That detail is logged for operators
 * ("request_failed", with the node's name), who map ids to nodes with the admin API.
 * A read goes to rank 1 (gateway/nodes/prober.h: a public node only while no own node can
 * serve); a connection error, timeout, 5xx, 429, BUSY or -32005 is retried once on rank 2
 * inside the client's deadline, never a third time. An idempotent read (plan.hedgeable) that
 * its node has not answered within that node's hedge delay (gateway/nodes/hedge.h) goes to
 * the next node too, budget allowing: the first good answer wins, the other attempt is
 * abandoned (it finishes on its own and only feeds the node's breaker), the slow node's
 * breaker counts a failure at once and it is not asked again for that request. An answer a
 * public node served is never stored in the cache, which every tenant shares. A request
 * needing unpruned data goes to a full node, and a pruned answer (as_hex empty,
 * prunable_hash set) is asked again of a full node, never returned as complete. A
 * get_transactions reporting a transaction missing or an is_key_image_spent reporting an
 * image unspent is confirmed on a second node on the quorum tip first.
 *
 * Answers carry X-Xmrgate-Cache (hit/miss) and, while the nodes disagree on the tip,
 * X-Xmrgate-Degraded: no-quorum. Node answers are passed through byte for byte except
 * cached ones (re-serialised compactly). Nothing of the client's reaches a node but its
 * body (and the wallet's "client" field is already stripped by server). */
#ifndef PROXY_H
#define PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/request.h"
#include "rpc/plan.h"

struct gw_context;

/* Answers req from the cache when it can, without a node: true when req->answer_* is
 * filled (queue it at once). Call before suspending the connection. */
bool proxy_answer_from_cache(struct gw_request *req);

/* Starts forwarding req (its connection already suspended). Returns false when nothing
 * could be submitted; req then carries an answer and the caller resumes. */
__attribute__((warn_unused_result)) bool proxy_dispatch(struct gw_request *req);

/* Frees proxy's per-request state; called once from the completion callback. */
void proxy_request_free(struct gw_request *req);

#endif
