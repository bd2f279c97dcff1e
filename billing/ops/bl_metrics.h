/* bl_metrics — billing's Prometheus metrics, read at scrape time: invoices by state (and
 * how long the oldest has sat in each state), payments by state with the piconero they
 * carry, the poller's cycles, failures and last cycle time, the view-only wallet's height
 * and its lag behind monerod, whether this instance leads, the exchange rate's age, and
 * PostgreSQL's state. Nothing that identifies a buyer (invoice, address, token) is a label.
 *
 * Piconero sums are exact integers in PostgreSQL; a Prometheus sample is a float64, exact
 * up to 2^53 piconero (about 9,007 XMR) and rounded beyond.
 *
 * Ownership: bl_metrics owns its registry, its PostgreSQL connection (for the aggregates)
 * and its HTTP client (for monerod's height); the sources are borrowed and must outlive
 * bl_metrics_free. */
#ifndef BL_METRICS_H
#define BL_METRICS_H

#include <stdbool.h>

struct bl_metrics;
struct xg_metrics;
struct poller;
struct price_source;
struct xg_dbwatch;
struct xg_guard_counts;

struct bl_metrics_sources {
    const char *conninfo;   /* copied */
    const char *daemon_url; /* monerod, for the wallet's lag ("" = unknown); copied */
    struct poller *poller;
    struct price_source *prices;
    struct xg_dbwatch *dbwatch;
    const struct xg_guard_counts *clients; /* the API's slow-client closes and refusals */
};

/* NULL when out of memory. */
struct bl_metrics *bl_metrics_new(const struct bl_metrics_sources *src);
void bl_metrics_free(struct bl_metrics *m);

/* The registry to serve on GET /metrics. */
struct xg_metrics *bl_metrics_registry(struct bl_metrics *m);

#endif
