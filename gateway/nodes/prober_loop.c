/* prober_loop — the probe loop: rounds, the quorum tip, the chain record and reorg
 * detection, behind nodes/prober.h. The request path's view of what it finds is prober_view.c. */
#define _LGPL_SOURCE
#include "nodes/prober.h"
#include "nodes/prober_state.h"

#include "nodes/node_url.h"
#include "xg_log.h"
#include "xg_clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu-bp.h>

/* ---- the node list ------------------------------------------------------------------- */

/* Rebuilds the table from the registry, keeping the state of nodes whose row is unchanged.
 * Called with the lock held, between rounds (no call in flight). */
static void sync_nodes(struct prober *p)
{
    nodes_read_lock();
    const struct node_set *set = nodes_current(p->registry);
    size_t n = set->count;
    struct prober_node *fresh = calloc(n ? n : 1, sizeof *fresh);
    if (!fresh) {
        nodes_read_unlock();
        return; /* keep the old table; the next round tries again */
    }
    for (size_t i = 0; i < n; i++) {
        const struct node_info *info = &set->nodes[i];
        struct prober_node *old = prober_find_node(p, info->id);
        if (old && old->info.revision == info->revision && strcmp(old->info.url, info->url) == 0) {
            fresh[i] = *old;
        } else {
            health_node_init(&fresh[i].h, !p->took_in_nodes);
            fresh[i].tip_distance = -1;
        }
        fresh[i].info = *info;
    }
    nodes_read_unlock();
    free(p->nodes);
    p->nodes = fresh;
    p->count = n;
    p->took_in_nodes |= n > 0;
}

/* ---- one round ----------------------------------------------------------------------- */

static void on_probe_done(const struct up_result *res, void *arg)
{
    struct probe_call *call = arg;
    struct prober *p = call->p;
    pthread_mutex_lock(&p->lock);
    struct prober_node *n = prober_find_node(p, call->node_id);
    if (n) {
        long http = res->outcome == UP_OK ? res->http_status : 0;
        char *body = res->outcome == UP_OK ? up_result_take_body(res) : NULL;
        switch (call->kind) {
        case PROBE_INFO:
            n->info_http = http;
            n->info_body = body;
            break;
        case PROBE_HEADER:
            n->header_http = http;
            n->header_body = body;
            break;
        case PROBE_VERSION:
            n->version_http = http;
            n->version_body = body;
            break;
        }
        /* The latency is the health calls'; get_version waits its turn behind them on the
         * node's one probe connection. */
        double ms = res->seconds * 1000.0;
        if (call->kind != PROBE_VERSION && ms > n->rtt_ms)
            n->rtt_ms = ms;
    }
    p->pending--;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    free(call);
}

static bool submit_call(struct prober *p, const struct prober_node *n, const char *path,
                        const char *body, enum probe_kind kind,
                        void (*done)(const struct up_result *, void *))
{
    struct probe_call *call = malloc(sizeof *call);
    if (!call)
        return false;
    *call = (struct probe_call){p, n->info.id, kind};
    char url[512];
    static const struct up_header headers[] = {{"Content-Type", "application/json"}};
    struct up_job job;
    if (!up_job_init(&job, url, sizeof url, n->info.url, path, (long)p->opt.timeout_ms, done,
                     call)) {
        char shown[512];
        node_url_redact(n->info.url, shown, sizeof shown);
        xg_log(XG_LOG_ERROR, "probe_url_too_long", "node %s: %s%s", n->info.name, shown, path);
        free(call); /* a URL cut short is never sent */
        return false;
    }
    job.max_connections = n->info.max_connections;
    up_job_post(&job, body, strlen(body));
    up_job_headers(&job, headers, 1);
    if (!up_submit(p->up, &job)) {
        free(call);
        return false;
    }
    return true;
}

/* Sends the round's calls: to every node due, or in a publication round to those that
 * published. Lock held; returns with p->pending set. */
static void send_probes(struct prober *p, int64_t now, bool publication)
{
    static const char info_req[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"get_info\"}";
    static const char header_req[] =
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"get_last_block_header\"}";
    static const char version_req[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"get_version\"}";
    for (size_t i = 0; i < p->count; i++) {
        struct prober_node *n = &p->nodes[i];
        n->probed_this_round = health_probe_due(&n->h, now) && (!publication || n->published);
        n->info_http = n->header_http = n->version_http = 0;
        n->rtt_ms = 0;
        if (!n->probed_this_round)
            continue;
        n->published = false;
        n->pub_checking = n->pub_length;
        n->pub_length = 0;
        if (submit_call(p, n, "/json_rpc", info_req, PROBE_INFO, on_probe_done))
            p->pending++;
        if (submit_call(p, n, "/json_rpc", header_req, PROBE_HEADER, on_probe_done))
            p->pending++;
        if (submit_call(p, n, "/json_rpc", version_req, PROBE_VERSION, on_probe_done))
            p->pending++;
    }
}

static void wait_pending(struct prober *p)
{
    while (p->pending > 0)
        pthread_cond_wait(&p->cond, &p->lock);
}

static void log_transition(const struct prober_node *n, bool was_dropped)
{
    if (n->h.dropped && !was_dropped)
        xg_log(XG_LOG_ERROR, "node_dropped",
               "node %s failed past the ceiling: out of rotation until re-enabled "
               "(UPDATE its row in the nodes table)",
               n->info.name);
    else if (n->h.up)
        xg_log(XG_LOG_INFO, "node_up", "node %s is up (height %lld, %.1f ms)", n->info.name,
               (long long)n->h.last.height, n->h.ema_ms);
    else
        xg_log(XG_LOG_WARN, "node_down", "node %s is down (%s)", n->info.name,
               !n->h.last.responded      ? "no answer"
               : !n->h.last.status_ok    ? "status not OK"
               : n->h.last.misfit        ? n->misfit
               : !n->h.last.synchronized ? "not synchronized"
               : n->h.last.busy_syncing  ? "busy syncing"
                                         : "behind its target height");
}

/* Whether the probe bore out what the node announced (nothing announced: no count). */
static void check_publication(struct prober *p, struct prober_node *n)
{
    if (n->pub_checking <= 0)
        return;
    if (n->h.last.responded && n->h.last.height >= n->pub_checking)
        p->pub_confirmed++;
    else
        p->pub_unconfirmed++;
    n->pub_checking = 0;
}

/* Whether the node fits the pool (fit.h), from this round's answers; a node that did not
 * answer OK (no answer, BUSY) keeps what it told before, and fits or not as before. A change
 * is logged. Lock held. */
static void observe_fit(struct prober *p, struct prober_node *n, struct health_probe *probe)
{
    if (!probe->responded || !probe->status_ok) {
        probe->misfit = n->misfit[0] != '\0';
        return;
    }
    fit_facts_parse(&n->facts, n->info_http, n->info_body, n->version_http, n->version_body);
    char reason[FIT_REASON_LEN];
    probe->misfit = !fit_check(&n->facts, &p->opt.fit, reason, sizeof reason);
    if (strcmp(reason, n->misfit) != 0) {
        if (probe->misfit)
            xg_log(XG_LOG_WARN, "node_refused", "node %s does not fit the pool: %s", n->info.name,
                   reason);
        else
            xg_log(XG_LOG_INFO, "node_fits", "node %s fits the pool again", n->info.name);
        memcpy(n->misfit, reason, sizeof n->misfit);
    }
}

/* Folds the answers in; lock held. A node not probed in a round at the interval counts as
 * not responsive; in a publication round it keeps its last answer's standing. */
static void observe_round(struct prober *p, int64_t now, bool publication)
{
    for (size_t i = 0; i < p->count; i++) {
        struct prober_node *n = &p->nodes[i];
        if (!n->probed_this_round) {
            if (!publication)
                n->responsive = false;
            continue;
        }
        struct health_probe probe;
        health_probe_parse(&probe, n->info_http, n->info_body, n->header_http, n->header_body,
                           n->rtt_ms);
        observe_fit(p, n, &probe);
        free(n->info_body);
        free(n->header_body);
        free(n->version_body);
        n->info_body = n->header_body = n->version_body = NULL;
        bool was_dropped = n->h.dropped;
        if (health_node_observe(&n->h, &probe, now, &p->opt.health) || n->h.dropped != was_dropped)
            log_transition(n, was_dropped);
        /* A node that does not fit is not of the pool: no vote, no source of the chain. */
        n->responsive = n->h.last.responded && n->h.last.status_ok && !n->h.last.misfit;
        check_publication(p, n);
    }
}

static struct health_quorum compute_quorum(struct prober *p)
{
    struct health_chain_view *views = calloc(p->count ? p->count : 1, sizeof *views);
    struct health_quorum q = {.degraded = true};
    if (!views)
        return q;
    for (size_t i = 0; i < p->count; i++) {
        const struct prober_node *n = &p->nodes[i];
        views[i].responsive = n->responsive;
        views[i].history = n->h.history;
        /* Own nodes (primary and standby) vote; a third party's never does (with no own node
         * answering, its tip is still the one served, degraded: health_quorum_compute), nor
         * does a node that does not fit the pool (fit.h): it is not counted among the voters. */
        views[i].non_voting = !nodes_own(&n->info) || n->misfit[0] != '\0';
    }
    q = health_quorum_compute(views, p->count);
    free(views);
    return q;
}

/* ---- the quorum chain record and reorgs ---------------------------------------------- */

static void on_range_done(const struct up_result *res, void *arg)
{
    struct probe_call *call = arg;
    struct prober *p = call->p;
    pthread_mutex_lock(&p->lock);
    p->range_http = res->outcome == UP_OK ? res->http_status : 0;
    p->range_body = res->outcome == UP_OK ? up_result_take_body(res) : NULL;
    p->pending--;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    free(call);
}

/* Parses get_block_headers_range into hashes; false unless it is complete and ends at
 * top_hash. */
static bool parse_range(const char *body, int64_t first, size_t n, const char *top_hash,
                        char (*out)[HEALTH_HASH_LEN + 1])
{
    json_t *root = body ? json_loads(body, 0, NULL) : NULL;
    const json_t *headers = json_object_get(json_object_get(root, "result"), "headers");
    bool ok = json_array_size(headers) == n;
    for (size_t i = 0; ok && i < n; i++) {
        const json_t *h = json_array_get(headers, i);
        const char *hash = json_string_value(json_object_get(h, "hash"));
        ok = json_integer_value(json_object_get(h, "height")) == first + (int64_t)i && hash &&
             strlen(hash) == HEALTH_HASH_LEN;
        if (ok)
            memcpy(out[i], hash, HEALTH_HASH_LEN + 1);
    }
    ok = ok && strcmp(out[n - 1], top_hash) == 0;
    json_decref(root);
    return ok;
}

/* Fetches the quorum chain's last headers from a node on the tip and compares them with
 * the previous record. Lock held on entry and exit; released while waiting. */
static void refresh_chain(struct prober *p, const struct health_quorum *q)
{
    const struct prober_node *source = NULL;
    for (size_t i = 0; i < p->count && !source; i++)
        if (p->nodes[i].responsive && p->nodes[i].h.last.height == q->height &&
            strcmp(p->nodes[i].h.last.top_hash, q->hash) == 0)
            source = &p->nodes[i];
    if (!source)
        return;
    int64_t top = q->height - 1;
    int64_t first = top - (CHAIN_RECORD - 1) > 0 ? top - (CHAIN_RECORD - 1) : 0;
    size_t n = (size_t)(top - first + 1);
    char body[160];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"get_block_headers_range\","
             "\"params\":{\"start_height\":%lld,\"end_height\":%lld}}",
             (long long)first, (long long)top);
    p->range_body = NULL;
    if (!submit_call(p, source, "/json_rpc", body, PROBE_INFO, on_range_done))
        return;
    p->pending++;
    wait_pending(p);
    char fresh[CHAIN_RECORD][HEALTH_HASH_LEN + 1];
    bool ok = p->range_http == 200 && parse_range(p->range_body, first, n, q->hash, fresh);
    free(p->range_body);
    p->range_body = NULL;
    if (!ok)
        return;
    if (p->chain_n > 0) {
        int64_t fork =
            health_fork_point((const char(*)[HEALTH_HASH_LEN + 1]) p->chain, p->chain_n,
                              p->chain_first, (const char(*)[HEALTH_HASH_LEN + 1]) fresh, n, first);
        int64_t old_top = p->chain_first + (int64_t)p->chain_n - 1;
        /* A chain that got shorter lost its blocks above the new top. */
        if (top < old_top && (fork == INT64_MAX || fork > top))
            fork = top;
        if (fork != INT64_MAX)
            cache_reorg(p->cache, fork);
        if (fork < 0)
            xg_log(XG_LOG_WARN, "reorg",
                   "the quorum chain changed deeper than %d blocks: "
                   "cache purged",
                   HEALTH_REORG_MAX);
        else if (fork != INT64_MAX)
            xg_log(XG_LOG_WARN, "reorg",
                   "the quorum chain changed above height %lld: cache "
                   "epoch bumped",
                   (long long)fork);
    }
    memcpy(p->chain, fresh, n * sizeof fresh[0]);
    p->chain_n = n;
    p->chain_first = first;
}

static void log_quorum_change(const struct prober_quorum *was, const struct health_quorum *q)
{
    bool fresh_known = q->height > 0;
    if (!fresh_known)
        return;
    if (q->degraded && (!was->known || !was->degraded))
        xg_log(XG_LOG_WARN, "quorum_degraded",
               "no majority of the %zu configured own nodes agrees on a tip (%zu answered): "
               "serving degraded from the highest node (height %lld), immutable cache writes "
               "suspended",
               q->voters, q->responsive, (long long)q->height);
    else if (!q->degraded && was->known && was->degraded)
        xg_log(XG_LOG_INFO, "quorum_restored",
               "%zu of %zu configured own nodes agree on height %lld", q->agreeing, q->voters,
               (long long)q->height);
}

static void publish_quorum(struct prober *p, const struct health_quorum *q)
{
    size_t healthy = 0, up = 0;
    for (size_t i = 0; i < p->count; i++) {
        struct prober_node *n = &p->nodes[i];
        n->tip_distance =
            health_tip_distance(n->h.history, q, (const char(*)[HEALTH_HASH_LEN + 1]) p->chain,
                                p->chain_n, p->chain_first);
        if (n->h.up && !n->h.dropped) {
            up++;
            if (n->tip_distance == 0)
                healthy++;
        }
    }
    struct prober_quorum fresh = {
        .known = q->height > 0,
        .degraded = q->degraded,
        .height = q->height,
        .healthy = healthy,
        .up = up,
        .agreeing = q->agreeing,
        .voters = q->voters,
    };
    memcpy(fresh.hash, q->hash, sizeof fresh.hash);
    log_quorum_change(&p->quorum, q);
    p->quorum = fresh;
}

/* The nodes' suspected mismatches, settled against the quorum tip now (honesty.h). Lock held. */
static void settle_suspicions(struct prober *p)
{
    const char *tip = p->quorum.known && !p->quorum.degraded ? p->quorum.hash : NULL;
    int64_t now = xg_monotonic_ms();
    for (size_t i = 0; i < p->count; i++) {
        struct prober_node *n = &p->nodes[i];
        if (honesty_settle(&n->honesty, tip, now, &p->opt.honesty))
            xg_log(XG_LOG_WARN, "node_misbehaving",
                   "node %s: %d answers differed from the other own nodes' within %lld s; it "
                   "serves no read for %lld s",
                   n->info.name, p->opt.honesty.limit, (long long)(p->opt.honesty.window_ms / 1000),
                   (long long)((n->honesty.out_until_ms - now) / 1000));
    }
}

/* One round: at the interval (or prober_probe_now) every node due; for publications
 * (`publication`) only the nodes that published, which prober_probe_now does not count. */
static void run_round(struct prober *p, bool publication)
{
    int64_t now = xg_monotonic_ms();
    pthread_mutex_lock(&p->lock);
    p->pub_asked = false;
    if (publication) {
        p->pub_rounds++;
    } else {
        p->round_asked = false;
        p->rounds_started++;
    }
    sync_nodes(p);
    send_probes(p, now, publication);
    wait_pending(p);
    observe_round(p, xg_monotonic_ms(), publication);
    struct health_quorum q = compute_quorum(p);
    /* The chain record is compared with the quorum tip itself, not with the quorum last
     * published: a degraded round publishes the tip without recording it, and a failed
     * refresh records nothing, and either way the next agreeing round must refresh (and
     * so bump the cache epoch) before the tip is published as agreed. */
    bool recorded = p->chain_n > 0 && strcmp(p->chain[p->chain_n - 1], q.hash) == 0;
    if (!q.degraded && !recorded)
        refresh_chain(p, &q);
    publish_quorum(p, &q);
    settle_suspicions(p);
    if (!publication)
        p->rounds_done++;
    int64_t end = xg_monotonic_ms();
    atomic_store(&p->last_round_took_ms, end - now);
    atomic_store(&p->last_round_end_ms, end);
    atomic_fetch_add(&p->rounds_ended, 1);
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

static void *prober_loop(void *arg)
{
    struct prober *p = arg;
    rcu_register_thread();
    int64_t next_round = xg_monotonic_ms();
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        int64_t now = xg_monotonic_ms();
        bool full = p->round_asked || now >= next_round;
        if (full || p->pub_asked) {
            pthread_mutex_unlock(&p->lock);
            run_round(p, !full);
            pthread_mutex_lock(&p->lock);
            if (full)
                next_round = now + p->opt.interval_ms;
            continue;
        }
        struct timespec until = xg_monotonic_deadline(next_round - now);
        while (!p->stop && !p->round_asked && !p->pub_asked &&
               pthread_cond_timedwait(&p->cond, &p->lock, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&p->lock);
    rcu_unregister_thread();
    return NULL;
}

struct prober *prober_start(const struct prober_options *opt, struct node_registry *nodes,
                            struct up_engine *up, struct cache *cache, char *err, size_t errlen)
{
    struct prober *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->opt = *opt;
    hedge_budget_init(&p->hedges);
    p->registry = nodes;
    p->up = up;
    p->cache = cache;
    atomic_init(&p->last_round_end_ms, xg_monotonic_ms());
    atomic_init(&p->last_round_took_ms, 0);
    atomic_init(&p->rounds_ended, 0);
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cond, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&p->thread, NULL, prober_loop, p) != 0) {
        snprintf(err, errlen, "cannot start the prober thread");
        pthread_cond_destroy(&p->cond);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
    }
    return p;
}

bool prober_probe_now(struct prober *p, int64_t wait_ms)
{
    pthread_mutex_lock(&p->lock);
    uint64_t want = p->rounds_started + 1; /* a round that starts after this call */
    p->round_asked = true;
    pthread_cond_broadcast(&p->cond);
    struct timespec until = xg_monotonic_deadline(wait_ms);
    while (!p->stop && p->rounds_done < want &&
           pthread_cond_timedwait(&p->cond, &p->lock, &until) != ETIMEDOUT)
        ;
    bool done = p->rounds_done >= want;
    pthread_mutex_unlock(&p->lock);
    return done;
}

void prober_publication(void *prober, int32_t node_id, const struct blockpub_chain *chain)
{
    struct prober *p = prober;
    pthread_mutex_lock(&p->lock);
    struct prober_node *n = prober_find_node(p, node_id);
    if (n) {
        n->published = true;
        if (chain->length > n->pub_length)
            n->pub_length = chain->length;
        p->pub_asked = true;
        pthread_cond_broadcast(&p->cond);
    }
    pthread_mutex_unlock(&p->lock);
}

void prober_pub_stats(struct prober *p, struct prober_pub_stats *out)
{
    pthread_mutex_lock(&p->lock);
    *out = (struct prober_pub_stats){p->pub_rounds, p->pub_confirmed, p->pub_unconfirmed};
    pthread_mutex_unlock(&p->lock);
}

void prober_stop(struct prober *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p->nodes);
    free(p);
}
