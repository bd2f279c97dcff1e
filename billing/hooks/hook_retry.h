/* hook_retry — the webhook retry schedule, pure.
 *
 * After the n-th failed attempt (n >= 1) the next one waits min(base · 2^(n−1), cap): with
 * the defaults ([webhooks] retry_base 10s, retry_cap 1h) 10 s, 20 s, 40 s … 1 h, 1 h, ….
 * An event is given up (failed) when its next attempt would come later than retry_for
 * (24 h by default) after the event was written. A delivery counts when the receiver
 * answers 2xx; any other status, a timeout, a refused address or a broken connection is a
 * failure to retry. */
#ifndef HOOK_RETRY_H
#define HOOK_RETRY_H

#include <stdbool.h>
#include <stdint.h>

struct hook_retry_policy {
    int64_t base_ms, cap_ms, give_up_ms; /* > 0 */
};

/* The pause after `attempts` failed attempts (attempts >= 1), never above cap. */
int64_t hook_retry_delay_ms(const struct hook_retry_policy *p, int64_t attempts);

/* True when an event age_ms old, after `attempts` failed attempts, gets another one. */
bool hook_retry_again(const struct hook_retry_policy *p, int64_t attempts, int64_t age_ms);

/* True when an HTTP status means delivered. */
bool hook_retry_delivered(long status);

#endif
