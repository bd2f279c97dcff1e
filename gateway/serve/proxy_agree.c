/* proxy_agree — a checked read's answers compared, served, refused (proxy_agree.h). */
#include "serve/proxy_agree.h"

#include "serve/context.h"
#include "serve/answer.h"
#include "ops/gw_metrics.h"
#include "serve/proxy_store.h"
#include "xg_log.h"
#include "xg_str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum agree_body body_kind(const struct gw_request *req)
{
    return req->endpoint == GW_EP_BIN       ? AGREE_BIN
           : req->endpoint == GW_EP_JSONRPC ? AGREE_JSON_RPC
                                            : AGREE_JSON;
}

static struct agree_decision decide(struct gw_request *req, bool can_ask)
{
    struct proxy_agree *ag = &req->px->agree;
    bool same[AGREE_MAX_ANSWERS][AGREE_MAX_ANSWERS] = {{false}};
    for (unsigned i = 0; i < ag->n; i++)
        for (unsigned j = i + 1; j < ag->n; j++)
            same[i][j] = agree_compare(body_kind(req), ag->got[i].body, ag->got[i].len,
                                       ag->got[j].body, ag->got[j].len) == AGREE_SAME;
    return agree_decide(ag->n, same, can_ask, req->ctx->serve_unverified);
}

/* Credits the nodes that agreed and blames the odd one, unless the quorum tip moved since
 * the read was sent: then a difference may be the new block, not a lie. */
static void judge(struct gw_request *req, const struct agree_decision *d)
{
    struct proxy_agree *ag = &req->px->agree;
    struct prober_quorum q = prober_quorum(req->ctx->prober);
    bool same_tip = strcmp(q.hash, ag->tip) == 0;
    for (unsigned i = 0; i < ag->n; i++) {
        if (d->agreed & 1u << i)
            prober_agreement(req->ctx->prober, ag->got[i].node.id, true, ag->tip);
        else if ((d->odd & 1u << i) && same_tip) {
            prober_agreement(req->ctx->prober, ag->got[i].node.id, false, ag->tip);
            xg_log(XG_LOG_WARN, "node_answer_mismatch",
                   "node %s: its answer to %s differs from two other own nodes' agreeing one (a "
                   "mismatch once the quorum tip has held)",
                   ag->got[i].node.name, req->info->name);
        }
    }
}

static enum gw_checked_outcome metric_outcome(const struct agree_decision *d)
{
    switch (d->outcome) {
    case AGREE_AGREED:
        return GW_CHECKED_AGREED;
    case AGREE_MAJORITY:
        return GW_CHECKED_MAJORITY;
    case AGREE_DISAGREED:
        return GW_CHECKED_DISAGREED;
    case AGREE_UNVERIFIED:
    case AGREE_PENDING:
        break;
    }
    return d->step == AGREE_STEP_UNVERIFIED ? GW_CHECKED_UNVERIFIED : GW_CHECKED_REFUSED;
}

/* Serves answer i: stored when it was agreed on. */
static void serve(struct gw_request *req, unsigned i, bool agreed)
{
    struct proxy_work *px = req->px;
    struct agree_answer *a = &px->agree.got[i];
    px->current = a->node;
    px->agree.agreed = agreed;
    if (agreed)
        proxy_store_answer(req, a->status, a->body, a->len, &a->facts);
    else
        answer_header_set(req, "X-Xmrgate-Unverified", "true");
    answer_set(req, a->status, a->body, a->len, a->type);
    a->body = NULL;
}

/* Acts on a decision that is not AGREE_STEP_ASK. Answers that only nodes not the
 * operator's own agreed on (public nodes, while no own node could answer) are served as a
 * lone answer is. */
static void conclude(struct gw_request *req, const struct agree_decision *decision)
{
    struct proxy_agree *ag = &req->px->agree;
    struct agree_decision own = *decision, *d = &own;
    for (unsigned i = 0; i < ag->n && d->step == AGREE_STEP_SERVE; i++)
        if ((d->agreed & 1u << i) && !nodes_own(&ag->got[i].node)) {
            d->step = req->ctx->serve_unverified ? AGREE_STEP_UNVERIFIED : AGREE_STEP_REFUSE;
            d->outcome = AGREE_UNVERIFIED;
        }
    if (req->ctx->timers)
        hold_cancel(req->ctx->timers, &ag->wait_timer);
    judge(req, d);
    gw_metrics_checked(req->ctx->metrics, metric_outcome(d));
    switch (d->step) {
    case AGREE_STEP_SERVE:
        serve(req, d->serve, true);
        break;
    case AGREE_STEP_UNVERIFIED:
        serve(req, d->serve, false);
        break;
    case AGREE_STEP_REFUSE:
    case AGREE_STEP_ASK:
        if (d->outcome == AGREE_DISAGREED) {
            char names[AGREE_MAX_ANSWERS * 68] = "";
            size_t at = 0;
            for (unsigned i = 0; i < ag->n && at < sizeof names; i++)
                at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "",
                                       ag->got[i].node.name);
            xg_log(XG_LOG_WARN, "answers_disagree",
                   "%s: nodes %s gave different answers and no two agree: refused", req->info->name,
                   names);
        }
        answer_error(req,
                     d->outcome == AGREE_DISAGREED ? ERR_ANSWERS_DISAGREE : ERR_UNVERIFIED_ANSWER,
                     NULL);
        answer_header_set(req, "Retry-After", "1");
        break;
    }
    proxy_abandon_inflight(req, false);
    proxy_hand_back(req);
}

enum proxy_agree_next proxy_agree_take(struct gw_request *req, const struct node_info *node,
                                       const struct up_result *res,
                                       const struct proxy_answer_facts *f, bool in_flight,
                                       bool can_ask)
{
    struct proxy_agree *ag = &req->px->agree;
    if (ag->n < AGREE_MAX_ANSWERS) {
        struct agree_answer *a = &ag->got[ag->n++];
        *a = (struct agree_answer){
            .node = *node, .status = res->http_status, .len = res->body_len, .facts = *f};
        a->body = up_result_take_body(res);
        xg_str_copy(a->type, sizeof a->type, res->content_type);
    }
    struct agree_decision d = decide(req, in_flight || can_ask);
    if (d.step != AGREE_STEP_ASK) {
        conclude(req, &d);
        return PROXY_AGREE_ANSWERED;
    }
    return in_flight ? PROXY_AGREE_WAIT : PROXY_AGREE_ASK;
}

bool proxy_agree_settle(struct gw_request *req)
{
    if (req->px->agree.n == 0)
        return false;
    struct agree_decision d = decide(req, false);
    conclude(req, &d);
    return true;
}

void proxy_agree_free(struct proxy_work *px)
{
    for (unsigned i = 0; i < px->agree.n; i++) {
        free(px->agree.got[i].body);
        px->agree.got[i].body = NULL;
    }
    px->agree.n = 0;
}
