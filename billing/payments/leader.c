/* leader — see leader.h. */
#include "payments/leader.h"

#include "xg_log.h"
#include "xg_pg.h"

#include <stdlib.h>
#include <string.h>

struct leader {
    struct xg_pg *pg;
    bool held;
};

struct leader *leader_new(const char *conninfo)
{
    static const char *const no_queries[] = {NULL};
    struct leader *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->pg = xg_pg_new(conninfo, no_queries);
    if (!l->pg) {
        free(l);
        return NULL;
    }
    /* the lock is the session's: a replaced connection would not hold it */
    xg_pg_session_bound(l->pg);
    return l;
}

void leader_free(struct leader *l)
{
    if (!l)
        return;
    leader_release(l);
    xg_pg_free(l->pg);
    free(l);
}

static bool query_true(struct xg_pg *pg, const char *sql)
{
    PGresult *res = xg_pg_exec_sql(pg, sql);
    bool yes = res && PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return yes;
}

static void lost(struct leader *l, const char *why)
{
    l->held = false;
    xg_log(XG_LOG_WARN, "leader_lost", "%s; standing by", why);
}

bool leader_hold(struct leader *l)
{
    if (l->held) {
        /* the lock lives as long as the session: a live session still holds it */
        if (query_true(l->pg, "SELECT true"))
            return true;
        lost(l, "the lock connection broke");
        xg_pg_disconnect(l->pg);
    }
    if (!xg_pg_connect(l->pg))
        return false;
    /* A standby (a conninfo without target_session_attrs=read-write) is no place to lead
     * from: its leader could provision nothing. */
    if (query_true(l->pg, "SELECT CASE WHEN pg_is_in_recovery() THEN false"
                          " ELSE pg_try_advisory_lock(" LEADER_LOCK_KEY ") END")) {
        l->held = true;
        xg_log(XG_LOG_INFO, "leader_elected", "this instance polls the wallet and provisions");
    }
    return l->held;
}

void leader_release(struct leader *l)
{
    if (!l->held)
        return;
    PQclear(xg_pg_exec_sql(l->pg, "SELECT pg_advisory_unlock(" LEADER_LOCK_KEY ")"));
    l->held = false;
    xg_log(XG_LOG_INFO, "leader_released", NULL);
}
