/* pgpool — see pgpool.h. */
#include "api/pgpool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct pgpool {
    pthread_mutex_t lock;
    pthread_cond_t freed;
    size_t size, nfree;
    struct xg_pg **all, **free_list;
};

struct pgpool *pgpool_new(const char *conninfo, const char *const *queries, size_t size)
{
    struct pgpool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pool->all = calloc(size, sizeof *pool->all);
    pool->free_list = calloc(size, sizeof *pool->free_list);
    pool->size = size;
    bool ok = pool->all && pool->free_list;
    for (size_t i = 0; ok && i < size; i++) {
        pool->all[i] = xg_pg_new(conninfo, queries);
        ok = pool->all[i] != NULL;
        pool->free_list[pool->nfree++] = pool->all[i];
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->freed, NULL);
    if (!ok) {
        pgpool_free(pool);
        return NULL;
    }
    return pool;
}

void pgpool_free(struct pgpool *pool)
{
    if (!pool)
        return;
    for (size_t i = 0; pool->all && i < pool->size; i++)
        xg_pg_free(pool->all[i]);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->freed);
    free(pool->all);
    free(pool->free_list);
    free(pool);
}

struct xg_pg *pgpool_get(struct pgpool *pool)
{
    pthread_mutex_lock(&pool->lock);
    while (pool->nfree == 0)
        pthread_cond_wait(&pool->freed, &pool->lock);
    struct xg_pg *pg = pool->free_list[--pool->nfree];
    pthread_mutex_unlock(&pool->lock);
    /* an idle connection the server ended (a restart, a failover) is replaced here */
    if (!xg_pg_alive(pg) && !xg_pg_connect(pg)) {
        /* not fatal here: the caller's first exec reports it with the reason */
    }
    return pg;
}

void pgpool_put(struct pgpool *pool, struct xg_pg *pg)
{
    pthread_mutex_lock(&pool->lock);
    pool->free_list[pool->nfree++] = pg;
    pthread_cond_signal(&pool->freed);
    pthread_mutex_unlock(&pool->lock);
}
