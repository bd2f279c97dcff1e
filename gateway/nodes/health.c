/* health — semantic node health, hysteresis, cooldown, breaker, quorum (pure). */
#include "nodes/health.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

struct health_params health_params_default(void)
{
    return (struct health_params){
        .fall = 2,
        .rise = 3,
        .max_target_lag = 2,
        .cooldown_base_ms = 60 * 1000,
        .cooldown_ceiling_ms = 17LL * 3600 * 1000,
        .ema_alpha = 0.3,
        .breaker_failures = 3,
        .breaker_open_ms = 5000,
    };
}

/* ---- probes ------------------------------------------------------------------------- */

static bool copy_hash(char out[HEALTH_HASH_LEN + 1], const json_t *v)
{
    const char *s = json_string_value(v);
    if (!s || strlen(s) != HEALTH_HASH_LEN)
        return false;
    memcpy(out, s, HEALTH_HASH_LEN + 1);
    return true;
}

/* The JSON-RPC result of an HTTP 200 answer, or NULL (the caller owns *root). */
static const json_t *rpc_result(long http, const char *body, json_t **root)
{
    *root = NULL;
    if (http != 200 || !body)
        return NULL;
    *root = json_loads(body, 0, NULL);
    const json_t *result = json_object_get(*root, "result");
    return json_is_object(result) ? result : NULL;
}

static bool status_is_ok(const json_t *result)
{
    const char *s = json_string_value(json_object_get(result, "status"));
    return s && strcmp(s, "OK") == 0;
}

void health_probe_parse(struct health_probe *out, long info_http, const char *info_body,
                        long header_http, const char *header_body, double rtt_ms)
{
    memset(out, 0, sizeof *out);
    out->rtt_ms = rtt_ms;
    json_t *info_root, *header_root;
    const json_t *info = rpc_result(info_http, info_body, &info_root);
    const json_t *header = rpc_result(header_http, header_body, &header_root);
    if (!info || !header)
        goto out;
    out->responded = true;
    const json_t *bh = json_object_get(header, "block_header");
    out->status_ok = status_is_ok(info) && status_is_ok(header) && json_is_object(bh);
    out->synchronized = json_is_true(json_object_get(info, "synchronized"));
    out->busy_syncing = json_is_true(json_object_get(info, "busy_syncing"));
    out->target_height = json_integer_value(json_object_get(info, "target_height"));
    /* The header names the top block itself; get_info's height may be one block apart
     * when a block lands between the two calls. The header wins. */
    if (out->status_ok) {
        out->height = json_integer_value(json_object_get(bh, "height")) + 1;
        if (!copy_hash(out->top_hash, json_object_get(bh, "hash")) ||
            !copy_hash(out->prev_hash, json_object_get(bh, "prev_hash")))
            out->status_ok = false;
    }
out:
    json_decref(info_root);
    json_decref(header_root);
}

bool health_probe_good(const struct health_probe *p, const struct health_params *hp)
{
    if (!p->responded || !p->status_ok || !p->synchronized || p->busy_syncing || p->misfit)
        return false;
    /* target_height 0: the node knows of no higher peer, it is at the tip. */
    int64_t target = p->target_height > 0 ? p->target_height : p->height;
    return target - p->height <= hp->max_target_lag;
}

/* ---- per-node state ------------------------------------------------------------------ */

void health_node_init(struct health_node *n, bool at_startup)
{
    memset(n, 0, sizeof *n);
    n->up = false;
    n->at_startup = at_startup;
    n->breaker = HEALTH_BREAKER_CLOSED;
}

bool health_probe_due(const struct health_node *n, int64_t now_ms)
{
    return !n->dropped && now_ms >= n->next_probe_ms;
}

/* Remembers a node's top; a top whose parent contradicts what we remember at the height
 * below means the node switched chains: forget what it showed before. */
static void history_push(struct health_node *n, const struct health_probe *p)
{
    struct health_history_entry *h = n->history;
    bool contradicts = false;
    for (size_t i = 0; i < HEALTH_HISTORY; i++) {
        if (h[i].height == p->height - 1 && strcmp(h[i].hash, p->prev_hash) != 0)
            contradicts = true;
        if (h[i].height == p->height && strcmp(h[i].hash, p->top_hash) != 0)
            contradicts = true;
    }
    size_t keep = 0;
    for (size_t i = 0; i < HEALTH_HISTORY; i++) {
        /* Entries at or above the new top are no longer its chain's past. */
        if (contradicts || h[i].height == 0 || h[i].height >= p->height)
            continue;
        h[keep++] = h[i];
    }
    if (keep == HEALTH_HISTORY) {
        memmove(h, h + 1, (HEALTH_HISTORY - 1) * sizeof *h);
        keep--;
    }
    h[keep].height = p->height;
    memcpy(h[keep].hash, p->top_hash, sizeof h[keep].hash);
    for (size_t i = keep + 1; i < HEALTH_HISTORY; i++)
        memset(&h[i], 0, sizeof h[i]);
}

static void observe_bad(struct health_node *n, int64_t now_ms, const struct health_params *hp)
{
    n->good_in_row = 0;
    n->bad_in_row++;
    n->at_startup = false;
    if (n->up && n->bad_in_row >= hp->fall)
        n->up = false;
    if (n->up)
        return;
    if (!n->failing) {
        n->failing = true;
        n->down_since_ms = now_ms;
    }
    int64_t failing = now_ms - n->down_since_ms;
    if (failing >= hp->cooldown_ceiling_ms) {
        n->dropped = true;
        return;
    }
    /* Probed every round for the first base period (a restart or a short freeze comes
     * back quickly), then with a cooldown that doubles after every failed probe. */
    if (failing >= hp->cooldown_base_ms) {
        n->cooldown_ms = n->cooldown_ms ? n->cooldown_ms * 2 : hp->cooldown_base_ms;
        n->next_probe_ms = now_ms + n->cooldown_ms;
    }
}

bool health_node_observe(struct health_node *n, const struct health_probe *p, int64_t now_ms,
                         const struct health_params *hp)
{
    bool was_up = n->up;
    n->last = *p;
    if (p->responded) {
        n->ema_ms =
            n->has_ema ? hp->ema_alpha * p->rtt_ms + (1 - hp->ema_alpha) * n->ema_ms : p->rtt_ms;
        n->has_ema = true;
    }
    if (p->responded && p->status_ok)
        history_push(n, p);
    if (!health_probe_good(p, hp)) {
        observe_bad(n, now_ms, hp);
        return was_up != n->up;
    }
    n->bad_in_row = 0;
    n->good_in_row++;
    n->cooldown_ms = 0;
    n->next_probe_ms = 0;
    if (!n->up && (n->good_in_row >= hp->rise || n->at_startup)) {
        n->up = true;
        n->failing = false;
    }
    return was_up != n->up;
}

void health_breaker_record(struct health_node *n, bool success, int64_t now_ms,
                           const struct health_params *hp)
{
    if (success) {
        n->breaker = HEALTH_BREAKER_CLOSED;
        n->breaker_failures = 0;
        n->trial_in_flight = false;
        return;
    }
    n->breaker_failures++;
    /* A failed trial reopens at once; a closed breaker tolerates a few failures. */
    if (n->breaker == HEALTH_BREAKER_HALF_OPEN || n->breaker_failures >= hp->breaker_failures) {
        n->breaker = HEALTH_BREAKER_OPEN;
        n->breaker_until_ms = now_ms + hp->breaker_open_ms;
        n->trial_in_flight = false;
    }
}

bool health_breaker_allows(struct health_node *n, int64_t now_ms, bool take_trial)
{
    if (n->breaker == HEALTH_BREAKER_OPEN && now_ms >= n->breaker_until_ms)
        n->breaker = HEALTH_BREAKER_HALF_OPEN;
    switch (n->breaker) {
    case HEALTH_BREAKER_CLOSED:
        return true;
    case HEALTH_BREAKER_OPEN:
        return false;
    case HEALTH_BREAKER_HALF_OPEN:
        if (n->trial_in_flight)
            return false;
        if (take_trial)
            n->trial_in_flight = true;
        return true;
    }
    return false;
}

/* ---- quorum ------------------------------------------------------------------------- */

static const struct health_history_entry *top_of(const struct health_history_entry *h)
{
    const struct health_history_entry *top = NULL;
    for (size_t i = 0; i < HEALTH_HISTORY; i++)
        if (h[i].height > 0 && (!top || h[i].height > top->height))
            top = &h[i];
    return top;
}

static bool holds(const struct health_history_entry *h, int64_t height, const char *hash)
{
    for (size_t i = 0; i < HEALTH_HISTORY; i++)
        if (h[i].height == height && strcmp(h[i].hash, hash) == 0)
            return true;
    return false;
}

/* A responsive node's top, or NULL when it showed none. */
static const struct health_history_entry *answered_top(const struct health_chain_view *v)
{
    return v->responsive ? top_of(v->history) : NULL;
}

/* The highest top among responsive nodes, voting ones only when voters_only. */
static const struct health_history_entry *highest_top(const struct health_chain_view *nodes,
                                                      size_t count, bool voters_only)
{
    const struct health_history_entry *highest = NULL;
    for (size_t i = 0; i < count; i++) {
        const struct health_history_entry *top = answered_top(&nodes[i]);
        if (top && !(voters_only && nodes[i].non_voting) &&
            (!highest || top->height > highest->height))
            highest = top;
    }
    return highest;
}

static size_t agreeing_voters(const struct health_chain_view *nodes, size_t count,
                              const struct health_history_entry *c)
{
    size_t agree = 0;
    for (size_t j = 0; j < count; j++)
        if (!nodes[j].non_voting && answered_top(&nodes[j]) &&
            holds(nodes[j].history, c->height, c->hash))
            agree++;
    return agree;
}

struct health_quorum health_quorum_compute(const struct health_chain_view *nodes, size_t count)
{
    struct health_quorum q = {.degraded = true};
    for (size_t i = 0; i < count; i++) {
        if (nodes[i].non_voting)
            continue;
        q.voters++;
        if (answered_top(&nodes[i]))
            q.responsive++;
    }
    /* Candidates: every pair a responsive voter has shown; the highest with a majority of
     * the configured voters. */
    for (size_t i = 0; i < count; i++) {
        if (nodes[i].non_voting || !answered_top(&nodes[i]))
            continue;
        for (size_t k = 0; k < HEALTH_HISTORY; k++) {
            const struct health_history_entry *c = &nodes[i].history[k];
            if (c->height == 0 || (!q.degraded && c->height <= q.height))
                continue;
            size_t agree = agreeing_voters(nodes, count, c);
            if (agree * 2 > q.voters) {
                q.degraded = false;
                q.height = c->height;
                memcpy(q.hash, c->hash, sizeof q.hash);
                q.agreeing = agree;
            }
        }
    }
    if (q.degraded) {
        const struct health_history_entry *highest = highest_top(nodes, count, true);
        if (!highest)
            highest = highest_top(nodes, count, false);
        if (highest) {
            q.height = highest->height;
            memcpy(q.hash, highest->hash, sizeof q.hash);
        }
        q.agreeing = 0;
    }
    return q;
}

int64_t health_tip_distance(const struct health_history_entry *history,
                            const struct health_quorum *q, const char (*chain)[HEALTH_HASH_LEN + 1],
                            size_t n, int64_t chain_first)
{
    const struct health_history_entry *top = top_of(history);
    if (!top || q->height == 0)
        return -1;
    if (holds(history, q->height, q->hash))
        return 0;
    if (top->height >= q->height)
        return -1; /* at or above the tip height without the tip block: another chain */
    int64_t block = top->height - 1;
    if (block < chain_first || block >= chain_first + (int64_t)n)
        return -1;
    if (strcmp(chain[block - chain_first], top->hash) != 0)
        return -1;
    return q->height - top->height;
}

int64_t health_fork_point(const char (*old_chain)[HEALTH_HASH_LEN + 1], size_t old_n,
                          int64_t old_first, const char (*new_chain)[HEALTH_HASH_LEN + 1],
                          size_t new_n, int64_t new_first)
{
    int64_t lo = old_first > new_first ? old_first : new_first;
    int64_t old_end = old_first + (int64_t)old_n, new_end = new_first + (int64_t)new_n;
    int64_t hi = old_end < new_end ? old_end : new_end; /* exclusive */
    int64_t common = -1;
    bool differs = false;
    for (int64_t h = lo; h < hi; h++) {
        bool same = strcmp(old_chain[h - old_first], new_chain[h - new_first]) == 0;
        if (same && !differs)
            common = h;
        if (!same)
            differs = true;
    }
    if (!differs)
        return INT64_MAX;
    return common;
}

int64_t health_stall_limit_ms(int64_t interval_ms, int64_t timeout_ms)
{
    int64_t round_ms = interval_ms > timeout_ms ? interval_ms : timeout_ms;
    return HEALTH_STALL_ROUNDS * (round_ms > 0 ? round_ms : 0);
}

bool health_prober_stalled(int64_t now_ms, int64_t since_ms, int64_t interval_ms,
                           int64_t timeout_ms, int64_t *age_ms)
{
    int64_t age = now_ms > since_ms ? now_ms - since_ms : 0;
    if (age_ms)
        *age_ms = age;
    return age > health_stall_limit_ms(interval_ms, timeout_ms);
}
