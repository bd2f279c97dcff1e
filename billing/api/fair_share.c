/* fair_share — see fair_share.h. */
#include "api/fair_share.h"

int64_t fair_share_of(int64_t cap, int64_t share_percent)
{
    if (cap < 1)
        return 1;
    if (share_percent > FAIR_SHARE_MAX_PERCENT)
        share_percent = FAIR_SHARE_MAX_PERCENT;
    int64_t share = cap / 100 * share_percent + cap % 100 * share_percent / 100;
    return share < 1 ? 1 : share;
}

enum fair_share_admission fair_share_admit(int64_t used, int64_t used_by_network, int64_t cap,
                                           int64_t share_percent)
{
    if (used_by_network >= fair_share_of(cap, share_percent))
        return FAIR_SHARE_NETWORK_FULL;
    if (used >= cap)
        return FAIR_SHARE_FULL;
    return FAIR_SHARE_ADMIT;
}
