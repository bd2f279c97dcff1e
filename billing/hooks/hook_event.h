/* hook_event — which webhook events an invoice's state change causes, their stable ids and
 * their bodies; pure (jansson for the body, no I/O).
 *
 * The rule, over one settling step (the state and confirmation count before and after it,
 * billing/payments/settle.h):
 *   seen         the invoice is seen, confirming or paid after the step, or is provisioned
 *                by it from a payment-waiting state (a payment that covers it was seen);
 *   confirming   the confirmation count rose and the invoice is confirming, paid or late
 *                after the step: one event per new count (the count is in the body);
 *   provisioned  the step provisioned it;
 *   expired      the step expired it.
 * Each event's id is "<invoice>.<type>", with ".<count>" for confirming: writing the same
 * event twice is a no-op in the outbox (its unique key), and receivers deduplicate on it.
 * A reverted invoice sends nothing of its own; the next payment's events follow. */
#ifndef HOOK_EVENT_H
#define HOOK_EVENT_H

#include "invoice/invoice.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOOK_EVENT_MAX     3
#define HOOK_EVENT_ID_SIZE 80

enum hook_event_type {
    HOOK_EVENT_SEEN,
    HOOK_EVENT_CONFIRMING,
    HOOK_EVENT_PROVISIONED,
    HOOK_EVENT_EXPIRED,
};

struct hook_event {
    enum hook_event_type type;
    int64_t confirmations;
};

struct hook_transition {
    enum invoice_state before, after;
    int64_t conf_before, conf_after;
};

/* The events of one step, in the order they are to be sent, into out; returns how many. */
size_t hook_event_from_transition(const struct hook_transition *t,
                                  struct hook_event out[HOOK_EVENT_MAX]);

const char *hook_event_type_name(enum hook_event_type type);

/* The event's stable id into out. */
void hook_event_id(const char *invoice_id, const struct hook_event *e,
                   char out[HOOK_EVENT_ID_SIZE]);

/* What the body says of the invoice. */
struct hook_event_facts {
    const char *invoice_id;
    enum invoice_state status; /* after the step */
    int64_t amount, paid;      /* piconero */
    int64_t confirmations_required;
    int64_t created; /* unix seconds (the database's clock) */
};

/* The body, compact JSON (malloc'd; NULL when out of memory):
 * {"id":"<event id>","type":"confirming","created":<unix>,"invoice":{"id","status",
 *  "amount","paid","confirmations","confirmations_required"}} with amounts as decimal
 * piconero strings. */
char *hook_event_body(const struct hook_event *e, const struct hook_event_facts *f);

#endif
