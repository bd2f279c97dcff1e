/* hook_event — see hook_event.h. */
#include "hooks/hook_event.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>

static bool waiting_for_money(enum invoice_state s)
{
    return s == INVOICE_PENDING || s == INVOICE_UNDERPAID || s == INVOICE_REVERTED ||
           s == INVOICE_EXPIRED || s == INVOICE_LATE;
}

size_t hook_event_from_transition(const struct hook_transition *t,
                                  struct hook_event out[HOOK_EVENT_MAX])
{
    size_t n = 0;
    enum invoice_state a = t->after;
    bool provisioned_now = a == INVOICE_PROVISIONED && t->before != INVOICE_PROVISIONED;
    if (a == INVOICE_SEEN || a == INVOICE_CONFIRMING || a == INVOICE_PAID ||
        (provisioned_now && waiting_for_money(t->before)))
        out[n++] = (struct hook_event){HOOK_EVENT_SEEN, 0};
    if (t->conf_after > t->conf_before && t->conf_after > 0 &&
        (a == INVOICE_CONFIRMING || a == INVOICE_PAID || a == INVOICE_LATE))
        out[n++] = (struct hook_event){HOOK_EVENT_CONFIRMING, t->conf_after};
    if (provisioned_now)
        out[n++] = (struct hook_event){HOOK_EVENT_PROVISIONED, t->conf_after};
    else if (a == INVOICE_EXPIRED && t->before != INVOICE_EXPIRED)
        out[n++] = (struct hook_event){HOOK_EVENT_EXPIRED, t->conf_after};
    return n;
}

const char *hook_event_type_name(enum hook_event_type type)
{
    switch (type) {
    case HOOK_EVENT_SEEN:
        return "seen";
    case HOOK_EVENT_CONFIRMING:
        return "confirming";
    case HOOK_EVENT_PROVISIONED:
        return "provisioned";
    case HOOK_EVENT_EXPIRED:
        return "expired";
    }
    return "unknown";
}

void hook_event_id(const char *invoice_id, const struct hook_event *e, char out[HOOK_EVENT_ID_SIZE])
{
    if (e->type == HOOK_EVENT_CONFIRMING)
        snprintf(out, HOOK_EVENT_ID_SIZE, "%.40s.%s.%" PRId64, invoice_id,
                 hook_event_type_name(e->type), e->confirmations);
    else
        snprintf(out, HOOK_EVENT_ID_SIZE, "%.40s.%s", invoice_id, hook_event_type_name(e->type));
}

static json_t *piconero(int64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%" PRId64, v);
    return json_string(text);
}

char *hook_event_body(const struct hook_event *e, const struct hook_event_facts *f)
{
    char id[HOOK_EVENT_ID_SIZE];
    hook_event_id(f->invoice_id, e, id);
    json_t *doc = json_pack("{s:s, s:s, s:I, s:{s:s, s:s, s:o, s:o, s:I, s:I}}", "id", id, "type",
                            hook_event_type_name(e->type), "created", (json_int_t)f->created,
                            "invoice", "id", f->invoice_id, "status", invoice_state_name(f->status),
                            "amount", piconero(f->amount), "paid", piconero(f->paid),
                            "confirmations", (json_int_t)e->confirmations, "confirmations_required",
                            (json_int_t)f->confirmations_required);
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    return text;
}
