/* proxy_confirm — what a read does with a usable answer: pass it on, or hold it and ask
 * again. A get_transactions reporting a transaction missing, an is_key_image_spent
 * reporting an image unspent, and an error to a historical read (which may have gone to a
 * node a few blocks behind: "height too big") are confirmed on a second node on the quorum
 * tip first; a pruned answer to a request that needs unpruned data is asked again of a full
 * node. proxy (gateway/serve/proxy_attempt.c) follows the step; this rule is pure.
 *
 * Ownership: nothing is allocated; the facts are only read. */
#ifndef PROXY_CONFIRM_H
#define PROXY_CONFIRM_H

#include <stdbool.h>

#include "serve/proxy_facts.h"

/* Where a read is. */
enum proxy_phase {
    PHASE_READ,      /* rank 1, then once rank 2 on a failure */
    PHASE_FULL_NODE, /* a pruned answer, asked again of a full node */
    PHASE_CONFIRM,   /* a negative answer, asked again of a second node on the tip */
};

/* What the read does next with the answer that came. */
enum proxy_step {
    PROXY_STEP_ANSWER,    /* this answer is the client's (and may be stored) */
    PROXY_STEP_FULL_NODE, /* hold it, ask a full node (none: the request cannot be served) */
    PROXY_STEP_CONFIRM,   /* hold it, ask a second node on the tip (none: it stands) */
    PROXY_STEP_HELD,      /* the answer held earlier stands: the second node found no more */
};

/* The read as the rule sees it. */
struct proxy_read_state {
    enum proxy_phase phase;
    bool full_node; /* plan.full_node: the request needs unpruned data */
    bool need_tip;  /* only nodes on the quorum tip (not a historical read) */
    /* An answer held for a confirmation or a full-node retry, and its facts (NULL: none). */
    const struct proxy_answer_facts *held;
};

/* Pure: the step for answer f (a usable one: not a failure to retry) in read state s. */
enum proxy_step proxy_confirm_step(const struct proxy_read_state *s,
                                   const struct proxy_answer_facts *f);

/* "answer", "full_node", "confirm", "held"; "?" for an out-of-range value. */
const char *proxy_step_name(enum proxy_step step);

#endif
