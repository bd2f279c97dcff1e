/* txnode — see txnode.h. */
#include "wallet/txnode.h"

#include "xg_http.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct txnode {
    char *url; /* <daemon_url>/get_transactions; NULL when none is configured */
    long timeout_ms;
    pthread_mutex_t lock; /* guards http */
    struct xg_http_client *http;
};

/* The entry of list naming txid (under key, or the entry itself when key is NULL). */
static const json_t *entry_of(const json_t *list, const char *key, const char *txid)
{
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e)
    {
        const char *h = json_string_value(key ? json_object_get(e, key) : e);
        if (h && strcmp(h, txid) == 0)
            return e;
    }
    return NULL;
}

enum txnode_verdict txnode_verdict_of(const char *txid, long http_status, const char *body,
                                      size_t len)
{
    if (http_status != 200 || !body)
        return TXNODE_UNKNOWN;
    json_t *doc = json_loadb(body, len, 0, NULL);
    enum txnode_verdict v = TXNODE_UNKNOWN;
    const char *status = json_string_value(json_object_get(doc, "status"));
    if (status && strcmp(status, "OK") == 0) {
        const json_t *tx = entry_of(json_object_get(doc, "txs"), "tx_hash", txid);
        if (tx)
            v = json_is_true(json_object_get(tx, "in_pool")) &&
                        json_is_true(json_object_get(tx, "double_spend_seen"))
                    ? TXNODE_DOUBLE_SPENT
                    : TXNODE_FOUND;
        else if (entry_of(json_object_get(doc, "missed_tx"), NULL, txid))
            v = TXNODE_MISSING;
    }
    json_decref(doc);
    return v;
}

struct txnode *txnode_new(const char *daemon_url, long timeout_ms)
{
    struct txnode *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->timeout_ms = timeout_ms;
    pthread_mutex_init(&t->lock, NULL);
    if (!daemon_url || !*daemon_url)
        return t;
    size_t n = strlen(daemon_url);
    while (n > 0 && daemon_url[n - 1] == '/')
        n--;
    t->http = xg_http_client_new();
    if (!t->http || asprintf(&t->url, "%.*s/get_transactions", (int)n, daemon_url) < 0) {
        t->url = NULL;
        txnode_free(t);
        return NULL;
    }
    return t;
}

void txnode_free(struct txnode *t)
{
    if (!t)
        return;
    xg_http_client_free(t->http);
    pthread_mutex_destroy(&t->lock);
    free(t->url);
    free(t);
}

bool txnode_enabled(const struct txnode *t)
{
    return t && t->url;
}

enum txnode_verdict txnode_lookup(struct txnode *t, const char *txid)
{
    if (!txnode_enabled(t))
        return TXNODE_UNKNOWN;
    char body[128];
    int n = snprintf(body, sizeof body, "{\"txs_hashes\":[\"%s\"]}", txid);
    if (n < 0 || (size_t)n >= sizeof body)
        return TXNODE_UNKNOWN;
    struct xg_http_response res;
    pthread_mutex_lock(&t->lock);
    bool ok = xg_http_request(t->http, "POST", t->url, "application/json", body, (size_t)n,
                              t->timeout_ms, &res);
    pthread_mutex_unlock(&t->lock);
    enum txnode_verdict v =
        ok ? txnode_verdict_of(txid, res.status, res.body, res.len) : TXNODE_UNKNOWN;
    xg_http_response_clear(&res);
    return v;
}
