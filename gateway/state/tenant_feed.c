/* tenant_feed — a reader-to-writer ring of tenant row batches for the full load. */
#include "state/tenant_feed.h"

#include <pthread.h>
#include <stdlib.h>
#include <urcu-bp.h>

/* 4 × 512 rows of 160 bytes: 320 KiB, within a core's L2, so the writer reads rows the
 * reader has just written while they are still cached. */
#define FEED_BATCHES    4
#define FEED_BATCH_ROWS 512

struct feed_batch {
    size_t rows;
    struct tenant_row row[FEED_BATCH_ROWS];
};

struct tenant_feed {
    struct tenant_store *store;
    uint64_t generation;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t queued; /* the writer waits: a batch queued, or done */
    pthread_cond_t room;   /* the reader waits: a batch published */
    size_t filling;        /* reader only: batches handed over so far; it fills this one */
    size_t taken;          /* writer only: batches published so far */
    size_t pending;        /* under mu: handed over, not yet published */
    bool done;             /* under mu: no batch will follow */
    bool failed;           /* under mu until the join: an upsert ran out of memory */
    struct feed_batch batch[FEED_BATCHES];
};

static void *feed_writer(void *arg)
{
    struct tenant_feed *feed = arg;
    rcu_register_thread();
    bool failed = false;
    pthread_mutex_lock(&feed->mu);
    for (;;) {
        while (feed->pending == 0 && !feed->done)
            pthread_cond_wait(&feed->queued, &feed->mu);
        if (feed->pending == 0)
            break;
        pthread_mutex_unlock(&feed->mu);
        /* The reader writes only the batch past the pending ones: this one is ours. */
        struct feed_batch *b = &feed->batch[feed->taken % FEED_BATCHES];
        for (size_t i = 0; i < b->rows && !failed; i++)
            failed = !tenants_upsert(feed->store, &b->row[i], feed->generation);
        feed->taken++;
        pthread_mutex_lock(&feed->mu);
        feed->pending--;
        pthread_cond_signal(&feed->room);
    }
    feed->failed = failed;
    pthread_mutex_unlock(&feed->mu);
    rcu_unregister_thread();
    return NULL;
}

struct tenant_feed *tenant_feed_start(struct tenant_store *store, uint64_t generation)
{
    struct tenant_feed *feed = malloc(sizeof *feed);
    if (!feed)
        return NULL;
    feed->store = store;
    feed->generation = generation;
    feed->filling = feed->taken = feed->pending = 0;
    feed->done = feed->failed = false;
    feed->batch[0].rows = 0;
    pthread_mutex_init(&feed->mu, NULL);
    pthread_cond_init(&feed->queued, NULL);
    pthread_cond_init(&feed->room, NULL);
    if (pthread_create(&feed->thread, NULL, feed_writer, feed) != 0) {
        pthread_cond_destroy(&feed->room);
        pthread_cond_destroy(&feed->queued);
        pthread_mutex_destroy(&feed->mu);
        free(feed);
        return NULL;
    }
    return feed;
}

struct tenant_row *tenant_feed_slot(struct tenant_feed *feed)
{
    struct feed_batch *b = &feed->batch[feed->filling % FEED_BATCHES];
    return &b->row[b->rows];
}

/* Queues the batch being filled and waits until the next one is free. */
static void hand_over(struct tenant_feed *feed)
{
    pthread_mutex_lock(&feed->mu);
    feed->pending++;
    pthread_cond_signal(&feed->queued);
    while (feed->pending == FEED_BATCHES)
        pthread_cond_wait(&feed->room, &feed->mu);
    pthread_mutex_unlock(&feed->mu);
    feed->filling++;
    feed->batch[feed->filling % FEED_BATCHES].rows = 0;
}

void tenant_feed_push(struct tenant_feed *feed)
{
    struct feed_batch *b = &feed->batch[feed->filling % FEED_BATCHES];
    if (++b->rows == FEED_BATCH_ROWS)
        hand_over(feed);
}

bool tenant_feed_finish(struct tenant_feed *feed)
{
    if (feed->batch[feed->filling % FEED_BATCHES].rows)
        hand_over(feed);
    pthread_mutex_lock(&feed->mu);
    feed->done = true;
    pthread_cond_signal(&feed->queued);
    pthread_mutex_unlock(&feed->mu);
    pthread_join(feed->thread, NULL);
    bool ok = !feed->failed;
    pthread_cond_destroy(&feed->room);
    pthread_cond_destroy(&feed->queued);
    pthread_mutex_destroy(&feed->mu);
    free(feed);
    return ok;
}
