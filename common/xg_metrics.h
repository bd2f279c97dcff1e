/* xg_metrics — a small Prometheus registry: counters, gauges and histograms with labels
 * drawn from small sets, rendered in the text exposition format 0.0.4.
 *
 * Cardinality is bounded by construction. Every label has a value set declared up front:
 *   - a fixed set (a NULL-terminated list, e.g. method classes or HTTP statuses); a value
 *     outside it folds into "other" (xg_metric_label_index);
 *   - or a set filled at run time (xg_metric_labels_dynamic, e.g. node names from the nodes
 *     table) of at most `max` values, after which new values fold into "other". Values are
 *     never removed, so an index stays valid for the life of the registry.
 * A family holds one series per combination of its labels' values, allocated when it is
 * registered (at most XG_METRICS_MAX_SERIES per family). Never give a label a value that
 * identifies a customer (tenant id, token, address, client IP): the sets make that hard —
 * a dynamic set is for operator-controlled names only.
 *
 * Hot path: updates address a series by label indexes (no string work, no allocation, no
 * lock): one relaxed atomic add per counter, one atomic store per gauge, and three atomic
 * updates per histogram observation. Rendering reads the atomics without stopping
 * writers: a scrape may see a histogram's count and buckets a few observations apart,
 * which Prometheus tolerates.
 *
 * Values that are read rather than counted (a node's height, the cache size) are set by
 * collectors: callbacks the registry runs right before each render.
 *
 * Output: counters and histograms show only the series that have moved (a family with no
 * labels always shows its one series); gauges show every series that has been set. Help
 * lines and label values are escaped as the format requires.
 *
 * Ownership: the registry owns every family and label set it hands out (freed with
 * xg_metrics_free); names, help texts and fixed value lists must be string literals or
 * otherwise outlive the registry. Registration and collectors are for start-up, one
 * thread; updates and rendering are thread-safe. */
#ifndef XG_METRICS_H
#define XG_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XG_METRICS_MAX_LABELS  4     /* labels per family */
#define XG_METRICS_MAX_SERIES  16384 /* series per family: the product of its label set sizes */
#define XG_METRICS_MAX_BUCKETS 24    /* histogram buckets, +Inf excluded */
#define XG_METRICS_VALUE_MAX   63    /* longest dynamic label value kept (bytes) */
#define XG_METRICS_OTHER       "other"

struct xg_metrics;
struct xg_metric;
struct xg_metric_labels;

enum xg_metric_type { XG_METRIC_COUNTER, XG_METRIC_GAUGE, XG_METRIC_HISTOGRAM };

struct xg_metrics *xg_metrics_new(void);
void xg_metrics_free(struct xg_metrics *reg);

/* A label with a fixed value set (values: NULL-terminated, not including "other", which is
 * appended). NULL on a bad label name or OOM. */
struct xg_metric_labels *xg_metric_labels_fixed(struct xg_metrics *reg, const char *name,
                                                const char *const *values);

/* A label whose values are added at run time, up to max (plus "other"). */
struct xg_metric_labels *xg_metric_labels_dynamic(struct xg_metrics *reg, const char *name,
                                                  unsigned max);

/* The index of value in the set, adding it to a dynamic set if there is room; "other"
 * when it is not in a fixed set or a dynamic set is full. Lock-free for values already
 * present (a scan of the set); adding one takes the registry's lock. */
unsigned xg_metric_label_index(struct xg_metric_labels *labels, const char *value);

/* The number of values including "other" (dynamic sets: their capacity). */
unsigned xg_metric_label_count(const struct xg_metric_labels *labels);

/* Registers a family. labels: nlabels label sets (may be shared between families).
 * Histograms need bounds: nbounds strictly increasing upper bounds (+Inf is implicit).
 * NULL when a name is invalid or taken, the series would exceed XG_METRICS_MAX_SERIES, or
 * the bounds are bad. */
struct xg_metric *xg_metric_counter(struct xg_metrics *reg, const char *name, const char *help,
                                    struct xg_metric_labels *const *labels, size_t nlabels);
struct xg_metric *xg_metric_gauge(struct xg_metrics *reg, const char *name, const char *help,
                                  struct xg_metric_labels *const *labels, size_t nlabels);
struct xg_metric *xg_metric_histogram(struct xg_metrics *reg, const char *name, const char *help,
                                      struct xg_metric_labels *const *labels, size_t nlabels,
                                      const double *bounds, size_t nbounds);

/* Hot-path updates. idx: one index per label of the family, in order (NULL when it has
 * none); an index out of range is our bug and is clamped to "other". A NULL family is
 * ignored, so a daemon may run without a registry (tests, tools). */
void xg_metric_add(struct xg_metric *m, const unsigned *idx, uint64_t n);
void xg_metric_inc(struct xg_metric *m, const unsigned *idx);
void xg_metric_set(struct xg_metric *m, const unsigned *idx, double value);
void xg_metric_observe(struct xg_metric *m, const unsigned *idx, double value);

/* Sets a counter to a total kept by another module (a collector publishing, say, the
 * cache's hit count). The other module guarantees it never goes down. */
void xg_metric_store(struct xg_metric *m, const unsigned *idx, uint64_t total);

/* Clears every series of a gauge family to "never set" (a collector that republishes a
 * changing set of series, e.g. nodes, calls this first). */
void xg_metric_reset(struct xg_metric *m);

/* Reads a series back (tests, and /status-style JSON): a counter's value, a gauge's value
 * (NaN when never set), a histogram's count. */
double xg_metric_value(struct xg_metric *m, const unsigned *idx);

/* Runs before every render, on the rendering thread. At most 16 per registry. */
typedef void (*xg_metrics_collect_fn)(void *ctx);
__attribute__((warn_unused_result)) bool
xg_metrics_add_collector(struct xg_metrics *reg, xg_metrics_collect_fn fn, void *ctx);

/* Runs the collectors, then renders every family. Returns a malloc'd NUL-terminated text
 * (caller frees) and its length in *len; NULL when out of memory. */
char *xg_metrics_render(struct xg_metrics *reg, size_t *len);

/* The Content-Type of the rendered text. */
#define XG_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Pure helpers, exposed for table tests. */
bool xg_metrics_name_valid(const char *name);       /* [a-zA-Z_:][a-zA-Z0-9_:]* */
bool xg_metrics_label_name_valid(const char *name); /* [a-zA-Z_][a-zA-Z0-9_]*, no "__" prefix */

/* Each registered family's name, in registration order: for tools that check which names a
 * daemon exports. Returns NULL past the end. */
const char *xg_metrics_family_name(const struct xg_metrics *reg, size_t i);

#endif
