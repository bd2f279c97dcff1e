/* prober_view — the request path's view of the prober's nodes: the quorum tip, the ranked
 * nodes a read may go to, the outcomes and agreements client requests report back (breaker,
 * latency, error rate, honesty), hedging, readiness and liveness, and the status the admin API
 * shows. The probe loop that fills it is prober_loop.c. */
#define _LGPL_SOURCE
#include "nodes/prober.h"
#include "nodes/prober_state.h"

#include "nodes/rank.h"
#include "xg_log.h"
#include "xg_clock.h"

#include <stdio.h>

/* Ranking by client latency (rank.h): the time constant of its decay after a peak, and how
 * long the last client answer stands for the node before its probes' EMA is used again. */
#define PROBER_CLIENT_DECAY_MS 2000
#define PROBER_CLIENT_FRESH_MS 10000
/* A node's error rate: a moving average of its client requests' outcomes (1 failed, 0 good)
 * with this weight on the newest, about the last 20 requests. */
#define PROBER_ERROR_ALPHA 0.05

struct prober_quorum prober_quorum(struct prober *p)
{
    pthread_mutex_lock(&p->lock);
    struct prober_quorum q = p->quorum;
    pthread_mutex_unlock(&p->lock);
    return q;
}

/* The longest chain the node has shown (blocks); 0 when it has shown none. */
static int64_t node_height(const struct prober_node *n)
{
    int64_t height = 0;
    for (size_t i = 0; i < HEALTH_HISTORY; i++)
        if (n->h.history[i].height > height)
            height = n->h.history[i].height;
    return height;
}

static bool may_serve(struct prober *p, struct prober_node *n, const struct prober_pick *pick,
                      int64_t now)
{
    if (!n->h.up || n->h.dropped || n->info.id == pick->exclude_id)
        return false;
    if (n->tip_distance < 0)
        return false;
    if (n->tip_distance > (pick->need_tip ? 0 : p->opt.historical_lag))
        return false;
    if (!honesty_allows(&n->honesty, now))
        return false;
    return health_breaker_allows(&n->h, now, false);
}

static size_t rank_matching(struct prober *p, const struct prober_pick *pick, bool full_only,
                            struct node_info *out, size_t max)
{
    struct rank_input in[64];
    size_t count = 0, order[64];
    int64_t now = xg_monotonic_ms();
    for (size_t i = 0; i < p->count && count < 64; i++) {
        struct prober_node *n = &p->nodes[i];
        if ((full_only && n->info.pruned) || !may_serve(p, n, pick, now))
            continue;
        bool below = pick->min_height > 0 && node_height(n) < pick->min_height;
        /* Its client answers' latency while they are recent, else its probes'. */
        double ms = n->client_at_ms && now - n->client_at_ms < PROBER_CLIENT_FRESH_MS ? n->client_ms
                                                                                      : n->h.ema_ms;
        in[count++] =
            (struct rank_input){i, n->tip_distance, n->info.priority, ms, below, n->outstanding};
    }
    rank_order(in, count, atomic_fetch_add(&p->rotation, 1), p->opt.latency_bucket_ms, order);
    count = rank_servable(in, count); /* public nodes only while no own node can serve */
    if (pick->only_nodes) {
        /* Among those, the nodes in the set; all of them when none is. Filtered after
         * rank_servable, so that a set holding a public node never lets it serve while an
         * own node can. */
        size_t kept = 0;
        for (size_t i = 0; i < count; i++)
            if (pick->only_nodes & nodes_bit(p->nodes[order[i]].info.id))
                order[kept++] = order[i];
        if (kept > 0)
            count = kept;
    }
    size_t written = 0;
    for (size_t i = 0; i < count && written < max; i++)
        out[written++] = p->nodes[order[i]].info;
    return written;
}

size_t prober_rank(struct prober *p, const struct prober_pick *pick, struct node_info *out,
                   size_t max)
{
    pthread_mutex_lock(&p->lock);
    size_t n = 0;
    if (pick->want_full)
        n = rank_matching(p, pick, true, out, max);
    if (n == 0)
        n = rank_matching(p, pick, false, out, max);
    pthread_mutex_unlock(&p->lock);
    return n;
}

size_t prober_healthy(struct prober *p, struct node_info *out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < p->count && n < max; i++)
        if (p->nodes[i].h.up && !p->nodes[i].h.dropped && p->nodes[i].info.broadcast)
            out[n++] = p->nodes[i].info;
    pthread_mutex_unlock(&p->lock);
    return n;
}

bool prober_attempt_begin(struct prober *p, int32_t id)
{
    pthread_mutex_lock(&p->lock);
    struct prober_node *n = prober_find_node(p, id);
    /* A node the prober has not taken in yet (just loaded) has no failures against it. */
    bool ok = !n || health_breaker_allows(&n->h, xg_monotonic_ms(), true);
    pthread_mutex_unlock(&p->lock);
    return ok;
}

/* The breaker hears one client request's outcome. Called with the lock held. */
static void record_outcome(struct prober *p, struct prober_node *n, bool success)
{
    enum health_breaker before = n->h.breaker;
    n->client_requests++;
    n->client_failures += !success;
    n->error_rate += PROBER_ERROR_ALPHA * ((success ? 0.0 : 1.0) - n->error_rate);
    health_breaker_record(&n->h, success, xg_monotonic_ms(), &p->opt.health);
    if (before != n->h.breaker && n->h.breaker == HEALTH_BREAKER_OPEN)
        xg_log(XG_LOG_WARN, "breaker_open", "node %s: client requests failing, paused",
               n->info.name);
}

void prober_report(struct prober *p, int32_t id, bool success)
{
    pthread_mutex_lock(&p->lock);
    struct prober_node *n = prober_find_node(p, id);
    if (n)
        record_outcome(p, n, success);
    pthread_mutex_unlock(&p->lock);
}

void prober_sent(struct prober *p, int32_t id, int delta)
{
    pthread_mutex_lock(&p->lock);
    struct prober_node *n = prober_find_node(p, id);
    if (n && delta > 0)
        n->outstanding++;
    else if (n && n->outstanding > 0)
        n->outstanding--;
    pthread_mutex_unlock(&p->lock);
}

void prober_overtaken(struct prober *p, int32_t id)
{
    pthread_mutex_lock(&p->lock);
    struct prober_node *n = prober_find_node(p, id);
    if (n && xg_monotonic_ms() - n->last_good_ms >= p->opt.hedge.cap_ms)
        record_outcome(p, n, false);
    pthread_mutex_unlock(&p->lock);
}

void prober_answered(struct prober *p, int32_t id, bool success, double ms)
{
    pthread_mutex_lock(&p->lock);
    struct prober_node *n = prober_find_node(p, id);
    if (n) {
        /* A node whose row changed while the request was out starts again at 0. */
        if (n->outstanding > 0)
            n->outstanding--;
        record_outcome(p, n, success);
        int64_t now = xg_monotonic_ms();
        if (success)
            n->last_good_ms = now;
        if (success && ms >= 0) {
            hedge_window_add(&n->latency, ms);
            n->client_ms = rank_peak_ewma(n->client_at_ms ? n->client_ms : -1, ms,
                                          now - n->client_at_ms, PROBER_CLIENT_DECAY_MS);
            n->client_at_ms = now;
        }
    }
    pthread_mutex_unlock(&p->lock);
}

void prober_agreement(struct prober *p, int32_t id, bool agreed, const char *tip)
{
    pthread_mutex_lock(&p->lock);
    struct prober_node *n = prober_find_node(p, id);
    if (n && agreed)
        (void)honesty_record(&n->honesty, true, xg_monotonic_ms(), &p->opt.honesty);
    else if (n)
        honesty_suspect(&n->honesty, tip, xg_monotonic_ms());
    pthread_mutex_unlock(&p->lock);
}

int64_t prober_hedge_delay(struct prober *p, int32_t id)
{
    if (p->opt.hedge.budget_pct == 0)
        return -1;
    hedge_budget_earn(&p->hedges, p->opt.hedge.budget_pct);
    pthread_mutex_lock(&p->lock);
    struct prober_node *n = prober_find_node(p, id);
    double p95 = n ? hedge_window_p95(&n->latency) : -1;
    pthread_mutex_unlock(&p->lock);
    return hedge_delay_ms(p95, &p->opt.hedge);
}

bool prober_hedge_take(struct prober *p)
{
    return p->opt.hedge.budget_pct > 0 && hedge_budget_spend(&p->hedges);
}

bool prober_ready(struct prober *p, char *reason, size_t len)
{
    struct prober_quorum q = prober_quorum(p);
    bool ready = q.known && (q.healthy > 0 || (q.degraded && q.up > 0));
    if (!q.known)
        snprintf(reason, len, "no node has answered a probe yet");
    else if (!ready)
        snprintf(reason, len, "no healthy node%s", q.degraded ? "" : " on the quorum tip");
    else if (q.degraded)
        snprintf(reason, len,
                 "degraded: no majority of the %zu configured own nodes agrees on a tip "
                 "(serving from the highest node)",
                 q.voters);
    else
        reason[0] = '\0';
    return ready;
}

struct prober_liveness prober_liveness(struct prober *p)
{
    struct prober_liveness l = {
        .rounds = atomic_load(&p->rounds_ended),
        .last_round_ms = atomic_load(&p->last_round_took_ms),
        .limit_ms = health_stall_limit_ms(p->opt.interval_ms, p->opt.timeout_ms),
    };
    l.stalled = health_prober_stalled(xg_monotonic_ms(), atomic_load(&p->last_round_end_ms),
                                      p->opt.interval_ms, p->opt.timeout_ms, &l.age_ms);
    return l;
}

bool prober_alive(struct prober *p, char *reason, size_t len)
{
    struct prober_liveness l = prober_liveness(p);
    if (!l.stalled)
        return true;
    if (l.rounds == 0)
        snprintf(reason, len,
                 "prober stalled: no probe round has ended in the %lld ms since it started (limit "
                 "%lld ms)",
                 (long long)l.age_ms, (long long)l.limit_ms);
    else
        snprintf(reason, len,
                 "prober stalled: no probe round has ended for %lld ms (limit %lld ms); node "
                 "health and the quorum tip are that old",
                 (long long)l.age_ms, (long long)l.limit_ms);
    return false;
}

/* Why the last probe was not good, "" when it was. */
static const char *probe_problem(const struct prober_node *n, const struct health_params *hp)
{
    const struct health_probe *last = &n->h.last;
    if (health_probe_good(last, hp))
        return "";
    return !last->responded      ? "no answer in time"
           : !last->status_ok    ? "status not OK"
           : last->misfit        ? n->misfit
           : !last->synchronized ? "not synchronized"
           : last->busy_syncing  ? "busy syncing"
                                 : "behind its target height";
}

json_t *prober_status(struct prober *p)
{
    pthread_mutex_lock(&p->lock);
    json_t *nodes = json_array();
    for (size_t i = 0; i < p->count; i++) {
        const struct prober_node *n = &p->nodes[i];
        static const char *const breakers[] = {"closed", "open", "half-open"};
        json_array_append_new(
            nodes,
            json_pack("{s:s,s:b,s:b,s:I,s:I,s:f,s:s,s:s}", "name", n->info.name, "up", n->h.up,
                      "dropped", n->h.dropped, "height", (json_int_t)n->h.last.height,
                      "tip_distance", (json_int_t)n->tip_distance, "ema_ms", n->h.ema_ms, "breaker",
                      breakers[n->h.breaker], "top_hash", n->h.last.top_hash));
        json_t *obj = json_array_get(nodes, json_array_size(nodes) - 1);
        json_object_set_new(obj, "cooldown_ms", json_integer((json_int_t)n->h.cooldown_ms));
        json_object_set_new(obj, "last_error", json_string(probe_problem(n, &p->opt.health)));
        char rpc_version[16];
        fit_rpc_version_format(n->facts.rpc_version, rpc_version, sizeof rpc_version);
        json_object_set_new(obj, "network",
                            n->facts.network == FIT_NET_ANY
                                ? json_null()
                                : json_string(fit_network_name(n->facts.network)));
        json_object_set_new(obj, "version", json_string(n->facts.version));
        json_object_set_new(obj, "rpc_version", json_string(rpc_version));
        json_object_set_new(obj, "restricted",
                            n->facts.restricted_known ? json_boolean(n->facts.restricted)
                                                      : json_null());
        json_object_set_new(obj, "fits", json_boolean(n->misfit[0] == '\0'));
        json_object_set_new(obj, "requests", json_integer((json_int_t)n->client_requests));
        json_object_set_new(obj, "failures", json_integer((json_int_t)n->client_failures));
        json_object_set_new(obj, "error_rate", json_real(n->error_rate));
        json_object_set_new(obj, "refused", json_string(n->misfit));
        int64_t out_ms = n->honesty.out_until_ms - xg_monotonic_ms();
        json_object_set_new(obj, "answers",
                            json_pack("{s:b,s:I,s:I,s:I,s:I,s:I,s:I}", "misbehaving", out_ms > 0,
                                      "agreed", (json_int_t)n->honesty.agreed, "mismatched",
                                      (json_int_t)n->honesty.mismatched, "times_marked",
                                      (json_int_t)n->honesty.marked, "out_for_ms",
                                      (json_int_t)(out_ms > 0 ? out_ms : 0), "suspected",
                                      (json_int_t)n->honesty.nsuspects, "excused",
                                      (json_int_t)n->honesty.excused));
    }
    json_t *status = json_pack(
        "{s:o,s:{s:b,s:b,s:I,s:s,s:I,s:I,s:I}}", "nodes", nodes, "quorum", "known", p->quorum.known,
        "degraded", p->quorum.degraded, "height", (json_int_t)p->quorum.height, "hash",
        p->quorum.hash, "healthy", (json_int_t)p->quorum.healthy, "agreeing",
        (json_int_t)p->quorum.agreeing, "voters", (json_int_t)p->quorum.voters);
    json_object_set_new(status, "publications",
                        json_pack("{s:I,s:I,s:I}", "rounds", (json_int_t)p->pub_rounds, "confirmed",
                                  (json_int_t)p->pub_confirmed, "unconfirmed",
                                  (json_int_t)p->pub_unconfirmed));
    pthread_mutex_unlock(&p->lock);
    return status;
}
