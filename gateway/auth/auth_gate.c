/* auth_gate — answer a failed credential on the head, or after a small body; see the
 * header for the rule and why. */
#include "auth/auth_gate.h"

enum auth_gate_action auth_gate_decide(const struct auth_gate_head *h)
{
    switch (h->verdict) {
    case AUTH_GATE_OK:
    case AUTH_GATE_STALE:
        return AUTH_GATE_READ_BODY;
    case AUTH_GATE_UNAUTHORIZED:
    case AUTH_GATE_MALFORMED:
        break;
    }
    if (h->agent_path && h->verdict == AUTH_GATE_UNAUTHORIZED)
        return AUTH_GATE_READ_BODY;
    bool body = h->chunked || (h->has_length && h->content_length > 0);
    if (!body)
        return AUTH_GATE_ANSWER_NOW; /* nothing to read: the same answer, sooner */
    if (h->chunked || h->expect_continue || h->content_length > AUTH_GATE_SMALL_BODY)
        return AUTH_GATE_ANSWER_NOW;
    return AUTH_GATE_READ_BODY;
}
