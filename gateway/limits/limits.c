/* limits — the request path's entry to the burst bucket and the daily quota. */
#include "limits/limits.h"

#include "limits/fleet.h"
#include "limits/usage_flush.h"
#include "xg_str.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gw_limits {
    bool enabled;
    int64_t max_delay_us;
    struct rl_table *buckets;
    struct quota_table *quota;
    struct usage_flush *flusher;
    struct fleet *fleet; /* NULL: every replica gives a tenant its whole burst */
};

struct gw_limits *limits_start(bool enabled, int64_t max_delay_us, const char *conninfo)
{
    struct gw_limits *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->enabled = enabled;
    l->max_delay_us = max_delay_us;
    if (!enabled)
        return l;
    l->buckets = rl_table_new();
    l->flusher = usage_flush_new(conninfo);
    if (!l->buckets || !l->flusher)
        goto fail;
    l->quota = quota_table_new(usage_flush_kick, l->flusher);
    if (!l->quota || !usage_flush_start(l->flusher, l->quota, l->buckets))
        goto fail;
    return l;
fail:
    limits_stop(l);
    return NULL;
}

void limits_stop(struct gw_limits *l)
{
    if (!l)
        return;
    fleet_stop(l->fleet);
    usage_flush_stop(l->flusher); /* the last flush reads the quota table */
    quota_table_free(l->quota);
    rl_table_free(l->buckets);
    free(l);
}

bool limits_share_burst(struct gw_limits *l, const char *conninfo)
{
    if (!limits_enabled(l) || l->fleet)
        return true;
    l->fleet = fleet_start(conninfo);
    return l->fleet != NULL;
}

uint32_t limits_fleet_replicas(const struct gw_limits *l)
{
    return l ? fleet_replicas(l->fleet) : 1;
}

bool limits_enabled(const struct gw_limits *l)
{
    return l && l->enabled;
}

bool limits_flush_stats(struct gw_limits *l, struct usage_flush_stats *out)
{
    if (!l || !l->enabled || !l->flusher)
        return false;
    usage_flush_stats(l->flusher, out);
    return true;
}

void limits_rfc3339(int64_t unix_s, char out[21])
{
    time_t t = (time_t)unix_s;
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, 21, "1970-01-01T00:00:00Z");
}

void limits_view_format(struct limits_view *view)
{
    view->set = true;
    xg_str_i64(view->limit, view->quota.limit);
    xg_str_i64(view->remaining, view->quota.remaining);
    xg_str_i64(view->reset, view->quota.reset);
}

void limits_burst_refusal(const struct rl_limit *lim, int64_t retry_after_ms,
                          struct limits_refusal *out)
{
    int64_t seconds = (retry_after_ms + 999) / 1000;
    if (seconds < 1)
        seconds = 1;
    int64_t wait_ms = lim->max_delay_us / 1000;
    struct limits_refusal r;
    snprintf(r.retry_after, sizeof r.retry_after, "%" PRId64, seconds);
    snprintf(r.message, sizeof r.message,
             "rate limit exceeded: burst limit of %" PRId32 " requests per second "
             "(bursts of %" PRId32 ", queued up to %" PRId64 ".%03" PRId64 " s); retry in %" PRId64
             " s",
             lim->rate, lim->size, wait_ms / 1000, wait_ms % 1000, seconds);
    *out = r;
}

void limits_quota_refusal(const struct quota_status *quota, unsigned weight, int64_t now_unix,
                          struct limits_refusal *out)
{
    int64_t seconds = quota->reset - now_unix;
    if (seconds < 1)
        seconds = 1;
    char reset[21];
    limits_rfc3339(quota->reset, reset);
    struct limits_refusal r;
    snprintf(r.retry_after, sizeof r.retry_after, "%" PRId64, seconds);
    if (quota->remaining > 0)
        snprintf(r.message, sizeof r.message,
                 "daily quota nearly exhausted: this call costs %u of the %" PRId64
                 " left of %" PRId64 "; the quota resets at %s",
                 weight, quota->remaining, quota->limit, reset);
    else
        snprintf(r.message, sizeof r.message,
                 "daily quota of %" PRId64 " exhausted; it resets at %s", quota->limit, reset);
    *out = r;
}

struct rl_limit limits_burst_limit(const struct tenant_row *tenant, int64_t max_delay_us,
                                   int64_t now_us, int64_t deadline_us)
{
    int64_t left = deadline_us - now_us;
    int64_t wait = max_delay_us < left ? max_delay_us : left;
    return (struct rl_limit){
        .rate = tenant->burst_rps, .size = tenant->burst_size, .max_delay_us = wait > 0 ? wait : 0};
}

enum limits_burst limits_burst(struct gw_limits *l, const struct tenant_row *tenant, int64_t now_us,
                               int64_t deadline_us, int64_t now_unix, struct limits_view *view,
                               int64_t *delay_us, struct limits_refusal *why)
{
    *delay_us = 0;
    if (!limits_enabled(l)) {
        view->set = false;
        return LIMITS_BURST_NOW;
    }
    quota_peek(l->quota, tenant->id, tenant->daily_quota, now_unix, &view->quota);
    limits_view_format(view);
    struct rl_limit lim = limits_burst_limit(tenant, l->max_delay_us, now_us, deadline_us);
    lim.replicas = fleet_replicas(l->fleet);
    struct rl_verdict v = rl_take(l->buckets, tenant->id, &lim, now_us);
    if (!v.allowed) {
        limits_burst_refusal(&lim, v.retry_after_ms, why);
        return LIMITS_BURST_REFUSED;
    }
    *delay_us = v.delay_us;
    return v.delay_us > 0 ? LIMITS_BURST_HOLD : LIMITS_BURST_NOW;
}

bool limits_charge(struct gw_limits *l, const struct tenant_row *tenant, unsigned weight,
                   int64_t now_unix, struct limits_view *view, struct limits_refusal *why)
{
    if (!limits_enabled(l))
        return true;
    bool counted =
        quota_charge(l->quota, tenant->id, tenant->daily_quota, weight, now_unix, &view->quota);
    limits_view_format(view);
    if (!counted)
        limits_quota_refusal(&view->quota, weight, now_unix, why);
    return counted;
}

void limits_status(struct gw_limits *l, const struct tenant_row *tenant, int64_t now_unix,
                   struct quota_status *out)
{
    if (limits_enabled(l)) {
        quota_peek(l->quota, tenant->id, tenant->daily_quota, now_unix, out);
        return;
    }
    struct quota_counts none = {0};
    quota_counts_status(&none, quota_day(now_unix), tenant->daily_quota, out);
}

char *limits_usage_body(const struct tenant_row *tenant, const struct quota_status *quota,
                        size_t *len)
{
    char valid_until[21], resets_at[21];
    limits_rfc3339(tenant->valid_until, valid_until);
    limits_rfc3339(quota->reset, resets_at);
    json_t *obj =
        json_pack("{s:s, s:s, s:I, s:I, s:I, s:s, s:i, s:i, s:s, s:s}", "status", "OK", "tier",
                  tenant->tier_id, "daily_quota", (json_int_t)quota->limit, "used_today",
                  (json_int_t)quota->used, "remaining_today", (json_int_t)quota->remaining,
                  "resets_at", resets_at, "burst_rps", (int)tenant->burst_rps, "burst_size",
                  (int)tenant->burst_size, "valid_until", valid_until, "handle", tenant->handle);
    if (!obj)
        return NULL;
    char *text = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(obj);
    if (text)
        *len = strlen(text);
    return text;
}
