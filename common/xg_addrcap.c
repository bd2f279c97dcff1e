/* xg_addrcap — per-address connection counts; see xg_addrcap.h.
 *
 * A chained hash table of (address, count), 1024 buckets: a listener holds at most its
 * connection limit of entries, so chains stay short; an entry is freed when its count
 * drops to zero, so the table is bounded by the connections open. */
#include "xg_addrcap.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ADDRCAP_BUCKETS 1024

struct addrcap_entry {
    struct xg_proxy_ip ip;
    size_t count;
    struct addrcap_entry *next;
};

struct xg_addrcap {
    size_t cap;
    pthread_mutex_t lock;
    struct addrcap_entry *bucket[ADDRCAP_BUCKETS];
};

enum xg_addrcap_key_kind xg_addrcap_key(const struct xg_proxy_trust *trust,
                                        const struct xg_proxy_ip *peer, bool proxy_protocol,
                                        const struct xg_proxy_ip *named, struct xg_proxy_ip *key)
{
    memset(key, 0, sizeof *key);
    if (peer->family == 0)
        return XG_ADDRCAP_EXEMPT; /* not an IP socket: nothing to key on */
    if (!trust || !xg_proxy_trusted(trust, peer)) {
        *key = *peer;
        return XG_ADDRCAP_COUNT;
    }
    if (!proxy_protocol)
        return XG_ADDRCAP_EXEMPT;
    if (!named)
        return XG_ADDRCAP_LATER;
    if (named->family == 0)
        return XG_ADDRCAP_EXEMPT;
    *key = *named;
    return XG_ADDRCAP_COUNT;
}

static size_t ip_hash(const struct xg_proxy_ip *ip)
{
    /* FNV-1a over the family and the address bytes in use */
    uint64_t h = 1469598103934665603ull ^ ip->family;
    size_t n = ip->family == 4 ? 4 : 16;
    for (size_t i = 0; i < n; i++) {
        h ^= ip->bytes[i];
        h *= 1099511628211ull;
    }
    return (size_t)(h % ADDRCAP_BUCKETS);
}

static bool ip_equal(const struct xg_proxy_ip *a, const struct xg_proxy_ip *b)
{
    size_t n = a->family == 4 ? 4 : 16;
    return a->family == b->family && memcmp(a->bytes, b->bytes, n) == 0;
}

struct xg_addrcap *xg_addrcap_new(size_t cap)
{
    struct xg_addrcap *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cap = cap;
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void xg_addrcap_free(struct xg_addrcap *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < ADDRCAP_BUCKETS; i++) {
        struct addrcap_entry *e = t->bucket[i];
        while (e) {
            struct addrcap_entry *next = e->next;
            free(e);
            e = next;
        }
    }
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* The entry for ip in its bucket, and the link that points at it. Under the lock. */
static struct addrcap_entry **find(struct xg_addrcap *t, const struct xg_proxy_ip *ip)
{
    struct addrcap_entry **at = &t->bucket[ip_hash(ip)];
    while (*at && !ip_equal(&(*at)->ip, ip))
        at = &(*at)->next;
    return at;
}

bool xg_addrcap_acquire(struct xg_addrcap *t, const struct xg_proxy_ip *ip)
{
    if (!t || t->cap == 0)
        return true;
    bool ok = false;
    pthread_mutex_lock(&t->lock);
    struct addrcap_entry **at = find(t, ip);
    if (*at) {
        ok = (*at)->count < t->cap;
        if (ok)
            (*at)->count++;
    } else {
        struct addrcap_entry *e = calloc(1, sizeof *e);
        if (e) {
            e->ip = *ip;
            e->count = 1;
            *at = e;
            ok = true;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return ok;
}

bool xg_addrcap_has_room(struct xg_addrcap *t, const struct xg_proxy_ip *ip)
{
    return !t || t->cap == 0 || xg_addrcap_held(t, ip) < t->cap;
}

void xg_addrcap_release(struct xg_addrcap *t, const struct xg_proxy_ip *ip)
{
    if (!t || t->cap == 0)
        return;
    pthread_mutex_lock(&t->lock);
    struct addrcap_entry **at = find(t, ip);
    struct addrcap_entry *e = *at;
    if (e && --e->count == 0) {
        *at = e->next;
        free(e);
    }
    pthread_mutex_unlock(&t->lock);
}

size_t xg_addrcap_held(struct xg_addrcap *t, const struct xg_proxy_ip *ip)
{
    if (!t)
        return 0;
    pthread_mutex_lock(&t->lock);
    struct addrcap_entry **at = find(t, ip);
    size_t n = *at ? (*at)->count : 0;
    pthread_mutex_unlock(&t->lock);
    return n;
}
