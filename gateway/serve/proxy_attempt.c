/* proxy_attempt — a read's calls to its nodes: ranking the candidates, one attempt at a
 * time and a hedge alongside it, the retry on rank 2, the confirmation or full-node retry
 * proxy_confirm_step asks for, and the tenant's floor (a node behind the tip the tenant was
 * served is skipped, or the read waits once for the nodes to catch up). Everything runs on
 * the engine's loop thread (gateway/nodes/upstream.h), timers included (core/hold.h). */
#include "serve/proxy_attempt.h"

#include "serve/context.h"
#include "serve/answer.h"
#include "ops/gw_metrics.h"
#include "rpc/consistency.h"
#include "serve/proxy_agree.h"
#include "serve/proxy_store.h"
#include "xg_clock.h"
#include "xg_log.h"

#include <stdlib.h>

size_t proxy_pick_nodes(struct gw_request *req, bool need_tip, bool want_full, int32_t exclude_id,
                        bool full_only)
{
    struct proxy_work *px = req->px;
    struct prober_pick pick = {.need_tip = need_tip,
                               .want_full = want_full,
                               .exclude_id = exclude_id,
                               .min_height = px->floor,
                               .only_nodes = px->only_nodes};
    /* only_nodes: when none of the nodes that accepted the tenant's transaction may
     * serve, prober_rank returns the others */
    px->ncandidates = prober_rank(req->ctx->prober, &pick, px->candidates, PROXY_MAX_CANDIDATES);
    size_t n = 0;
    for (size_t i = 0; i < px->ncandidates; i++) {
        bool slow = false;
        for (size_t j = 0; j < px->nslow; j++)
            slow |= px->slow[j] == px->candidates[i].id;
        if (!slow && !(full_only && px->candidates[i].pruned))
            px->candidates[n++] = px->candidates[i];
    }
    px->ncandidates = n;
    px->next = 0;
    return px->ncandidates;
}

static void arm_deadline(struct gw_request *req, struct hold_entry *timer, int32_t id,
                         void (*due)(struct hold_entry *));
static void on_confirm_due(struct hold_entry *e);

/* Asks the next node for the phase just entered; false when there is none. A
 * confirmation's node has until its hedge delay to answer (on_confirm_due). */
static bool start_phase(struct gw_request *req, enum proxy_phase phase)
{
    struct proxy_work *px = req->px;
    int32_t first = px->current.id;
    px->phase = phase;
    size_t n = phase == PHASE_FULL_NODE
                   ? proxy_pick_nodes(req, px->need_tip, true, first, true)
                   : proxy_pick_nodes(req, true, req->plan.full_node, first, false);
    const char *why;
    if (n == 0 || !proxy_submit_attempt(req, &why))
        return false;
    if (phase == PHASE_CONFIRM)
        arm_deadline(req, &px->confirm_timer, px->current.id, on_confirm_due);
    return true;
}

/* The confirmation's node has not answered within its hedge delay (a node that froze just
 * now): the next node on the tip is asked instead, and when none is left the held answer
 * stands, as if that node had not been there. */
static void on_confirm_due(struct hold_entry *e)
{
    struct proxy_work *px =
        (struct proxy_work *)(void *)((char *)e - offsetof(struct proxy_work, confirm_timer));
    struct gw_request *req = px->req;
    if (px->phase != PHASE_CONFIRM || px->ninflight == 0 || !px->held_body)
        return;
    /* The breaker hears of it now, as of a node a hedge overtook (prober_overtaken): a
     * frozen node leaves rotation after a few such reads, not at the next probe. */
    for (size_t i = 0; i < px->ninflight; i++)
        prober_overtaken(req->ctx->prober, px->inflight[i]->node.id);
    gw_metrics_hedge(req->ctx->metrics, GW_HEDGE_MOVED);
    proxy_abandon_inflight(req, true);
    const char *why;
    if (px->next < px->ncandidates && xg_monotonic_us() < req->deadline_us &&
        proxy_submit_attempt(req, &why)) {
        arm_deadline(req, &px->confirm_timer, px->current.id, on_confirm_due);
        return;
    }
    proxy_answer_held(req);
    proxy_hand_back(req);
}

/* Whether a checked read could still ask one more node in time. */
static bool agree_can_ask(const struct gw_request *req)
{
    const struct proxy_work *px = req->px;
    return px->next < px->ncandidates && xg_monotonic_us() < req->deadline_us;
}

static void on_agree_due(struct hold_entry *e);

/* A checked read asks one more node, or, when none can be asked, is answered with the
 * answers it has; false when it has none (the caller's failure path answers). */
static bool agree_ask_next(struct gw_request *req)
{
    const char *why;
    for (size_t tries = 0; tries < PROXY_MAX_CANDIDATES && agree_can_ask(req); tries++)
        if (proxy_submit_attempt(req, &why))
            return true;
    return proxy_agree_settle(req);
}

/* A usable answer to a checked read (proxy_agree.h). */
static void on_agree_answer(struct gw_request *req, const struct up_result *res,
                            const struct proxy_answer_facts *f)
{
    struct proxy_work *px = req->px;
    switch (proxy_agree_take(req, &px->current, res, f, px->ninflight > 0, agree_can_ask(req))) {
    case PROXY_AGREE_ANSWERED:
        if (req->ctx->timers)
            hold_cancel(req->ctx->timers, &px->agree.wait_timer);
        return;
    case PROXY_AGREE_WAIT:
        if (!hold_queued(&px->agree.wait_timer))
            arm_deadline(req, &px->agree.wait_timer, px->inflight[0]->node.id, on_agree_due);
        return;
    case PROXY_AGREE_ASK:
        if (!agree_ask_next(req)) { /* cannot happen: the answer just taken decides */
            answer_error(req, ERR_NO_NODE, NULL);
            proxy_hand_back(req);
        }
        return;
    }
}

/* The node a checked read waits for has not answered within its hedge delay since the
 * first answer came: it is given up for the next node, or the answers there are decide. */
static void on_agree_due(struct hold_entry *e)
{
    struct proxy_work *px =
        (struct proxy_work *)(void *)((char *)e - offsetof(struct proxy_work, agree.wait_timer));
    struct gw_request *req = px->req;
    if (px->ninflight == 0)
        return;
    proxy_abandon_inflight(req, true);
    if (agree_ask_next(req) && px->ninflight > 0)
        arm_deadline(req, &px->agree.wait_timer, px->inflight[0]->node.id, on_agree_due);
}

static bool may_retry(const struct gw_request *req)
{
    const struct proxy_work *px = req->px;
    /* A write is never sent twice (broadcasts have their own path). */
    return !req->info->writes && px->failures < GW_MAX_ATTEMPTS && px->next < px->ncandidates &&
           xg_monotonic_us() < req->deadline_us;
}

/* A usable answer: passed on (and stored), or held while a second node is asked, as
 * proxy_confirm_step says. */
static void on_read_answer(struct gw_request *req, const struct up_result *res,
                           const struct proxy_answer_facts *f)
{
    struct proxy_work *px = req->px;
    struct proxy_read_state state = {.phase = px->phase,
                                     .full_node = req->plan.full_node,
                                     .need_tip = px->need_tip,
                                     .held = px->held_body ? &px->held_facts : NULL};
    switch (proxy_confirm_step(&state, f)) {
    case PROXY_STEP_FULL_NODE:
        proxy_hold_answer(px, res, f);
        if (start_phase(req, PHASE_FULL_NODE))
            return;
        answer_error(req, ERR_PRUNED_ONLY, NULL);
        break;
    case PROXY_STEP_CONFIRM:
        proxy_hold_answer(px, res, f);
        if (start_phase(req, PHASE_CONFIRM))
            return;
        proxy_answer_held(req); /* the only node on the tip: its answer stands */
        break;
    case PROXY_STEP_HELD:
        proxy_answer_held(req); /* the second node found no more: the first answer stands */
        break;
    case PROXY_STEP_ANSWER:
        proxy_store_answer(req, res->http_status, res->body, res->body_len, f);
        answer_set(req, res->http_status, up_result_take_body(res), res->body_len,
                   res->content_type);
        break;
    }
    proxy_hand_back(req);
}

/* Takes a from its request's attempts in flight. */
static void attempt_detach(struct proxy_work *px, const struct proxy_attempt *a)
{
    for (size_t i = 0; i < px->ninflight; i++)
        if (px->inflight[i] == a) {
            px->inflight[i] = px->inflight[--px->ninflight];
            return;
        }
}

/* The read is answered 503 behind_served_tip: no node could answer at the chain tip the
 * tenant has already been served. */
static void answer_behind(struct gw_request *req)
{
    answer_error(req, ERR_BEHIND_SERVED_TIP, NULL);
    answer_header_set(req, "Retry-After", "1");
    gw_metrics_behind_tip(req->ctx->metrics);
}

static void on_tip_wait_due(struct hold_entry *e)
{
    struct proxy_work *px =
        (struct proxy_work *)(void *)((char *)e - offsetof(struct proxy_work, tip_wait));
    struct gw_request *req = px->req;
    const char *why;
    px->failures = 0;
    if (proxy_pick_nodes(req, px->need_tip, req->plan.full_node, 0, false) > 0 &&
        proxy_submit_attempt(req, &why))
        return;
    answer_behind(req);
    proxy_hand_back(req);
}

/* Once, for a read whose nodes are all below its floor: it waits tip_wait (at most half
 * the time it has left) for the prober to see a node at the tenant's tip, then is ranked
 * and sent again. False when it has waited already, or cannot. */
static bool wait_for_tip(struct gw_request *req)
{
    struct proxy_work *px = req->px;
    int64_t now_us = xg_monotonic_us();
    int64_t wait_us = req->ctx->tip_wait_ms * 1000;
    if (wait_us > (req->deadline_us - now_us) / 2)
        wait_us = (req->deadline_us - now_us) / 2;
    if (px->waited || wait_us <= 0 || !req->ctx->timers)
        return false;
    px->waited = true;
    return hold_add(req->ctx->timers, &px->tip_wait, now_us + wait_us, on_tip_wait_due);
}

/* The last answer names a tip below the tenant's floor (consistency_below): it is never
 * sent. Another node is asked (a node behind is no failure of it), or the read waits once
 * for the nodes to catch up, or it is refused. */
static void on_behind(struct gw_request *req)
{
    struct proxy_work *px = req->px;
    const char *why;
    proxy_abandon_inflight(req, false);
    if (px->next < px->ncandidates && xg_monotonic_us() < req->deadline_us &&
        proxy_submit_attempt(req, &why))
        return;
    if (wait_for_tip(req))
        return;
    answer_behind(req);
    proxy_hand_back(req);
}

static void on_node_done(const struct up_result *res, void *arg)
{
    struct proxy_attempt *a = arg;
    struct gw_context *ctx = a->ctx;
    struct gw_request *req = a->req;
    if (!req && res->outcome == UP_CANCELLED) {
        free(a); /* the gateway stops: the prober may be gone already */
        return;
    }
    struct proxy_answer_facts f = {.height = -1};
    if (res->outcome == UP_OK && a->endpoint == GW_EP_BIN)
        proxy_read_bin_facts(res->body, res->body_len, &f);
    else if (res->outcome == UP_OK)
        proxy_read_rpc_facts(res->body, res->body_len,
                             a->endpoint == GW_EP_JSONRPC && req ? req->rpc_id : NULL, &f);
    /* An answer to another request (wrong id) is the node's failure: asked elsewhere. */
    bool failed = proxy_retryable(res->outcome, res->http_status) || f.busy || f.wrong_id ||
                  res->outcome != UP_OK;
    /* An abandoned attempt still tells the breaker how its node did (a frozen node's
     * timeout), but its answer goes nowhere. */
    prober_answered(ctx->prober, a->node.id, !failed, res->seconds * 1000.0);
    gw_metrics_node_call(ctx->metrics, a->node.name,
                         gw_metrics_node_outcome(res->outcome, res->http_status, f.busy),
                         res->seconds);
    if (!req) {
        free(a);
        return;
    }
    struct proxy_work *px = req->px;
    attempt_detach(px, a);
    px->current = a->node;
    bool hedge = a->hedge;
    free(a);
    if (!failed) {
        int64_t served = consistency_answer_height(req->info, res->body, res->body_len,
                                                   req->endpoint == GW_EP_BIN);
        if (consistency_below(px->floor, served)) {
            if (px->ninflight == 0)
                on_behind(req); /* else the other attempt may have the tenant's tip */
            return;
        }
        if (served > 0 && req->tenant_id)
            sessions_served_tip(ctx->sessions, req->tenant_id, served);
    }
    if (failed && px->ninflight > 0) {
        px->failures++; /* the other attempt may still answer: wait for it */
        return;
    }
    if (px->agree.on && px->phase == PHASE_READ) {
        if (!failed) {
            on_agree_answer(req, res, &f);
            return;
        }
        px->failures++;
        if (agree_ask_next(req)) {
            if (px->ninflight > 0 && px->agree.n > 0 && !hold_queued(&px->agree.wait_timer))
                arm_deadline(req, &px->agree.wait_timer, px->inflight[0]->node.id, on_agree_due);
            return;
        }
        px->failures--; /* counted again on the failure path below */
    }
    if (!failed && hedge) {
        /* The hedge won: the first node did not answer in its own p95 and then some. The
         * breaker hears it now, not at the node's timeout, when the node has gone silent
         * (prober_overtaken). */
        for (size_t i = 0; i < px->ninflight; i++)
            if (!px->inflight[i]->hedge)
                prober_overtaken(ctx->prober, px->inflight[i]->node.id);
        gw_metrics_hedge(ctx->metrics, GW_HEDGE_WON);
    }
    if (!failed)
        proxy_abandon_inflight(req, true); /* the first good answer wins */
    if (failed) {
        px->failures++;
        xg_log(XG_LOG_DEBUG, "node_attempt_failed", "node %s: %s (HTTP %ld)", px->current.name,
               f.busy       ? "BUSY"
               : f.wrong_id ? "answered with another request's id"
               : res->error ? res->error
                            : up_outcome_name(res->outcome),
               res->http_status);
        const char *why;
        if (may_retry(req) && proxy_submit_attempt(req, &why))
            return;
        if (px->held_body) { /* a confirmation or full-node retry failed: the first stands */
            if (px->phase == PHASE_CONFIRM) {
                proxy_answer_held(req);
                proxy_hand_back(req);
                return;
            }
        }
        if (res->outcome == UP_OK) { /* a 5xx or BUSY: pass the node's own answer on */
            answer_set(req, res->http_status, up_result_take_body(res), res->body_len,
                       res->content_type);
        } else {
            proxy_answer_node_failed(req, res);
        }
        proxy_hand_back(req);
        return;
    }
    if (req->endpoint == GW_EP_BIN) {
        proxy_store_answer(req, res->http_status, res->body, res->body_len, &f);
        answer_set(req, res->http_status, up_result_take_body(res), res->body_len,
                   res->content_type);
        proxy_hand_back(req);
        return;
    }
    on_read_answer(req, res, &f);
}

static void arm_hedge(struct gw_request *req, int32_t id);

/* Sends req to its next candidate (hedge: alongside the attempt in flight). False with the
 * reason in *why when none can take it. */
static bool submit_one(struct gw_request *req, bool hedge, const char **why)
{
    struct proxy_work *px = req->px;
    /* Skip candidates whose breaker opened since ranking. */
    while (px->next < px->ncandidates &&
           !prober_attempt_begin(req->ctx->prober, px->candidates[px->next].id))
        px->next++;
    if (px->next >= px->ncandidates) {
        *why = "every node that could take it is failing (circuit breaker open)";
        return false;
    }
    if (px->ninflight >= PROXY_MAX_INFLIGHT) {
        *why = "too many attempts in flight"; /* our bug: callers check */
        return false;
    }
    struct proxy_attempt *a = malloc(sizeof *a);
    if (!a) {
        *why = "out of memory";
        return false;
    }
    *a = (struct proxy_attempt){.req = req,
                                .ctx = req->ctx,
                                .node = px->candidates[px->next++],
                                .endpoint = req->endpoint,
                                .hedge = hedge};
    px->current = a->node;
    /* The allow-list: nothing of the client's reaches a node but its body. */
    static const struct up_header json_headers[] = {{"Content-Type", "application/json"}};
    int64_t left_ms = (req->deadline_us - xg_monotonic_us()) / 1000;
    char url[512];
    struct up_job job;
    if (!up_job_init(&job, url, sizeof url, a->node.url, req->rest,
                     up_timeout_within(left_ms, (long)req->ctx->node_timeout_ms), on_node_done,
                     a)) {
        *why = "the node URL and the request path are too long together";
        free(a);
        return false; /* a URL cut short is never sent */
    }
    job.max_connections = a->node.max_connections;
    if (req->is_post || req->forward_len)
        up_job_post(&job, req->forward_body, req->forward_len);
    if (req->endpoint != GW_EP_BIN)
        up_job_headers(&job, json_headers, 1);
    *why = "the gateway is stopping, or out of memory";
    prober_sent(req->ctx->prober, a->node.id, 1); /* before: the answer may come first */
    if (!up_submit(req->ctx->up, &job)) {
        prober_sent(req->ctx->prober, a->node.id, -1);
        free(a);
        return false;
    }
    px->inflight[px->ninflight++] = a;
    if (!hedge && px->ninflight == 1 && px->failures == 0)
        arm_hedge(req, a->node.id);
    return true;
}

/* The hedge delay passed and the phase's first attempt has not answered: the same read to
 * the next node, budget allowing. Runs on the loop's thread (hold.h). */
static void on_hedge_due(struct hold_entry *e)
{
    struct proxy_work *px =
        (struct proxy_work *)(void *)((char *)e - offsetof(struct proxy_work, hedge_timer));
    struct gw_request *req = px->req;
    if (px->ninflight != 1 || px->next >= px->ncandidates || xg_monotonic_us() >= req->deadline_us)
        return;
    if (!prober_hedge_take(req->ctx->prober)) {
        gw_metrics_hedge(req->ctx->metrics, GW_HEDGE_NO_BUDGET);
        return;
    }
    const char *why;
    if (submit_one(req, true, &why))
        gw_metrics_hedge(req->ctx->metrics, GW_HEDGE_SENT);
}

/* Arms the hedge timer for an idempotent read just sent to node id, when another node
 * could take it. */
static void arm_hedge(struct gw_request *req, int32_t id)
{
    struct proxy_work *px = req->px;
    /* A checked read asks two nodes at once, a confirmation has its own deadline. */
    if (!req->plan.hedgeable || req->info->writes || !req->ctx->timers || px->agree.on ||
        px->phase == PHASE_CONFIRM || px->next >= px->ncandidates || hold_queued(&px->hedge_timer))
        return;
    int64_t delay_ms = prober_hedge_delay(req->ctx->prober, id);
    if (delay_ms < 0)
        return;
    if (!hold_add(req->ctx->timers, &px->hedge_timer, xg_monotonic_us() + delay_ms * 1000,
                  on_hedge_due)) {
        /* out of memory: this read is not hedged */
    }
}

bool proxy_submit_attempt(struct gw_request *req, const char **why)
{
    return submit_one(req, false, why);
}

bool proxy_submit_read(struct gw_request *req, const char **why)
{
    if (!submit_one(req, false, why))
        return false;
    /* A checked read: its second node at once (none: the first answer decides alone). */
    const char *second;
    for (size_t tries = 0; tries < PROXY_MAX_CANDIDATES && req->px->agree.on &&
                           req->px->ninflight < 2 && agree_can_ask(req);
         tries++)
        if (submit_one(req, false, &second))
            break;
    return true;
}

/* Arms timer for the deadline of node id's answer: its hedge delay from now (the node
 * timeout stands when hedging is off). */
static void arm_deadline(struct gw_request *req, struct hold_entry *timer, int32_t id,
                         void (*due)(struct hold_entry *))
{
    int64_t delay_ms = prober_hedge_delay(req->ctx->prober, id);
    if (!req->ctx->timers || delay_ms < 0 || hold_queued(timer))
        return;
    if (!hold_add(req->ctx->timers, timer, xg_monotonic_us() + delay_ms * 1000, due)) {
        /* out of memory: the node's timeout stands */
    }
}
