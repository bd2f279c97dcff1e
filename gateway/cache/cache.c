/* cache — tip and immutable answer cache with epochs and an LRU memory bound. */
#include "cache/cache.h"

#include "token.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_BUCKETS    (1u << 16)
#define CACHE_REORGS_MAX 32
/* What an entry costs besides its body (struct, allocator slack). */
#define CACHE_ENTRY_OVERHEAD 128

struct cache_entry {
    uint8_t key[CACHE_KEY_LEN];
    struct cache_entry *next_in_bucket;
    struct cache_entry *lru_prev, *lru_next; /* prev = more recently used */
    char *body;
    size_t len;
    int64_t inserted_ms;
    int64_t ttl_ms; /* 0: immutable */
    int64_t height; /* immutable: the block height it describes */
    uint64_t epoch; /* immutable: that height's epoch at insertion */
    bool refreshing;
};

struct reorg_event {
    uint64_t seq;
    int64_t fork_height;
};

struct cache {
    pthread_mutex_t lock;
    size_t max_bytes;
    struct cache_entry *buckets[CACHE_BUCKETS];
    struct cache_entry *lru_head, *lru_tail; /* head = most recently used */
    struct cache_stats stats;
    /* Reorgs: epoch(h) = the newest seq whose fork lies below h, at least floor_seq (which
     * also absorbs events dropped from the bounded list, so none becomes reachable again). */
    uint64_t seq, floor_seq;
    struct reorg_event reorgs[CACHE_REORGS_MAX];
    size_t nreorgs;
};

struct cache *cache_new(size_t max_bytes)
{
    struct cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    c->max_bytes = max_bytes;
    c->stats.max_bytes = max_bytes;
    return c;
}

static void entry_free(struct cache_entry *e)
{
    free(e->body);
    free(e);
}

void cache_free(struct cache *c)
{
    if (!c)
        return;
    for (struct cache_entry *e = c->lru_head, *next; e; e = next) {
        next = e->lru_next;
        entry_free(e);
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* ---- keys --------------------------------------------------------------------------- */

/* The part of a request that decides its answer, canonical: sorted keys, no "client". */
static char *canonical_json(const char *scope, const char *body, size_t len)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    if (!root)
        return NULL;
    json_t *part = root;
    if (strcmp(scope, "rpc") == 0) {
        part = json_object_get(root, "params");
        if (!part)
            part = json_null();
    }
    if (json_is_object(part))
        json_object_del(part, "client");
    char *text = json_dumps(part, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref(root);
    return text;
}

/* Appends a NUL-terminated field to the key material. */
static bool append_field(char **buf, size_t *len, size_t *cap, const void *data, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t want = (*len + n + 1) * 2;
        char *grown = realloc(*buf, want);
        if (!grown)
            return false;
        *buf = grown;
        *cap = want;
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[(*len)++] = '\0';
    return true;
}

bool cache_key(const char *scope, const char *name, const char *body, size_t len, bool json,
               const char *tip_hash, uint8_t out[CACHE_KEY_LEN])
{
    char *canon = NULL;
    const char *part = body;
    size_t part_len = len;
    if (json && len > 0) {
        /* A JSON-RPC request without "params" anywhere has none: no need to parse it. */
        bool rpc = strcmp(scope, "rpc") == 0;
        if (rpc && !memmem(body, len, "\"params\"", 8)) {
            part = "null";
        } else {
            canon = canonical_json(scope, body, len);
            if (!canon)
                return false;
            part = canon;
        }
        part_len = strlen(part);
    } else if (json) {
        part = "null";
        part_len = 4;
    }
    /* "-" cannot be a hash: an immutable key never equals a tip key. */
    const char *tip = tip_hash ? tip_hash : "-";
    size_t cap = 256 + part_len, used = 0;
    char *material = malloc(cap);
    bool ok = material && append_field(&material, &used, &cap, scope, strlen(scope)) &&
              append_field(&material, &used, &cap, name, strlen(name)) &&
              append_field(&material, &used, &cap, json ? "json" : "bin", json ? 4 : 3) &&
              append_field(&material, &used, &cap, part, part_len) &&
              append_field(&material, &used, &cap, tip, strlen(tip));
    if (ok)
        ok = token_sha256_of(material, used, out);
    free(material);
    free(canon);
    return ok;
}

char *cache_strip_id(const char *body, size_t len, size_t *out_len)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    char *text = NULL;
    if (json_is_object(root) && json_object_size(root) > 1) {
        json_object_del(root, "id");
        text = json_dumps(root, JSON_COMPACT);
        if (text)
            *out_len = strlen(text);
    }
    json_decref(root);
    return text;
}

char *cache_render_jsonrpc(const char *stored, size_t len, const json_t *id, size_t *out_len)
{
    /* stored is a compact object without "id": "{…}". Answer "{"id":<id>,…}". */
    if (len < 2 || stored[0] != '{')
        return NULL;
    json_t *zero = NULL;
    if (!id)
        id = zero = json_integer(0);
    char *id_text = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(zero);
    if (!id_text)
        return NULL;
    size_t id_len = strlen(id_text);
    static const char prefix[] = "{\"id\":";
    size_t total = sizeof prefix - 1 + id_len + 1 + (len - 1);
    char *out = malloc(total + 1);
    if (out) {
        char *p = out;
        memcpy(p, prefix, sizeof prefix - 1);
        p += sizeof prefix - 1;
        memcpy(p, id_text, id_len);
        p += id_len;
        *p++ = ',';
        memcpy(p, stored + 1, len - 1);
        out[total] = '\0';
        *out_len = total;
    }
    free(id_text);
    return out;
}

static void patch_depth(json_t *header, int64_t chain_length)
{
    json_t *h = json_object_get(header, "height");
    if (json_is_integer(h) && json_object_get(header, "depth")) {
        int64_t depth = chain_length - json_integer_value(h) - 1;
        json_object_set_new(header, "depth", json_integer(depth > 0 ? depth : 0));
    }
}

void cache_patch_tip_fields(json_t *answer, int64_t chain_length)
{
    json_t *result = json_object_get(answer, "result");
    json_t *obj = json_is_object(result) ? result : answer;
    patch_depth(json_object_get(obj, "block_header"), chain_length);
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(obj, "block_headers"), i, item)
        patch_depth(item, chain_length);
    json_array_foreach(json_object_get(obj, "headers"), i, item) patch_depth(item, chain_length);
    json_array_foreach(json_object_get(obj, "txs"), i, item)
    {
        json_t *bh = json_object_get(item, "block_height");
        if (json_is_integer(bh) && json_object_get(item, "confirmations")) {
            int64_t conf = chain_length - json_integer_value(bh);
            json_object_set_new(item, "confirmations", json_integer(conf > 0 ? conf : 0));
        }
    }
}

/* ---- the table ---------------------------------------------------------------------- */

static size_t bucket_of(const uint8_t key[CACHE_KEY_LEN])
{
    uint32_t h;
    memcpy(&h, key, sizeof h);
    return h & (CACHE_BUCKETS - 1);
}

static size_t entry_cost(const struct cache_entry *e)
{
    return e->len + CACHE_ENTRY_OVERHEAD;
}

static void lru_unlink(struct cache *c, struct cache_entry *e)
{
    if (e->lru_prev)
        e->lru_prev->lru_next = e->lru_next;
    else
        c->lru_head = e->lru_next;
    if (e->lru_next)
        e->lru_next->lru_prev = e->lru_prev;
    else
        c->lru_tail = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

static void lru_push_front(struct cache *c, struct cache_entry *e)
{
    e->lru_prev = NULL;
    e->lru_next = c->lru_head;
    if (c->lru_head)
        c->lru_head->lru_prev = e;
    c->lru_head = e;
    if (!c->lru_tail)
        c->lru_tail = e;
}

static struct cache_entry *find(struct cache *c, const uint8_t key[CACHE_KEY_LEN])
{
    for (struct cache_entry *e = c->buckets[bucket_of(key)]; e; e = e->next_in_bucket)
        if (memcmp(e->key, key, CACHE_KEY_LEN) == 0)
            return e;
    return NULL;
}

static void remove_entry(struct cache *c, struct cache_entry *e)
{
    struct cache_entry **p = &c->buckets[bucket_of(e->key)];
    while (*p != e)
        p = &(*p)->next_in_bucket;
    *p = e->next_in_bucket;
    lru_unlink(c, e);
    c->stats.bytes -= entry_cost(e);
    c->stats.entries--;
    entry_free(e);
}

static uint64_t epoch_for_locked(const struct cache *c, int64_t height)
{
    uint64_t epoch = c->floor_seq;
    for (size_t i = 0; i < c->nreorgs; i++)
        if (c->reorgs[i].fork_height < height && c->reorgs[i].seq > epoch)
            epoch = c->reorgs[i].seq;
    return epoch;
}

enum cache_lookup cache_get(struct cache *c, const uint8_t key[CACHE_KEY_LEN], int64_t now_ms,
                            char **body, size_t *len, int64_t *height)
{
    enum cache_lookup rc = CACHE_MISS;
    *body = NULL;
    *len = 0;
    pthread_mutex_lock(&c->lock);
    struct cache_entry *e = find(c, key);
    if (e) {
        bool valid = e->ttl_ms > 0 ? now_ms - e->inserted_ms < e->ttl_ms
                                   : e->epoch == epoch_for_locked(c, e->height);
        if (!valid) {
            remove_entry(c, e);
            c->stats.purged++;
            e = NULL;
        }
    }
    if (e && (*body = malloc(e->len + 1))) {
        memcpy(*body, e->body, e->len + 1);
        *len = e->len;
        if (height)
            *height = e->height;
        rc = CACHE_HIT;
        if (e->ttl_ms == 0)
            c->stats.settled_hits++;
        if (e->ttl_ms > 0 && !e->refreshing && now_ms - e->inserted_ms >= e->ttl_ms / 2) {
            e->refreshing = true;
            rc = CACHE_HIT_REFRESH;
        }
        lru_unlink(c, e);
        lru_push_front(c, e);
    }
    if (rc == CACHE_MISS)
        c->stats.misses++;
    else
        c->stats.hits++;
    pthread_mutex_unlock(&c->lock);
    return rc;
}

uint64_t cache_generation(struct cache *c)
{
    pthread_mutex_lock(&c->lock);
    uint64_t seq = c->seq;
    pthread_mutex_unlock(&c->lock);
    return seq;
}

bool cache_put(struct cache *c, const uint8_t key[CACHE_KEY_LEN], const char *body, size_t len,
               int64_t ttl_ms, int64_t height, uint64_t generation, int64_t now_ms)
{
    if (len + CACHE_ENTRY_OVERHEAD > c->max_bytes || (ttl_ms > 0 && len > CACHE_TIP_MAX_BYTES))
        return false;
    struct cache_entry *e = calloc(1, sizeof *e);
    char *copy = malloc(len + 1);
    if (!e || !copy) {
        free(e);
        free(copy);
        return false;
    }
    memcpy(copy, body, len);
    copy[len] = '\0';
    memcpy(e->key, key, CACHE_KEY_LEN);
    e->body = copy;
    e->len = len;
    e->inserted_ms = now_ms;
    e->ttl_ms = ttl_ms;
    e->height = height;
    pthread_mutex_lock(&c->lock);
    if (ttl_ms == 0 && generation != c->seq) {
        pthread_mutex_unlock(&c->lock);
        entry_free(e);
        return false; /* a reorg since the request was sent: the answer may be orphaned */
    }
    e->epoch = epoch_for_locked(c, height);
    struct cache_entry *old = find(c, key);
    if (old)
        remove_entry(c, old);
    size_t b = bucket_of(key);
    e->next_in_bucket = c->buckets[b];
    c->buckets[b] = e;
    lru_push_front(c, e);
    c->stats.bytes += entry_cost(e);
    c->stats.entries++;
    c->stats.inserts++;
    while (c->stats.bytes > c->max_bytes && c->lru_tail && c->lru_tail != e) {
        assert(!c->lru_tail->lru_next); /* the tail ends the list: unlinking moves it */
        remove_entry(c, c->lru_tail);
        c->stats.evictions++;
    }
    pthread_mutex_unlock(&c->lock);
    return true;
}

void cache_refresh_failed(struct cache *c, const uint8_t key[CACHE_KEY_LEN])
{
    pthread_mutex_lock(&c->lock);
    struct cache_entry *e = find(c, key);
    if (e)
        e->refreshing = false;
    pthread_mutex_unlock(&c->lock);
}

void cache_reorg(struct cache *c, int64_t fork_height)
{
    pthread_mutex_lock(&c->lock);
    c->seq++;
    c->stats.epoch = c->seq;
    if (fork_height < 0) {
        c->floor_seq = c->seq;
        c->nreorgs = 0;
    } else {
        if (c->nreorgs == CACHE_REORGS_MAX) {
            /* The oldest event folds into the floor: safe (a purge), never stale. */
            c->floor_seq = c->reorgs[0].seq;
            memmove(c->reorgs, c->reorgs + 1, (CACHE_REORGS_MAX - 1) * sizeof c->reorgs[0]);
            c->nreorgs--;
        }
        c->reorgs[c->nreorgs++] = (struct reorg_event){c->seq, fork_height};
    }
    pthread_mutex_unlock(&c->lock);
}

uint64_t cache_epoch_for(struct cache *c, int64_t height)
{
    pthread_mutex_lock(&c->lock);
    uint64_t epoch = epoch_for_locked(c, height);
    pthread_mutex_unlock(&c->lock);
    return epoch;
}

struct cache_stats cache_stats(struct cache *c)
{
    pthread_mutex_lock(&c->lock);
    struct cache_stats s = c->stats;
    pthread_mutex_unlock(&c->lock);
    return s;
}
