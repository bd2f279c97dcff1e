/* xg_pg — PostgreSQL helpers: one connection, named prepared statements, reconnect with
 * backoff, and a transaction runner that retries serialization failures and deadlocks.
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

/* Executes the prepared statement `name` with text parameters (NULL = SQL NULL).
 * Does not connect: without a connection it fails with SQLSTATE 08003.
 * Returns the result (caller PQclears) when its status is COMMAND_OK or TUPLES_OK;
 * otherwise NULL, the error text kept for xg_pg_last_error and the SQLSTATE for
 * xg_pg_last_sqlstate. A broken connection is closed so the next connect reopens it. */
PGresult *xg_pg_exec(struct xg_pg *pg, const char *name, int nparams, const char *const *params);

/* Executes a plain SQL string (no parameters); same contract as xg_pg_exec. */
PGresult *xg_pg_exec_sql(struct xg_pg *pg, const char *sql);

/* A result cell as int64 (base 10); SQL NULL and text that is no number read as 0. */
int64_t xg_pg_int64(const PGresult *res, int row, int col);

/* The five-character SQLSTATE of the last failure, "" if none. */
const char *xg_pg_last_sqlstate(struct xg_pg *pg);

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
 * or 40P01. fn may return XG_TX_RETRY itself; xg_pg_tx_classify maps a failed
 * xg_pg_exec to RETRY or ERROR. Returns the final outcome (never XG_TX_RETRY). */
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
