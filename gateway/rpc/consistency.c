/* consistency — the per-tenant read rules; see consistency.h. */
#include "rpc/consistency.h"

#include "rpc/epee.h"

#include <jansson.h>
#include <string.h>

int64_t consistency_floor(const struct plan *p, int64_t served_tip)
{
    if (p->route != PLAN_ROUTE_TIP || p->info->writes || served_tip <= 0)
        return 0;
    return served_tip;
}

static int64_t bin_height(const char *body, size_t len)
{
    struct epee_section root;
    struct epee_value v;
    const char *status;
    size_t status_len;
    uint64_t height;
    if (!body || epee_open(body, len, &root) != EPEE_OK || !epee_find(&root, "status", &v) ||
        !epee_get_string(&v, &status, &status_len) || status_len != 2 ||
        memcmp(status, "OK", 2) != 0 || !epee_find(&root, "current_height", &v) ||
        !epee_get_uint(&v, &height) || height > INT64_MAX)
        return -1;
    /* A chain has at least its genesis block: 0 states no height. A pool-only answer
     * (requested_info 2) carries current_height 0 (monerod 0.18.4, checked on regtest), and
     * taking it for a height would refuse every such answer as behind the served tip. */
    return height == 0 ? -1 : (int64_t)height;
}

static int64_t json_height(const char *name, const char *body, size_t len)
{
    json_t *root = body && len ? json_loadb(body, len, 0, NULL) : NULL;
    int64_t height = -1;
    const json_t *obj = json_object_get(root, "result");
    if (!json_is_object(obj))
        obj = root;
    const char *status = json_string_value(json_object_get(obj, "status"));
    if (!json_is_object(obj) || json_object_get(root, "error") || !status ||
        strcmp(status, "OK") != 0)
        goto out;
    const json_t *h;
    if (strcmp(name, "get_block_count") == 0)
        h = json_object_get(obj, "count");
    else if (strcmp(name, "get_last_block_header") == 0)
        h = json_object_get(json_object_get(obj, "block_header"), "height");
    else
        h = json_object_get(obj, "height");
    if (json_is_integer(h) && json_integer_value(h) >= 0)
        height = json_integer_value(h) + (strcmp(name, "get_last_block_header") == 0);
out:
    json_decref(root);
    return height;
}

int64_t consistency_answer_height(const struct method_info *info, const char *body, size_t len,
                                  bool bin)
{
    if (!info || !info->names_tip)
        return -1;
    return bin ? bin_height(body, len) : json_height(info->name, body, len);
}

bool consistency_below(int64_t floor, int64_t height)
{
    return height >= 0 && height < floor;
}

uint64_t consistency_writes_nodes(const struct plan *p, uint64_t accepted, int64_t until_ms,
                                  int64_t now_ms)
{
    if (!(p->info->own_writes || p->pool) || p->info->writes || accepted == 0 || now_ms >= until_ms)
        return 0;
    return accepted;
}
