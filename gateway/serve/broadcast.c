/* broadcast — send_raw_transaction to every healthy node that takes broadcasts, in
 * parallel (broadcast.h). */
#include "serve/broadcast.h"

#include "serve/context.h"
#include "serve/answer.h"
#include "ops/gw_metrics.h"
#include "xg_clock.h"
#include "xg_log.h"
#include "xg_str.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define BROADCAST_MAX_NODES 16

struct broadcast_slot {
    struct node_info node;
    long http;
    char *body; /* owned until the answer is chosen */
    size_t len;
    char type[96];
    enum { BC_PENDING, BC_ACCEPTED, BC_REJECTED, BC_FAILED } outcome;
};

/* A broadcast's calls. The request is answered once an own node accepted the transaction
 * and the others had a grace of one hedge delay to answer too; the calls still out then go
 * on in the background, with their outcome in the metrics, and the state outlives the
 * request until the last one ends. */
struct broadcast {
    struct gw_request *req; /* NULL once the request let go of it */
    struct gw_context *ctx;
    int64_t tenant_id; /* whose transaction it is (read-your-writes); 0: none */
    uint64_t accepted; /* nodes_bit of every node that accepted it so far */
    bool answered;
    struct hold_entry grace; /* after the first own acceptance */
    struct broadcast_slot *slots;
    size_t nslots;
    atomic_size_t pending; /* calls not ended (one more while they are being sent) */
};

struct broadcast_call {
    struct broadcast *bc;
    size_t slot;
};

static const char *slot_word(int outcome)
{
    switch (outcome) {
    case BC_ACCEPTED:
        return "ok";
    case BC_REJECTED:
        return "rejected";
    case BC_PENDING:
        return "pending"; /* still out when the answer went: its outcome is in the metrics */
    default:
        return "fail";
    }
}

/* Every node has answered, or an own node accepted and the grace passed: the first
 * acceptance is the answer, else the first rejection (the node's reason), else our error.
 * Runs once, on the engine's loop thread (upstream.h: every callback runs there, and so do
 * the request's handler and the loop's timers): in a node's callback, in the grace timer,
 * or at the end of broadcast_dispatch should every call have ended before it. */
static void broadcast_finish(struct broadcast *bc)
{
    struct gw_request *req = bc->req;
    bc->answered = true;
    if (req->ctx->timers)
        hold_cancel(req->ctx->timers, &bc->grace);
    char header[256] = "";
    size_t used = 0;
    struct broadcast_slot *best = NULL;
    for (size_t i = 0; i < bc->nslots; i++) {
        struct broadcast_slot *s = &bc->slots[i];
        char ref[PROXY_NODE_REF_SIZE];
        proxy_node_ref(s->node.id, ref);
        int w = snprintf(header + used, sizeof header - used, "%s%s=%s", i ? "," : "", ref,
                         slot_word(s->outcome));
        if (w > 0 && (size_t)w < sizeof header - used)
            used += (size_t)w;
        if (s->outcome == BC_ACCEPTED && (!best || best->outcome != BC_ACCEPTED))
            best = s;
        else if (s->outcome == BC_REJECTED && !best)
            best = s;
    }
    answer_header_set(req, "X-Xmrgate-Broadcast", header);
    gw_metrics_broadcast(req->ctx->metrics, best && best->outcome == BC_ACCEPTED);
    if (best) {
        answer_set(req, best->http, best->body, best->len, best->type);
        best->body = NULL;
    } else {
        proxy_answer_unavailable(req, "no node accepted the connection", NULL, NULL);
    }
    for (size_t i = 0; i < bc->nslots; i++) {
        free(bc->slots[i].body);
        bc->slots[i].body = NULL;
    }
    proxy_hand_back(req);
}

static void broadcast_free(struct broadcast *bc)
{
    for (size_t i = 0; i < bc->nslots; i++)
        free(bc->slots[i].body);
    free(bc->slots);
    free(bc);
}

static void on_broadcast_grace(struct hold_entry *e)
{
    struct broadcast *bc =
        (struct broadcast *)(void *)((char *)e - offsetof(struct broadcast, grace));
    if (bc->req && !bc->answered)
        broadcast_finish(bc);
}

static void on_broadcast_done(const struct up_result *res, void *arg)
{
    struct broadcast_call *call = arg;
    struct broadcast *bc = call->bc;
    struct broadcast_slot *s = &bc->slots[call->slot];
    free(call);
    if (res->outcome == UP_CANCELLED && !bc->req) { /* the gateway stops */
        if (atomic_fetch_sub(&bc->pending, 1) == 1)
            broadcast_free(bc);
        return;
    }
    struct gw_context *ctx = bc->ctx;
    s->http = res->http_status;
    s->outcome = BC_FAILED;
    if (res->outcome == UP_OK && res->http_status == 200) {
        struct proxy_answer_facts f;
        proxy_read_facts(res->body, res->body_len, &f);
        /* status OK covers "already in the pool" (not_relayed) too. */
        s->outcome = f.ok ? BC_ACCEPTED : f.json ? BC_REJECTED : BC_FAILED;
        s->len = res->body_len;
        s->body = up_result_take_body(res);
        xg_str_copy(s->type, sizeof s->type, res->content_type);
    }
    if (s->outcome == BC_ACCEPTED && bc->tenant_id && ctx->read_your_writes_ms > 0) {
        /* the tenant's pool and transaction queries go to these nodes for a while */
        bc->accepted |= nodes_bit(s->node.id);
        sessions_accepted(ctx->sessions, bc->tenant_id, bc->accepted,
                          xg_monotonic_ms() + ctx->read_your_writes_ms);
    }
    if (s->outcome == BC_FAILED)
        xg_log(XG_LOG_DEBUG, "broadcast_node_failed", "node %s: %s (HTTP %ld)", s->node.name,
               res->error ? res->error : up_outcome_name(res->outcome), res->http_status);
    prober_report(ctx->prober, s->node.id, s->outcome != BC_FAILED);
    gw_metrics_node_call(ctx->metrics, s->node.name,
                         gw_metrics_node_outcome(res->outcome, res->http_status, false),
                         res->seconds);
    gw_metrics_broadcast_node(ctx->metrics, s->node.name,
                              s->outcome == BC_ACCEPTED   ? GW_BCAST_ACCEPTED
                              : s->outcome == BC_REJECTED ? GW_BCAST_REJECTED
                                                          : GW_BCAST_FAILED);
    bool last = atomic_fetch_sub(&bc->pending, 1) == 1;
    if (!bc->req) { /* answered and let go: a background call */
        if (last)
            broadcast_free(bc);
        return;
    }
    if (bc->answered)
        return;
    if (last) {
        broadcast_finish(bc);
        return;
    }
    /* An own node took it: the others get one hedge delay more, then the answer goes. */
    if (s->outcome == BC_ACCEPTED && nodes_own(&s->node) && ctx->timers &&
        !hold_queued(&bc->grace)) {
        int64_t grace_ms = prober_hedge_delay(ctx->prober, -1);
        if (grace_ms >= 0 && !hold_add(ctx->timers, &bc->grace, xg_monotonic_us() + grace_ms * 1000,
                                       on_broadcast_grace)) {
            /* out of memory: the answer waits for every node */
        }
    }
}

bool broadcast_dispatch(struct gw_request *req, const struct prober_quorum *q)
{
    struct proxy_work *px = req->px;
    struct node_info nodes[BROADCAST_MAX_NODES];
    size_t n = prober_healthy(req->ctx->prober, nodes, BROADCAST_MAX_NODES);
    if (n == 0) { /* the configured nodes that take broadcasts (never a public one unasked) */
        size_t configured = proxy_fallback_nodes(req);
        for (size_t i = 0; i < configured && n < BROADCAST_MAX_NODES; i++)
            if (px->candidates[i].broadcast)
                nodes[n++] = px->candidates[i];
    }
    if (n == 0) {
        proxy_answer_unavailable(req, "no node is configured", NULL, NULL);
        return false;
    }
    proxy_mark_degraded(req, q);
    struct broadcast *bc = calloc(1, sizeof *bc);
    if (bc && !(bc->slots = calloc(n, sizeof *bc->slots))) {
        free(bc);
        bc = NULL;
    }
    if (!bc) {
        answer_error(req, ERR_OUT_OF_MEMORY, NULL);
        return false;
    }
    bc->req = req;
    bc->ctx = req->ctx;
    bc->tenant_id = req->tenant_id;
    px->bc = bc;
    for (size_t i = 0; i < n; i++)
        bc->slots[i] = (struct broadcast_slot){.node = nodes[i], .outcome = BC_PENDING};
    bc->nslots = n;
    /* One count more than the calls, dropped after the loop: the last callback cannot
     * finish the request while calls are still being submitted. */
    atomic_init(&bc->pending, n + 1);
    size_t submitted = 0;
    static const struct up_header json_headers[] = {{"Content-Type", "application/json"}};
    for (size_t i = 0; i < n; i++) {
        struct broadcast_call *call = malloc(sizeof *call);
        int64_t left_ms = (req->deadline_us - xg_monotonic_us()) / 1000;
        char url[512];
        struct up_job job;
        if (call && !up_job_init(&job, url, sizeof url, nodes[i].url, req->rest,
                                 up_timeout_within(left_ms, (long)req->ctx->node_timeout_ms),
                                 on_broadcast_done, call)) {
            free(call); /* a URL cut short is never sent: counted as not submitted */
            call = NULL;
        }
        if (call) {
            job.max_connections = nodes[i].max_connections;
            up_job_post(&job, req->forward_body, req->forward_len);
            up_job_headers(&job, json_headers, 1);
        }
        if (call)
            *call = (struct broadcast_call){bc, i};
        if (call && up_submit(req->ctx->up, &job)) {
            submitted++;
            continue;
        }
        free(call);
        bc->slots[i].outcome = BC_FAILED;
        atomic_fetch_sub(&bc->pending, 1);
    }
    if (submitted == 0) {
        proxy_answer_unavailable(
            req, "no broadcast could be sent (the gateway is stopping, or out of memory)", NULL,
            NULL);
        return false;
    }
    if (atomic_fetch_sub(&bc->pending, 1) == 1)
        broadcast_finish(bc);
    return true;
}

void broadcast_release(struct broadcast *bc, struct gw_context *ctx)
{
    if (ctx->timers)
        hold_cancel(ctx->timers, &bc->grace);
    bc->req = NULL;
    if (atomic_load(&bc->pending) == 0)
        broadcast_free(bc);
}
