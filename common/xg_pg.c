/* xg_pg — one libpq connection with its prepared statements and a transaction runner.
 *
 * A failed call keeps its error text and SQLSTATE in the handle until the next call. A
 * connection found broken is closed at once, so the owner's next xg_pg_connect (or
 * xg_pg_transaction) opens a fresh one and prepares the statements again. */
#include "xg_pg.h"

#include "xg_log.h"
#include "xg_sql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TX_MAX_ATTEMPTS    5
#define BACKOFF_FIRST_MS   100
#define BACKOFF_MAX_MS     5000
#define RETRY_JITTER_MS    20 /* upper bound of the first retry's pause; doubles per retry */
#define SQLSTATE_NO_CONN   "08003"
#define SQLSTATE_CONN_FAIL "08006"

struct xg_pg {
    char *conninfo;
    const char *const *queries;
    PGconn *conn;
    unsigned jitter_seed;
    char error[512];
    char sqlstate[6];
};

struct xg_pg *xg_pg_new(const char *conninfo, const char *const *queries)
{
    struct xg_pg *pg = calloc(1, sizeof *pg);
    if (!pg)
        return NULL;
    pg->conninfo = strdup(conninfo);
    if (!pg->conninfo) {
        free(pg);
        return NULL;
    }
    pg->queries = queries;
    pg->jitter_seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)pg;
    return pg;
}

void xg_pg_free(struct xg_pg *pg)
{
    if (!pg)
        return;
    xg_pg_disconnect(pg);
    free(pg->conninfo);
    free(pg);
}

void xg_pg_disconnect(struct xg_pg *pg)
{
    if (pg->conn)
        PQfinish(pg->conn);
    pg->conn = NULL;
}

bool xg_pg_ok(struct xg_pg *pg)
{
    return pg->conn && PQstatus(pg->conn) == CONNECTION_OK;
}

PGconn *xg_pg_conn(struct xg_pg *pg)
{
    return pg->conn;
}

const char *xg_pg_last_error(struct xg_pg *pg)
{
    return pg->error;
}

const char *xg_pg_last_sqlstate(struct xg_pg *pg)
{
    return pg->sqlstate;
}

static void clear_error(struct xg_pg *pg)
{
    pg->error[0] = '\0';
    pg->sqlstate[0] = '\0';
}

/* libpq messages span lines and pad with spaces and tabs; the log wants one line. */
static void set_error(struct xg_pg *pg, const char *sqlstate, const char *prefix,
                      const char *message)
{
    char raw[sizeof pg->error];
    snprintf(raw, sizeof raw, "%s%s", prefix, message ? message : "");
    size_t n = 0;
    for (const char *p = raw; *p; p++) {
        bool space = *p == ' ' || *p == '\n' || *p == '\r' || *p == '\t';
        if (space && (n == 0 || pg->error[n - 1] == ' '))
            continue;
        pg->error[n++] = space ? ' ' : *p;
    }
    while (n > 0 && pg->error[n - 1] == ' ')
        n--;
    pg->error[n] = '\0';
    snprintf(pg->sqlstate, sizeof pg->sqlstate, "%s", sqlstate ? sqlstate : "");
}

static void on_notice(void *arg, const PGresult *res)
{
    (void)arg;
    const char *severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
    const char *message = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    bool warning = severity && strcmp(severity, "WARNING") == 0;
    xg_log_fields(warning ? XG_LOG_WARN : XG_LOG_DEBUG, "pg_notice",
                  json_pack("{s:s}", "severity", severity ? severity : "?"), "%s",
                  message ? message : "");
}

void xg_pg_log_notices(PGconn *conn)
{
    PQsetNoticeReceiver(conn, on_notice, NULL);
}

static bool prepare_all(struct xg_pg *pg)
{
    for (const char *const *name = pg->queries; name && *name; name++) {
        char *sql = xg_sql_query(*name);
        if (!sql) {
            char what[200];
            snprintf(what, sizeof what, "no query named \"%s\" in sql/", *name);
            set_error(pg, "", "", what);
            return false;
        }
        PGresult *res = PQprepare(pg->conn, *name, sql, 0, NULL);
        free(sql);
        if (PQresultStatus(res) != PGRES_COMMAND_OK) {
            char prefix[200];
            snprintf(prefix, sizeof prefix, "preparing %s: ", *name);
            set_error(pg, PQresultErrorField(res, PG_DIAG_SQLSTATE), prefix,
                      PQresultErrorMessage(res));
            PQclear(res);
            return false;
        }
        PQclear(res);
    }
    return true;
}

bool xg_pg_connect(struct xg_pg *pg)
{
    if (xg_pg_ok(pg))
        return true;
    xg_pg_disconnect(pg);
    clear_error(pg);
    pg->conn = PQconnectdb(pg->conninfo);
    if (!pg->conn || PQstatus(pg->conn) != CONNECTION_OK) {
        set_error(pg, SQLSTATE_CONN_FAIL,
                  "connecting: ", pg->conn ? PQerrorMessage(pg->conn) : "out of memory");
        xg_pg_disconnect(pg);
        return false;
    }
    xg_pg_log_notices(pg->conn);
    if (!prepare_all(pg)) {
        xg_pg_disconnect(pg);
        return false;
    }
    return true;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

bool xg_pg_connect_backoff(struct xg_pg *pg, volatile sig_atomic_t *stop)
{
    long delay = BACKOFF_FIRST_MS;
    while (!(stop && *stop)) {
        if (xg_pg_connect(pg))
            return true;
        xg_log(XG_LOG_WARN, "pg_connect_failed", "%s; retrying in %ld ms", pg->error, delay);
        /* sleep in slices so that a stop request is honoured promptly */
        for (long slept = 0; slept < delay && !(stop && *stop); slept += 50)
            sleep_ms(50);
        delay = delay * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : delay * 2;
    }
    return false;
}

/* Keeps a successful result; records a failure and closes a connection found broken. */
static PGresult *check_result(struct xg_pg *pg, PGresult *res)
{
    ExecStatusType st = PQresultStatus(res);
    if (res && (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK))
        return res;
    const char *sqlstate = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    bool broken = PQstatus(pg->conn) == CONNECTION_BAD;
    if (!sqlstate && broken)
        sqlstate = SQLSTATE_CONN_FAIL;
    set_error(pg, sqlstate, "",
              res && *PQresultErrorMessage(res) ? PQresultErrorMessage(res)
                                                : PQerrorMessage(pg->conn));
    PQclear(res);
    if (broken)
        xg_pg_disconnect(pg);
    return NULL;
}

static bool require_conn(struct xg_pg *pg)
{
    clear_error(pg);
    if (pg->conn)
        return true;
    set_error(pg, SQLSTATE_NO_CONN, "", "not connected to PostgreSQL");
    return false;
}

PGresult *xg_pg_exec(struct xg_pg *pg, const char *name, int nparams, const char *const *params)
{
    if (!require_conn(pg))
        return NULL;
    return check_result(pg, PQexecPrepared(pg->conn, name, nparams, params, NULL, NULL, 0));
}

PGresult *xg_pg_exec_sql(struct xg_pg *pg, const char *sql)
{
    if (!require_conn(pg))
        return NULL;
    return check_result(pg, PQexec(pg->conn, sql));
}

bool xg_pg_sqlstate_retryable(const char *sqlstate)
{
    return sqlstate && (strcmp(sqlstate, "40001") == 0 || strcmp(sqlstate, "40P01") == 0);
}

enum xg_tx_result xg_pg_tx_classify(struct xg_pg *pg)
{
    return xg_pg_sqlstate_retryable(pg->sqlstate) ? XG_TX_RETRY : XG_TX_ERROR;
}

/* Runs a transaction-control command; `expect_tag` guards against COMMIT on a failed
 * transaction, which the server answers with a successful "ROLLBACK". */
static bool tx_command(struct xg_pg *pg, const char *sql, const char *expect_tag)
{
    PGresult *res = xg_pg_exec_sql(pg, sql);
    if (!res)
        return false;
    bool ok = !expect_tag || strcmp(PQcmdStatus(res), expect_tag) == 0;
    PQclear(res);
    if (!ok)
        set_error(pg, "", "",
                  "COMMIT rolled back: a statement in the transaction failed and the error "
                  "was not handled");
    return ok;
}

/* Rolls back without losing the error that made us roll back. */
static void tx_abandon(struct xg_pg *pg)
{
    char error[sizeof pg->error], sqlstate[sizeof pg->sqlstate];
    memcpy(error, pg->error, sizeof error);
    memcpy(sqlstate, pg->sqlstate, sizeof sqlstate);
    if (pg->conn && PQtransactionStatus(pg->conn) != PQTRANS_IDLE)
        (void)tx_command(pg, "ROLLBACK", NULL);
    memcpy(pg->error, error, sizeof error);
    memcpy(pg->sqlstate, sqlstate, sizeof sqlstate);
}

static enum xg_tx_result tx_attempt(struct xg_pg *pg, const char *begin, xg_tx_fn fn, void *ctx)
{
    if (!xg_pg_connect(pg) || !tx_command(pg, begin, NULL))
        return XG_TX_ERROR;
    enum xg_tx_result r = fn(pg, ctx);
    switch (r) {
    case XG_TX_COMMIT:
        if (tx_command(pg, "COMMIT", "COMMIT"))
            return XG_TX_COMMIT;
        r = xg_pg_tx_classify(pg);
        tx_abandon(pg);
        return r;
    case XG_TX_ROLLBACK:
        return tx_command(pg, "ROLLBACK", NULL) ? XG_TX_ROLLBACK : XG_TX_ERROR;
    case XG_TX_RETRY:
    case XG_TX_ERROR:
        tx_abandon(pg);
        return r;
    }
    return XG_TX_ERROR;
}

enum xg_tx_result xg_pg_transaction(struct xg_pg *pg, const char *isolation, xg_tx_fn fn, void *ctx)
{
    char begin[64];
    if (isolation)
        snprintf(begin, sizeof begin, "BEGIN ISOLATION LEVEL %s", isolation);
    else
        snprintf(begin, sizeof begin, "BEGIN");
    long pause_ms = RETRY_JITTER_MS;
    for (int attempt = 1;; attempt++) {
        enum xg_tx_result r = tx_attempt(pg, begin, fn, ctx);
        if (r != XG_TX_RETRY)
            return r;
        if (attempt == TX_MAX_ATTEMPTS) {
            char last[sizeof pg->error];
            memcpy(last, pg->error, sizeof last);
            snprintf(pg->error, sizeof pg->error, "gave up after %d attempts: %.480s",
                     TX_MAX_ATTEMPTS, last);
            return XG_TX_ERROR;
        }
        /* random pauses keep colliding transactions from colliding again */
        sleep_ms(1 + rand_r(&pg->jitter_seed) % pause_ms);
        pause_ms *= 2;
    }
}

int64_t xg_pg_int64(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? 0 : strtoll(PQgetvalue(res, row, col), NULL, 10);
}
