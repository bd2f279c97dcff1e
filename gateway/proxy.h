/* proxy — sends a classified request to the nodes and turns their answer into the
 * client's answer.
 *
 * Node order: the enabled nodes in the nodes table's order (priority, then id). A read
 * that fails with a connection error, a timeout or a 5xx is retried once on the next
 * node, within the client's deadline; a write is never retried (the client must not see
 * a transaction sent twice). The answer is passed through byte for byte: status,
 * Content-Type and body. */
#ifndef PROXY_H
#define PROXY_H

#include <stdbool.h>

#include "request.h"

struct gw_context;

/* Starts forwarding req (its connection already suspended). Returns false when nothing
 * could be submitted; req then carries an error answer and the caller resumes. */
__attribute__((warn_unused_result)) bool proxy_dispatch(struct gw_request *req);

/* Pure: whether an attempt's outcome allows trying the next node for a read. */
bool proxy_retryable(int outcome, long http_status);

#endif
