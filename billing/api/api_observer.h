/* api_observer — how the API reports its answers to whoever counts them (billing's
 * metrics, ops/bl_metrics.h), which sits above the API and cannot be called from it. */
#ifndef API_OBSERVER_H
#define API_OBSERVER_H

#include <stddef.h>

/* What the API reports of each routed request once it completes (billing's metrics,
 * ops/bl_metrics.h), on an HTTP thread: its route (an index in api_route_paths), the
 * status sent (0: dropped before a complete answer), the seconds from its arrival to its
 * answer (a proof held for its transaction included), and the error registry's code it
 * was answered with (enum bl_error; -1 when it was not an error). */
struct api_observer {
    void (*answered)(void *ctx, size_t route, unsigned status, double seconds, int error);
    void *ctx;
};

#endif
