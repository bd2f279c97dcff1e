/* context — what every part of the gateway's request path shares, owned by main and
 * passed as the closure to MHD and curl callbacks. No globals. */
#ifndef CONTEXT_H
#define CONTEXT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "digest.h"
#include "gw_config.h"
#include "nodes.h"
#include "tenants.h"
#include "upstream.h"

struct gw_context {
    const struct gw_config *cfg;
    struct tenant_store *tenants;
    struct node_registry *nodes;
    struct up_engine *up;
    struct digest_verifier *digest;
    size_t max_body;
    int64_t request_timeout_ms;
    int64_t node_timeout_ms;
};

#endif
