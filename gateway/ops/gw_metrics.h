/* gw_metrics — the gateway's Prometheus metrics: the families, the calls the request path
 * makes to move them, the collectors that read node, quorum, cache, tenant and database
 * state at scrape time, and the slow-request summary.
 *
 * Label sets are closed (gateway/rpc/methods.h gives the method names; unknown names fold into
 * "other"); nodes are labelled by their operator-given name (up to GW_METRICS_MAX_NODES).
 * Nothing that identifies a customer — tenant, token, handle, client address — is ever a
 * label, and no request is logged one by one: a request slower than the threshold is only
 * counted per method, and once a minute one JSON line sums up the slow ones
 * ("slow_requests"), if there were any.
 *
 * Every function here accepts m == NULL and then does nothing, so the request path needs
 * no "are metrics on" test. The hot-path calls are lock-free (xg_metrics.h).
 *
 * Ownership: gw_metrics owns its registry (xg_metrics) and its summary thread; the sources
 * given to gw_metrics_watch are borrowed and must outlive gw_metrics_stop. */
#ifndef GW_METRICS_H
#define GW_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc/methods.h"

struct xg_guard_counts;

#define GW_METRICS_MAX_NODES 32

struct gw_metrics;
struct xg_metrics;
struct prober;
struct cache;
struct tenant_store;
struct gw_limits;
struct xg_dbwatch;

/* How a client request was answered. */
enum gw_outcome {
    GW_OUTCOME_NODE,    /* a node's answer (or the broadcast's) */
    GW_OUTCOME_CACHE,   /* from the answer cache */
    GW_OUTCOME_REFUSED, /* by the gateway itself: auth, limits, denied, bad input */
    GW_OUTCOME_FAILED,  /* no node gave a usable answer in time */
};

/* One call to one node, as the request path saw it. */
enum gw_node_outcome {
    GW_NODE_OK,
    GW_NODE_CONNECT_ERROR, /* refused, reset, DNS … */
    GW_NODE_TIMEOUT,
    GW_NODE_HTTP_ERROR, /* 5xx or an unexpected status */
    GW_NODE_BUSY,       /* status BUSY */
    GW_NODE_BROKEN,     /* reset mid-answer, malformed, too large, cancelled */
};

/* A hedged read: a second node asked (sent), its answer the one served (won), a hedge due
 * but not sent for want of budget (no_budget), or a confirmation whose node had not
 * answered within its hedge delay left for the next node (moved). */
enum gw_hedge_event { GW_HEDGE_SENT, GW_HEDGE_WON, GW_HEDGE_NO_BUDGET, GW_HEDGE_MOVED };

/* A checked read (rpc/agree.h): two own nodes agreed (agreed); two differed and a third
 * sided with one (majority); they differed with no majority, answered 503 (disagreed); only
 * one own node could answer, served marked unverified (unverified) or refused 503
 * (refused). */
enum gw_checked_outcome {
    GW_CHECKED_AGREED,
    GW_CHECKED_MAJORITY,
    GW_CHECKED_DISAGREED,
    GW_CHECKED_UNVERIFIED,
    GW_CHECKED_REFUSED,
};
void gw_metrics_checked(struct gw_metrics *m, enum gw_checked_outcome outcome);

/* A broadcast's per-node outcome. */
enum gw_broadcast_outcome { GW_BCAST_ACCEPTED, GW_BCAST_REJECTED, GW_BCAST_FAILED };

/* Creates the registry and the families. slow_ms: a request at least this slow is counted
 * in the summary (0: no summary). NULL when out of memory. */
struct gw_metrics *gw_metrics_new(int64_t slow_ms);

/* What the collectors read at scrape time (any may be NULL). */
struct gw_metrics_sources {
    struct prober *prober;
    struct cache *cache;
    struct tenant_store *tenants;
    struct gw_limits *limits;
    struct xg_dbwatch *dbwatch;
    /* whether the tenant table follows the database (the gateway wires pgsync_synced here:
     * metrics reads that state without depending on the module that keeps it) */
    bool (*tenants_synced)(void *ctx, char *reason, size_t len);
    void *tenants_synced_ctx;
};

/* Installs the collectors and starts the summary thread. False on failure. */
__attribute__((warn_unused_result)) bool gw_metrics_watch(struct gw_metrics *m,
                                                          const struct gw_metrics_sources *src);

/* Stops the summary thread (logging what it holds) and frees everything. NULL is fine. */
void gw_metrics_stop(struct gw_metrics *m);

/* The front ends' slow-client closes and per-address refusals, which the scrape reads:
 * owned by m, shared by every loop (atomics). NULL when m is. */
struct xg_guard_counts *gw_metrics_client_counts(struct gw_metrics *m);

/* The registry to serve on GET /metrics. */
struct xg_metrics *gw_metrics_registry(struct gw_metrics *m);

/* Changes the slow-request threshold (configuration reload). */
void gw_metrics_set_slow_ms(struct gw_metrics *m, int64_t slow_ms);

/* The TLS certificate in service expires at not_after (Unix seconds): at start and at each
 * reload that replaced it. Never called when the gateway serves plain HTTP. */
void gw_metrics_set_tls_not_after(struct gw_metrics *m, int64_t not_after);

/* ---- the request path ----------------------------------------------------------------- */

/* A client request answered: its method (NULL when it never got that far), HTTP status,
 * outcome and total time in seconds, from the first byte to the queued answer. */
void gw_metrics_request(struct gw_metrics *m, const struct method_info *info, unsigned status,
                        enum gw_outcome outcome, double seconds);

/* A credential that did not authenticate, by what it claimed to be: "digest", "basic",
 * "bearer", "api_key", "path", "none", "malformed", "other". */
void gw_metrics_auth_failure(struct gw_metrics *m, const char *scheme);

/* A 429: quota = the daily quota, else the burst rate. A 402 (XMR402 payment required). */
void gw_metrics_rate_limited(struct gw_metrics *m, bool quota);
/* A request over its burst bucket held for `seconds` instead of refused. */
void gw_metrics_burst_delayed(struct gw_metrics *m, double seconds);
void gw_metrics_payment_required(struct gw_metrics *m);
/* An XMR402 event stream takes one of cap places (all loops together): false when all
 * are taken (nothing counted then). Each true is followed by one _closed. */
bool gw_metrics_xmr402_stream_open(struct gw_metrics *m, long cap);
void gw_metrics_xmr402_stream_closed(struct gw_metrics *m);

/* One call to a node (client traffic, not probes). */
void gw_metrics_node_call(struct gw_metrics *m, const char *node, enum gw_node_outcome outcome,
                          double seconds);

void gw_metrics_hedge(struct gw_metrics *m, enum gw_hedge_event event);

/* A cache miss answered from the cache once an identical request in flight stored its
 * answer (cache/flight.h). */
void gw_metrics_coalesced(struct gw_metrics *m);

/* A read refused because no node had reached the tip its tenant was served (consistency.h). */
void gw_metrics_behind_tip(struct gw_metrics *m);

/* A broadcast: its result (accepted by any node) and each node's outcome. */
void gw_metrics_broadcast(struct gw_metrics *m, bool accepted);
void gw_metrics_broadcast_node(struct gw_metrics *m, const char *node,
                               enum gw_broadcast_outcome outcome);

/* pgsync: a NOTIFY applied, `seconds` after it arrived; a full reload. */
void gw_metrics_notify_applied(struct gw_metrics *m, const char *channel, double seconds);
void gw_metrics_full_reload(struct gw_metrics *m);

/* Pure: the outcome of one node call from the engine's verdict (upstream.h enum
 * up_outcome), the HTTP status and whether the answer said BUSY. */
enum gw_node_outcome gw_metrics_node_outcome(int up_outcome, long http_status, bool busy);

/* Pure: the label for an auth_kind value (auth.h), for gw_metrics_auth_failure. */
const char *gw_metrics_auth_scheme(int auth_kind);

/* Pure: the status label ("200", "429", …; "other" for statuses outside the set). */
const char *gw_metrics_status_label(unsigned status);

#endif
