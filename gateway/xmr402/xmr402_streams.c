/* xmr402_streams — see xmr402_streams.h. */
#include "xmr402/xmr402_streams.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmr402/xmr402.h"

struct stream_entry {
    char txid[XMR402_TXID_LEN + 1]; /* "" when free */
    int held;
};

struct xmr402_streams {
    pthread_mutex_t lock;
    int per_payment;
    size_t capacity;
    struct stream_entry *entries;
};

bool xmr402_streams_admit(int held, int per_payment)
{
    return held < per_payment;
}

struct xmr402_streams *xmr402_streams_new(size_t capacity, int per_payment)
{
    struct xmr402_streams *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->capacity = capacity ? capacity : 1;
    s->per_payment = per_payment;
    s->entries = calloc(s->capacity, sizeof *s->entries);
    if (!s->entries) {
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    return s;
}

void xmr402_streams_free(struct xmr402_streams *s)
{
    if (!s)
        return;
    pthread_mutex_destroy(&s->lock);
    free(s->entries);
    free(s);
}

/* txid's entry, else (want_free) a free one, else NULL. */
static struct stream_entry *find(struct xmr402_streams *s, const char *txid, bool want_free)
{
    struct stream_entry *spare = NULL;
    for (size_t i = 0; i < s->capacity; i++) {
        struct stream_entry *e = &s->entries[i];
        if (e->held > 0 && strcmp(e->txid, txid) == 0)
            return e;
        if (want_free && !spare && e->held == 0)
            spare = e;
    }
    return spare;
}

bool xmr402_streams_take(struct xmr402_streams *s, const char *txid)
{
    if (!s)
        return true;
    pthread_mutex_lock(&s->lock);
    struct stream_entry *e = find(s, txid, true);
    bool ok = e && xmr402_streams_admit(e->held, s->per_payment);
    if (ok) {
        if (e->held == 0)
            snprintf(e->txid, sizeof e->txid, "%s", txid);
        e->held++;
    }
    pthread_mutex_unlock(&s->lock);
    return ok;
}

void xmr402_streams_give(struct xmr402_streams *s, const char *txid)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    struct stream_entry *e = find(s, txid, false);
    if (e && --e->held == 0)
        e->txid[0] = '\0';
    pthread_mutex_unlock(&s->lock);
}

int xmr402_streams_held(struct xmr402_streams *s, const char *txid)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->lock);
    struct stream_entry *e = find(s, txid, false);
    int n = e ? e->held : 0;
    pthread_mutex_unlock(&s->lock);
    return n;
}
