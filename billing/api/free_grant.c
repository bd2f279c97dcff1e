/* free_grant — see free_grant.h. */
#include "api/free_grant.h"

#include <stdio.h>
#include <stdlib.h>

enum free_grant_verdict free_grant_judge(const struct free_grant_waits *w, int64_t *retry_after_s)
{
    enum free_grant_verdict v = FREE_GRANT_OK;
    if (w->network_hour >= 0)
        v = FREE_GRANT_NETWORK_HOUR;
    if (w->network_day >= 0)
        v = FREE_GRANT_NETWORK_DAY;
    if (w->global_hour >= 0)
        v = FREE_GRANT_GLOBAL_HOUR;
    if (v == FREE_GRANT_OK)
        return v;
    int64_t wait = w->network_hour;
    if (w->network_day > wait)
        wait = w->network_day;
    if (w->global_hour > wait)
        wait = w->global_hour;
    *retry_after_s = wait < 1 ? 1 : wait;
    return v;
}

const char *free_grant_message(enum free_grant_verdict v)
{
    switch (v) {
    case FREE_GRANT_NETWORK_HOUR:
        return "too many free tenants were granted to your network in the last hour; try again "
               "later";
    case FREE_GRANT_NETWORK_DAY:
        return "too many free tenants were granted to your network in the last 24 hours; try "
               "again later";
    case FREE_GRANT_GLOBAL_HOUR:
        return "the free tier has granted all the tenants it may this hour; try again later";
    case FREE_GRANT_OK:
    case FREE_GRANT_DB_ERROR:
        break;
    }
    return "free tenants are unavailable right now";
}

/* A column of bl_free_grant_take: NULL (room) as -1. */
static int64_t wait_of(const PGresult *res, int col)
{
    return PQgetisnull(res, 0, col) ? -1 : strtoll(PQgetvalue(res, 0, col), NULL, 10);
}

enum free_grant_verdict free_grant_take(struct xg_pg *pg, const struct free_grant_bounds *b,
                                        const char *network, const char *client,
                                        int64_t *retry_after_s)
{
    PGresult *res = xg_pg_exec(pg, "bl_free_grant_lock", 0, NULL);
    if (!res)
        return FREE_GRANT_DB_ERROR;
    PQclear(res);
    char hour[24], day[24], global[24];
    snprintf(hour, sizeof hour, "%lld", (long long)b->network_per_hour);
    snprintf(day, sizeof day, "%lld", (long long)b->network_per_day);
    snprintf(global, sizeof global, "%lld", (long long)b->global_per_hour);
    const char *params[] = {network, client, hour, day, global};
    res = xg_pg_exec(pg, "bl_free_grant_take", 5, params);
    if (!res)
        return FREE_GRANT_DB_ERROR;
    struct free_grant_waits w = {wait_of(res, 0), wait_of(res, 1), wait_of(res, 2)};
    PQclear(res);
    return free_grant_judge(&w, retry_after_s);
}
