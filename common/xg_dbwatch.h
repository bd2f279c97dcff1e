/* xg_dbwatch — the readiness view of PostgreSQL shared by both daemons: a thread that
 * keeps its own connection, reconnects with backoff, and checks every second that the
 * database answers at a schema this build fits (xg_schema_verdict: at XG_SCHEMA_VERSION, or
 * ahead of it through expand migrations only). /readyz reads the verdict.
 *
 * The verdict tells an outage (no connection: shared by every replica, and something a
 * gateway serves through) from a schema this build does not fit (the database answers:
 * this replica is wrong). xg_dbwatch_readiness says what each means for a daemon.
 *
 * xg_dbwatch_wait_schema is the start-up gate: a daemon refuses to start on a schema it
 * does not fit (it never migrates by itself). */
#ifndef XG_DBWATCH_H
#define XG_DBWATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

struct xg_dbwatch;

/* Connects with backoff until connected or *stop; then checks the schema. Returns true
 * when this build fits it (current, or ahead and compatible); false (message in err) when
 * it does not or on stop. */
__attribute__((warn_unused_result)) bool
xg_dbwatch_wait_schema(const char *conninfo, volatile sig_atomic_t *stop, char *err, size_t errlen);

/* Starts the watcher thread (conninfo is copied). NULL on failure. */
struct xg_dbwatch *xg_dbwatch_start(const char *conninfo);
void xg_dbwatch_stop(struct xg_dbwatch *w);

/* What the last check found. */
enum xg_db_state {
    XG_DB_UNCHECKED,   /* no check has finished yet */
    XG_DB_OK,          /* it answers, at the current schema */
    XG_DB_AHEAD,       /* it answers, at a newer schema this build still fits (expand) */
    XG_DB_UNREACHABLE, /* no connection (down, restarting, no primary elected, a partition) */
    XG_DB_SCHEMA,      /* it answers, but not at the schema this build expects */
};

/* The last check's state; its reason copied into reason (len may be 0). */
enum xg_db_state xg_dbwatch_state(struct xg_dbwatch *w, char *reason, size_t len);

/* True when the last check passed (XG_DB_OK or XG_DB_AHEAD); otherwise copies the reason
 * into reason. */
bool xg_dbwatch_ready(struct xg_dbwatch *w, char *reason, size_t len);

/* What /readyz notes about the schema: the reason when the database is ahead of this build
 * but compatible, "" otherwise (a schema that does not fit is the "database" check's). */
void xg_dbwatch_schema_note(struct xg_dbwatch *w, char *note, size_t len);

/* What a database state means for /readyz. */
enum xg_readiness {
    XG_READINESS_READY,    /* 200 */
    XG_READINESS_DEGRADED, /* 200, the reason in the body ("degraded": true) */
    XG_READINESS_NOT,      /* 503 */
};

/* Pure: the readiness a daemon derives from state. serves_without_db says whether the
 * daemon can serve while PostgreSQL is away (the gateway: its known tenants, fail-static);
 * for it an outage is degraded, never not ready, since every replica shares the outage and
 * a balancer would otherwise take them all out while each still serves. A schema that does
 * not fit is never ready: the database answers, and this build is the wrong one. */
enum xg_readiness xg_dbwatch_readiness(enum xg_db_state state, bool serves_without_db);

#endif
