/* admin_api — the gateway's admin API, served on the admin listener behind the admin
 * credential (common/xg_admin.h). JSON in, JSON out; errors are {"error":{"code","message"}}.
 *
 *   GET    /v1/nodes                   every node in the nodes table with its live health:
 *                                      state, height, lag, EMA latency, breaker, cooldown,
 *                                      last error; the quorum; the cache counters
 *   GET    /nodes                      the same (older name, kept for scripts)
 *   POST   /v1/nodes                   add {name, url, priority?, pruned?, enabled?}
 *   GET    /v1/nodes/<name>            one node
 *   PATCH  /v1/nodes/<name>            change {url?, priority?, pruned?, enabled?}
 *   DELETE /v1/nodes/<name>            remove
 *   POST   /v1/nodes/<name>/enable     enabled = true
 *   POST   /v1/nodes/<name>/disable    enabled = false
 *   POST   /v1/nodes/<name>/reenable   bring back a node dropped after its cooldown ceiling
 *                                      (touches the row: every replica resets its health)
 *   GET    /v1/quorum                  the quorum tip, healthy count, degraded and why
 *   POST   /v1/route                   which node would serve {method, params} (JSON-RPC) or
 *                                      {path, body} and why, without forwarding anything;
 *                                      "plan": the request's plan (gateway/rpc/plan.h)
 *   GET    /v1/tenants/<id>            a tenant as PostgreSQL and this replica's memory see it
 *   POST   /v1/tenants/<id>/suspend    state = suspended (every replica refuses it at once)
 *   POST   /v1/tenants/<id>/resume     state = active
 *
 * Changes are written to PostgreSQL only; this replica, like every other, applies them when
 * the NOTIFY arrives (gateway/state/pgsync.h), so all replicas converge the same way. A suspend
 * or resume answers once this replica has applied it (or after 2 s, saying so).
 *
 * Threading: handlers run on the admin listener's thread; the PostgreSQL connection is
 * guarded by a mutex all the same. Ownership: struct admin_api owns its connection; the
 * prober, registries and cache are borrowed and must outlive it. */
#ifndef ADMIN_API_H
#define ADMIN_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "xg_httpd.h"

struct prober;
struct node_registry;
struct tenant_store;
struct cache;

struct admin_api_deps {
    const char *conninfo; /* copied */
    struct prober *prober;
    struct node_registry *nodes;
    struct tenant_store *tenants;
    struct cache *cache;
};

struct admin_api;

struct admin_api *admin_api_new(const struct admin_api_deps *deps);
void admin_api_free(struct admin_api *api);

/* The routes; pass the admin_api as the xg_admin closure. */
extern const struct xg_httpd_route admin_api_routes[];

/* ---- pure parts, table-tested ------------------------------------------------------ */

/* A node as the admin API accepts it; NULL members are "leave as it is". */
struct admin_node_change {
    const char *name, *url, *priority;
    const char *pruned, *enabled; /* "true" / "false" or NULL */
};

/* Reads and checks a node body: for an add (`adding`) name and url are required; the
 * pointers point into `body`, which must outlive *out. False with a message. */
__attribute__((warn_unused_result)) bool admin_node_change_parse(const json_t *body, bool adding,
                                                                 struct admin_node_change *out,
                                                                 char *err, size_t errlen);

/* The same rules as the nodes table's CHECKs, so a bad value gets a clear 400. */
bool admin_node_name_ok(const char *name);
bool admin_node_url_ok(const char *url);

#endif
