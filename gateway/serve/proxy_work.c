/* proxy_work — a request's node-side state and the helpers every part of proxy answers
 * through (proxy_work.h). */
#include "serve/proxy_work.h"

#include "cache/flight.h"
#include "serve/context.h"
#include "serve/answer.h"
#include "xg_log.h"
#include "xg_str.h"

#include <stdio.h>
#include <stdlib.h>

bool proxy_work_ensure(struct gw_request *req)
{
    if (!req->px && (req->px = calloc(1, sizeof *req->px)))
        req->px->req = req;
    return req->px != NULL;
}

void proxy_answer_unavailable(struct gw_request *req, const char *why, const struct node_info *node,
                              const char *detail)
{
    char message[256], id[GW_REQUEST_ID_SIZE];
    snprintf(message, sizeof message, "no node could answer: %s", why);
    /* An error line for operators, with the id the client sees in X-Request-Id. */
    gw_request_id_text(req->id, id);
    json_t *fields =
        json_pack("{s:s,s:s}", "request_id", id, "method", req->info ? req->info->name : "?");
    if (fields && node)
        json_object_set_new(fields, "node", json_string(node->name));
    if (fields && detail)
        json_object_set_new(fields, "detail", json_string(detail));
    xg_log_fields(XG_LOG_WARN, "request_failed", fields, "%s", message);
    answer_error(req, ERR_NO_NODE, message);
}

/* The last attempt failed without an answer to pass on: the node's id and outcome for the
 * tenant, the node client's error text for the log. */
void proxy_answer_node_failed(struct gw_request *req, const struct up_result *res)
{
    char ref[PROXY_NODE_REF_SIZE], why[64];
    proxy_node_ref(req->px->current.id, ref);
    snprintf(why, sizeof why, "node %s: %s", ref, up_outcome_name(res->outcome));
    proxy_answer_unavailable(req, why, &req->px->current, res->error);
}

void proxy_release_held(struct proxy_work *px)
{
    free(px->held_body);
    px->held_body = NULL;
    px->held_len = 0;
}

/* The request no longer waits for its attempts in flight (a good answer came, the phase
 * changed, or it ends): each finishes on its own; the hedge timer is stopped. slow: the
 * nodes are remembered as too slow to ask again. */
void proxy_abandon_inflight(struct gw_request *req, bool slow)
{
    struct proxy_work *px = req->px;
    if (req->ctx->timers)
        hold_cancel(req->ctx->timers, &px->hedge_timer);
    for (size_t i = 0; i < px->ninflight; i++) {
        if (slow && px->nslow < PROXY_MAX_INFLIGHT)
            px->slow[px->nslow++] = px->inflight[i]->node.id;
        px->inflight[i]->req = NULL;
    }
    px->ninflight = 0;
}

/* The key a request's flight is led under: a chain supplement's settled key (the same at
 * every tip), else its cache key. */
const uint8_t *proxy_flight_key(const struct proxy_work *px)
{
    return px->store.settles ? px->store.settled_key : px->store.key;
}

void proxy_land_flight(struct gw_request *req)
{
    if (req->px->leading)
        flight_land(req->ctx->flight, proxy_flight_key(req->px));
    req->px->leading = false;
}

/* The answer is in req: the held one is let go and the request handed back to server. */
void proxy_hand_back(struct gw_request *req)
{
    proxy_land_flight(req);
    proxy_abandon_inflight(req, false);
    proxy_release_held(req->px);
    req->answered = true;
    gw_request_resume(req);
}

void proxy_mark_degraded(struct gw_request *req, const struct prober_quorum *q)
{
    if (q->known && q->degraded)
        answer_header_set(req, "X-Xmrgate-Degraded", "no-quorum");
}

/* No node healthy yet (start-up, or all down): the configured order, said loudly. */
size_t proxy_fallback_nodes(struct gw_request *req)
{
    struct proxy_work *px = req->px;
    nodes_read_lock();
    const struct node_set *set = nodes_current(req->ctx->nodes);
    px->ncandidates = 0;
    for (size_t i = 0; i < set->count && px->ncandidates < PROXY_MAX_CANDIDATES; i++)
        px->candidates[px->ncandidates++] = set->nodes[i];
    nodes_read_unlock();
    px->next = 0;
    if (px->ncandidates)
        answer_header_set(req, "X-Xmrgate-Degraded", "no-healthy-node");
    return px->ncandidates;
}

/* Returns an answer held for a confirmation, as it was. */
void proxy_answer_held(struct gw_request *req)
{
    struct proxy_work *px = req->px;
    answer_set(req, px->held_status, px->held_body, px->held_len, px->held_type);
    px->held_body = NULL;
}

void proxy_hold_answer(struct proxy_work *px, const struct up_result *res,
                       const struct proxy_answer_facts *f)
{
    proxy_release_held(px);
    px->held_status = res->http_status;
    px->held_len = res->body_len;
    px->held_body = up_result_take_body(res);
    px->held_facts = *f;
    xg_str_copy(px->held_type, sizeof px->held_type, res->content_type);
}
