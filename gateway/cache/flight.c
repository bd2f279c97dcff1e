/* flight — see flight.h. The open leads are a small array scanned in full: they are as
 * many as distinct cacheable misses in flight at one moment, tens at most in practice
 * (FLIGHT_MAX bounds them), and an expired lead is dropped where it is met. */
#include "cache/flight.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct flight_lead {
    uint8_t key[CACHE_KEY_LEN];
    int64_t until_ms;
};

struct flight {
    pthread_mutex_t lock;
    struct flight_lead leads[FLIGHT_MAX];
    size_t n;
    struct flight_stats stats;
};

struct flight *flight_new(void)
{
    struct flight *f = calloc(1, sizeof *f);
    if (f && pthread_mutex_init(&f->lock, NULL) != 0) {
        free(f);
        return NULL;
    }
    return f;
}

void flight_free(struct flight *f)
{
    if (!f)
        return;
    pthread_mutex_destroy(&f->lock);
    free(f);
}

static void drop_at(struct flight *f, size_t i)
{
    f->leads[i] = f->leads[--f->n];
}

/* The open lead on key, or -1; leases past now_ms are dropped on the way. */
static long find_open(struct flight *f, const uint8_t key[CACHE_KEY_LEN], int64_t now_ms)
{
    for (size_t i = 0; i < f->n;) {
        if (f->leads[i].until_ms <= now_ms) {
            drop_at(f, i);
            f->stats.expired++;
            continue;
        }
        if (memcmp(f->leads[i].key, key, CACHE_KEY_LEN) == 0)
            return (long)i;
        i++;
    }
    return -1;
}

enum flight_role flight_join(struct flight *f, const uint8_t key[CACHE_KEY_LEN], int64_t now_ms,
                             int64_t lease_ms)
{
    if (!f)
        return FLIGHT_LEAD;
    enum flight_role role = FLIGHT_LEAD;
    pthread_mutex_lock(&f->lock);
    if (find_open(f, key, now_ms) >= 0) {
        role = FLIGHT_FOLLOW;
        f->stats.followed++;
    } else {
        f->stats.led++;
        if (f->n < FLIGHT_MAX && lease_ms > 0) {
            memcpy(f->leads[f->n].key, key, CACHE_KEY_LEN);
            f->leads[f->n++].until_ms = now_ms + lease_ms;
        }
    }
    pthread_mutex_unlock(&f->lock);
    return role;
}

bool flight_open(struct flight *f, const uint8_t key[CACHE_KEY_LEN], int64_t now_ms)
{
    if (!f)
        return false;
    pthread_mutex_lock(&f->lock);
    bool open = find_open(f, key, now_ms) >= 0;
    pthread_mutex_unlock(&f->lock);
    return open;
}

void flight_land(struct flight *f, const uint8_t key[CACHE_KEY_LEN])
{
    if (!f)
        return;
    pthread_mutex_lock(&f->lock);
    for (size_t i = 0; i < f->n; i++)
        if (memcmp(f->leads[i].key, key, CACHE_KEY_LEN) == 0) {
            drop_at(f, i);
            break;
        }
    pthread_mutex_unlock(&f->lock);
}

struct flight_stats flight_stats(struct flight *f)
{
    struct flight_stats s = {0};
    if (!f)
        return s;
    pthread_mutex_lock(&f->lock);
    s = f->stats;
    s.open = f->n;
    pthread_mutex_unlock(&f->lock);
    return s;
}
