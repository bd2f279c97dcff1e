/* hook_outbox — writes webhook events into the outbox table (webhook_events) inside the
 * caller's transaction: the transaction that changes an invoice's state writes the events
 * that change causes (hook_event.h), so they commit or vanish with it and a crash at any
 * moment loses none. Delivery is hook_sender's. */
#ifndef HOOK_OUTBOX_H
#define HOOK_OUTBOX_H

#include "hooks/hook_event.h"
#include "xg_pg.h"

#include <stdbool.h>
#include <stddef.h>

/* Writes the events of one step of an invoice that has a webhook_url. False on a database
 * error (the caller classifies it with xg_pg_tx_classify) or out of memory. */
__attribute__((warn_unused_result)) bool hook_outbox_write(struct xg_pg *pg,
                                                           const struct hook_event *events,
                                                           size_t n,
                                                           const struct hook_event_facts *facts);

/* Writes the events of a settling step (hook_event_from_transition). */
__attribute__((warn_unused_result)) bool
hook_outbox_transition(struct xg_pg *pg, const struct hook_transition *t,
                       const struct hook_event_facts *facts);

/* The named queries it uses (for the owner's xg_pg_new list). */
extern const char *const hook_outbox_queries[];

#endif
