/* proxy_attempt — a read's attempts on its ranked nodes, their hedges, the retry on rank
 * 2, and the second ask of a confirmation or a full-node retry (gateway/serve/proxy_confirm.h
 * says which). A connection error, timeout, 5xx, 429, BUSY or -32005 is retried once on
 * rank 2 inside the client's deadline, never a third time; an idempotent read its node has
 * not answered within that node's hedge delay (gateway/nodes/hedge.h) goes to the next node
 * too, budget allowing, and the first good answer wins.
 *
 * Ownership: an attempt (struct proxy_attempt) is allocated here and freed by its own
 * callback, also when its request let go of it. */
#ifndef PROXY_ATTEMPT_H
#define PROXY_ATTEMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/proxy_work.h"

/* Ranks req's candidates (prober_rank) under its tenant's floor and nodes, leaving out
 * exclude_id (0: none), the nodes given up on as slow and, full_only, pruned ones. Returns
 * how many; the next attempt uses the first. */
size_t proxy_pick_nodes(struct gw_request *req, bool need_tip, bool want_full, int32_t exclude_id,
                        bool full_only);

/* Sends req to its next candidate. False, with the reason (fit for a tenant) in *why, when
 * none can take it. */
__attribute__((warn_unused_result)) bool proxy_submit_attempt(struct gw_request *req,
                                                              const char **why);

/* Sends a read to its first candidate, and a checked read (rpc/proxy_agree.h) to its
 * second too. False, with the reason in *why, when none can take it. */
__attribute__((warn_unused_result)) bool proxy_submit_read(struct gw_request *req,
                                                           const char **why);

#endif
