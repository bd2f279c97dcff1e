/* fleet — the replicas' heartbeats in PostgreSQL and the count each replica shares its
 * tenants' bursts by. */
#include "limits/fleet.h"

#include "xg_log.h"
#include "xg_pg.h"

#include <openssl/rand.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *const fleet_queries[] = {"gw_fleet_beat", "gw_fleet_leave", NULL};

struct fleet {
    struct xg_pg *pg;
    pthread_t thread;
    bool running;
    volatile sig_atomic_t stop;
    char id[33]; /* 128 random bits, hex: this replica's row */
    _Atomic uint32_t replicas;
};

uint32_t fleet_next(uint32_t previous, bool answered, int64_t counted)
{
    int64_t n = answered ? counted : (int64_t)previous;
    if (n < 1)
        return 1;
    return n > FLEET_MAX ? FLEET_MAX : (uint32_t)n;
}

static void beat(struct fleet *f)
{
    if (!xg_pg_ok(f->pg) && !xg_pg_connect(f->pg)) {
        atomic_store(&f->replicas, fleet_next(atomic_load(&f->replicas), false, 0));
        return;
    }
    char ttl[24];
    snprintf(ttl, sizeof ttl, "%d", FLEET_TTL_MS);
    const char *params[] = {f->id, ttl};
    PGresult *res = xg_pg_exec(f->pg, "gw_fleet_beat", 2, params);
    uint32_t before = atomic_load(&f->replicas);
    uint32_t now = fleet_next(before, res && PQntuples(res) == 1,
                              res && PQntuples(res) == 1 ? xg_pg_int64(res, 0, 0) : 0);
    PQclear(res);
    atomic_store(&f->replicas, now);
    if (now != before)
        xg_log_fields(XG_LOG_INFO, "fleet_changed",
                      json_pack("{s:i,s:i}", "replicas", (int)now, "before", (int)before),
                      "%u gateway replicas share each tenant's burst (%u before)", now, before);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void *beat_loop(void *arg)
{
    struct fleet *f = arg;
    while (!f->stop) {
        beat(f);
        for (int i = 0; i < FLEET_BEAT_MS / 50 && !f->stop; i++)
            sleep_ms(50);
    }
    if (xg_pg_ok(f->pg)) {
        const char *params[] = {f->id};
        PQclear(xg_pg_exec(f->pg, "gw_fleet_leave", 1, params));
    }
    return NULL;
}

struct fleet *fleet_start(const char *conninfo)
{
    struct fleet *f = calloc(1, sizeof *f);
    unsigned char raw[16];
    if (!f)
        return NULL;
    atomic_store(&f->replicas, 1);
    f->pg = xg_pg_new(conninfo, fleet_queries);
    if (!f->pg || RAND_bytes(raw, sizeof raw) != 1)
        goto fail;
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(f->id + 2 * i, 3, "%02x", raw[i]);
    f->running = pthread_create(&f->thread, NULL, beat_loop, f) == 0;
    if (!f->running)
        goto fail;
    return f;
fail:
    xg_pg_free(f->pg);
    free(f);
    return NULL;
}

void fleet_stop(struct fleet *f)
{
    if (!f)
        return;
    f->stop = 1;
    if (f->running)
        pthread_join(f->thread, NULL);
    xg_pg_free(f->pg);
    free(f);
}

uint32_t fleet_replicas(const struct fleet *f)
{
    return f ? atomic_load(&f->replicas) : 1;
}
