/* xg_clock — the monotonic clock in the units callers keep (pure wrappers of
 * clock_gettime(CLOCK_MONOTONIC)). Inline: some run on every request. */
#ifndef XG_CLOCK_H
#define XG_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t xg_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t xg_monotonic_us(void)
{
    return xg_monotonic_ns() / 1000;
}

static inline int64_t xg_monotonic_ms(void)
{
    return xg_monotonic_ns() / 1000000;
}

/* The kernel's last tick (a few ms coarse) at a fraction of the cost: for timeouts
 * counted in seconds that are checked on every read and write. */
static inline int64_t xg_monotonic_coarse_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The monotonic clock ms from now, as pthread_cond_timedwait takes it on a condition
 * variable set to CLOCK_MONOTONIC. */
static inline struct timespec xg_monotonic_deadline(int64_t ms)
{
    int64_t at = xg_monotonic_ns() + ms * 1000000;
    return (struct timespec){.tv_sec = (time_t)(at / 1000000000),
                             .tv_nsec = (long)(at % 1000000000)};
}

static inline double xg_monotonic_s(void)
{
    return (double)xg_monotonic_ns() / 1e9;
}

#endif
