/* honesty — see honesty.h. */
#include "nodes/honesty.h"

#include <string.h>

struct honesty_params honesty_params_default(void)
{
    return (struct honesty_params){.limit = 3,
                                   .window_ms = 3600 * 1000,
                                   .cooldown_ms = 60 * 1000,
                                   .ceiling_ms = 17 * 3600 * 1000,
                                   .settle_ms = 10 * 1000};
}

/* Forgets the mismatches older than the window. */
static void expire(struct honesty *h, int64_t now_ms, int64_t window_ms)
{
    int kept = 0;
    for (int i = 0; i < h->nrecent; i++)
        if (now_ms - h->recent[i] < window_ms)
            h->recent[kept++] = h->recent[i];
    h->nrecent = kept;
}

bool honesty_record(struct honesty *h, bool agreed, int64_t now_ms, const struct honesty_params *p)
{
    int limit = p->limit < 1 ? 1 : p->limit > HONESTY_MAX_LIMIT ? HONESTY_MAX_LIMIT : p->limit;
    expire(h, now_ms, p->window_ms);
    if (agreed) {
        h->agreed++;
        return false;
    }
    h->mismatched++;
    if (!honesty_allows(h, now_ms))
        return false; /* an answer sent before it was marked: already paid for */
    /* A whole window clean since the last mismatch: the cooldown starts again. */
    if (h->last_mismatch_ms && now_ms - h->last_mismatch_ms >= p->window_ms)
        h->cooldown_ms = 0;
    h->last_mismatch_ms = now_ms;
    if (h->nrecent == HONESTY_MAX_LIMIT) {
        memmove(h->recent, h->recent + 1, sizeof h->recent[0] * (HONESTY_MAX_LIMIT - 1));
        h->nrecent--;
    }
    h->recent[h->nrecent++] = now_ms;
    if (h->nrecent < limit)
        return false;
    int64_t out = h->cooldown_ms ? h->cooldown_ms : p->cooldown_ms;
    h->out_until_ms = now_ms + out;
    h->cooldown_ms = out * 2 > p->ceiling_ms ? p->ceiling_ms : out * 2;
    h->marked++;
    h->nrecent = 0; /* back in service, it starts counting again */
    return true;
}

void honesty_suspect(struct honesty *h, const char *tip, int64_t now_ms)
{
    if (h->nsuspects == HONESTY_SUSPECTS) { /* the newest are kept: the oldest settle first */
        memmove(h->suspects, h->suspects + 1, sizeof h->suspects[0] * (HONESTY_SUSPECTS - 1));
        h->nsuspects--;
    }
    struct honesty_suspect *s = &h->suspects[h->nsuspects++];
    size_t n = strlen(tip);
    n = n > HONESTY_TIP_LEN ? HONESTY_TIP_LEN : n;
    memcpy(s->tip, tip, n);
    s->tip[n] = '\0';
    s->at_ms = now_ms;
}

bool honesty_settle(struct honesty *h, const char *tip, int64_t now_ms,
                    const struct honesty_params *p)
{
    bool marked = false;
    int kept = 0;
    for (int i = 0; i < h->nsuspects; i++) {
        struct honesty_suspect *s = &h->suspects[i];
        int64_t age = now_ms - s->at_ms;
        if (age < p->settle_ms || (!tip && age < p->window_ms)) {
            h->suspects[kept++] = *s;
        } else if (tip && strcmp(tip, s->tip) == 0) {
            marked |= honesty_record(h, false, now_ms, p);
        } else {
            h->excused++;
        }
    }
    h->nsuspects = kept;
    return marked;
}

bool honesty_allows(const struct honesty *h, int64_t now_ms)
{
    return now_ms >= h->out_until_ms;
}
