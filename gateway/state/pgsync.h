/* pgsync — keeps the gateway's in-memory tenants and nodes equal to PostgreSQL.
 *
 * One thread with one connection: LISTEN on xmrgate_tenants, xmrgate_tiers and
 * xmrgate_nodes, then a full load; afterwards each NOTIFY reloads just the row it names.
 * During a full load this thread reads and parses the rows and a second one, which lives
 * only for the load, publishes them (state/tenant_feed.h says who owns what meanwhile).
 * When the connection drops, the gateway keeps serving what it knows (fail-static), the
 * thread reconnects with backoff and reloads everything, since NOTIFYs sent while it was
 * away are lost. */
#ifndef PGSYNC_H
#define PGSYNC_H

#include <stdbool.h>
#include <stddef.h>

#include "nodes/nodes.h"
#include "state/tenants.h"
#include "token.h"

struct pgsync;

/* What pgsync tells as it goes, on its own thread (the daemon counts it in its metrics):
 * a full reload starting, and a NOTIFY on channel applied `seconds` after it arrived. Any
 * hook may be NULL; arg is passed to each. */
struct pgsync_observer {
    void *arg;
    void (*full_reload)(void *arg);
    void (*notify_applied)(void *arg, const char *channel, double seconds);
};

/* ha1_key unwraps the stored Digest HA1 values and, when a row does not unwrap under it,
 * ha1_key_previous (TOKEN_HA1_KEY_LEN bytes, or NULL outside a key rotation); both copied
 * into their unwrappers. observer (NULL: none) is copied. */
struct pgsync *pgsync_start(const char *conninfo, const uint8_t ha1_key[TOKEN_HA1_KEY_LEN],
                            const uint8_t *ha1_key_previous, struct tenant_store *tenants,
                            struct node_registry *nodes, const struct pgsync_observer *observer);
void pgsync_stop(struct pgsync *sync);

/* True once a full load has completed on the current connection. */
bool pgsync_synced(struct pgsync *sync, char *reason, size_t len);
/* True once any full load has completed since the start: the tables hold PostgreSQL's
 * tenants and nodes as of then, and serve them while the connection is down. */
bool pgsync_loaded(struct pgsync *sync);

/* The columns of a tenant row (sql/queries_gateway.sql, gw_tenant_by_id and the others). */
#define PGSYNC_TENANT_COLUMNS 10

/* Pure (but for the unwrappers' scratch state, token.h): parses one tenant row as
 * gw_tenant_by_id returns it (text columns), unwrapping the Digest HA1 with the current
 * key of `keys`, then the previous one (zeroed when neither unwraps it). */
__attribute__((warn_unused_result)) bool
pgsync_parse_tenant(const char *const cols[PGSYNC_TENANT_COLUMNS],
                    const struct token_ha1_keys *keys, struct tenant_row *out);

/* The full load reads the same columns through COPY … (FORMAT binary) (gw_tenants_copy):
 * no hex, no per-row result. libpq hands over one tuple per buffer; the first one starts
 * with the file header. */
enum pgsync_copy {
    PGSYNC_COPY_ROW, /* *out holds a tenant */
    PGSYNC_COPY_END, /* the trailer: no more tuples */
    PGSYNC_COPY_BAD, /* malformed, or a row the bounds refuse */
};
/* Pure: the length of a COPY BINARY file header at buf, or 0 when it is not one. */
size_t pgsync_copy_header_len(const char *buf, size_t len);
/* Pure: parses one binary tuple (the header already skipped), with the same rules and
 * HA1 unwrap as pgsync_parse_tenant. valid_until comes as a timestamptz (PostgreSQL's
 * own computation of extract(epoch …)::int8 was two thirds of its time for the COPY). */
enum pgsync_copy pgsync_parse_copy_row(const char *buf, size_t len,
                                       const struct token_ha1_keys *keys, struct tenant_row *out);

/* Pure: unix seconds of a binary timestamptz (microseconds since 2000-01-01 UTC), rounded
 * as gw_tenant_by_id's extract(epoch FROM valid_until)::bigint rounds them (half away
 * from zero), so both paths load the same value. ±infinity (which that cast refuses) is
 * INT64_MAX / INT64_MIN. */
int64_t pgsync_unix_seconds(int64_t pg_usecs);

#endif
