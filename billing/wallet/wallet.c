/* wallet — see wallet.h. */
#include "wallet/wallet.h"

#include "xg_hex.h"
#include "xg_http.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wallet {
    char *rpc_url; /* <base>/json_rpc */
    long timeout_ms;
    pthread_mutex_t lock;
    struct xg_http_client *http;
};

struct wallet *wallet_new(const char *base_url, long timeout_ms)
{
    struct wallet *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    size_t n = strlen(base_url);
    while (n > 0 && base_url[n - 1] == '/')
        n--;
    if (asprintf(&w->rpc_url, "%.*s/json_rpc", (int)n, base_url) < 0) {
        free(w);
        return NULL;
    }
    w->http = xg_http_client_new();
    if (!w->http) {
        free(w->rpc_url);
        free(w);
        return NULL;
    }
    w->timeout_ms = timeout_ms;
    pthread_mutex_init(&w->lock, NULL);
    return w;
}

void wallet_free(struct wallet *w)
{
    if (!w)
        return;
    xg_http_client_free(w->http);
    pthread_mutex_destroy(&w->lock);
    free(w->rpc_url);
    free(w);
}

void wallet_set_timeout(struct wallet *w, long timeout_ms)
{
    pthread_mutex_lock(&w->lock);
    w->timeout_ms = timeout_ms;
    pthread_mutex_unlock(&w->lock);
}

json_t *wallet_call(struct wallet *w, const char *method, json_t *params, char *err, size_t errlen)
{
    pthread_mutex_lock(&w->lock);
    json_t *result =
        xg_jsonrpc_call(w->http, w->rpc_url, method, params, w->timeout_ms, err, errlen);
    pthread_mutex_unlock(&w->lock);
    return result;
}

bool wallet_create_address(struct wallet *w, const char *label, int64_t *index, char *address,
                           size_t address_len, char *err, size_t errlen)
{
    json_t *res =
        wallet_call(w, "create_address",
                    json_pack("{s:i, s:s}", "account_index", 0, "label", label), err, errlen);
    if (!res)
        return false;
    json_t *idx = json_object_get(res, "address_index");
    const char *addr = json_string_value(json_object_get(res, "address"));
    bool ok =
        json_is_integer(idx) && json_integer_value(idx) > 0 && addr && strlen(addr) < address_len;
    if (ok) {
        *index = json_integer_value(idx);
        snprintf(address, address_len, "%s", addr);
    } else {
        snprintf(err, errlen, "create_address: unexpected answer");
    }
    json_decref(res);
    return ok;
}

bool wallet_get_height(struct wallet *w, int64_t *height, char *err, size_t errlen)
{
    json_t *res = wallet_call(w, "get_height", NULL, err, errlen);
    if (!res)
        return false;
    json_t *h = json_object_get(res, "height");
    bool ok = json_is_integer(h) && json_integer_value(h) >= 0;
    if (ok)
        *height = json_integer_value(h);
    else
        snprintf(err, errlen, "get_height: unexpected answer");
    json_decref(res);
    return ok;
}

bool wallet_refresh(struct wallet *w, char *err, size_t errlen)
{
    json_t *res = wallet_call(w, "refresh", NULL, err, errlen);
    json_decref(res);
    return res != NULL;
}

static bool json_int64(const json_t *obj, const char *key, int64_t *out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v))
        return false;
    *out = (int64_t)json_integer_value(v);
    return true;
}

bool wallet_parse_transfer(const json_t *entry, bool pool, struct wallet_transfer *out)
{
    memset(out, 0, sizeof *out);
    const char *txid = json_string_value(json_object_get(entry, "txid"));
    const json_t *sub = json_object_get(entry, "subaddr_index");
    int64_t major = -1;
    if (!txid || !xg_hex_ok(txid, 32) || !json_is_object(sub))
        return false;
    if (!json_int64(sub, "major", &major) || major != 0 ||
        !json_int64(sub, "minor", &out->subaddr_index) || out->subaddr_index < 0)
        return false;
    if (!json_int64(entry, "amount", &out->amount) || out->amount <= 0)
        return false;
    if (!json_int64(entry, "height", &out->height) || out->height < 0)
        return false;
    if (!json_int64(entry, "unlock_time", &out->unlock_time))
        out->unlock_time = 0;
    for (size_t i = 0; i < WALLET_TXID_SIZE - 1; i++)
        out->txid[i] = (char)((txid[i] >= 'A' && txid[i] <= 'F') ? txid[i] + 32 : txid[i]);
    out->pool = pool;
    if (pool)
        out->height = 0;
    else if (out->height == 0)
        return false;
    out->double_spend_seen = json_is_true(json_object_get(entry, "double_spend_seen"));
    return true;
}

/* Appends the usable entries of one list. */
static bool append_list(const json_t *list, bool pool, struct wallet_transfer **arr, size_t *count)
{
    size_t i;
    const json_t *entry;
    if (!list)
        return true;
    if (!json_is_array(list))
        return false;
    struct wallet_transfer *grown =
        realloc(*arr, (*count + json_array_size(list) + 1) * sizeof **arr);
    if (!grown)
        return false;
    *arr = grown;
    json_array_foreach(list, i, entry)
    {
        if (wallet_parse_transfer(entry, pool, &(*arr)[*count]))
            (*count)++;
    }
    return true;
}

bool wallet_get_transfers(struct wallet *w, int64_t min_height, struct wallet_transfer **out,
                          size_t *count, char *err, size_t errlen)
{
    *out = NULL;
    *count = 0;
    json_t *params =
        json_pack("{s:b, s:b, s:b, s:I, s:i}", "in", 1, "pool", 1, "filter_by_height", 1,
                  "min_height", (json_int_t)(min_height > 0 ? min_height : 0), "account_index", 0);
    json_t *res = wallet_call(w, "get_transfers", params, err, errlen);
    if (!res)
        return false;
    bool ok = append_list(json_object_get(res, "in"), false, out, count) &&
              append_list(json_object_get(res, "pool"), true, out, count);
    json_decref(res);
    if (!ok) {
        snprintf(err, errlen, "get_transfers: unexpected answer");
        free(*out);
        *out = NULL;
        *count = 0;
    }
    return ok;
}

json_t *wallet_check_tx_proof(struct wallet *w, const char *txid, const char *address,
                              const char *message, const char *signature, char *err, size_t errlen)
{
    return wallet_call(w, "check_tx_proof",
                       json_pack("{s:s, s:s, s:s, s:s}", "txid", txid, "address", address,
                                 "message", message, "signature", signature),
                       err, errlen);
}

json_t *wallet_get_transfer_by_txid(struct wallet *w, const char *txid, char *err, size_t errlen)
{
    return wallet_call(w, "get_transfer_by_txid",
                       json_pack("{s:s, s:i}", "txid", txid, "account_index", 0), err, errlen);
}
