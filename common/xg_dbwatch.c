/* xg_dbwatch — PostgreSQL readiness, checked off the request path. */
#include "xg_dbwatch.h"

#include "xg_log.h"
#include "xg_migrate.h"
#include "xg_pg.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DBWATCH_PERIOD_MS 1000

struct xg_dbwatch {
    char *conninfo;
    pthread_t thread;
    pthread_mutex_t lock;
    volatile sig_atomic_t stop;
    enum xg_db_state state; /* under lock */
    char reason[256];       /* under lock */
};

static const char *const no_queries[] = {NULL};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

bool xg_dbwatch_wait_schema(const char *conninfo, volatile sig_atomic_t *stop, char *err,
                            size_t errlen)
{
    struct xg_pg *pg = xg_pg_new(conninfo, no_queries);
    bool ok = false;
    if (!pg) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    if (!xg_pg_connect_backoff(pg, stop)) {
        snprintf(err, errlen, "stopped before PostgreSQL was reachable");
        goto out;
    }
    enum xg_schema_verdict verdict;
    ok = xg_schema_check(xg_pg_conn(pg), &verdict, err, errlen) &&
         (verdict == XG_SCHEMA_CURRENT || verdict == XG_SCHEMA_AHEAD);
out:
    xg_pg_free(pg);
    return ok;
}

/* Logs each change of state once; a database ahead of this build also when it moves on
 * (another expand migration). */
static void set_verdict(struct xg_dbwatch *w, enum xg_db_state state, const char *reason)
{
    pthread_mutex_lock(&w->lock);
    bool ready = state == XG_DB_OK || state == XG_DB_AHEAD;
    if (state == XG_DB_AHEAD && (state != w->state || strcmp(reason, w->reason) != 0))
        xg_log(XG_LOG_INFO, "schema_ahead", "%s", reason);
    else if (state != w->state)
        xg_log(ready ? XG_LOG_INFO : XG_LOG_WARN, ready ? "db_ready" : "db_not_ready", "%s",
               reason);
    w->state = state;
    snprintf(w->reason, sizeof w->reason, "%s", reason);
    pthread_mutex_unlock(&w->lock);
}

static void check_once(struct xg_dbwatch *w, struct xg_pg *pg)
{
    char err[256] = "";
    if (!xg_pg_alive(pg) && !xg_pg_connect(pg)) {
        snprintf(err, sizeof err, "PostgreSQL unreachable: %s", xg_pg_last_error(pg));
        set_verdict(w, XG_DB_UNREACHABLE, err);
        return;
    }
    enum xg_schema_verdict verdict;
    if (!xg_schema_check(xg_pg_conn(pg), &verdict, err, sizeof err)) {
        /* A connection that broke under the query is an outage, not a schema verdict. */
        bool broke = !xg_pg_ok(pg);
        if (broke) {
            char why[sizeof err + 32];
            snprintf(why, sizeof why, "PostgreSQL unreachable: %s", err);
            xg_pg_disconnect(pg);
            set_verdict(w, XG_DB_UNREACHABLE, why);
        } else {
            set_verdict(w, XG_DB_SCHEMA, err);
        }
        return;
    }
    switch (verdict) {
    case XG_SCHEMA_CURRENT:
        set_verdict(w, XG_DB_OK, "ok");
        return;
    case XG_SCHEMA_AHEAD:
        set_verdict(w, XG_DB_AHEAD, err);
        return;
    case XG_SCHEMA_BEHIND:
    case XG_SCHEMA_CONTRACTED:
        set_verdict(w, XG_DB_SCHEMA, err);
        return;
    }
}

static void *watch_loop(void *arg)
{
    struct xg_dbwatch *w = arg;
    struct xg_pg *pg = xg_pg_new(w->conninfo, no_queries);
    while (pg && !w->stop) {
        check_once(w, pg);
        for (int i = 0; i < DBWATCH_PERIOD_MS / 50 && !w->stop; i++)
            sleep_ms(50);
    }
    xg_pg_free(pg);
    return NULL;
}

struct xg_dbwatch *xg_dbwatch_start(const char *conninfo)
{
    struct xg_dbwatch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->conninfo = strdup(conninfo);
    snprintf(w->reason, sizeof w->reason, "not checked yet");
    pthread_mutex_init(&w->lock, NULL);
    if (!w->conninfo || pthread_create(&w->thread, NULL, watch_loop, w) != 0) {
        pthread_mutex_destroy(&w->lock);
        free(w->conninfo);
        free(w);
        return NULL;
    }
    return w;
}

void xg_dbwatch_stop(struct xg_dbwatch *w)
{
    if (!w)
        return;
    w->stop = 1;
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->lock);
    free(w->conninfo);
    free(w);
}

enum xg_db_state xg_dbwatch_state(struct xg_dbwatch *w, char *reason, size_t len)
{
    pthread_mutex_lock(&w->lock);
    enum xg_db_state state = w->state;
    if (reason && len > 0)
        snprintf(reason, len, "%s", w->reason);
    pthread_mutex_unlock(&w->lock);
    return state;
}

bool xg_dbwatch_ready(struct xg_dbwatch *w, char *reason, size_t len)
{
    enum xg_db_state state = xg_dbwatch_state(w, reason, len);
    return state == XG_DB_OK || state == XG_DB_AHEAD;
}

void xg_dbwatch_schema_note(struct xg_dbwatch *w, char *note, size_t len)
{
    char reason[256];
    if (len == 0)
        return;
    note[0] = '\0';
    if (xg_dbwatch_state(w, reason, sizeof reason) == XG_DB_AHEAD)
        snprintf(note, len, "%s", reason);
}

enum xg_readiness xg_dbwatch_readiness(enum xg_db_state state, bool serves_without_db)
{
    switch (state) {
    case XG_DB_OK:
    case XG_DB_AHEAD:
        return XG_READINESS_READY;
    case XG_DB_UNCHECKED:
    case XG_DB_UNREACHABLE:
        return serves_without_db ? XG_READINESS_DEGRADED : XG_READINESS_NOT;
    case XG_DB_SCHEMA:
        return XG_READINESS_NOT;
    }
    return XG_READINESS_NOT;
}
