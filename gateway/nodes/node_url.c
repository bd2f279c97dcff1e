/* node_url — a node URL's login and its shown form; see node_url.h. */
#include "nodes/node_url.h"

#include <stdio.h>
#include <string.h>

/* The authority: after "scheme://", up to the first '/', '?' or '#'. NULL without "://". */
static const char *authority_of(const char *url, size_t *len)
{
    const char *sep = url ? strstr(url, "://") : NULL;
    if (!sep)
        return NULL;
    const char *auth = sep + 3;
    *len = strcspn(auth, "/?#");
    return auth;
}

/* The '@' ending the userinfo (the last one in the authority), or NULL. */
static const char *userinfo_end(const char *auth, size_t len)
{
    const char *at = NULL;
    for (size_t i = 0; i < len; i++)
        if (auth[i] == '@')
            at = auth + i;
    return at;
}

bool node_url_has_login(const char *url)
{
    size_t len;
    const char *auth = authority_of(url, &len);
    return auth && userinfo_end(auth, len) != NULL;
}

bool node_url_redact(const char *url, char *out, size_t len)
{
    if (len == 0)
        return false;
    out[0] = '\0';
    if (!url)
        return true;
    size_t alen;
    const char *auth = authority_of(url, &alen);
    const char *at = auth ? userinfo_end(auth, alen) : NULL;
    const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    int n;
    if (!colon)
        n = snprintf(out, len, "%s", url);
    else
        n = snprintf(out, len, "%.*s:***%s", (int)(colon - url), url, at);
    /* Cut short, out still holds no part of the password: it was never copied. */
    return n >= 0 && (size_t)n < len;
}
