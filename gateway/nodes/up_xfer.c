/* up_xfer — the transfer record's lists and buffers; see up_xfer.h. */
#include "nodes/up_xfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UP_XFER_FIRST_RESPONSE_CAP ((size_t)16 << 10)

void up_list_push(struct up_list *l, struct up_xfer *x)
{
    x->list = l;
    x->next = NULL;
    x->prev = l->tail;
    if (l->tail)
        l->tail->next = x;
    else
        l->head = x;
    l->tail = x;
    l->n++;
}

void up_list_unlink(struct up_list *l, struct up_xfer *x)
{
    if (x->prev)
        x->prev->next = x->next;
    else
        l->head = x->next;
    if (x->next)
        x->next->prev = x->prev;
    else
        l->tail = x->prev;
    x->next = x->prev = NULL;
    x->list = NULL;
    l->n--;
}

struct up_xfer *up_list_pop(struct up_list *l)
{
    struct up_xfer *x = l->head;
    if (x)
        up_list_unlink(l, x);
    return x;
}

bool up_xfer_reserve(char **buf, size_t *cap, size_t need)
{
    if (*cap >= need)
        return true;
    char *p = malloc(need);
    if (!p)
        return false;
    free(*buf);
    *buf = p;
    *cap = need;
    return true;
}

bool up_xfer_append(struct up_xfer *x, const char *data, size_t n)
{
    size_t max = x->opt->max_response_bytes;
    if (n > max - x->resp_len) {
        x->too_large = true;
        return false;
    }
    if (x->resp_len + n + 1 > x->resp_cap) {
        size_t cap = x->resp_cap ? x->resp_cap : UP_XFER_FIRST_RESPONSE_CAP;
        while (cap < x->resp_len + n + 1)
            cap *= 2;
        if (cap > max + 1)
            cap = max + 1;
        char *p = realloc(x->resp, cap);
        if (!p) {
            x->out_of_memory = true;
            return false;
        }
        x->resp = p;
        x->resp_cap = cap;
    }
    memcpy(x->resp + x->resp_len, data, n);
    x->resp_len += n;
    x->resp[x->resp_len] = '\0';
    return true;
}

void up_xfer_fail(struct up_xfer *x, enum up_outcome outcome, const char *error)
{
    memset(&x->result, 0, sizeof x->result);
    x->result.outcome = outcome;
    x->result.error = error;
    x->finish(x);
}

const char *up_xfer_too_large_why(struct up_xfer *x)
{
    snprintf(x->msg, sizeof x->msg, "the node's answer exceeds %zu bytes",
             x->opt->max_response_bytes);
    return x->msg;
}
