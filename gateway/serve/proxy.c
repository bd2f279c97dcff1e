/* proxy — the request path's way into the nodes: a read is answered from the cache, or
 * follows an identical read's flight (cache/flight.h), or is sent; a broadcast goes to
 * every node. As the request's plan (rpc/plan.h) says, under the tenant's read rules
 * (rpc/consistency.h: its served tip and the nodes that accepted its last transaction,
 * kept in state/sessions.h).
 *
 * Its parts, each working on the request's proxy_work (serve/proxy_work.h):
 *   proxy_facts    what an answer says (pure)
 *   proxy_confirm  what a read does with it: pass it on, confirm it, ask a full node (pure)
 *   proxy_attempt  attempts, hedges, the retry on rank 2, the tenant's floor
 *   proxy_store    storing answers as plan_keep says (rpc/plan.h), hits, tip refreshes
 *   broadcast      send_raw_transaction to every node */
#include "serve/proxy.h"

#include "cache/flight.h"
#include "serve/context.h"
#include "serve/answer.h"
#include "ops/gw_metrics.h"
#include "serve/broadcast.h"
#include "rpc/consistency.h"
#include "serve/proxy_agree.h"
#include "serve/proxy_attempt.h"
#include "serve/proxy_store.h"
#include "serve/proxy_work.h"
#include "state/sessions.h"
#include "xg_clock.h"
#include "xg_str.h"

#include <stdlib.h>

/* How often a request that follows another one's flight (cache/flight.h) looks again. */
#define PROXY_FOLLOW_POLL_US 5000

/* Sends a read that did not follow another one's flight; false with the answer in req. */
static bool send_read(struct gw_request *req)
{
    if (req->px->store.store != PLAN_CACHE_NONE)
        answer_header_set(req, "X-Xmrgate-Cache", "miss");
    const char *why;
    if (!proxy_submit_read(req, &why)) {
        proxy_answer_unavailable(req, why, NULL, NULL);
        return false;
    }
    return true;
}

static void on_follow_due(struct hold_entry *e);

/* Looks again in PROXY_FOLLOW_POLL_US, while the request has time left to ask a node
 * itself after that (a node timeout); false when it has not, or cannot wait. */
static bool arm_follow(struct gw_request *req)
{
    int64_t due_us = xg_monotonic_us() + PROXY_FOLLOW_POLL_US;
    if (due_us + req->ctx->node_timeout_ms * 1000 >= req->deadline_us)
        return false;
    return hold_add(req->ctx->timers, &req->px->follow_timer, due_us, on_follow_due);
}

/* Joins the flight of the request's key (cache/flight.h): true when it follows another
 * request's and waits; false when it leads (or may not wait) and asks a node now. */
static bool follow_flight(struct gw_request *req)
{
    struct proxy_work *px = req->px;
    if (!req->ctx->flight || !req->ctx->timers || px->store.store == PLAN_CACHE_NONE)
        return false;
    int64_t now_us = xg_monotonic_us();
    int64_t lease_ms = (req->deadline_us - now_us) / 1000;
    if (flight_join(req->ctx->flight, proxy_flight_key(px), now_us / 1000, lease_ms) ==
        FLIGHT_LEAD) {
        px->leading = true;
        return false;
    }
    return arm_follow(req);
}

/* A follower looks again: while the lead is open it waits on; once the lead landed it
 * serves the stored answer, or, when none was stored, joins again (and mostly leads). */
static void on_follow_due(struct hold_entry *e)
{
    struct proxy_work *px =
        (struct proxy_work *)(void *)((char *)e - offsetof(struct proxy_work, follow_timer));
    struct gw_request *req = px->req;
    if (flight_open(req->ctx->flight, proxy_flight_key(px), xg_monotonic_ms()) && arm_follow(req))
        return;
    if (proxy_answer_from_cache(req)) {
        req->from_cache = true;
        gw_metrics_coalesced(req->ctx->metrics);
        proxy_hand_back(req);
        return;
    }
    if (follow_flight(req))
        return;
    if (!send_read(req))
        proxy_hand_back(req);
}

static bool dispatch_read(struct gw_request *req, const struct prober_quorum *q)
{
    struct proxy_work *px = req->px;
    px->phase = PHASE_READ;
    struct session_view tenant = sessions_get(req->ctx->sessions, req->tenant_id);
    px->floor = consistency_floor(&req->plan, tenant.served_tip);
    if (req->ctx->read_your_writes_ms > 0)
        px->only_nodes = consistency_writes_nodes(&req->plan, tenant.accepted,
                                                  tenant.accepted_until_ms, xg_monotonic_ms());
    /* Historical reads may use a node a few blocks behind; everything else the tip. A
     * checked read's nodes must be on one tip for their answers to compare. */
    px->agree.on = req->info->agree;
    xg_str_copy(px->agree.tip, sizeof px->agree.tip, q->hash);
    px->need_tip = req->plan.route != PLAN_ROUTE_HISTORICAL || px->agree.on;
    if (proxy_pick_nodes(req, px->need_tip, req->plan.full_node, 0, false) == 0 &&
        proxy_fallback_nodes(req) == 0) {
        proxy_answer_unavailable(req, "no node is configured", NULL, NULL);
        return false;
    }
    proxy_mark_degraded(req, q);
    proxy_store_prepare(req, q, &px->store);
    if (follow_flight(req))
        return true;
    return send_read(req);
}

/* ---- entry points ----------------------------------------------------------------------- */

bool proxy_answer_from_cache(struct gw_request *req)
{
    return proxy_store_serve(req);
}

bool proxy_dispatch(struct gw_request *req)
{
    if (!proxy_work_ensure(req)) {
        answer_error(req, ERR_OUT_OF_MEMORY, NULL);
        return false;
    }
    struct prober_quorum q = prober_quorum(req->ctx->prober);
    if (req->plan.route == PLAN_ROUTE_BROADCAST)
        return broadcast_dispatch(req, &q);
    return dispatch_read(req, &q);
}

void proxy_request_free(struct gw_request *req)
{
    if (!req->px)
        return;
    proxy_abandon_inflight(req, false);
    proxy_land_flight(req);
    if (req->ctx->timers) {
        hold_cancel(req->ctx->timers, &req->px->tip_wait);
        hold_cancel(req->ctx->timers, &req->px->follow_timer);
        hold_cancel(req->ctx->timers, &req->px->confirm_timer);
        hold_cancel(req->ctx->timers, &req->px->agree.wait_timer);
    }
    proxy_agree_free(req->px);
    proxy_release_held(req->px);
    if (req->px->bc) /* calls still out go on without the request */
        broadcast_release(req->px->bc, req->ctx);
    free(req->px);
    req->px = NULL;
}
