/* up_xfer — one job's transfer record, shared by the upstream engine (upstream.c) and its
 * two clients: nodeconn for plain-HTTP nodes at a numeric address (up_nc.h) and curl for
 * everything else (up_curl.h). Internal to those three files; callers see upstream.h.
 *
 * A transfer is pooled: its buffers (and curl easy handle) are kept between jobs. The
 * engine owns it; while a client runs it, the client fills result and calls finish, once,
 * on the engine's loop thread. */
#ifndef UP_XFER_H
#define UP_XFER_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodes/nodeconn.h"
#include "nodes/up_job.h"

struct up_list {
    struct up_xfer *head, *tail;
    size_t n;
};

struct up_xfer {
    struct up_xfer *next, *prev; /* on list */
    struct up_list *list;        /* the one list it is on, or NULL */
    struct up_engine *engine;
    const struct up_engine_options *opt; /* the engine's */
    void (*finish)(struct up_xfer *x);   /* the engine's: result is set, report it */

    /* A job for nodeconn: the request is built in req (head, then body) and nx carries it;
     * target is where the URL points. */
    bool native;
    struct nc_target target;
    struct nc_exchange nx;

    /* A job for curl: URL, body and header lines live in req; hdrs is curl's header list
     * built in place over req (no allocation per header). */
    CURL *easy; /* created the first time the transfer goes through curl */
    bool in_multi;
    struct curl_slist *hdrs;
    size_t hdrs_cap;

    char *req;
    size_t req_cap;
    void (*on_done)(const struct up_result *res, void *arg);
    void *arg;
    long timeout_ms;
    uint64_t submitted_ns, deadline_ns;

    char *resp; /* NUL-terminated answer */
    size_t resp_len, resp_cap;
    bool too_large, out_of_memory;

    struct up_result result;
    char errbuf[CURL_ERROR_SIZE];
    char msg[128];
};

void up_list_push(struct up_list *l, struct up_xfer *x);
void up_list_unlink(struct up_list *l, struct up_xfer *x);
struct up_xfer *up_list_pop(struct up_list *l);

/* Grows *buf to at least need bytes, discarding its contents (they are rewritten). */
__attribute__((warn_unused_result)) bool up_xfer_reserve(char **buf, size_t *cap, size_t need);

/* Appends answer bytes to x->resp, within the engine's answer cap; false (too_large or
 * out_of_memory set) when they do not fit. */
__attribute__((warn_unused_result)) bool up_xfer_append(struct up_xfer *x, const char *data,
                                                        size_t n);

/* Fills x->result for a job that never got an answer, and reports it. */
void up_xfer_fail(struct up_xfer *x, enum up_outcome outcome, const char *error);

/* Why an answer over the cap failed, formatted in x->msg. */
const char *up_xfer_too_large_why(struct up_xfer *x);

#endif
