/* flight — one node request for identical cache misses in flight at once.
 *
 * When several clients miss the cache on the same key at the same time (ten wallets
 * restoring together ask for the same get_blocks.bin batch), the first one to join leads:
 * it asks a node and stores the answer as usual. The others follow: they wait, looking the
 * cache up again (proxy's poll), until the leader lands. A follower that finds the answer
 * stored serves it; one that finds the flight landed without it (an error, an answer that
 * was not stored) joins again and leads in its turn, so a failed leader costs each follower
 * one more wait, never an answer. A lead is a lease: past it (the leader's node timeout)
 * the key counts as free, whatever became of its leader.
 *
 * Keys are the cache's (cache.h). Bounded: at most FLIGHT_MAX keys are led at once; past
 * that, everyone leads (no coalescing, no refusal). Thread-safe: one mutex. The set owns
 * its memory; flight_free frees it. */
#ifndef FLIGHT_H
#define FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"

#define FLIGHT_MAX 1024

enum flight_role {
    FLIGHT_LEAD,   /* ask a node, then flight_land */
    FLIGHT_FOLLOW, /* another request asks: wait for it to land */
};

struct flight_stats {
    uint64_t led, followed, expired; /* joins that led, that followed; leases run out */
    size_t open;                     /* keys led now */
};

struct flight;

struct flight *flight_new(void);
void flight_free(struct flight *f);

/* Joins the flight of key at now_ms: FLIGHT_LEAD when no lead on key is open (its lease
 * then ends at now_ms + lease_ms), FLIGHT_FOLLOW when one is. f NULL: FLIGHT_LEAD. */
enum flight_role flight_join(struct flight *f, const uint8_t key[CACHE_KEY_LEN], int64_t now_ms,
                             int64_t lease_ms);

/* Whether a lead on key is open at now_ms (a follower keeps waiting while it is). */
bool flight_open(struct flight *f, const uint8_t key[CACHE_KEY_LEN], int64_t now_ms);

/* The leader is done with key (answered, stored or failed). Idempotent; a key not led is
 * ignored. */
void flight_land(struct flight *f, const uint8_t key[CACHE_KEY_LEN]);

struct flight_stats flight_stats(struct flight *f);

#endif
