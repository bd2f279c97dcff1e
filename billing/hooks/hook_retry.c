/* hook_retry — see hook_retry.h. */
#include "hooks/hook_retry.h"

int64_t hook_retry_delay_ms(const struct hook_retry_policy *p, int64_t attempts)
{
    int64_t d = p->base_ms;
    for (int64_t i = 1; i < attempts && d < p->cap_ms; i++)
        d = d > p->cap_ms / 2 ? p->cap_ms : d * 2;
    return d < p->cap_ms ? d : p->cap_ms;
}

bool hook_retry_again(const struct hook_retry_policy *p, int64_t attempts, int64_t age_ms)
{
    return age_ms + hook_retry_delay_ms(p, attempts) <= p->give_up_ms;
}

bool hook_retry_delivered(long status)
{
    return status >= 200 && status <= 299;
}
