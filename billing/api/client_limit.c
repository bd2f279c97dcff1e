/* client_limit — see client_limit.h. */
#include "api/client_limit.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS_PER_HOUR 3600000LL
#define KEY_SIZE    64

/* GCRA on an exact integer clock: time is counted in ms × per_hour, so one token is
 * worth exactly MS_PER_HOUR of it and nothing is lost to rounding between calls. */
bool client_limit_bucket_take(struct client_limit_bucket *b, int64_t now_ms, int64_t per_hour,
                              int64_t burst, int64_t *retry_after_s)
{
    int64_t now = now_ms * per_hour;
    int64_t tat = b->tat > now ? b->tat : now;
    int64_t tolerance = (burst - 1) * MS_PER_HOUR;
    if (tat - now <= tolerance) {
        b->tat = tat + MS_PER_HOUR;
        return true;
    }
    int64_t wait_ms = (tat - now - tolerance + per_hour - 1) / per_hour;
    *retry_after_s = (wait_ms + 999) / 1000;
    return false;
}

struct client_limit_entry {
    char key[KEY_SIZE];
    struct client_limit_bucket bucket;
};

struct client_limit_table {
    pthread_mutex_t lock;
    int64_t per_hour, burst;
    size_t capacity, used;
    struct client_limit_entry *entries;
};

struct client_limit_table *client_limit_table_new(size_t capacity, int64_t per_hour, int64_t burst)
{
    struct client_limit_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->entries = calloc(capacity ? capacity : 1, sizeof *t->entries);
    if (!t->entries) {
        free(t);
        return NULL;
    }
    t->capacity = capacity ? capacity : 1;
    t->per_hour = per_hour;
    t->burst = burst;
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void client_limit_table_free(struct client_limit_table *t)
{
    if (!t)
        return;
    pthread_mutex_destroy(&t->lock);
    free(t->entries);
    free(t);
}

/* Linear scan: the table is small (a few thousand) and creation is not a hot path. */
static struct client_limit_entry *find_or_recycle(struct client_limit_table *t, const char *key)
{
    struct client_limit_entry *oldest = NULL;
    for (size_t i = 0; i < t->used; i++) {
        if (strcmp(t->entries[i].key, key) == 0)
            return &t->entries[i];
        if (!oldest || t->entries[i].bucket.tat < oldest->bucket.tat)
            oldest = &t->entries[i];
    }
    /* A full table is not empty (capacity is at least 1): the scan found an oldest. */
    struct client_limit_entry *e = t->used < t->capacity ? &t->entries[t->used++] : oldest;
    assert(e);
    memset(e, 0, sizeof *e);
    snprintf(e->key, sizeof e->key, "%s", key);
    return e;
}

bool client_limit_table_take(struct client_limit_table *t, const char *key, int64_t now_ms,
                             int64_t *retry_after_s)
{
    pthread_mutex_lock(&t->lock);
    struct client_limit_entry *e = find_or_recycle(t, key);
    bool ok = client_limit_bucket_take(&e->bucket, now_ms, t->per_hour, t->burst, retry_after_s);
    pthread_mutex_unlock(&t->lock);
    return ok;
}
