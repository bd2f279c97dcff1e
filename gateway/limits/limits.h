/* limits — what the request path calls for tenant limits: the burst bucket (ratelimit),
 * the daily quota (quota) and its flusher (usage_flush), behind one switch
 * ([limits] enabled), plus the texts of the 429 answers, the X-RateLimit-* header values
 * and the GET /v1/usage body. server.c stays a caller of three functions.
 *
 * Order on the request path: authenticate → limits_burst (every request of a tenant that
 * it admits costs one burst token; one over the bucket is held by the caller until its
 * token is due, gateway/core/hold.h, or refused when that wait would pass the bound) →
 * classify → limits_charge (the method's quota weight; whatever later answers it — a
 * node or a cache — it is counted here, before dispatch). Answers to an authenticated tenant carry
 * the quota headers from the struct limits_view filled by these calls.
 *
 * Ownership: struct gw_limits owns its tables and flusher thread; limits_stop flushes the
 * last counts (SIGTERM) and frees everything. Strings returned are malloc'd: caller frees. */
#ifndef LIMITS_H
#define LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "limits/quota.h"
#include "limits/ratelimit.h"
#include "state/tenants.h"
#include "limits/usage_flush.h"

/* Where "/v1/usage" lands: the path with a header credential, or what remains after a
 * path token (/v1/<token>/usage). Neither is a monerod path. */
#define LIMITS_USAGE_PATH       "/v1/usage"
#define LIMITS_USAGE_TOKEN_PATH "/usage"

struct gw_limits;

/* The quota as one request saw it: the X-RateLimit-* headers. */
struct limits_view {
    bool set; /* false: no header (limits disabled, or not an authenticated tenant) */
    struct quota_status quota;
    char limit[24], remaining[24], reset[24]; /* the header values, filled by limits_* */
};

/* A refusal: the message for the body and the Retry-After value. */
struct limits_refusal {
    char message[256];
    char retry_after[24]; /* seconds */
};

/* Starts the limits (and, when enabled, the flusher on its own connection to conninfo).
 * max_delay_us bounds how long a request over its burst bucket may be held ([limits]
 * max_delay). NULL when out of memory or the thread cannot start. */
struct gw_limits *limits_start(bool enabled, int64_t max_delay_us, const char *conninfo);
/* Flushes what is counted (bounded wait when PostgreSQL is away) and frees. NULL is fine. */
void limits_stop(struct gw_limits *l);
bool limits_enabled(const struct gw_limits *l);
/* Shares each tenant's burst with the other replicas on the same database ([limits]
 * share_burst, gateway/limits/fleet.h): starts the heartbeat on its own connection. True
 * when it runs (or the limits are off); false when it cannot start. */
__attribute__((warn_unused_result)) bool limits_share_burst(struct gw_limits *l,
                                                            const char *conninfo);
/* Replicas a tenant's burst is shared by now (1 without sharing). */
uint32_t limits_fleet_replicas(const struct gw_limits *l);
/* The usage flusher's counters (metrics). False when the limits are off. */
bool limits_flush_stats(struct gw_limits *l, struct usage_flush_stats *out);

/* What the burst limit says about one request. */
enum limits_burst {
    LIMITS_BURST_NOW,     /* serve it now */
    LIMITS_BURST_HOLD,    /* serve it once *delay_us has passed */
    LIMITS_BURST_REFUSED, /* 429: *why is filled */
};

/* The tenant's tier as its burst bucket applies it, the wait bounded by max_delay_us and
 * by what is left until deadline_us. Pure. */
struct rl_limit limits_burst_limit(const struct tenant_row *tenant, int64_t max_delay_us,
                                   int64_t now_us, int64_t deadline_us);

/* Takes one burst token for the tenant and fills *view with the quota headers. A request
 * over the bucket is held (*delay_us > 0) while its wait fits [limits] max_delay and the
 * request's own deadline (deadline_us, monotonic), and refused beyond. `now_us` is
 * monotonic, `now_unix` wall-clock seconds. With the limits disabled: NOW, no headers. */
__attribute__((warn_unused_result)) enum limits_burst
limits_burst(struct gw_limits *l, const struct tenant_row *tenant, int64_t now_us,
             int64_t deadline_us, int64_t now_unix, struct limits_view *view, int64_t *delay_us,
             struct limits_refusal *why);

/* Counts `weight` against the tenant's daily quota and refreshes *view. Returns false
 * (with *why filled) when there is not enough left for this weight. */
__attribute__((warn_unused_result)) bool
limits_charge(struct gw_limits *l, const struct tenant_row *tenant, unsigned weight,
              int64_t now_unix, struct limits_view *view, struct limits_refusal *why);

/* The tenant's quota status now, without counting (GET /v1/usage). With the limits
 * disabled: nothing used. */
void limits_status(struct gw_limits *l, const struct tenant_row *tenant, int64_t now_unix,
                   struct quota_status *out);

/* Pure: the GET /v1/usage body (malloc'd JSON text, *len set) for the tenant and the
 * quota status: tier, daily_quota, used_today, remaining_today, resets_at, burst_rps,
 * burst_size, valid_until (RFC 3339, UTC). NULL when out of memory. */
char *limits_usage_body(const struct tenant_row *tenant, const struct quota_status *quota,
                        size_t *len);

/* Pure: RFC 3339 UTC text ("2026-11-30T00:00:00Z") of unix seconds into out[21]. */
void limits_rfc3339(int64_t unix_s, char out[21]);

/* Pure: fills the header values of *view from view->quota. */
void limits_view_format(struct limits_view *view);

/* Pure: the refusals' texts. */
void limits_burst_refusal(const struct rl_limit *lim, int64_t retry_after_ms,
                          struct limits_refusal *out);
void limits_quota_refusal(const struct quota_status *quota, unsigned weight, int64_t now_unix,
                          struct limits_refusal *out);

#endif
