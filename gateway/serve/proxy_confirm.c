/* proxy_confirm — the step a read takes on a usable answer (proxy_confirm.h). Pure. */
#include "serve/proxy_confirm.h"

#include <stddef.h>

enum proxy_step proxy_confirm_step(const struct proxy_read_state *s,
                                   const struct proxy_answer_facts *f)
{
    if (s->phase == PHASE_READ && s->full_node && f->ok && f->pruned)
        return PROXY_STEP_FULL_NODE;
    /* Negatives must be confirmed; so must an error to a historical read, which may have
     * gone to a node a few blocks behind ("height too big" from a lagging node). */
    bool lagging_error = !s->need_tip && !f->ok;
    if (s->phase == PHASE_READ && ((f->ok && f->negatives > 0) || lagging_error))
        return PROXY_STEP_CONFIRM;
    bool better = f->ok && (!s->held || !s->held->ok || f->negatives < s->held->negatives);
    if (s->phase == PHASE_CONFIRM && s->held && !better)
        return PROXY_STEP_HELD;
    return PROXY_STEP_ANSWER;
}

const char *proxy_step_name(enum proxy_step step)
{
    switch (step) {
    case PROXY_STEP_ANSWER:
        return "answer";
    case PROXY_STEP_FULL_NODE:
        return "full_node";
    case PROXY_STEP_CONFIRM:
        return "confirm";
    case PROXY_STEP_HELD:
        return "held";
    }
    return "?";
}
