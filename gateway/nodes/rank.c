/* rank — node ranking with rotation among equals (pure). */
#include "nodes/rank.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#define RANK_LOCAL 64 /* nodes ranked without an allocation (the prober passes at most 64) */

struct keyed {
    bool third_party;
    bool below_floor;
    int64_t distance;
    int priority;
    int64_t bucket;
    unsigned outstanding;
    size_t index;
};

static int compare_keyed(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->third_party != y->third_party)
        return x->third_party ? 1 : -1;
    if (x->below_floor != y->below_floor)
        return x->below_floor ? 1 : -1;
    if (x->distance != y->distance)
        return x->distance < y->distance ? -1 : 1;
    if (x->priority != y->priority)
        return x->priority < y->priority ? -1 : 1;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    if (x->outstanding != y->outstanding)
        return x->outstanding < y->outstanding ? -1 : 1;
    /* A stable base order, so that rotation alone decides among equals. */
    return (x->index > y->index) - (x->index < y->index);
}

static bool same_key(const struct keyed *x, const struct keyed *y)
{
    return x->third_party == y->third_party && x->below_floor == y->below_floor &&
           x->distance == y->distance && x->priority == y->priority && x->bucket == y->bucket &&
           x->outstanding == y->outstanding;
}

int64_t rank_bucket(double ema_ms, unsigned outstanding, double latency_bucket_ms)
{
    if (latency_bucket_ms <= 0)
        latency_bucket_ms = 1;
    return (int64_t)floor(ema_ms * ((double)outstanding + 1) / latency_bucket_ms);
}

double rank_peak_ewma(double ema_ms, double sample_ms, int64_t elapsed_ms, double decay_ms)
{
    if (ema_ms < 0 || sample_ms >= ema_ms)
        return sample_ms; /* none yet, or a peak: taken at once */
    if (elapsed_ms < 0)
        elapsed_ms = 0;
    double w = exp(-(double)elapsed_ms / (decay_ms > 0 ? decay_ms : 1));
    return ema_ms * w + sample_ms * (1 - w);
}

void rank_order(const struct rank_input *in, size_t count, uint64_t rotation,
                double latency_bucket_ms, size_t *out)
{
    if (count == 0)
        return;
    struct keyed local[RANK_LOCAL], *k = count <= RANK_LOCAL ? local : malloc(count * sizeof *k);
    if (!k) {
        for (size_t i = 0; i < count; i++)
            out[i] = in[i].index; /* no memory: the given order is still a valid order */
        return;
    }
    for (size_t i = 0; i < count; i++)
        k[i] = (struct keyed){in[i].priority == NODE_PUBLIC,
                              in[i].below_floor,
                              in[i].tip_distance,
                              (int)in[i].priority,
                              rank_bucket(in[i].ema_ms, in[i].outstanding, latency_bucket_ms),
                              in[i].outstanding,
                              in[i].index};
    qsort(k, count, sizeof *k, compare_keyed);
    for (size_t start = 0; start < count;) {
        size_t end = start + 1;
        while (end < count && same_key(&k[start], &k[end]))
            end++;
        size_t len = end - start;
        for (size_t j = 0; j < len; j++)
            out[start + j] = k[start + (j + rotation) % len].index;
        start = end;
    }
    if (k != local)
        free(k);
}

size_t rank_servable(const struct rank_input *in, size_t count)
{
    size_t own = 0;
    for (size_t i = 0; i < count; i++)
        own += in[i].priority != NODE_PUBLIC;
    return own ? own : count;
}
