/* rank — the order in which healthy nodes are tried, and which of them may be (pure).
 *
 * Key, most significant first: own nodes (primary, standby) before public ones (a third
 * party's node comes last however far behind an own node is, within what the caller let
 * in), then nodes at or past the tenant's minimum height before those known below it
 * (consistency.h: a tenant is never answered with a tip older than one it was served), then
 * on the quorum tip (distance 0) before lagging nodes, then priority tier
 * (primary, standby), then the expected latency in buckets of `latency_bucket_ms`, then
 * the fewest requests outstanding. Equals rotate with the caller's counter so that load
 * spreads over them. The caller filters which nodes may serve (up, breaker, full node…);
 * rank only orders.
 *
 * The expected latency is the node's latency (the peak-sensitive average of its client
 * answers, rank_peak_ewma; its probes' EMA while it has served none lately) times one more
 * than its requests outstanding (sent or waiting for a connection, not yet answered): the
 * peak-EWMA rule of Finagle and Linkerd. A node that a burst piles onto ranks behind an idle one of
 * the next bucket at once, instead of taking every request until its EMA, measured by a
 * probe every interval, catches up (which sent all load to one node for seconds at a time
 * and queued it there). Among nodes in one bucket the least loaded comes first (join the
 * shortest queue); at low load every count is 0 and equals rotate as before. */
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
    bool below_floor;     /* its last known height is below the request's minimum height */
    unsigned outstanding; /* client requests sent to it (or queued for it), not yet answered */
};

/* The peak-sensitive moving average of a node's client latencies after one more answer
 * that took sample_ms, elapsed_ms after the previous one: a sample above the average is
 * taken at once (a node that starts to stall ranks lower with its first slow answer);
 * below it, the average decays toward it with time constant decay_ms, so that a burst of
 * fast answers does not erase a stall at once. ema_ms < 0: no answer yet. */
double rank_peak_ewma(double ema_ms, double sample_ms, int64_t elapsed_ms, double decay_ms);

/* The bucket of a node whose EMA latency is ema_ms with `outstanding` requests in flight:
 * floor(ema_ms × (outstanding + 1) / latency_bucket_ms). */
int64_t rank_bucket(double ema_ms, unsigned outstanding, double latency_bucket_ms);

/* Writes the caller's indexes in rank order into out[count]. rotation: any counter the
 * caller advances per request. latency_bucket_ms <= 0 means 1 ms. */
void rank_order(const struct rank_input *in, size_t count, uint64_t rotation,
                double latency_bucket_ms, size_t *out);

/* How many of the first ranked nodes may be tried: all of them when none is own, else only
 * the own ones (a public node serves only while no own node can; rank_order puts them
 * last, so the own ones are a prefix). */
size_t rank_servable(const struct rank_input *in, size_t count);

#endif
