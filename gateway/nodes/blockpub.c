/* blockpub — ZMQ publication parsing and the [nodes] zmq setting (pure). */
#include "nodes/blockpub.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_hash(const char *s)
{
    if (!s || strlen(s) != BLOCKPUB_HASH_LEN)
        return false;
    for (size_t i = 0; i < BLOCKPUB_HASH_LEN; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    return true;
}

/* The JSON document after "topic:". */
static enum blockpub_kind parse_chain(const char *doc, size_t len, struct blockpub_chain *out)
{
    json_t *root = json_loadb(doc, len, JSON_REJECT_DUPLICATES, NULL);
    enum blockpub_kind kind = BLOCKPUB_MALFORMED;
    const json_t *first = json_object_get(root, "first_height");
    const json_t *ids = json_object_get(root, "ids");
    size_t n = json_array_size(ids);
    /* Heights fit in far less than 2^53; anything near INT64_MAX is not a real chain. */
    if (!json_is_integer(first) || json_integer_value(first) < 0 ||
        json_integer_value(first) > INT64_C(1) << 53 || !json_is_array(ids) || n == 0 ||
        !is_hash(json_string_value(json_object_get(root, "first_prev_id"))))
        goto out;
    for (size_t i = 0; i < n; i++)
        if (!is_hash(json_string_value(json_array_get(ids, i))))
            goto out;
    out->first_height = (int64_t)json_integer_value(first);
    out->blocks = n;
    out->length = out->first_height + (int64_t)n;
    memcpy(out->top_hash, json_string_value(json_array_get(ids, n - 1)), BLOCKPUB_HASH_LEN + 1);
    kind = BLOCKPUB_CHAIN_MAIN;
out:
    json_decref(root);
    return kind;
}

enum blockpub_kind blockpub_parse(const char *msg, size_t len, struct blockpub_chain *out)
{
    static const char topic[] = BLOCKPUB_TOPIC_CHAIN_MAIN;
    size_t tlen = sizeof topic - 1;
    if (len < tlen || memcmp(msg, topic, tlen) != 0)
        return BLOCKPUB_OTHER;
    if (len == tlen)
        return BLOCKPUB_MALFORMED; /* the topic with no document */
    if (msg[tlen] != ':')
        return BLOCKPUB_OTHER; /* a longer topic name that starts like ours */
    return parse_chain(msg + tlen + 1, len - tlen - 1, out);
}

bool blockpub_addr_valid(const char *addr)
{
    if (!addr || strlen(addr) > BLOCKPUB_ADDR_MAX)
        return false;
    if (strncmp(addr, "ipc://", 6) == 0)
        return addr[6] != '\0' && !strpbrk(addr, " \t,");
    if (strncmp(addr, "tcp://", 6) != 0)
        return false;
    const char *host = addr + 6, *colon = strrchr(host, ':');
    if (!colon || colon == host || strpbrk(host, " \t,/"))
        return false;
    if (host[0] == '[' && colon[-1] != ']')
        return false; /* an IPv6 address is bracketed, its port after the bracket */
    char *end;
    long port = strtol(colon + 1, &end, 10);
    return colon[1] != '\0' && *end == '\0' && port >= 1 && port <= 65535 &&
           isdigit((unsigned char)colon[1]);
}

/* One `name=address` pair of the setting, blanks trimmed. */
struct pair {
    const char *name, *addr;
    size_t name_len, addr_len;
};

static const char *trim(const char *s, const char *end, size_t *len)
{
    while (s < end && isspace((unsigned char)*s))
        s++;
    while (end > s && isspace((unsigned char)end[-1]))
        end--;
    *len = (size_t)(end - s);
    return s;
}

/* Splits the pair at [s, end); false when there is no '=' or a side is empty. */
static bool split_pair(const char *s, const char *end, struct pair *p)
{
    const char *eq = memchr(s, '=', (size_t)(end - s));
    if (!eq)
        return false;
    p->name = trim(s, eq, &p->name_len);
    p->addr = trim(eq + 1, end, &p->addr_len);
    return p->name_len > 0 && p->addr_len > 0;
}

/* Calls visit for every pair, in order; stops and returns false at the first malformed
 * one (its text in bad, bad_len) or when visit returns false. */
static bool each_pair(const char *map, bool (*visit)(const struct pair *, void *), void *cls,
                      const char **bad, size_t *bad_len)
{
    const char *s = map;
    while (*s) {
        const char *end = strchr(s, ',');
        if (!end)
            end = s + strlen(s);
        size_t len;
        const char *item = trim(s, end, &len);
        struct pair p;
        if (len > 0 && (!split_pair(item, item + len, &p) || !visit(&p, cls))) {
            *bad = item;
            *bad_len = len;
            return false;
        }
        s = *end ? end + 1 : end;
    }
    return true;
}

struct check_state {
    const char *map;
    const char *why;
};

static bool check_pair(const struct pair *p, void *cls)
{
    struct check_state *st = cls;
    char addr[BLOCKPUB_ADDR_MAX + 1];
    if (p->addr_len > BLOCKPUB_ADDR_MAX) {
        st->why = "address too long";
        return false;
    }
    memcpy(addr, p->addr, p->addr_len);
    addr[p->addr_len] = '\0';
    if (!blockpub_addr_valid(addr)) {
        st->why = "not tcp://host:port or ipc://path";
        return false;
    }
    /* A name seen earlier in the setting: the earlier pair starts before this one. */
    for (const char *s = st->map; s < p->name; s++) {
        if ((s == st->map || s[-1] == ',' || isspace((unsigned char)s[-1])) &&
            strncmp(s, p->name, p->name_len) == 0) {
            const char *after = s + p->name_len;
            while (isspace((unsigned char)*after))
                after++;
            if (*after == '=') {
                st->why = "node named twice";
                return false;
            }
        }
    }
    return true;
}

bool blockpub_map_check(const char *map, char *err, size_t errlen)
{
    struct check_state st = {map, "not name=address"};
    const char *bad = NULL;
    size_t bad_len = 0;
    if (each_pair(map, check_pair, &st, &bad, &bad_len))
        return true;
    snprintf(err, errlen, "[nodes] zmq: \"%.*s\": %s", (int)(bad_len > 80 ? 80 : bad_len), bad,
             st.why);
    return false;
}

struct find_state {
    const char *name;
    char *out;
    bool found;
};

static bool find_pair(const struct pair *p, void *cls)
{
    struct find_state *st = cls;
    if (!st->found && strlen(st->name) == p->name_len &&
        memcmp(st->name, p->name, p->name_len) == 0 && p->addr_len <= BLOCKPUB_ADDR_MAX) {
        memcpy(st->out, p->addr, p->addr_len);
        st->out[p->addr_len] = '\0';
        st->found = true;
    }
    return true;
}

bool blockpub_map_find(const char *map, const char *name, char out[BLOCKPUB_ADDR_MAX + 1])
{
    struct find_state st = {name, out, false};
    const char *bad;
    size_t bad_len;
    (void)each_pair(map, find_pair, &st, &bad, &bad_len);
    return st.found;
}
