/* hook_dest — see hook_dest.h. */
#include "hooks/hook_dest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *const hook_breaker_state_names[HOOK_BREAKER_NSTATES + 1] = {"closed", "open",
                                                                        "half_open", NULL};

bool hook_dest_key(const char *url, char out[HOOK_DEST_KEY_SIZE])
{
    out[0] = '\0';
    const char *port = NULL;
    size_t skip;
    if (strncasecmp(url, "http://", 7) == 0)
        skip = 7, port = "80";
    else if (strncasecmp(url, "https://", 8) == 0)
        skip = 8, port = "443";
    else
        return false;
    const char *auth = url + skip;
    size_t alen = strcspn(auth, "/?#");
    const char *at = memrchr(auth, '@', alen);
    if (at) {
        alen -= (size_t)(at + 1 - auth);
        auth = at + 1;
    }
    /* host: "[v6]" or up to the last ':' of the authority */
    size_t hlen;
    const char *rest;
    if (alen > 0 && auth[0] == '[') {
        const char *close = memchr(auth, ']', alen);
        if (!close)
            return false;
        hlen = (size_t)(close + 1 - auth);
        rest = close + 1;
    } else {
        const char *colon = memchr(auth, ':', alen);
        hlen = colon ? (size_t)(colon - auth) : alen;
        rest = auth + hlen;
    }
    size_t rlen = alen - (size_t)(rest - auth);
    if (hlen == 0 || (hlen == 2 && auth[0] == '['))
        return false;
    if (rlen > 0) {
        if (rest[0] != ':')
            return false;
        if (rlen > 1) {
            port = rest + 1;
            for (size_t i = 1; i < rlen; i++)
                if (!isdigit((unsigned char)rest[i]))
                    return false;
        }
    }
    size_t plen = rlen > 1 ? rlen - 1 : strlen(port);
    if (hlen + 1 + plen + 1 > HOOK_DEST_KEY_SIZE)
        return false;
    for (size_t i = 0; i < hlen; i++)
        out[i] = (char)tolower((unsigned char)auth[i]);
    out[hlen] = ':';
    memcpy(out + hlen + 1, port, plen);
    out[hlen + 1 + plen] = '\0';
    return true;
}

enum hook_breaker_state hook_breaker_state(const struct hook_breaker *b, int64_t now_ms)
{
    if (b->cooldown_ms == 0)
        return HOOK_BREAKER_CLOSED;
    return now_ms < b->open_until_ms ? HOOK_BREAKER_OPEN : HOOK_BREAKER_HALF_OPEN;
}

bool hook_dest_breaker_counts(bool timeout, bool connect, bool tls, long status)
{
    return timeout || connect || tls || status >= 500;
}

enum hook_dest_verdict hook_dest_decide(struct hook_breaker *b, int in_flight, int per_destination,
                                        int64_t now_ms, int64_t *retry_at_ms)
{
    *retry_at_ms = now_ms;
    switch (hook_breaker_state(b, now_ms)) {
    case HOOK_BREAKER_OPEN:
        *retry_at_ms = b->open_until_ms;
        return HOOK_DEST_OPEN;
    case HOOK_BREAKER_HALF_OPEN:
        if (b->probing || in_flight > 0) {
            *retry_at_ms = now_ms + b->cooldown_ms;
            return HOOK_DEST_OPEN;
        }
        b->probing = true;
        return HOOK_DEST_SEND;
    case HOOK_BREAKER_CLOSED:
        break;
    }
    return in_flight >= per_destination ? HOOK_DEST_BUSY : HOOK_DEST_SEND;
}

void hook_breaker_result(struct hook_breaker *b, const struct hook_breaker_policy *p,
                         bool delivered, bool counts, int64_t now_ms)
{
    bool probe = b->probing;
    b->probing = false;
    if (delivered) {
        *b = (struct hook_breaker){0};
        return;
    }
    if (!counts)
        return;
    if (probe) { /* open again, for twice as long */
        int64_t next = b->cooldown_ms * 2;
        b->cooldown_ms = next > p->cooldown_max_ms ? p->cooldown_max_ms : next;
        b->open_until_ms = now_ms + b->cooldown_ms;
        return;
    }
    if (b->cooldown_ms > 0)
        return; /* an attempt begun before it opened: it is open already */
    if (++b->failures >= p->threshold) {
        b->failures = 0;
        b->cooldown_ms = p->cooldown_ms < p->cooldown_max_ms ? p->cooldown_ms : p->cooldown_max_ms;
        b->open_until_ms = now_ms + b->cooldown_ms;
    }
}

bool hook_breaker_idle(const struct hook_breaker *b)
{
    return b->failures == 0 && b->cooldown_ms == 0 && !b->probing;
}
