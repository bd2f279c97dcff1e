/* proxy_work — a request's node-side state, shared by proxy's parts: the read's attempts
 * and hedges (proxy_attempt), storing and serving from the cache (proxy_store), the
 * broadcast (broadcast), and the entry points with the following of another read's flight
 * (proxy). The helpers here are those every part answers through.
 *
 * Ownership: req->px is allocated by proxy_work_ensure and freed by proxy_request_free
 * (proxy.h); a held answer's body is px's until answered or released. Everything runs on
 * the engine's loop thread (gateway/nodes/upstream.h). */
#ifndef PROXY_WORK_H
#define PROXY_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "serve/request.h"
#include "core/hold.h"
#include "nodes/nodes.h"
#include "nodes/prober.h"
#include "nodes/upstream.h"
#include "rpc/agree.h"
#include "rpc/plan.h"
#include "serve/proxy_confirm.h"
#include "serve/proxy_facts.h"

#define PROXY_MAX_CANDIDATES 8

/* Whether and under which key this request's answer may be stored, at the quorum tip the
 * request was dispatched at. */
struct store_plan {
    enum plan_cache store;
    uint8_t key[CACHE_KEY_LEN];
    uint64_t generation;
    int64_t deep; /* settled: the highest block height that counts as settled */
    /* A chain supplement (plan.settles) may also be stored as settled, under this key (the
     * request alone), at generation. */
    bool settles;
    uint8_t settled_key[CACHE_KEY_LEN];
};

#define PROXY_MAX_INFLIGHT 2 /* a read's attempt and its hedge */

/* One call of a read to one node. It outlives its request when the request no longer
 * waits for it (a hedge's loser, a client gone): req is then NULL, and the callback only
 * reports the node's outcome and frees it. */
struct proxy_attempt {
    struct gw_request *req;
    struct gw_context *ctx;
    struct node_info node;
    enum gw_endpoint endpoint; /* how its answer is read */
    bool hedge;
};

/* One own node's answer to a checked read (rpc/proxy_agree.h). */
struct agree_answer {
    struct node_info node;
    long status;
    char *body; /* owned until served or let go */
    size_t len;
    char type[96];
    struct proxy_answer_facts facts;
};

/* A checked read's answers so far, and the deadline of the node it waits for. */
struct proxy_agree {
    bool on;     /* the row is checked (methods.h agree) */
    bool agreed; /* the answer being stored is one two own nodes gave (plan_answer.agreed) */
    char tip[HEALTH_HASH_LEN + 1]; /* the quorum tip when the read was sent */
    struct agree_answer got[AGREE_MAX_ANSWERS];
    unsigned n;
    struct hold_entry wait_timer;
};

/* A request's node side (req->px). */
struct proxy_work {
    enum proxy_phase phase;
    struct node_info candidates[PROXY_MAX_CANDIDATES];
    size_t ncandidates, next; /* next: the candidate the next attempt uses */
    struct node_info current; /* the node of the attempt in flight */
    unsigned failures;        /* failed attempts so far (a retry is allowed after 1) */
    bool need_tip;            /* plan route tip: only nodes on the quorum tip */
    /* The tenant's rules (rpc/consistency.h): the chain height an answer must not be
     * below, the nodes that accepted its last transaction (0: any), and whether the read
     * has already waited for the nodes to reach the floor. */
    int64_t floor;
    uint64_t only_nodes;
    bool waited;
    struct hold_entry tip_wait;
    /* A negative or pruned answer held while a second node is asked. */
    char *held_body;
    size_t held_len;
    long held_status;
    char held_type[96];
    struct proxy_answer_facts held_facts;
    struct store_plan store; /* caching of this request's answer */
    /* Identical misses in flight (cache/flight.h): this request leads its key's flight, or
     * follows it and looks again at follow_timer. */
    bool leading;
    struct hold_entry follow_timer;
    /* Attempts in flight, and the hedge timer of the phase's first one. */
    struct gw_request *req;
    struct proxy_attempt *inflight[PROXY_MAX_INFLIGHT];
    size_t ninflight;
    struct hold_entry hedge_timer;
    /* Nodes given up on as too slow (a hedge won): not asked again for this request. */
    int32_t slow[PROXY_MAX_INFLIGHT];
    size_t nslow;
    struct broadcast *bc; /* a broadcast's calls (gateway/serve/broadcast.h; NULL for reads) */
    struct proxy_agree agree;
    /* A confirmation's deadline (the hedge rule): its node has not answered in time. */
    struct hold_entry confirm_timer;
};

/* req->px, allocated on first use: false when out of memory. */
__attribute__((warn_unused_result)) bool proxy_work_ensure(struct gw_request *req);

/* 502 in the client's shape. why is ours and fit for a tenant: it names a node by its
 * proxy_node_ref at most. node (NULL: none) and detail (the node client's error text,
 * which may carry host names and addresses; NULL: none) go to the operators' line only. */
void proxy_answer_unavailable(struct gw_request *req, const char *why, const struct node_info *node,
                              const char *detail);

/* The last attempt failed without an answer to pass on: the node's id and outcome for the
 * tenant, the node client's error text for the log. */
void proxy_answer_node_failed(struct gw_request *req, const struct up_result *res);

/* Lets go of an answer held for a confirmation. */
void proxy_release_held(struct proxy_work *px);

/* Keeps the answer res (facts f) while a second node is asked; takes its body. */
void proxy_hold_answer(struct proxy_work *px, const struct up_result *res,
                       const struct proxy_answer_facts *f);

/* Answers req with the answer held for a confirmation, as it was. */
void proxy_answer_held(struct gw_request *req);

/* The request no longer waits for its attempts in flight (a good answer came, the phase
 * changed, or it ends): each finishes on its own; the hedge timer is stopped. slow: the
 * nodes are remembered as too slow to ask again. */
void proxy_abandon_inflight(struct gw_request *req, bool slow);

/* The key a request's flight is led under: a chain supplement's settled key (the same at
 * every tip), else its cache key. */
const uint8_t *proxy_flight_key(const struct proxy_work *px);

/* Ends the flight this request leads, if it leads one. */
void proxy_land_flight(struct gw_request *req);

/* The answer is in req: the held one is let go and the request handed back to server. */
void proxy_hand_back(struct gw_request *req);

/* No node healthy yet (start-up, or all down): the configured nodes in their order as the
 * candidates, said loudly (X-Xmrgate-Degraded). Returns how many. */
size_t proxy_fallback_nodes(struct gw_request *req);

/* X-Xmrgate-Degraded: no-quorum while the nodes disagree on the tip. */
void proxy_mark_degraded(struct gw_request *req, const struct prober_quorum *q);

#endif
