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
    bool networks; /* count keys as addresses by prefix */
    struct client_prefix_policy prefix;
    int64_t network_factor;
    size_t capacity, used;
    struct client_limit_entry *entries;
};

struct client_limit_table *client_limit_table_new(size_t capacity, int64_t per_hour, int64_t burst,
                                                  const struct client_prefix_policy *networks,
                                                  int64_t network_factor)
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
    t->networks = networks != NULL;
    if (networks)
        t->prefix = *networks;
    t->network_factor = network_factor > 1 ? network_factor : 1;
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

/* Linear scan: the table is small (a few thousand) and creation is not a hot path.
 * keep: an entry not to recycle (the other bucket of the same take), or NULL. */
static struct client_limit_entry *find_or_recycle(struct client_limit_table *t, const char *key,
                                                  const struct client_limit_entry *keep)
{
    struct client_limit_entry *oldest = NULL;
    for (size_t i = 0; i < t->used; i++) {
        if (strcmp(t->entries[i].key, key) == 0)
            return &t->entries[i];
        if (&t->entries[i] != keep && (!oldest || t->entries[i].bucket.tat < oldest->bucket.tat))
            oldest = &t->entries[i];
    }
    /* A full table of two or more entries has an oldest besides keep; a table of one
     * (capacity 1, for a global bucket) has no networks and so never a keep. */
    struct client_limit_entry *e = t->used < t->capacity ? &t->entries[t->used++] : oldest;
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    snprintf(e->key, sizeof e->key, "%s", key);
    return e;
}

/* Both buckets or neither: the takes are tried on copies and kept only when both pass. */
static bool take_both(struct client_limit_table *t, const char *client, const char *network,
                      int64_t now_ms, int64_t *retry_after_s)
{
    struct client_limit_entry *c = find_or_recycle(t, client, NULL);
    struct client_limit_entry *n = c ? find_or_recycle(t, network, c) : NULL;
    if (!n || n == c) { /* one prefix for both, or a table too small for two keys */
        return c &&
               client_limit_bucket_take(&c->bucket, now_ms, t->per_hour, t->burst, retry_after_s);
    }
    struct client_limit_bucket cb = c->bucket, nb = n->bucket;
    if (!client_limit_bucket_take(&cb, now_ms, t->per_hour, t->burst, retry_after_s))
        return false;
    if (!client_limit_bucket_take(&nb, now_ms, t->per_hour * t->network_factor,
                                  t->burst * t->network_factor, retry_after_s))
        return false;
    c->bucket = cb;
    n->bucket = nb;
    return true;
}

bool client_limit_table_take(struct client_limit_table *t, const char *key, int64_t now_ms,
                             int64_t *retry_after_s)
{
    char client[CLIENT_PREFIX_KEY_SIZE], network[CLIENT_PREFIX_KEY_SIZE];
    bool ok;
    pthread_mutex_lock(&t->lock);
    if (t->networks && client_prefix_keys(key, &t->prefix, client, network)) {
        ok = take_both(t, client, network, now_ms, retry_after_s);
    } else {
        struct client_limit_entry *e = find_or_recycle(t, key, NULL);
        assert(e); /* without a keep, a table of at least one entry always has one */
        ok = client_limit_bucket_take(&e->bucket, now_ms, t->per_hour, t->burst, retry_after_s);
    }
    pthread_mutex_unlock(&t->lock);
    return ok;
}
