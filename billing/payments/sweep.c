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

/* Runs the named query with $1 = keep (a number) and $2 = batch: every sweep's two
 * parameters. NULL on a database error. */
static PGresult *run_batch(struct xg_pg *pg, const char *query, int64_t keep, int batch)
{
    char keep_text[24], limit[24];
    snprintf(keep_text, sizeof keep_text, "%lld", (long long)(keep > 0 ? keep : 0));
    snprintf(limit, sizeof limit, "%d", batch);
    const char *params[] = {keep_text, limit};
    return xg_pg_exec(pg, query, 2, params);
}

/* As run_batch for a DELETE; *deleted says how many rows went. */
static bool delete_batch(struct xg_pg *pg, const char *query, int64_t keep, int batch,
                         int64_t *deleted)
{
    PGresult *res = run_batch(pg, query, keep, batch);
    *deleted = res ? strtoll(PQcmdTuples(res), NULL, 10) : 0;
    PQclear(res);
    return res != NULL;
}

bool sweep_free_run(struct xg_pg *pg, int64_t keep_s, int batch, int64_t *deleted)
{
    if (!delete_batch(pg, "bl_free_tenants_sweep", keep_s, batch, deleted))
        return false;
    char limit[24];
    snprintf(limit, sizeof limit, "%d", batch);
    const char *prune[] = {limit};
    PGresult *res = xg_pg_exec(pg, "bl_free_grants_prune", 1, prune);
    PQclear(res);
    return res != NULL;
}

bool sweep_run(struct xg_pg *pg, int64_t keep_s, int batch, int64_t *deleted)
{
    return delete_batch(pg, "bl_xmr402_challenges_sweep", keep_s, batch, deleted);
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
    *daily = *regional = 0;
    PGresult *res = run_batch(pg, "bl_usage_prune", keep_days, batch);
    if (!res)
        return false;
    if (PQntuples(res) == 1) {
        *daily = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
        *regional = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
    }
    PQclear(res);
    return true;
}
