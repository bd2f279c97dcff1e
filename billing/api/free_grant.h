/* free_grant — the bounds on free-tier tenants that every billing instance shares, kept in
 * PostgreSQL (migrations/0008_free_grants.sql).
 *
 * The in-memory bucket (client_limit.h, [invoices] free_per_hour) bounds one client on one
 * instance; this bounds, over every instance, the grants of one network (the client's
 * network key, client_prefix.h: its /24 or /48) in any hour and any 24 hours, and all
 * grants in any hour. The windows slide: a refused client is told, as Retry-After, when
 * the oldest grant counted against it leaves its window.
 *
 * Atomic across instances: the grant locks one row (bl_free_grant_lock), then counts and
 * records in one statement (bl_free_grant_take), inside the transaction that creates the
 * tenant, so concurrent grants are counted one after another and a tenant rolled back
 * leaves no grant. */
#ifndef FREE_GRANT_H
#define FREE_GRANT_H

#include "xg_pg.h"

#include <stdbool.h>
#include <stdint.h>

struct free_grant_bounds {
    int64_t network_per_hour, network_per_day, global_per_hour; /* each >= 1 */
};

enum free_grant_verdict {
    FREE_GRANT_OK,
    FREE_GRANT_NETWORK_HOUR, /* the network's hourly bound */
    FREE_GRANT_NETWORK_DAY,  /* the network's daily bound */
    FREE_GRANT_GLOBAL_HOUR,  /* the hourly bound over all clients */
    FREE_GRANT_DB_ERROR,
};

/* What the database found for each bound: -1 when one more grant fits, else the seconds
 * until the oldest grant that must leave its window does. */
struct free_grant_waits {
    int64_t network_hour, network_day, global_hour;
};

/* Pure: the verdict on waits (the global bound named first: no client can help it, then
 * the day, then the hour) and, when refused, *retry_after_s: the longest wait, since a
 * grant needs every bound to have room, at least 1 s. */
enum free_grant_verdict free_grant_judge(const struct free_grant_waits *w, int64_t *retry_after_s);

/* Pure: the words a refused client is told (static text). */
const char *free_grant_message(enum free_grant_verdict v);

/* In the caller's open transaction on pg (whose owner prepared bl_free_grant_lock and
 * bl_free_grant_take): locks, counts, and records a grant to network/client when it fits.
 * FREE_GRANT_DB_ERROR when a statement failed (xg_pg_tx_classify tells whether to retry). */
__attribute__((warn_unused_result)) enum free_grant_verdict
free_grant_take(struct xg_pg *pg, const struct free_grant_bounds *b, const char *network,
                const char *client, int64_t *retry_after_s);

#endif
