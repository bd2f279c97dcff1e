/* prober — watches every node semantically and decides which may serve.
 *
 * One thread. Every interval it sends get_info, get_last_block_header and get_version to
 * every node due for a probe, in parallel through the upstream engine, each with a hard
 * timeout; checks that the node fits the pool (gateway/nodes/fit.h: its network, RPC version
 * and restricted mode; one that does not is never healthy and has no vote); folds the
 * answers into the per-node health state (gateway/nodes/health.h: hysteresis, cooldown, ceiling,
 * EMA latency); computes the quorum tip (own nodes vote; public ones only while no own node
 * answers); when the tip moves, fetches the last
 * HEALTH_REORG_MAX + 1 headers of the quorum chain from a node on it and compares them with
 * the previous record: a changed hash at a height seen before is a reorg, and the cache
 * epoch of every height above the fork point is bumped (cache_reorg).
 *
 * The node list comes from the node registry (pgsync publishes it from the nodes table): a
 * node added while the gateway runs starts down and must earn `rise` good probes (the nodes
 * of the first load need one, health_node_init); a removed node is forgotten; a
 * node whose row changed (its revision) starts afresh — that is how an operator re-enables
 * a node dropped after the failure ceiling (any UPDATE of its row).
 *
 * A node's ZMQ publication of a new tip (blocksub.h) calls prober_publication: the prober
 * then runs a round at once for the nodes that published since the last one — the same
 * probes, folded in the same way, the other nodes counting with their last answers — and
 * moves the quorum tip (and with it the key of every tip answer in the cache) when the
 * probes show it moved. The publication itself is never believed: only the probe's answers
 * are. The rounds at the probe interval go on whether or not a node publishes.
 *
 * The request path reads the state through prober_rank / prober_quorum and feeds client
 * request outcomes back (prober_answered, prober_report: the circuit breaker; the requests
 * outstanding per node, which ranking weighs). The state sits behind one
 * mutex held for microseconds; the functions copy out what the caller keeps.
 *
 * Transitions are logged (node_down, node_up, node_dropped, quorum_degraded,
 * quorum_restored, reorg) with the node's name; requests are never logged one by one. */
#ifndef PROBER_H
#define PROBER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "nodes/blockpub.h"
#include "nodes/fit.h"
#include "nodes/health.h"
#include "nodes/hedge.h"
#include "nodes/honesty.h"
#include "nodes/nodes.h"
#include "nodes/upstream.h"

struct prober_options {
    int64_t interval_ms;      /* between probe rounds [2000] */
    int64_t timeout_ms;       /* hard deadline of one probe call [1500] */
    int64_t historical_lag;   /* blocks a node may lag and still serve historical reads [5] */
    double latency_bucket_ms; /* latencies this close rank as equals [5] */
    struct health_params health;
    struct hedge_options hedge; /* budget_pct 0: reads are never hedged */
    struct honesty_params honesty;
    struct fit_settings fit; /* what a node must be to be healthy (all off: any node) */
};

struct prober;

/* Starts the thread; the first round runs at once. up should be an engine of the
 * prober's own (one connection per node is enough), so that probes never queue behind
 * client requests. The registry, engine and cache must outlive the prober. NULL with a message in
 * err on failure. */
struct prober *prober_start(const struct prober_options *opt, struct node_registry *nodes,
                            struct up_engine *up, struct cache *cache, char *err, size_t errlen);

/* Starts a round now (the registry just got its first nodes) and waits up to wait_ms for
 * it to end: true when it did. Any thread but the prober's. */
bool prober_probe_now(struct prober *p, int64_t wait_ms);

/* A node announced a new chain tip (blocksub's on_tip; any thread): re-probe it at once.
 * Publications that arrive while a round runs are taken by the next one. */
void prober_publication(void *prober, int32_t node_id, const struct blockpub_chain *chain);

/* Publications taken and what the probes then showed (for prober_status and metrics). */
struct prober_pub_stats {
    uint64_t rounds;      /* rounds run for publications */
    uint64_t confirmed;   /* publications whose node then showed at least that chain length */
    uint64_t unconfirmed; /* publications the node's probe did not bear out */
};
void prober_pub_stats(struct prober *p, struct prober_pub_stats *out);

/* Stops and joins the thread (waits for the round's calls to end). Before up_engine_stop. */
void prober_stop(struct prober *p);

struct prober_quorum {
    bool known;     /* at least one round has found a tip */
    bool degraded;  /* no majority: serving from the highest node */
    int64_t height; /* chain length at the quorum tip */
    char hash[HEALTH_HASH_LEN + 1];
    size_t healthy;  /* nodes up and on the tip */
    size_t up;       /* nodes up and not dropped, on the tip or not */
    size_t agreeing; /* own nodes on the quorum tip (0 when degraded) */
    size_t voters;   /* own nodes configured (primary and standby) that fit the pool: the
                      * majority is of these */
};

struct prober_quorum prober_quorum(struct prober *p);

struct prober_pick {
    bool need_tip;      /* only nodes on the quorum tip (else: within historical_lag) */
    bool want_full;     /* full (unpruned) nodes first; pruned ones only when none is up */
    int32_t exclude_id; /* a node not to return (0: none) */
    /* Nodes whose last probe showed a shorter chain rank after the others (rank.h);
     * 0: none. */
    int64_t min_height;
    /* Of the nodes that may serve (own ones while one can: rank_servable), only those
     * whose bit (nodes_bit) is set, or all of them when none is; 0: no such filter. */
    uint64_t only_nodes;
};

/* Up to max nodes that may serve now, best first (gateway/nodes/rank.h), rotating among equals.
 * Nodes whose circuit breaker is open (or half-open with its trial out) are left out, and
 * so are public nodes while an own node may serve (rank_servable). */
size_t prober_rank(struct prober *p, const struct prober_pick *pick, struct node_info *out,
                   size_t max);

/* Every node that is up, not dropped and takes broadcasts (node_info.broadcast: own nodes
 * unless their row says otherwise, public ones only when it says so), whatever its
 * breaker. */
size_t prober_healthy(struct prober *p, struct node_info *out, size_t max);

/* Call right before sending a client request to node id: false when its breaker no
 * longer allows it (then pick another). Takes the half-open trial when there is one. A node
 * not yet taken in by a round (the registry's fallback order) is allowed. */
bool prober_attempt_begin(struct prober *p, int32_t id);

/* A client request's outcome on node id: success = a usable answer. */
void prober_report(struct prober *p, int32_t id, bool success);

/* delta 1: a client request is about to be sent to node id (or queued for one of its
 * connections); it counts as outstanding there, which ranks the node behind less loaded
 * ones (rank.h), until prober_answered. delta -1: it was not sent after all. */
void prober_sent(struct prober *p, int32_t id, int delta);

/* A hedge to another node answered first while node id still had the read. The breaker
 * counts it as a failure only when the node has answered no client request usably for
 * the hedge cap (the longest a hedge waits, 500 ms by default): a frozen node then leaves
 * rotation after breaker_failures such reads instead of after as many timeouts, while a
 * node that is slow under load, or stalled for a moment by its machine, but answering is
 * not paused for breaker_open_ms, which would pile its load on the others. */
void prober_overtaken(struct prober *p, int32_t id);

/* The answer (or failure) of a request counted by prober_sent: no longer outstanding, its
 * outcome told to the breaker as prober_report does, and, for a good answer, its latency
 * ms (>= 0) added to the node's hedge window (its hedge delay follows them). */
void prober_answered(struct prober *p, int32_t id, bool success, double ms);

/* A checked answer of node id (rpc/agree.h) agreed with the other own nodes', or was the
 * odd one out of a read sent at quorum tip `tip`: a suspicion that each probe round settles
 * (honesty.h); enough mismatches take the node out of service. */
void prober_agreement(struct prober *p, int32_t id, bool agreed, const char *tip);

/* How long to wait for node id before hedging a read to the next node (hedge.h); -1 when
 * hedging is off. A read was sent: the budget earns its share. */
int64_t prober_hedge_delay(struct prober *p, int32_t id);

/* Takes one hedge from the shared budget: false when none is left (or hedging is off). */
bool prober_hedge_take(struct prober *p);

/* Readiness check "quorum": whether this replica can serve — a tip is known and a node is
 * healthy on it (degraded: any node up). Ready and degraded, it still returns true and writes
 * the degraded state into reason (the readiness body shows it; the status stays 200, so a
 * disagreement between nodes does not pull every replica out of a load balancer at once).
 * Ready and not degraded, reason is "". */
bool prober_ready(struct prober *p, char *reason, size_t len);

/* The prober's own liveness (health_prober_stalled), read without the prober's lock. */
struct prober_liveness {
    bool stalled;          /* no round ended for limit_ms */
    int64_t age_ms;        /* since the last round ended (since the start before any did) */
    int64_t limit_ms;      /* health_stall_limit_ms of the interval and the probe timeout */
    int64_t last_round_ms; /* how long the last round took */
    uint64_t rounds;       /* rounds ended, at the interval and for publications */
};
struct prober_liveness prober_liveness(struct prober *p);

/* Readiness check "prober": false, with the stall and its age in reason, when no round has
 * ended for three rounds' time — the node states and the quorum tip the request path
 * routes by would be that old. */
bool prober_alive(struct prober *p, char *reason, size_t len);

/* The state for an admin endpoint or a debugging dump: a new JSON object (caller decrefs). */
json_t *prober_status(struct prober *p);

#endif
