/* bl_metrics — billing's Prometheus metrics, read at scrape time: invoices by state (and
 * how long the oldest has sat in each state), payments by state with the piconero they
 * carry, the poller's cycles, failures and last cycle time, the view-only wallet's height
 * and its lag behind monerod, whether this instance leads, the exchange rate's age, and
 * PostgreSQL's state; the webhook outbox (its backlog and the age of its oldest pending
 * event, read at most every BL_METRICS_OUTBOX_EVERY_MS, and the failed attempts by reason);
 * XMR402 challenges issued, proofs answered, proofs held waiting for their transaction and
 * refusals by step and error code; and the
 * API's requests by route pattern and status class with a latency histogram. Nothing that
 * identifies a buyer (invoice, address, token) is a label.
 *
 * Piconero sums are exact integers in PostgreSQL; a Prometheus sample is a float64, exact
 * up to 2^53 piconero (about 9,007 XMR) and rounded beyond.
 *
 * Ownership: bl_metrics owns its registry, its PostgreSQL connection (for the aggregates)
 * and its HTTP client (for monerod's height); the sources are borrowed and must outlive
 * bl_metrics_free. */
#ifndef BL_METRICS_H
#define BL_METRICS_H

#include "api/api.h"

#include <stdbool.h>
#include <stddef.h>

/* The outbox query runs at most this often, however often /metrics is scraped. */
#define BL_METRICS_OUTBOX_EVERY_MS 5000

struct bl_metrics;
struct xg_metrics;
struct poller;
struct price_source;
struct xg_dbwatch;
struct xg_guard_counts;
struct hook_sender;

struct bl_metrics_sources {
    const char *conninfo;   /* copied */
    const char *daemon_url; /* monerod, for the wallet's lag ("" = unknown); copied */
    struct poller *poller;
    struct price_source *prices;
    struct xg_dbwatch *dbwatch;
    const struct xg_guard_counts *clients; /* the API's slow-client closes and refusals */
    struct hook_sender *hooks;             /* the webhook sender's failed attempts */
    const struct api *api;                 /* the XMR402 proofs held (api_held_proofs) */
};

/* NULL when out of memory. */
struct bl_metrics *bl_metrics_new(const struct bl_metrics_sources *src);
void bl_metrics_free(struct bl_metrics *m);

/* The registry to serve on GET /metrics. */
struct xg_metrics *bl_metrics_registry(struct bl_metrics *m);

/* The observer to give api_observe: counts each API answer (valid until bl_metrics_free,
 * so stop the API first). */
struct api_observer bl_metrics_api_observer(struct bl_metrics *m);

/* Pure rules, exposed for table tests. */
enum bl_metrics_status_class {
    BL_METRICS_2XX,
    BL_METRICS_3XX,
    BL_METRICS_4XX,
    BL_METRICS_5XX,
    BL_METRICS_DROPPED, /* status 0: no complete answer */
    BL_METRICS_OTHER_STATUS
};
enum bl_metrics_status_class bl_metrics_status_class(unsigned status);

/* The XMR402 step a route path is: 0 challenge, 1 verify, -1 neither. */
int bl_metrics_xmr402_step(const char *route_path);

/* The histogram's upper bounds (seconds), 5 ms to 10 s. */
extern const double bl_metrics_latency_bounds[];
extern const size_t bl_metrics_latency_nbounds;

#endif
