/* xg_pg — PostgreSQL helpers: one connection, named prepared statements, reconnect with
 * backoff, and a transaction runner that retries serialization failures and deadlocks.
 *
 * Broken connections (a PostgreSQL restart, a primary that moved): before each statement
 * an idle connection is checked for a session the server has ended (the FATAL it sends
 * on shutdown, or EOF) and quietly replaced. A statement that still fails on a broken
 * connection is retried once on a new one only when repeating it cannot change the
 * result: the query is marked "-- idempotent" in sql/, or the server's answer proves it
 * did not run (xg_pg_statement_next). Inside a transaction no single statement is
 * retried: xg_pg_transaction reruns the whole transaction once on a new connection when
 * the connection broke before COMMIT was sent (the server rolled it back). When the
 * answer to COMMIT, or to a non-idempotent statement outside a transaction, is lost, the
 * outcome is unknown: it is not repeated, the call fails and xg_pg_outcome_unknown says
 * so; each caller states what it does then (docs/DEPLOYMENT.md, "PostgreSQL HA").
 * A session-bound handle (xg_pg_session_bound: LISTEN, advisory locks) is never
 * replaced silently: its owner must learn that the session's state is gone.
 *
 * The named queries live in the sql/ files as blocks headed by a line "-- name: <query>" and
 * are embedded at build time (xg_sql.h). xg_pg_connect prepares every query the daemon
 * lists, once per connection. A struct xg_pg is used by one thread at a time. */
#ifndef XG_PG_H
#define XG_PG_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>

struct xg_pg;

/* Creates an unconnected handle. `queries` is a NULL-terminated list of query names
 * from sql/ to prepare on every (re)connect; both arrays must outlive the handle. */
struct xg_pg *xg_pg_new(const char *conninfo, const char *const *queries);
void xg_pg_free(struct xg_pg *pg);

/* Connects (if not connected) and prepares the queries. Returns false on failure, with
 * the reason in xg_pg_last_error. Does not sleep. */
__attribute__((warn_unused_result)) bool xg_pg_connect(struct xg_pg *pg);

/* Connects, retrying with exponential backoff (100 ms doubling to 5 s) until connected
 * or *stop becomes non-zero. Returns true when connected. */
__attribute__((warn_unused_result)) bool xg_pg_connect_backoff(struct xg_pg *pg,
                                                               volatile sig_atomic_t *stop);

/* True when the connection is up (PQstatus OK). */
bool xg_pg_ok(struct xg_pg *pg);
void xg_pg_disconnect(struct xg_pg *pg);
PGconn *xg_pg_conn(struct xg_pg *pg);
const char *xg_pg_last_error(struct xg_pg *pg);

/* Marks the handle's session as carrying state (LISTEN, a session advisory lock): a
 * connection found broken is reported (SQLSTATE 08003/08006), never replaced or retried
 * inside xg_pg_exec. Call before first use. */
void xg_pg_session_bound(struct xg_pg *pg);

/* True when connected and the server has not ended the session (reads what the server
 * sent meanwhile, without blocking). A connection found gone is closed, so the next
 * xg_pg_connect opens a new one. */
bool xg_pg_alive(struct xg_pg *pg);

/* Executes the prepared statement `name` with text parameters (NULL = SQL NULL).
 * Does not open a first connection: without one it fails with SQLSTATE 08003. A
 * connection the server has ended is replaced first (outside a transaction; not for a
 * session-bound handle), and a statement that fails on a broken connection is retried
 * once on a new one as the header comment says.
 * Returns the result (caller PQclears) when its status is COMMAND_OK or TUPLES_OK;
 * otherwise NULL, the error text kept for xg_pg_last_error and the SQLSTATE for
 * xg_pg_last_sqlstate. A broken connection is closed so the next connect reopens it. */
PGresult *xg_pg_exec(struct xg_pg *pg, const char *name, int nparams, const char *const *params);

/* Executes a plain SQL string (no parameters); same contract as xg_pg_exec, the text
 * never counting as idempotent. */
PGresult *xg_pg_exec_sql(struct xg_pg *pg, const char *sql);

/* A result cell as int64 (base 10); SQL NULL and text that is no number read as 0. */
int64_t xg_pg_int64(const PGresult *res, int row, int col);

/* The five-character SQLSTATE of the last failure, "" if none. */
const char *xg_pg_last_sqlstate(struct xg_pg *pg);

/* True when the last failure left it unknown whether the work took effect: the answer to
 * COMMIT (xg_pg_transaction) or to a non-idempotent statement outside a transaction was
 * lost with the connection. Nothing was repeated. */
bool xg_pg_outcome_unknown(struct xg_pg *pg);

/* How many times the handle replaced a broken connection (for logs and tests). */
unsigned long xg_pg_reconnects(struct xg_pg *pg);

/* What a failure says about the connection. Pure, table-tested. */
enum xg_pg_fault {
    XG_PG_FAULT_NONE,       /* no failure                                                */
    XG_PG_FAULT_STATEMENT,  /* the statement's own error (constraint, syntax…): report it */
    XG_PG_FAULT_CONFLICT,   /* 40001/40P01: rerun the transaction, same connection        */
    XG_PG_FAULT_CONNECTION, /* the session is gone or of no use: reconnect                */
};

/* CONNECTION for class 08, 57P01/57P02/57P03 (shutdown, crash, starting up), 57P05 and
 * 25P03 (the server's idle timeouts end the session), 25006 (read-only: we are on a
 * standby after a switch, and libpq finds the new primary only on a new connection), and
 * for any failure on a connection libpq reports as bad; CONFLICT for 40001/40P01;
 * STATEMENT otherwise (NONE for a NULL or empty SQLSTATE on a good connection). */
enum xg_pg_fault xg_pg_fault_of(const char *sqlstate, bool connection_bad);

/* Pure: true when the SQLSTATE proves the server did not run the statement: 08003 (never
 * sent: no connection), 08001/08004 (the connection was refused), 57P03 (the server was
 * not accepting sessions), 25006 (refused on a read-only server before it ran). */
bool xg_pg_sqlstate_not_run(const char *sqlstate);

enum xg_pg_next {
    XG_PG_NEXT_REPORT,         /* fail the call                                          */
    XG_PG_NEXT_RETRY,          /* replace the connection and send the statement again    */
    XG_PG_NEXT_REPORT_UNKNOWN, /* fail the call; whether it took effect is unknown       */
};

/* Pure: what follows a failed statement. Retried once (retried = false), and only on a
 * connection fault, outside a transaction, on a handle that is not session-bound, when
 * the statement is idempotent or did not run. A connection fault after a non-idempotent
 * statement was sent outside a transaction is REPORT_UNKNOWN; inside a transaction the
 * transaction runner decides (REPORT). */
enum xg_pg_next xg_pg_statement_next(enum xg_pg_fault fault, bool in_transaction,
                                     bool session_bound, bool idempotent, bool not_run,
                                     bool retried);

/* Pure: what follows a transaction attempt that failed with `fault`. RETRY reruns the
 * whole transaction on a new connection: once (retried = false), when the connection broke
 * before COMMIT was sent or the failure proves nothing ran; a connection fault on COMMIT
 * itself is REPORT_UNKNOWN; every other failure is REPORT (serialization conflicts are
 * retried apart, xg_pg_sqlstate_retryable). */
enum xg_pg_next xg_pg_tx_next(enum xg_pg_fault fault, bool commit_sent, bool not_run, bool retried);

enum xg_tx_result {
    XG_TX_COMMIT,   /* fn succeeded: commit                                   */
    XG_TX_ROLLBACK, /* fn decided not to write: roll back, not an error        */
    XG_TX_RETRY,    /* fn hit a serialization failure or deadlock (retried)    */
    XG_TX_ERROR,    /* fn or the database failed: rolled back                  */
};

typedef enum xg_tx_result (*xg_tx_fn)(struct xg_pg *pg, void *ctx);

/* Runs fn inside BEGIN ISOLATION LEVEL <isolation> … COMMIT (isolation NULL: the
 * server's default), connecting first if needed (without sleeping), retrying the whole
 * transaction (up to 5 times, with jitter) when fn or COMMIT fails with SQLSTATE 40001
 * or 40P01, and once more on a new connection when the connection broke before COMMIT
 * was sent (xg_pg_tx_next). fn may therefore run several times: it must keep no effects
 * of an earlier run. fn may return XG_TX_RETRY itself; xg_pg_tx_classify maps a failed
 * xg_pg_exec to RETRY or ERROR. Returns the final outcome (never XG_TX_RETRY); after an
 * XG_TX_ERROR, xg_pg_outcome_unknown tells a lost COMMIT answer apart. */
enum xg_tx_result xg_pg_transaction(struct xg_pg *pg, const char *isolation, xg_tx_fn fn,
                                    void *ctx);

/* RETRY for 40001/40P01, ERROR otherwise: what fn returns after a failed exec. */
enum xg_tx_result xg_pg_tx_classify(struct xg_pg *pg);

/* Pure: true for the SQLSTATEs that a retry of the whole transaction can fix. */
bool xg_pg_sqlstate_retryable(const char *sqlstate);

/* Routes the server's NOTICE/WARNING messages on `conn` to xg_log instead of libpq's
 * default (plain text on stderr, which would break the JSON-lines log). xg_pg_connect
 * does this for its own connections. */
void xg_pg_log_notices(PGconn *conn);

#endif
