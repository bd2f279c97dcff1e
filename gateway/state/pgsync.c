/* pgsync — LISTEN/NOTIFY follower for tenants and nodes. */
#include "state/pgsync.h"

#include "state/tenant_feed.h"

#include "token.h"
#include "xg_hex.h"
#include "xg_log.h"
#include "xg_pg.h"
#include "xg_sql.h"
#include "xg_clock.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu-bp.h>

#define PGSYNC_POLL_MS 200

static const char *const pgsync_queries[] = {"gw_tenants_count", "gw_tenant_by_id",
                                             "gw_tenants_by_tier", "gw_nodes_enabled", NULL};

struct pgsync {
    struct xg_pg *pg;
    struct tenant_store *tenants;
    struct node_registry *nodes;
    struct token_ha1_keys keys; /* the HA1 key and the previous one, each set up once */
    pthread_t thread;
    volatile sig_atomic_t stop;
    atomic_bool synced;
    atomic_bool loaded; /* a full load completed once: never false again */
    uint64_t generation;
    struct pgsync_observer observer; /* NOTIFY apply times, full reloads */
};

/* A tenant row's fields as either wire format gives them, before the shared checks. */
struct raw_tenant {
    int64_t id;
    const uint8_t *token_hash; /* 32 bytes */
    const uint8_t *wrapped;    /* TOKEN_HA1_WRAPPED_LEN bytes */
    const char *handle, *tier;
    size_t handle_len, tier_len;
    int64_t burst_rps, daily_quota, valid_until, burst_size;
    bool suspended;
};

/* The one set of rules both formats go through: bounds, then the HA1 unwrap. */
static bool build_row(const struct raw_tenant *raw, const struct token_ha1_keys *keys,
                      struct tenant_row *out)
{
    memset(out, 0, sizeof *out);
    if (raw->id <= 0 || raw->handle_len > TENANT_HANDLE_MAX || raw->tier_len > TENANT_TIER_MAX ||
        memchr(raw->handle, '\0', raw->handle_len) || memchr(raw->tier, '\0', raw->tier_len) ||
        raw->burst_rps <= 0 || raw->burst_rps > INT32_MAX || raw->daily_quota <= 0 ||
        raw->burst_size <= 0 || raw->burst_size > INT32_MAX)
        return false;
    out->id = raw->id;
    memcpy(out->token_hash, raw->token_hash, sizeof out->token_hash);
    memcpy(out->handle, raw->handle, raw->handle_len);
    memcpy(out->tier_id, raw->tier, raw->tier_len);
    /* A HA1 that unwraps under neither key (another key, a copied row) leaves Digest
     * unusable for this tenant (zeroed); the token schemes still work. One under the
     * previous key serves Digest until rewrap-ha1 rewrites it under the current one. */
    if (token_ha1_unwrap_either(keys, out->handle, raw->wrapped, out->digest_ha1) ==
        TOKEN_HA1_KEY_NONE)
        memset(out->digest_ha1, 0, sizeof out->digest_ha1);
    out->burst_rps = (int32_t)raw->burst_rps;
    out->burst_size = (int32_t)raw->burst_size;
    out->daily_quota = raw->daily_quota;
    out->valid_until = raw->valid_until;
    out->suspended = raw->suspended;
    return true;
}

static bool parse_int64(const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    *out = v;
    return *text && !*end && errno == 0;
}

bool pgsync_parse_tenant(const char *const cols[PGSYNC_TENANT_COLUMNS],
                         const struct token_ha1_keys *keys, struct tenant_row *out)
{
    memset(out, 0, sizeof *out);
    uint8_t hash[32], wrapped[TOKEN_HA1_WRAPPED_LEN];
    struct raw_tenant raw = {.token_hash = hash,
                             .wrapped = wrapped,
                             .handle = cols[3],
                             .handle_len = strlen(cols[3]),
                             .tier = cols[4],
                             .tier_len = strlen(cols[4]),
                             .suspended = cols[8][0] == 't'};
    if (!parse_int64(cols[0], &raw.id) || !xg_hex_decode(cols[1], hash, sizeof hash) ||
        !xg_hex_decode(cols[2], wrapped, sizeof wrapped) || !parse_int64(cols[5], &raw.burst_rps) ||
        !parse_int64(cols[6], &raw.daily_quota) || !parse_int64(cols[7], &raw.valid_until) ||
        !parse_int64(cols[9], &raw.burst_size))
        return false;
    return build_row(&raw, keys, out);
}

/* COPY BINARY's file header: signature, flags word, header-extension length. */
static const char copy_signature[11] = "PGCOPY\n\377\r\n";

size_t pgsync_copy_header_len(const char *buf, size_t len)
{
    if (len < sizeof copy_signature + 8 || memcmp(buf, copy_signature, sizeof copy_signature))
        return 0;
    const uint8_t *p = (const uint8_t *)buf + sizeof copy_signature;
    uint32_t flags = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    uint32_t ext = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
    size_t total = sizeof copy_signature + 8 + (size_t)ext;
    /* Bit 16 (OIDs included) changes the row layout: refused. Bits 0-15 are reserved and
     * must be zero; 17-31 may be ignored (the format's own rule). */
    if ((flags & 0x1ffffu) != 0 || ext > len || total > len)
        return 0;
    return total;
}

/* One field of a binary tuple: its length and data, advancing *p; false past the end or
 * for a NULL (no column of the tenant query is nullable). */
static bool copy_field(const uint8_t **p, const uint8_t *end, const uint8_t **data, size_t *len)
{
    if (end - *p < 4)
        return false;
    int32_t n = (int32_t)((uint32_t)(*p)[0] << 24 | (uint32_t)(*p)[1] << 16 |
                          (uint32_t)(*p)[2] << 8 | (*p)[3]);
    *p += 4;
    if (n < 0 || end - *p < n)
        return false;
    *data = *p;
    *len = (size_t)n;
    *p += n;
    return true;
}

static bool copy_int8(const uint8_t **p, const uint8_t *end, int64_t *out)
{
    const uint8_t *d;
    size_t n;
    if (!copy_field(p, end, &d, &n) || n != 8)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < 8; i++)
        v = v << 8 | d[i];
    *out = (int64_t)v;
    return true;
}

/* PostgreSQL's timestamptz on the wire: microseconds since 2000-01-01 00:00 UTC, with
 * INT64_MIN and INT64_MAX for -infinity and infinity. */
#define PG_EPOCH_UNIX_S 946684800LL
#define PG_USECS        1000000LL

int64_t pgsync_unix_seconds(int64_t pg_usecs)
{
    if (pg_usecs == INT64_MAX || pg_usecs == INT64_MIN)
        return pg_usecs; /* valid forever, or never */
    int64_t s = pg_usecs / PG_USECS, r = pg_usecs % PG_USECS;
    if (r < 0) { /* as floor division: s + r / 1e6, 0 <= r < 1e6 */
        s--;
        r += PG_USECS;
    }
    s += PG_EPOCH_UNIX_S;
    /* Rounded half away from zero, as extract(epoch FROM …)::int8 (a numeric cast) is. */
    return s + (s < 0 ? r > PG_USECS / 2 : r >= PG_USECS / 2);
}

static bool copy_bytes(const uint8_t **p, const uint8_t *end, size_t want, const uint8_t **out)
{
    size_t n;
    return copy_field(p, end, out, &n) && n == want;
}

static bool copy_text(const uint8_t **p, const uint8_t *end, const char **out, size_t *len)
{
    const uint8_t *d;
    if (!copy_field(p, end, &d, len))
        return false;
    *out = (const char *)d;
    return true;
}

enum pgsync_copy pgsync_parse_copy_row(const char *buf, size_t len,
                                       const struct token_ha1_keys *keys, struct tenant_row *out)
{
    const uint8_t *p = (const uint8_t *)buf, *end = p + len;
    memset(out, 0, sizeof *out);
    if (len < 2)
        return PGSYNC_COPY_BAD;
    int16_t fields = (int16_t)((uint16_t)p[0] << 8 | p[1]);
    p += 2;
    if (fields == -1)
        return len == 2 ? PGSYNC_COPY_END : PGSYNC_COPY_BAD;
    if (fields != PGSYNC_TENANT_COLUMNS)
        return PGSYNC_COPY_BAD;
    struct raw_tenant raw = {0};
    const uint8_t *suspended;
    int64_t pg_valid_until; /* timestamptz: gw_tenants_copy sends it as is */
    bool ok = copy_int8(&p, end, &raw.id) && copy_bytes(&p, end, 32, &raw.token_hash) &&
              copy_bytes(&p, end, TOKEN_HA1_WRAPPED_LEN, &raw.wrapped) &&
              copy_text(&p, end, &raw.handle, &raw.handle_len) &&
              copy_text(&p, end, &raw.tier, &raw.tier_len) && copy_int8(&p, end, &raw.burst_rps) &&
              copy_int8(&p, end, &raw.daily_quota) && copy_int8(&p, end, &pg_valid_until) &&
              copy_bytes(&p, end, 1, &suspended) && copy_int8(&p, end, &raw.burst_size) && p == end;
    if (!ok)
        return PGSYNC_COPY_BAD;
    raw.suspended = suspended[0] != 0;
    raw.valid_until = pgsync_unix_seconds(pg_valid_until);
    return build_row(&raw, keys, out) ? PGSYNC_COPY_ROW : PGSYNC_COPY_BAD;
}

/* Publishes every row of a tenant query result; returns false on a malformed row. */
static bool apply_tenant_rows(struct pgsync *sync, PGresult *res)
{
    int rows = PQntuples(res);
    for (int r = 0; r < rows; r++) {
        const char *cols[PGSYNC_TENANT_COLUMNS];
        for (int c = 0; c < PGSYNC_TENANT_COLUMNS; c++)
            cols[c] = PQgetvalue(res, r, c);
        struct tenant_row row;
        if (!pgsync_parse_tenant(cols, &sync->keys, &row)) {
            xg_log(XG_LOG_ERROR, "tenant_row_invalid", "tenant %s skipped", cols[0]);
            continue;
        }
        if (!tenants_upsert(sync->tenants, &row, sync->generation))
            return false;
    }
    return true;
}

/* Streams the full load through COPY … (FORMAT binary): a tuple per buffer, no PGresult
 * per row and no hex (docs/BENCHMARKS.md, "A million tenants"). Holding a million rows in
 * one PGresult first had more than doubled the gateway's peak memory. */
static bool stream_all_tenants(struct pgsync *sync)
{
    PGresult *count = xg_pg_exec(sync->pg, "gw_tenants_count", 0, NULL);
    if (!count)
        return false;
    tenants_reserve(sync->tenants, (size_t)xg_pg_int64(count, 0, 0));
    PQclear(count);
    PGconn *conn = xg_pg_conn(sync->pg);
    char *copy = xg_sql_query("gw_tenants_copy");
    bool ok = conn && copy && PQsendQuery(conn, copy);
    free(copy);
    if (!ok)
        return false;
    PGresult *res = PQgetResult(conn);
    ok = res && PQresultStatus(res) == PGRES_COPY_OUT;
    if (!ok)
        xg_log(XG_LOG_WARN, "tenants_load_failed", "%s",
               res ? PQresultErrorMessage(res) : PQerrorMessage(conn));
    PQclear(res);
    /* This thread reads and parses; the feed's thread publishes (tenant_feed.h), so the
     * parsing, the HA1 unwrap and the tables' inserts run on two cores. Without a thread
     * to be had, the rows are published here. */
    struct tenant_feed *feed = ok ? tenant_feed_start(sync->tenants, sync->generation) : NULL;
    struct tenant_row local = {0}; /* the rows when there is no feed */
    bool first = true, ended = false;
    size_t bad = 0;
    char *buf;
    int n;
    while (ok && (n = PQgetCopyData(conn, &buf, 0)) > 0) {
        size_t skip = 0;
        if (first && (skip = pgsync_copy_header_len(buf, (size_t)n)) == 0)
            ok = false;
        first = false;
        struct tenant_row *row = feed ? tenant_feed_slot(feed) : &local;
        switch (ok ? pgsync_parse_copy_row(buf + skip, (size_t)n - skip, &sync->keys, row)
                   : PGSYNC_COPY_BAD) {
        case PGSYNC_COPY_ROW:
            if (feed)
                tenant_feed_push(feed);
            else
                ok = tenants_upsert(sync->tenants, row, sync->generation);
            break;
        case PGSYNC_COPY_END:
            ended = true;
            break;
        case PGSYNC_COPY_BAD:
            bad++; /* a row the bounds refuse is skipped, as on the NOTIFY path */
            break;
        }
        PQfreemem(buf);
    }
    if (feed && !tenant_feed_finish(feed))
        ok = false; /* out of memory */
    if (bad)
        xg_log(XG_LOG_ERROR, "tenant_row_invalid", "%zu tenant rows skipped", bad);
    /* Read every result, so the connection is usable afterwards (-1 ends the copy; -2 is
     * an error that the final result reports). */
    while ((res = PQgetResult(conn)) != NULL) {
        if (PQresultStatus(res) != PGRES_COMMAND_OK) {
            xg_log(XG_LOG_WARN, "tenants_load_failed", "%s", PQresultErrorMessage(res));
            ok = false;
        }
        PQclear(res);
    }
    return ok && ended;
}

static bool load_all_tenants(struct pgsync *sync)
{
    sync->generation++;
    size_t before = tenants_count(sync->tenants);
    bool ok = stream_all_tenants(sync);
    if (ok) {
        /* Into an empty store (the first load) nothing is left from an older one. */
        size_t gone = before ? tenants_sweep(sync->tenants, sync->generation) : 0;
        xg_log(XG_LOG_INFO, "tenants_loaded",
               "%zu tenants (%zu removed), %zu bytes in snapshots, %zu tier versions",
               tenants_count(sync->tenants), gone, tenants_bytes(sync->tenants),
               tenants_tier_count(sync->tenants));
    }
    return ok;
}

static bool reload_tenant(struct pgsync *sync, const char *id)
{
    const char *params[] = {id};
    PGresult *res = xg_pg_exec(sync->pg, "gw_tenant_by_id", 1, params);
    if (!res)
        return false;
    bool ok = true;
    if (PQntuples(res) == 0)
        tenants_remove(sync->tenants, strtoll(id, NULL, 10));
    else
        ok = apply_tenant_rows(sync, res);
    PQclear(res);
    return ok;
}

static bool reload_tier(struct pgsync *sync, const char *tier_id)
{
    const char *params[] = {tier_id};
    PGresult *res = xg_pg_exec(sync->pg, "gw_tenants_by_tier", 1, params);
    if (!res)
        return false;
    bool ok = apply_tenant_rows(sync, res);
    PQclear(res);
    return ok;
}

static bool load_nodes(struct pgsync *sync)
{
    PGresult *res = xg_pg_exec(sync->pg, "gw_nodes_enabled", 0, NULL);
    if (!res)
        return false;
    int rows = PQntuples(res);
    struct node_info *list = calloc((size_t)rows + 1, sizeof *list);
    bool ok = list != NULL;
    size_t n = 0;
    for (int r = 0; ok && r < rows; r++) {
        struct node_info *node = &list[n];
        node->id = (int32_t)strtol(PQgetvalue(res, r, 0), NULL, 10);
        snprintf(node->name, sizeof node->name, "%s", PQgetvalue(res, r, 1));
        snprintf(node->url, sizeof node->url, "%s", PQgetvalue(res, r, 2));
        if (!nodes_priority_parse(PQgetvalue(res, r, 3), &node->priority))
            node->priority = NODE_PUBLIC;
        node->pruned = PQgetvalue(res, r, 4)[0] == 't';
        node->revision = strtoll(PQgetvalue(res, r, 5), NULL, 10);
        const char *bcast = PQgetvalue(res, r, 6); /* "" for NULL: by class */
        nodes_apply_class(node, bcast[0] ? bcast[0] == 't' : -1,
                          (unsigned)strtoul(PQgetvalue(res, r, 7), NULL, 10));
        n++;
    }
    if (ok)
        ok = nodes_publish(sync->nodes, list, n);
    if (ok)
        xg_log(XG_LOG_INFO, "nodes_loaded", "%zu enabled nodes", n);
    free(list);
    PQclear(res);
    return ok;
}

static bool subscribe_and_load(struct pgsync *sync)
{
    /* LISTEN first: a change committed during the load is then also notified. */
    PGresult *res = xg_pg_exec_sql(
        sync->pg, "LISTEN xmrgate_tenants; LISTEN xmrgate_tiers; LISTEN xmrgate_nodes");
    if (!res)
        return false;
    PQclear(res);
    if (sync->observer.full_reload)
        sync->observer.full_reload(sync->observer.arg);
    return load_all_tenants(sync) && load_nodes(sync);
}

static bool handle_notify(struct pgsync *sync, const PGnotify *n)
{
    if (strcmp(n->relname, "xmrgate_tenants") == 0)
        return reload_tenant(sync, n->extra);
    if (strcmp(n->relname, "xmrgate_tiers") == 0)
        return reload_tier(sync, n->extra);
    if (strcmp(n->relname, "xmrgate_nodes") == 0)
        return load_nodes(sync);
    return true;
}

/* Applies every notification libpq has already read. Reloading a row reads from the
 * socket too, so notifications can arrive in libpq's buffer without the socket turning
 * readable again: drain before every wait. */
static bool drain_notifies(struct pgsync *sync, PGconn *conn)
{
    PGnotify *n;
    while ((n = PQnotifies(conn)) != NULL) {
        double arrived = xg_monotonic_s();
        bool ok = handle_notify(sync, n);
        if (ok && sync->observer.notify_applied)
            sync->observer.notify_applied(sync->observer.arg, n->relname,
                                          xg_monotonic_s() - arrived);
        PQfreemem(n);
        if (!ok)
            return false;
    }
    return true;
}

/* Waits for notifications and applies them; returns when the connection fails. */
static void follow(struct pgsync *sync)
{
    PGconn *conn = xg_pg_conn(sync->pg);
    while (!sync->stop && drain_notifies(sync, conn)) {
        struct pollfd pfd = {.fd = PQsocket(conn), .events = POLLIN};
        int rc = poll(&pfd, 1, PGSYNC_POLL_MS);
        if (rc < 0 && errno != EINTR)
            return;
        if (rc > 0 && !PQconsumeInput(conn))
            return;
    }
}

static void *sync_loop(void *arg)
{
    struct pgsync *sync = arg;
    rcu_register_thread();
    while (!sync->stop) {
        if (!xg_pg_connect_backoff(sync->pg, &sync->stop))
            break;
        if (subscribe_and_load(sync)) {
            atomic_store(&sync->synced, true);
            atomic_store(&sync->loaded, true);
            xg_log(XG_LOG_INFO, "pgsync_following", "listening for tenant and node changes");
            follow(sync);
        }
        atomic_store(&sync->synced, false);
        if (!sync->stop)
            xg_log(XG_LOG_WARN, "pgsync_lost",
                   "PostgreSQL connection lost (%s); serving known tenants, reconnecting",
                   xg_pg_last_error(sync->pg));
        xg_pg_disconnect(sync->pg);
    }
    rcu_unregister_thread();
    return NULL;
}

struct pgsync *pgsync_start(const char *conninfo, const uint8_t ha1_key[TOKEN_HA1_KEY_LEN],
                            const uint8_t *ha1_key_previous, struct tenant_store *tenants,
                            struct node_registry *nodes, const struct pgsync_observer *observer)
{
    struct pgsync *sync = calloc(1, sizeof *sync);
    if (!sync)
        return NULL;
    sync->keys.current = token_ha1_unwrapper_new(ha1_key);
    if (ha1_key_previous)
        sync->keys.previous = token_ha1_unwrapper_new(ha1_key_previous);
    sync->tenants = tenants;
    sync->nodes = nodes;
    if (observer)
        sync->observer = *observer;
    sync->pg = xg_pg_new(conninfo, pgsync_queries);
    if (sync->pg) /* LISTEN is the session's: a broken connection means subscribe again */
        xg_pg_session_bound(sync->pg);
    if (!sync->keys.current || (ha1_key_previous && !sync->keys.previous) || !sync->pg ||
        pthread_create(&sync->thread, NULL, sync_loop, sync) != 0) {
        token_ha1_unwrapper_free(sync->keys.current);
        token_ha1_unwrapper_free(sync->keys.previous);
        xg_pg_free(sync->pg);
        free(sync);
        return NULL;
    }
    return sync;
}

void pgsync_stop(struct pgsync *sync)
{
    if (!sync)
        return;
    sync->stop = 1;
    pthread_join(sync->thread, NULL);
    token_ha1_unwrapper_free(sync->keys.current);
    token_ha1_unwrapper_free(sync->keys.previous);
    xg_pg_free(sync->pg);
    free(sync);
}

bool pgsync_loaded(struct pgsync *sync)
{
    return atomic_load(&sync->loaded);
}

bool pgsync_synced(struct pgsync *sync, char *reason, size_t len)
{
    if (atomic_load(&sync->synced))
        return true;
    snprintf(reason, len, "tenant table not loaded from PostgreSQL (serving what is known)");
    return false;
}
