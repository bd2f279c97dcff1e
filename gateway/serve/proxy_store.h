/* proxy_store — a read's answers in the cache: what may be stored at the quorum tip a
 * request is sent at, storing a node's answer (plan_keep, gateway/rpc/plan.h, says whether
 * and how), serving hits and settled chain supplements, refreshing tip entries in the
 * background.
 *
 * Ownership: the cache copies what it stores; bodies passed in stay the caller's. */
#ifndef PROXY_STORE_H
#define PROXY_STORE_H

#include <stddef.h>

#include "serve/proxy_work.h"

/* What of req's answer may be stored at quorum q (plan_store), and under which key. */
void proxy_store_prepare(struct gw_request *req, const struct prober_quorum *q,
                         struct store_plan *store);

/* Answers req from the cache when it can (proxy_answer_from_cache, proxy.h): true when
 * req->answer_* is filled. A tip entry past half its TTL is refreshed in the background. */
bool proxy_store_serve(struct gw_request *req);

/* Stores the answer (HTTP status http, body, facts f) the node req->px->current gave, when
 * plan_keep allows it; a refusal (a reorg since the request was sent, too large to keep)
 * only leaves it uncached. The body stays the caller's. */
void proxy_store_answer(struct gw_request *req, long http, const char *body, size_t len,
                        const struct proxy_answer_facts *f);

#endif
