/* prober_state — the prober's own state, shared by the two halves of nodes/prober.h:
 * the loop (prober_loop.c: rounds, the quorum tip, the chain record) and the request path's view
 * (prober_view.c: ranking, client outcomes, honesty, readiness, status). Nothing outside
 * nodes/prober*.c includes it; everyone else uses prober.h. Every field is read and written
 * under `lock` unless its comment says otherwise. */
#ifndef XG_NODES_PROBER_STATE_H
#define XG_NODES_PROBER_STATE_H

#include "nodes/prober.h"

#include <pthread.h>
#include <stdatomic.h>

#define CHAIN_RECORD (HEALTH_REORG_MAX + 1)

struct prober_node {
    struct node_info info;
    struct health_node h;
    int64_t tip_distance; /* from the last round; -1 unknown or another chain */
    bool probed_this_round;
    bool responsive;      /* its last probe answered with status OK (the quorum's view) */
    bool published;       /* announced a new tip since its last probe was sent */
    int64_t pub_length;   /* the longest chain it announced since then (0: none) */
    int64_t pub_checking; /* what the probe in flight should show */
    /* The round's answers, written by the engine thread under the lock. */
    long info_http, header_http, version_http;
    char *info_body, *header_body, *version_body;
    struct fit_facts facts;      /* what its last answers said of it (nodes/fit.h) */
    char misfit[FIT_REASON_LEN]; /* why it does not fit the pool, "" when it does */
    double rtt_ms;
    struct hedge_window latency; /* client requests' good answers */
    unsigned outstanding;        /* client requests sent to it and not answered (rank.h) */
    int64_t last_good_ms;        /* when it last answered a client request usably (0: never) */
    double client_ms;            /* rank_peak_ewma of its timed good answers' latencies */
    int64_t client_at_ms;        /* when client_ms last took one in (0: never) */
    struct honesty honesty;      /* its checked answers against the other own nodes' */
    uint64_t client_requests;    /* client request outcomes heard (record_outcome) */
    uint64_t client_failures;    /* of which failures */
    double error_rate;           /* moving average of the failures (prober_view.c) */
};

enum probe_kind { PROBE_INFO, PROBE_HEADER, PROBE_VERSION };

/* One job's completion target. */
struct probe_call {
    struct prober *p;
    int32_t node_id;
    enum probe_kind kind;
};

struct prober {
    struct prober_options opt;
    struct node_registry *registry;
    struct up_engine *up;
    struct cache *cache;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;
    size_t pending;   /* calls of the current round not yet completed */
    bool round_asked; /* prober_probe_now: start the next round without waiting */
    bool pub_asked;   /* prober_publication: a node announced a new tip */
    uint64_t pub_rounds, pub_confirmed, pub_unconfirmed;
    uint64_t rounds_started; /* counted under the lock, for prober_probe_now */
    uint64_t rounds_done;
    bool took_in_nodes; /* a round has seen the registry's first nodes (startup is over) */
    /* Liveness, read without the lock (a prober stuck while holding it must still show): when
     * the last round of either kind ended (monotonic ms; the start before any did), how long
     * it took, and how many rounds ended. */
    atomic_int_fast64_t last_round_end_ms;
    atomic_int_fast64_t last_round_took_ms;
    atomic_uint_fast64_t rounds_ended;

    struct prober_node *nodes;
    size_t count;
    struct prober_quorum quorum;
    /* The quorum chain: block hashes for block heights chain_first … chain_first + n − 1. */
    char chain[CHAIN_RECORD][HEALTH_HASH_LEN + 1];
    size_t chain_n;
    int64_t chain_first;
    atomic_uint_fast64_t rotation;
    struct hedge_budget hedges;

    /* The chain-record fetch (one call at a time, on the prober thread). */
    long range_http;
    char *range_body;
};

static inline struct prober_node *prober_find_node(struct prober *p, int32_t id)
{
    for (size_t i = 0; i < p->count; i++)
        if (p->nodes[i].info.id == id)
            return &p->nodes[i];
    return NULL;
}

#endif
