/* proxy_agree — a checked read's answers (methods.h agree: the decoys and fees a wallet
 * cannot check for itself). proxy_attempt asks two own nodes on the quorum tip at once and
 * hands each usable answer here; they are compared (rpc/agree.h) and the read is served,
 * and cached, only when two agree. When they differ a third node is asked and the majority
 * served; the odd node is blamed (prober_agreement, nodes/honesty.h) unless the quorum tip
 * moved since the read was sent. When no node is left to ask, the answers there are decide
 * (agree_decide): a lone one is served marked X-Xmrgate-Unverified, never cached, or
 * refused 503 unverified_answer, as [nodes] serve_unverified says; two that differ with no
 * third are refused 503 answers_disagree.
 *
 * Ownership: the answers' bodies are px's (struct proxy_agree) until served or let go by
 * proxy_agree_free. Everything runs on the engine's loop thread. */
#ifndef PROXY_AGREE_H
#define PROXY_AGREE_H

#include <stdbool.h>

#include "serve/proxy_work.h"

/* What the read does after an answer came. */
enum proxy_agree_next {
    PROXY_AGREE_ANSWERED, /* req holds its answer and was handed back */
    PROXY_AGREE_ASK,      /* ask one more own node (none: proxy_agree_settle) */
    PROXY_AGREE_WAIT,     /* wait for the attempt in flight */
};

/* Keeps node's usable answer res (facts f; its body is taken) and decides. in_flight: an
 * attempt is still out; can_ask: another candidate could be asked in time. */
enum proxy_agree_next proxy_agree_take(struct gw_request *req, const struct node_info *node,
                                       const struct up_result *res,
                                       const struct proxy_answer_facts *f, bool in_flight,
                                       bool can_ask);

/* No other node can be asked: answers req with what there is and hands it back. False,
 * req untouched, when there is no answer at all (the caller's failure path answers). */
bool proxy_agree_settle(struct gw_request *req);

/* Lets go of the answers (the request ends). */
void proxy_agree_free(struct proxy_work *px);

#endif
