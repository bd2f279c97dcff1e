/* context — what every part of the gateway's request path shares, owned by main and
 * passed to the front ends' and the upstream engine's callbacks (each loop has a copy
 * with its own engine). No globals. */
#ifndef CONTEXT_H
#define CONTEXT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/digest.h"
#include "ops/gw_metrics.h"
#include "serve/gw_config.h"
#include "limits/limits.h"
#include "cache/cache.h"
#include "cache/flight.h"
#include "nodes/nodes.h"
#include "nodes/prober.h"
#include "state/sessions.h"
#include "state/tenants.h"
#include "nodes/upstream.h"

struct hold_set;
struct xmr402_streams;

struct gw_context {
    const struct gw_config *cfg;
    struct tenant_store *tenants;
    struct sessions *sessions; /* per-tenant served tip and accepted nodes (sessions.h) */
    struct node_registry *nodes;
    struct up_engine *up;
    struct digest_verifier *digest;
    struct prober *prober;      /* node health, quorum tip, ranking (prober.h) */
    struct cache *cache;        /* tip and immutable answers (cache.h) */
    struct flight *flight;      /* identical misses in flight share one node call; NULL: off */
    struct hold_set *timers;    /* the loop's timers (hold.h): hedged reads; NULL: none */
    int64_t tip_ttl_ms;         /* how long a tip answer is served: the probe interval */
    int64_t cache_min_depth;    /* blocks below the quorum tip before a height is cached */
    struct gw_limits *limits;   /* burst rate and daily quota (limits.h) */
    struct gw_metrics *metrics; /* counters and histograms (gw_metrics.h); may be NULL */
    struct xmr402_streams *xmr402_streams; /* event streams per payment; NULL: no streams */
    size_t max_body;
    int64_t request_timeout_ms;
    int64_t node_timeout_ms;
    int64_t tip_wait_ms;         /* [nodes] tip_wait (rpc/consistency.h) */
    int64_t read_your_writes_ms; /* [nodes] read_your_writes; 0: off */
    bool serve_unverified;       /* [nodes] serve_unverified (rpc/proxy_agree.h) */
};

#endif
