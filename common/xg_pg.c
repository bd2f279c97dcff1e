/* xg_pg — one libpq connection with its prepared statements and a transaction runner.
 *
 * A failed call keeps its error text, SQLSTATE and fault in the handle until the next
 * call. A connection found broken is closed at once, so the next xg_pg_connect (or the
 * replacement inside xg_pg_exec and xg_pg_transaction) opens a fresh one — on whichever
 * host of a multi-host conninfo libpq picks — and prepares the statements again. */
#include "xg_pg.h"

#include "xg_log.h"
#include "xg_sql.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TX_MAX_ATTEMPTS    5
#define BACKOFF_FIRST_MS   100
#define BACKOFF_MAX_MS     1000 /* a primary back or promoted is found within a second */
#define RETRY_JITTER_MS    20   /* upper bound of the first retry's pause; doubles per retry */
#define SQLSTATE_NO_CONN   "08003"
#define SQLSTATE_CONN_FAIL "08006"
#define STALE_READS_MAX    8 /* reads of what an idle server sent before giving up looking */

struct xg_pg {
    char *conninfo;
    const char *const *queries;
    bool *idempotent; /* per entry of queries: marked "-- idempotent" in sql/ */
    PGconn *conn;
    bool session_bound;
    bool server_ended; /* the server sent FATAL/PANIC on this connection */
    unsigned long reconnects;
    unsigned jitter_seed;
    /* the last failure */
    char error[512];
    char sqlstate[6];
    enum xg_pg_fault fault;
    bool outcome_unknown;
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
    size_t n = 0;
    while (queries && queries[n])
        n++;
    pg->idempotent = calloc(n + 1, sizeof *pg->idempotent);
    if (!pg->idempotent) {
        free(pg->conninfo);
        free(pg);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        pg->idempotent[i] = xg_sql_query_idempotent(queries[i]);
    pg->jitter_seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)pg;
    return pg;
}

void xg_pg_free(struct xg_pg *pg)
{
    if (!pg)
        return;
    xg_pg_disconnect(pg);
    free(pg->idempotent);
    free(pg->conninfo);
    free(pg);
}

void xg_pg_session_bound(struct xg_pg *pg)
{
    pg->session_bound = true;
}

void xg_pg_disconnect(struct xg_pg *pg)
{
    if (pg->conn)
        PQfinish(pg->conn);
    pg->conn = NULL;
    pg->server_ended = false;
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

bool xg_pg_outcome_unknown(struct xg_pg *pg)
{
    return pg->outcome_unknown;
}

unsigned long xg_pg_reconnects(struct xg_pg *pg)
{
    return pg->reconnects;
}

static void clear_error(struct xg_pg *pg)
{
    pg->error[0] = '\0';
    pg->sqlstate[0] = '\0';
    pg->fault = XG_PG_FAULT_NONE;
    pg->outcome_unknown = false;
}

/* ---- classifying failures (pure) ---------------------------------------------------- */

static bool is_state(const char *sqlstate, const char *want)
{
    return sqlstate && strcmp(sqlstate, want) == 0;
}

enum xg_pg_fault xg_pg_fault_of(const char *sqlstate, bool connection_bad)
{
    static const char *const session_over[] = {"57P01", "57P02", "57P03",
                                               "57P05", "25P03", "25006"};
    if (connection_bad)
        return XG_PG_FAULT_CONNECTION;
    if (!sqlstate || !*sqlstate)
        return XG_PG_FAULT_NONE;
    if (strlen(sqlstate) == 5 && strncmp(sqlstate, "08", 2) == 0)
        return XG_PG_FAULT_CONNECTION;
    for (size_t i = 0; i < sizeof session_over / sizeof session_over[0]; i++)
        if (strcmp(sqlstate, session_over[i]) == 0)
            return XG_PG_FAULT_CONNECTION;
    if (xg_pg_sqlstate_retryable(sqlstate))
        return XG_PG_FAULT_CONFLICT;
    return XG_PG_FAULT_STATEMENT;
}

bool xg_pg_sqlstate_not_run(const char *sqlstate)
{
    return is_state(sqlstate, "08003") || is_state(sqlstate, "08001") ||
           is_state(sqlstate, "08004") || is_state(sqlstate, "57P03") ||
           is_state(sqlstate, "25006");
}

enum xg_pg_next xg_pg_statement_next(enum xg_pg_fault fault, bool in_transaction,
                                     bool session_bound, bool idempotent, bool not_run,
                                     bool retried)
{
    if (fault != XG_PG_FAULT_CONNECTION || in_transaction || session_bound)
        return XG_PG_NEXT_REPORT;
    if (idempotent || not_run)
        return retried ? XG_PG_NEXT_REPORT : XG_PG_NEXT_RETRY;
    return XG_PG_NEXT_REPORT_UNKNOWN;
}

enum xg_pg_next xg_pg_tx_next(enum xg_pg_fault fault, bool commit_sent, bool not_run, bool retried)
{
    if (fault != XG_PG_FAULT_CONNECTION)
        return XG_PG_NEXT_REPORT;
    if (commit_sent && !not_run)
        return XG_PG_NEXT_REPORT_UNKNOWN;
    return retried ? XG_PG_NEXT_REPORT : XG_PG_NEXT_RETRY;
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
    struct xg_pg *pg = arg; /* NULL for connections that are not ours */
    const char *severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
    /* an idle session's FATAL (shutdown, idle timeout) arrives as a notice */
    if (pg && severity && (strcmp(severity, "FATAL") == 0 || strcmp(severity, "PANIC") == 0))
        pg->server_ended = true;
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
            pg->fault = xg_pg_fault_of(pg->sqlstate, PQstatus(pg->conn) == CONNECTION_BAD);
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
        pg->fault = XG_PG_FAULT_CONNECTION;
        xg_pg_disconnect(pg);
        return false;
    }
    PQsetNoticeReceiver(pg->conn, on_notice, pg);
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

/* Keeps a successful result; records a failure and closes a connection of no further use
 * (broken, or on a server that will refuse every write). */
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
    pg->fault = xg_pg_fault_of(pg->sqlstate, broken);
    PQclear(res);
    if (pg->fault == XG_PG_FAULT_CONNECTION)
        xg_pg_disconnect(pg);
    return NULL;
}

/* Reads whatever an idle server sent: a session it ended shows as EOF or a FATAL. */
static bool session_gone(struct xg_pg *pg)
{
    for (int i = 0; i < STALE_READS_MAX && !pg->server_ended; i++) {
        if (PQstatus(pg->conn) != CONNECTION_OK)
            return true;
        struct pollfd pfd = {.fd = PQsocket(pg->conn), .events = POLLIN};
        if (poll(&pfd, 1, 0) <= 0)
            break;
        if (!PQconsumeInput(pg->conn))
            return true;
        (void)PQisBusy(pg->conn); /* parses it: a FATAL reaches on_notice */
    }
    return pg->server_ended || PQstatus(pg->conn) != CONNECTION_OK;
}

bool xg_pg_alive(struct xg_pg *pg)
{
    if (!pg->conn)
        return false;
    if (!session_gone(pg))
        return true;
    xg_pg_disconnect(pg);
    return false;
}

static bool in_transaction(struct xg_pg *pg)
{
    PGTransactionStatusType ts = pg->conn ? PQtransactionStatus(pg->conn) : PQTRANS_UNKNOWN;
    return ts == PQTRANS_INTRANS || ts == PQTRANS_INERROR;
}

/* Opens a new connection in place of one found broken. */
static bool replace_connection(struct xg_pg *pg, const char *why)
{
    char cause[sizeof pg->error];
    snprintf(cause, sizeof cause, "%s", *pg->error ? pg->error : why);
    xg_pg_disconnect(pg);
    if (!xg_pg_connect(pg))
        return false;
    pg->reconnects++;
    xg_log(XG_LOG_INFO, "pg_reconnected", "new PostgreSQL connection (%s)", cause);
    return true;
}

static bool query_idempotent(struct xg_pg *pg, const char *name)
{
    for (size_t i = 0; name && pg->queries && pg->queries[i]; i++)
        if (strcmp(pg->queries[i], name) == 0)
            return pg->idempotent[i];
    return false;
}

/* A connection the server ended while idle: replaced outside a transaction; inside one,
 * or for a session-bound handle, reported as "not sent" (08003). */
static bool ready_to_send(struct xg_pg *pg, bool in_tx)
{
    clear_error(pg);
    if (!pg->conn) {
        set_error(pg, SQLSTATE_NO_CONN, "", "not connected to PostgreSQL");
        pg->fault = XG_PG_FAULT_CONNECTION;
        return false;
    }
    if (!session_gone(pg))
        return true;
    if (!in_tx && !pg->session_bound)
        return replace_connection(pg, "the server ended the idle session");
    xg_pg_disconnect(pg);
    set_error(pg, SQLSTATE_NO_CONN, "",
              in_tx ? "the server ended the session inside a transaction"
                    : "the server ended the session");
    pg->fault = XG_PG_FAULT_CONNECTION;
    return false;
}

/* One statement (prepared `name`, or plain `sql`), with the retry xg_pg_statement_next
 * allows. */
static PGresult *run_statement(struct xg_pg *pg, const char *name, const char *sql,
                               bool sql_idempotent, int nparams, const char *const *params)
{
    bool idempotent = name ? query_idempotent(pg, name) : sql_idempotent;
    bool in_tx = in_transaction(pg);
    for (bool retried = false;; retried = true) {
        if (!ready_to_send(pg, in_tx))
            return NULL;
        PGresult *res =
            check_result(pg, name ? PQexecPrepared(pg->conn, name, nparams, params, NULL, NULL, 0)
                                  : PQexec(pg->conn, sql));
        if (res)
            return res;
        enum xg_pg_next next = xg_pg_statement_next(pg->fault, in_tx, pg->session_bound, idempotent,
                                                    xg_pg_sqlstate_not_run(pg->sqlstate), retried);
        if (next == XG_PG_NEXT_REPORT_UNKNOWN) {
            pg->outcome_unknown = true;
            xg_log(XG_LOG_WARN, "pg_outcome_unknown", "%s: %s; not repeated",
                   name ? name : "statement", pg->error);
        }
        if (next != XG_PG_NEXT_RETRY)
            return NULL;
        if (!replace_connection(pg, "the connection broke"))
            return NULL;
    }
}

PGresult *xg_pg_exec(struct xg_pg *pg, const char *name, int nparams, const char *const *params)
{
    return run_statement(pg, name, NULL, false, nparams, params);
}

PGresult *xg_pg_exec_sql(struct xg_pg *pg, const char *sql)
{
    return run_statement(pg, NULL, sql, false, 0, NULL);
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
    /* BEGIN and ROLLBACK change nothing a repeat could double; COMMIT runs inside the
     * transaction, where no statement is repeated */
    PGresult *res = run_statement(pg, NULL, sql, true, 0, NULL);
    if (!res)
        return false;
    bool ok = !expect_tag || strcmp(PQcmdStatus(res), expect_tag) == 0;
    PQclear(res);
    if (!ok) {
        set_error(pg, "", "",
                  "COMMIT rolled back: a statement in the transaction failed and the error "
                  "was not handled");
        pg->fault = XG_PG_FAULT_STATEMENT;
    }
    return ok;
}

/* Rolls back without losing the error that made us roll back. */
static void tx_abandon(struct xg_pg *pg)
{
    char error[sizeof pg->error], sqlstate[sizeof pg->sqlstate];
    enum xg_pg_fault fault = pg->fault;
    memcpy(error, pg->error, sizeof error);
    memcpy(sqlstate, pg->sqlstate, sizeof sqlstate);
    if (pg->conn && PQtransactionStatus(pg->conn) != PQTRANS_IDLE)
        (void)tx_command(pg, "ROLLBACK", NULL);
    memcpy(pg->error, error, sizeof error);
    memcpy(pg->sqlstate, sqlstate, sizeof sqlstate);
    pg->fault = fault;
}

/* One run of the transaction. *began: BEGIN succeeded; *commit_sent: COMMIT went out. */
static enum xg_tx_result tx_attempt(struct xg_pg *pg, const char *begin, xg_tx_fn fn, void *ctx,
                                    bool *began, bool *commit_sent)
{
    *began = *commit_sent = false;
    if (!xg_pg_connect(pg) || !tx_command(pg, begin, NULL))
        return XG_TX_ERROR;
    *began = true;
    enum xg_tx_result r = fn(pg, ctx);
    switch (r) {
    case XG_TX_COMMIT:
        *commit_sent = pg->conn != NULL;
        if (tx_command(pg, "COMMIT", "COMMIT"))
            return XG_TX_COMMIT;
        r = xg_pg_tx_classify(pg);
        tx_abandon(pg);
        return r;
    case XG_TX_ROLLBACK:
        /* a session that broke instead has rolled back just as well */
        return tx_command(pg, "ROLLBACK", NULL) || pg->fault == XG_PG_FAULT_CONNECTION
                   ? XG_TX_ROLLBACK
                   : XG_TX_ERROR;
    case XG_TX_RETRY:
    case XG_TX_ERROR:
        tx_abandon(pg);
        return r;
    }
    return XG_TX_ERROR;
}

/* After a failed attempt: true when the whole transaction runs again on a new
 * connection. Marks a lost COMMIT answer as an unknown outcome. */
static bool tx_rerun_on_new_connection(struct xg_pg *pg, bool began, bool commit_sent,
                                       bool *rerun_done)
{
    if (!began) /* no connection, or BEGIN failed on a new one: nothing to rerun on */
        return false;
    enum xg_pg_next next =
        xg_pg_tx_next(pg->fault, commit_sent, xg_pg_sqlstate_not_run(pg->sqlstate), *rerun_done);
    if (next == XG_PG_NEXT_REPORT_UNKNOWN) {
        pg->outcome_unknown = true;
        xg_log(XG_LOG_WARN, "pg_commit_unknown",
               "the connection broke after COMMIT was sent (%s); not repeated", pg->error);
    }
    if (next != XG_PG_NEXT_RETRY)
        return false;
    xg_log(XG_LOG_INFO, "pg_tx_rerun",
           "the connection broke before COMMIT (%s): the server rolled back; running the "
           "transaction again on a new connection",
           pg->error);
    *rerun_done = true;
    xg_pg_disconnect(pg);
    pg->reconnects++;
    return true;
}

enum xg_tx_result xg_pg_transaction(struct xg_pg *pg, const char *isolation, xg_tx_fn fn, void *ctx)
{
    char begin[64];
    if (isolation)
        snprintf(begin, sizeof begin, "BEGIN ISOLATION LEVEL %s", isolation);
    else
        snprintf(begin, sizeof begin, "BEGIN");
    long pause_ms = RETRY_JITTER_MS;
    bool rerun_done = false;
    for (int attempt = 1;; attempt++) {
        bool began, commit_sent;
        enum xg_tx_result r = tx_attempt(pg, begin, fn, ctx, &began, &commit_sent);
        if (r == XG_TX_ERROR && tx_rerun_on_new_connection(pg, began, commit_sent, &rerun_done)) {
            attempt--; /* a broken connection is not a conflict: it has its own single rerun */
            continue;
        }
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
