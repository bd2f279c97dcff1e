/* leader — active/standby election between billing instances: a PostgreSQL session
 * advisory lock held on a dedicated connection. The holder polls the wallet and
 * provisions; the others only serve the API. When the holder dies (even kill -9) its
 * connection closes and PostgreSQL releases the lock; a standby calling leader_hold
 * every second takes over within about a second.
 *
 * If the lock connection breaks, leadership is lost at once (another instance may hold
 * the lock by the time we reconnect); the next leader_hold reconnects — with a multi-host
 * conninfo, to whichever server is the primary now — and competes for the lock again, so
 * after a failover the lock goes to the instance that reaches the new primary first. A
 * server in recovery (a standby) never grants it. Work done by two instances at the same moment is
 * still safe — payments are upserts and settling locks the invoice row — so the lock
 * is about doing the work once, not about correctness. Used by one thread. */
#ifndef LEADER_H
#define LEADER_H

#include <stdbool.h>

/* pg_advisory_lock key: "xmrgbill" in ASCII. */
#define LEADER_LOCK_KEY "8678250138032810348"

struct leader;

/* conninfo is copied. NULL when out of memory. */
struct leader *leader_new(const char *conninfo);
void leader_free(struct leader *l);

/* Confirms the lock is still held, or tries to take it (never blocks on the lock;
 * connecting may take the libpq connect timeout). Returns true while we lead. Logs
 * each change of role. */
bool leader_hold(struct leader *l);

/* Gives the lock up (clean shutdown: the standby need not wait for a timeout). */
void leader_release(struct leader *l);

#endif
