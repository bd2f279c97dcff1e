/* honesty — whether a node's answers may still be served, from how often they disagreed
 * with the other own nodes' (gateway/rpc/agree.h compares them). Pure: no I/O, no clock, no
 * locks; the caller passes the time and holds the struct.
 *
 * A node whose answer is the odd one out (two others agreed without it) has mismatched.
 * `limit` mismatches within `window_ms` mark it misbehaving: it serves no read until
 * `cooldown` has passed, which doubles each time it is marked again (from `cooldown_ms` to
 * `ceiling_ms`, as a failing node's probe cooldown does) and starts again at `cooldown_ms`
 * once it has gone a whole window without a mismatch. Its probes go on: a misbehaving node
 * is still up, and the operator sees why it does not serve. A disagreement between two
 * nodes with no third to tell which is right blames neither.
 *
 * A mismatch is first a suspicion, noted with the quorum tip the read was sent at, and
 * counts only once `settle_ms` later that tip is still the quorum's: a node that has a new
 * block a moment before the others (and the prober) do answers the output distribution, the
 * fee estimate and the unlocked flag of get_outs for that block, honestly and differently.
 * When the tip moved within settle_ms the suspicion is excused. A lie holds on any tip. */
#ifndef HONESTY_H
#define HONESTY_H

#include <stdbool.h>
#include <stdint.h>

#define HONESTY_MAX_LIMIT 16 /* the most mismatches one window can be asked to hold */
#define HONESTY_SUSPECTS  8  /* suspicions waiting to settle; more at once are one too many */
#define HONESTY_TIP_LEN   64

struct honesty_params {
    int limit;           /* mismatches within the window that mark a node [3] */
    int64_t window_ms;   /* [1 h] */
    int64_t cooldown_ms; /* the first time out of service [1 min] */
    int64_t ceiling_ms;  /* the longest [17 h] */
    int64_t settle_ms;   /* a suspicion waits this long for the tip to move [10 s] */
};

struct honesty_params honesty_params_default(void);

struct honesty {
    uint64_t agreed, mismatched;       /* answers compared so far, by outcome */
    uint64_t marked;                   /* times it was marked misbehaving */
    int64_t recent[HONESTY_MAX_LIMIT]; /* when its last mismatches were, oldest first */
    int nrecent;
    int64_t out_until_ms; /* misbehaving until (0: never marked) */
    int64_t cooldown_ms;  /* the next time out (0: cooldown_ms) */
    int64_t last_mismatch_ms;
    struct honesty_suspect {
        char tip[HONESTY_TIP_LEN + 1]; /* the quorum tip the read was sent at */
        int64_t at_ms;
    } suspects[HONESTY_SUSPECTS];
    int nsuspects;
    uint64_t excused; /* suspicions the tip's move explained */
};

/* One compared answer of the node: agreed with the others, or was the odd one out. True when
 * this mismatch marked the node misbehaving (log it once). */
bool honesty_record(struct honesty *h, bool agreed, int64_t now_ms, const struct honesty_params *p);

/* The node's answer was the odd one out of a read sent at quorum tip `tip`: a suspicion,
 * until honesty_settle. */
void honesty_suspect(struct honesty *h, const char *tip, int64_t now_ms);

/* Settles the suspicions settle_ms old or more against the quorum tip now (`tip`; NULL while
 * the quorum is unknown or degraded: they wait, up to the window): on the same tip each is
 * a mismatch (honesty_record), on another it is excused. True when one marked the node. */
bool honesty_settle(struct honesty *h, const char *tip, int64_t now_ms,
                    const struct honesty_params *p);

/* Whether the node may serve reads now. */
bool honesty_allows(const struct honesty *h, int64_t now_ms);

#endif
