/* hook_outbox — see hook_outbox.h. */
#include "hooks/hook_outbox.h"

#include "xg_log.h"

#include <stdio.h>
#include <stdlib.h>

const char *const hook_outbox_queries[] = {"bl_hook_event_insert", NULL};

bool hook_outbox_write(struct xg_pg *pg, const struct hook_event *events, size_t n,
                       const struct hook_event_facts *facts)
{
    for (size_t i = 0; i < n; i++) {
        char id[HOOK_EVENT_ID_SIZE], conf[24];
        char *body = hook_event_body(&events[i], facts);
        if (!body) {
            xg_log(XG_LOG_ERROR, "out_of_memory", "webhook event of invoice %s", facts->invoice_id);
            return false;
        }
        hook_event_id(facts->invoice_id, &events[i], id);
        snprintf(conf, sizeof conf, "%lld", (long long)events[i].confirmations);
        const char *params[] = {id, facts->invoice_id, hook_event_type_name(events[i].type), conf,
                                body};
        PGresult *res = xg_pg_exec(pg, "bl_hook_event_insert", 5, params);
        free(body);
        if (!res)
            return false;
        PQclear(res);
    }
    return true;
}

bool hook_outbox_transition(struct xg_pg *pg, const struct hook_transition *t,
                            const struct hook_event_facts *facts)
{
    struct hook_event events[HOOK_EVENT_MAX];
    size_t n = hook_event_from_transition(t, events);
    return hook_outbox_write(pg, events, n, facts);
}
