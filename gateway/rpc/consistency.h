/* consistency — the per-tenant read rules (pure): monotonic reads and read-your-writes.
 *
 * Monotonic reads: while a gateway serves a tenant it never answers that tenant with a tip
 * older than one it has already served it. The tenant's served tip is the highest chain
 * height (blocks in the chain) a names_tip answer (methods.h) carried to it. A read routed
 * to the tip goes first to nodes at or past that height (consistency_floor: the ranking's
 * minimum height); a names_tip answer below it is never sent (consistency_below): another
 * node is asked, or the read waits for the nodes to catch up and is then refused.
 *
 * Read-your-writes: after a tenant's send_raw_transaction was accepted, its own_writes
 * queries (methods.h; and get_blocks.bin asking for the pool) go, for a bounded time, to
 * the nodes that accepted it (consistency_writes_nodes). Nodes are a bitmap of node id mod
 * 64 (nodes_bit in nodes/nodes.h): a deployment whose node ids span more than 64 may share a bit
 * between two nodes, and then may ask the one that did not accept.
 *
 * The state these rules read is a few atomics per tenant (gateway/state/sessions.h); the
 * rules themselves hold no state, take the time as an argument and are table-tested in
 * tests/unit/gateway/rpc/test_consistency.c. */
#ifndef CONSISTENCY_H
#define CONSISTENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc/methods.h"
#include "rpc/plan.h"

/* The minimum chain height a node should have to answer the planned read for a tenant
 * served up to served_tip (0: none yet): served_tip for reads routed to the tip, 0 (any
 * node) for historical reads, broadcasts and refusals. */
int64_t consistency_floor(const struct plan *p, int64_t served_tip);

/* The chain height (blocks in the chain) a names_tip answer carries, or -1 when the row
 * does not name the tip or the answer does not say (not OK, not parsed). bin: body is
 * portable storage (get_blocks.bin: current_height), else JSON (JSON-RPC result or plain
 * object: get_block_count's count, get_info's and get_height's height,
 * get_last_block_header's block_header.height + 1). */
int64_t consistency_answer_height(const struct method_info *info, const char *body, size_t len,
                                  bool bin);

/* Whether an answer of `height` (consistency_answer_height) must not be served to a
 * tenant whose floor is `floor`: it names a height below the floor. */
bool consistency_below(int64_t floor, int64_t height);

/* The nodes the planned read should go to at now_ms after the tenant's last accepted
 * broadcast (accepted: its nodes' bits, nodes_bit; until_ms: when the rule lapses): the bitmap
 * while the rule holds for this read, 0 (any node) otherwise — not an own_writes read and
 * not the pool, no broadcast accepted, or the time is up. */
uint64_t consistency_writes_nodes(const struct plan *p, uint64_t accepted, int64_t until_ms,
                                  int64_t now_ms);

#endif
