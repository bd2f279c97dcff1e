/* pgsync — keeps the gateway's in-memory tenants and nodes equal to PostgreSQL.
 *
 * One thread with one connection: LISTEN on xmrgate_tenants, xmrgate_tiers and
 * xmrgate_nodes, then a full load; afterwards each NOTIFY reloads just the row it names.
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

struct gw_metrics;

/* ha1_key unwraps the stored Digest HA1 values (copied). metrics (may be NULL) counts the
 * NOTIFYs applied, how long each took from arrival, and the full reloads. */
struct pgsync *pgsync_start(const char *conninfo, const uint8_t ha1_key[TOKEN_HA1_KEY_LEN],
                            struct tenant_store *tenants, struct node_registry *nodes,
                            struct gw_metrics *metrics);
void pgsync_stop(struct pgsync *sync);

/* True once a full load has completed on the current connection. */
bool pgsync_synced(struct pgsync *sync, char *reason, size_t len);

/* The columns of a tenant row (sql/queries_gateway.sql, gw_tenants_*). */
#define PGSYNC_TENANT_COLUMNS 10

/* Pure: parses one tenant row as gw_tenants_all returns it (text columns), unwrapping
 * the Digest HA1 with ha1_key (zeroed when it does not unwrap). */
__attribute__((warn_unused_result)) bool
pgsync_parse_tenant(const char *const cols[PGSYNC_TENANT_COLUMNS],
                    const uint8_t ha1_key[TOKEN_HA1_KEY_LEN], struct tenant_row *out);

#endif
