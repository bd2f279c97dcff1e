/* broadcast — send_raw_transaction (plan route broadcast) to every healthy node that takes
 * broadcasts, in parallel (a public node only when its row opts in; with none healthy, the
 * configured ones that take them). Accepted if any node accepted (status OK, "already in
 * pool" included); answered once every node answered, or once an own node accepted and one
 * hedge delay (the grace) passed, the calls still out going on in the background (their
 * outcome in the metrics, "pending" in the header); the outcome per node, by its opaque id
 * (proxy_node_ref), in X-Xmrgate-Broadcast; never retried. The nodes that accepted a
 * tenant's transaction are noted for its reads (read-your-writes, state/sessions.h).
 *
 * Ownership: the broadcast's state (req->px->bc) outlives its request while calls are
 * out: broadcast_release lets the request go, and the last call frees it. */
#ifndef BROADCAST_H
#define BROADCAST_H

#include <stdbool.h>

#include "serve/proxy_work.h"

struct broadcast;
struct gw_context;

/* Sends req to the nodes (req->px allocated, its connection suspended). False when none
 * could be sent; req then carries an answer. */
__attribute__((warn_unused_result)) bool broadcast_dispatch(struct gw_request *req,
                                                            const struct prober_quorum *q);

/* The request ends: calls still out go on without it; bc is freed now if none is. */
void broadcast_release(struct broadcast *bc, struct gw_context *ctx);

#endif
