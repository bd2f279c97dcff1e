/* rank — the order in which healthy nodes are tried, and which of them may be (pure).
 *
 * Key, most significant first: own nodes (primary, standby) before public ones (a third
 * party's node comes last however far behind an own node is, within what the caller let
 * in), then nodes at or past the tenant's minimum height before those known below it
 * (consistency.h: a tenant is never answered with a tip older than one it was served), then
 * on the quorum tip (distance 0) before lagging nodes, then priority tier
 * (primary, standby), then EMA latency in buckets of
 * `latency_bucket_ms` (nodes whose latencies fall in the same bucket are equals). Equals
 * rotate with the caller's counter so that load spreads over them. The caller filters
 * which nodes may serve (up, breaker, full node…); rank only orders. */
#ifndef RANK_H
#define RANK_H

#include <stddef.h>
#include <stdint.h>

#include "nodes/nodes.h"

struct rank_input {
    size_t index;         /* the caller's index, copied to the output order */
    int64_t tip_distance; /* 0 on the quorum tip, k > 0 blocks behind */
    enum node_priority priority;
    double ema_ms;
    bool below_floor; /* its last known height is below the request's minimum height */
};

/* Writes the caller's indexes in rank order into out[count]. rotation: any counter the
 * caller advances per request. latency_bucket_ms <= 0 means 1 ms. */
void rank_order(const struct rank_input *in, size_t count, uint64_t rotation,
                double latency_bucket_ms, size_t *out);

/* How many of the first ranked nodes may be tried: all of them when none is own, else only
 * the own ones (a public node serves only while no own node can; rank_order puts them
 * last, so the own ones are a prefix). */
size_t rank_servable(const struct rank_input *in, size_t count);

#endif
