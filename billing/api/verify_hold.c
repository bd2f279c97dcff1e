/* verify_hold — see verify_hold.h. */
#include "api/verify_hold.h"

#include "xg_clock.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct verify_hold {
    size_t max_held, max_per_client;
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t wake;
    struct verify_hold_entry *head;
    size_t count;
    bool stopping;
    pthread_t thread;
};

enum verify_hold_admission verify_hold_admit(size_t held, size_t held_by_client, size_t max_held,
                                             size_t max_per_client)
{
    if (held_by_client >= max_per_client)
        return VERIFY_HOLD_CLIENT_FULL;
    if (held >= max_held)
        return VERIFY_HOLD_FULL;
    return VERIFY_HOLD_ADMIT;
}

static size_t held_by(const struct verify_hold *h, const char *client)
{
    size_t n = 0;
    for (const struct verify_hold_entry *e = h->head; e; e = e->next)
        n += strcmp(e->client, client) == 0;
    return n;
}

static void unlink_entry(struct verify_hold *h, struct verify_hold_entry *e)
{
    for (struct verify_hold_entry **p = &h->head; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            h->count--;
            return;
        }
}

enum verify_hold_admission verify_hold_add(struct verify_hold *h, struct MHD_Connection *conn,
                                           struct verify_hold_entry *e)
{
    pthread_mutex_lock(&h->lock);
    enum verify_hold_admission a = h->stopping ? VERIFY_HOLD_STOPPING
                                               : verify_hold_admit(h->count, held_by(h, e->client),
                                                                   h->max_held, h->max_per_client);
    if (a == VERIFY_HOLD_ADMIT) {
        /* suspended before the thread can see the entry, so a resume never comes first */
        MHD_suspend_connection(conn);
        e->conn = conn;
        e->next_ms = xg_monotonic_ms() + e->poll_ms;
        e->running = false;
        e->next = h->head;
        h->head = e;
        h->count++;
        pthread_cond_signal(&h->wake);
    }
    pthread_mutex_unlock(&h->lock);
    return a;
}

size_t verify_hold_count(struct verify_hold *h)
{
    pthread_mutex_lock(&h->lock);
    size_t n = h->count;
    pthread_mutex_unlock(&h->lock);
    return n;
}

/* The first entry due by now, marked running; NULL when none. */
static struct verify_hold_entry *take_due(struct verify_hold *h, int64_t now)
{
    for (struct verify_hold_entry *e = h->head; e; e = e->next)
        if (!e->running && e->next_ms <= now) {
            e->running = true;
            return e;
        }
    return NULL;
}

static int64_t earliest_due(const struct verify_hold *h)
{
    int64_t at = INT64_MAX;
    for (const struct verify_hold_entry *e = h->head; e; e = e->next)
        if (e->next_ms < at)
            at = e->next_ms;
    return at;
}

/* One check of e, outside the lock; e leaves the set and its connection is resumed when it
 * is done or out of time (after which e may be freed by its request at any moment). */
static void run_entry(struct verify_hold *h, struct verify_hold_entry *e)
{
    pthread_mutex_unlock(&h->lock);
    bool done = e->check(e);
    int64_t now = xg_monotonic_ms();
    pthread_mutex_lock(&h->lock);
    e->running = false;
    if (!done && now + e->poll_ms <= e->until_ms) {
        e->next_ms = now + e->poll_ms;
        return;
    }
    if (!done && now < e->until_ms) { /* one last look right at the deadline */
        e->next_ms = e->until_ms;
        return;
    }
    unlink_entry(h, e);
    MHD_resume_connection(e->conn);
}

static void *hold_main(void *arg)
{
    struct verify_hold *h = arg;
    pthread_mutex_lock(&h->lock);
    while (!h->stopping) {
        struct verify_hold_entry *e = take_due(h, xg_monotonic_ms());
        if (e) {
            run_entry(h, e);
            continue;
        }
        int64_t at = earliest_due(h);
        if (at == INT64_MAX) {
            pthread_cond_wait(&h->wake, &h->lock);
        } else {
            int64_t wait = at - xg_monotonic_ms();
            struct timespec ts = xg_monotonic_deadline(wait > 0 ? wait : 0);
            pthread_cond_timedwait(&h->wake, &h->lock, &ts);
        }
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

struct verify_hold *verify_hold_new(size_t max_held, size_t max_per_client)
{
    struct verify_hold *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->max_held = max_held;
    h->max_per_client = max_per_client;
    pthread_mutex_init(&h->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&h->wake, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&h->thread, NULL, hold_main, h) != 0) {
        pthread_cond_destroy(&h->wake);
        pthread_mutex_destroy(&h->lock);
        free(h);
        return NULL;
    }
    return h;
}

void verify_hold_stop(struct verify_hold *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    bool first = !h->stopping;
    h->stopping = true;
    pthread_cond_signal(&h->wake);
    pthread_mutex_unlock(&h->lock);
    if (first)
        pthread_join(h->thread, NULL);
    /* the thread is gone: no check runs; every held connection is resumed and answered
     * from what its last check found (a new proof is then answered at once: STOPPING) */
    pthread_mutex_lock(&h->lock);
    while (h->head) {
        struct verify_hold_entry *e = h->head;
        h->head = e->next;
        h->count--;
        MHD_resume_connection(e->conn);
    }
    pthread_mutex_unlock(&h->lock);
}

void verify_hold_free(struct verify_hold *h)
{
    if (!h)
        return;
    verify_hold_stop(h);
    pthread_cond_destroy(&h->wake);
    pthread_mutex_destroy(&h->lock);
    free(h);
}
