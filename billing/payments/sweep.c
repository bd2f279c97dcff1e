/* sweep — see sweep.h. */
#include "payments/sweep.h"

#include <stdio.h>
#include <stdlib.h>

int64_t sweep_keep_s(int64_t retention_s, int64_t late_grace_s)
{
    if (retention_s < 0)
        retention_s = 0;
    if (late_grace_s < 0)
        late_grace_s = 0;
    return retention_s > late_grace_s ? retention_s : late_grace_s;
}

bool sweep_free_run(struct xg_pg *pg, int64_t keep_s, int batch, int64_t *deleted)
{
    char keep[24], limit[24];
    snprintf(keep, sizeof keep, "%lld", (long long)(keep_s > 0 ? keep_s : 0));
    snprintf(limit, sizeof limit, "%d", batch);
    const char *params[] = {keep, limit};
    *deleted = 0;
    PGresult *res = xg_pg_exec(pg, "bl_free_tenants_sweep", 2, params);
    if (!res)
        return false;
    *deleted = strtoll(PQcmdTuples(res), NULL, 10);
    PQclear(res);
    const char *prune[] = {limit};
    res = xg_pg_exec(pg, "bl_free_grants_prune", 1, prune);
    PQclear(res);
    return res != NULL;
}

bool sweep_run(struct xg_pg *pg, int64_t keep_s, int batch, int64_t *deleted)
{
    char keep[24], limit[24];
    snprintf(keep, sizeof keep, "%lld", (long long)keep_s);
    snprintf(limit, sizeof limit, "%d", batch);
    const char *params[] = {keep, limit};
    *deleted = 0;
    PGresult *res = xg_pg_exec(pg, "bl_xmr402_challenges_sweep", 2, params);
    if (!res)
        return false;
    *deleted = strtoll(PQcmdTuples(res), NULL, 10);
    PQclear(res);
    return true;
}

int64_t sweep_usage_keep_days(int64_t retention_s)
{
    if (retention_s <= 0)
        return 0;
    return (retention_s + 86399) / 86400;
}

bool sweep_usage_run(struct xg_pg *pg, int64_t keep_days, int batch, int64_t *daily,
                     int64_t *regional)
{
    char keep[24], limit[24];
    snprintf(keep, sizeof keep, "%lld", (long long)keep_days);
    snprintf(limit, sizeof limit, "%d", batch);
    const char *params[] = {keep, limit};
    *daily = *regional = 0;
    PGresult *res = xg_pg_exec(pg, "bl_usage_prune", 2, params);
    if (!res)
        return false;
    if (PQntuples(res) == 1) {
        *daily = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
        *regional = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    }
    PQclear(res);
    return true;
}
