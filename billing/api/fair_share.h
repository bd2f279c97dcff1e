/* fair_share — how much of a global XMR402 cap one network may take.
 *
 * The global caps ([xmr402] max_open_challenges, verifies_per_second) protect the wallet
 * and the database, and so became a lever: a few networks could keep every open challenge
 * taken, or spend every verify of the second, and every other agent was refused. Each cap
 * is therefore shared: one network (its client_prefix.h network key, /24 or /48 by default)
 * may hold at most share_percent of it ([xmr402] challenge_share, verify_share), at least
 * one. A flood from k networks takes at most k shares and leaves the rest to everyone else.
 *
 * Pure: no I/O, no allocation. The caller counts (open challenges in PostgreSQL, shared by
 * every instance; verifies in an in-memory bucket per network, client_limit.h). */
#ifndef FAIR_SHARE_H
#define FAIR_SHARE_H

#include <stdint.h>

/* Share percentages are 1..100 (bl_config checks them). */
#define FAIR_SHARE_MIN_PERCENT 1
#define FAIR_SHARE_MAX_PERCENT 100

enum fair_share_admission {
    FAIR_SHARE_ADMIT,
    FAIR_SHARE_NETWORK_FULL, /* the client's network holds its share already */
    FAIR_SHARE_FULL,         /* the cap is reached over all networks */
};

/* One network's share of cap: floor(cap × share_percent / 100), at least 1 and at most cap
 * (a cap under 1 gives 1: the caller's cap is at least 1). No overflow for cap < 2^56. */
int64_t fair_share_of(int64_t cap, int64_t share_percent);

/* May one more be taken, with used taken in all and used_by_network of them by the
 * client's network? The network's share is read first (a flooding network is told it is
 * the one), then the cap. */
enum fair_share_admission fair_share_admit(int64_t used, int64_t used_by_network, int64_t cap,
                                           int64_t share_percent);

#endif
