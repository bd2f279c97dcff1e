/* xg_dbwatch — the readiness view of PostgreSQL shared by both daemons: a thread that
 * keeps its own connection, reconnects with backoff, and checks every second that the
 * database answers and the schema is at XG_SCHEMA_VERSION. /readyz reads the verdict.
 *
 * xg_dbwatch_wait_schema is the start-up gate: a daemon refuses to start on a schema
 * that is not current (it never migrates by itself). */
#ifndef XG_DBWATCH_H
#define XG_DBWATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

struct xg_dbwatch;

/* Connects with backoff until connected or *stop; then checks the schema. Returns true
 * when the schema is current; false (message in err) when it is not or on stop. */
__attribute__((warn_unused_result)) bool
xg_dbwatch_wait_schema(const char *conninfo, volatile sig_atomic_t *stop, char *err, size_t errlen);

/* Starts the watcher thread (conninfo is copied). NULL on failure. */
struct xg_dbwatch *xg_dbwatch_start(const char *conninfo);
void xg_dbwatch_stop(struct xg_dbwatch *w);

/* True when the last check passed; otherwise copies the reason into reason. */
bool xg_dbwatch_ready(struct xg_dbwatch *w, char *reason, size_t len);

#endif
