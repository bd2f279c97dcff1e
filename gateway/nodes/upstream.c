/* upstream — the engine's jobs and deadlines; see upstream.h.
 *
 * A job travels: caller thread (up_submit: copy the job into a pooled transfer) → intake
 * list (mutex; loop_wake when the caller is another thread) → the loop's round: plain-http
 * nodes at a numeric address go to nodeconn (up_nc.h), everything else to curl (up_curl.h)
 * → on_done on the loop's thread → back to the spare list with its buffers, for the next
 * job.
 *
 * Deadlines are the engine's own, for both clients: curl does not time out a transfer
 * while it waits for a connection slot (up_curl.c), and nodeconn's queue has no timer. */
#include "nodes/upstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "nodes/nodeconn.h"
#include "nodes/up_curl.h"
#include "nodes/up_nc.h"
#include "nodes/up_xfer.h"
#include "xg_clock.h"

#define UP_NS_PER_MS                  1000000ULL
#define UP_DEFAULT_PER_NODE           24U
#define UP_DEFAULT_TOTAL              256U
#define UP_DEFAULT_CONNECT_TIMEOUT_MS 3000L
#define UP_DEFAULT_MAX_RESPONSE       ((size_t)64 << 20)
/* Buffers above this size go back to malloc when a transfer is recycled, so one huge
 * answer does not pin its memory in the spare list. */
#define UP_KEEP_BUFFER_BYTES ((size_t)256 << 10)
/* Deadline scans walk every active transfer; run them at most this often. */
#define UP_SCAN_INTERVAL_NS (5 * UP_NS_PER_MS)

struct up_engine {
    struct up_engine_options opt; /* opt.ca_file is the engine's own copy */
    size_t max_spare;
    struct loop *loop;
    struct up_curl *curl;
    struct nc_client *nc;

    pthread_mutex_t lock;
    struct up_list intake; /* lock: jobs from other threads */
    struct up_list spare;  /* lock: transfers for other threads' jobs */
    bool stopping;         /* lock */

    /* The loop's thread only. Jobs and transfers of the loop's own thread (the host's
     * handlers, retries from callbacks) skip the lock. */
    struct up_list local_intake;
    struct up_list local_spare;
    bool stopped; /* the loop stopped: own-thread submissions are refused */
    struct up_list active;
    uint64_t earliest_deadline_ns; /* of the active transfers, UINT64_MAX if none */
    uint64_t last_scan_ns;
    uint64_t connect_due_ns; /* nodeconn's earliest connect deadline */
};

/* ---- jobs ------------------------------------------------------------------------------ */

static bool up_text_has_crlf(const char *s)
{
    return strpbrk(s, "\r\n") != NULL;
}

static bool up_header_name_ok(const char *name)
{
    return name && name[0] && !up_text_has_crlf(name) && !strpbrk(name, ": \t");
}

static bool up_job_valid(const struct up_job *job)
{
    if (!job || !job->url || !job->on_done || !job->method || job->timeout_ms <= 0)
        return false;
    if (strcmp(job->method, "GET") != 0 && strcmp(job->method, "POST") != 0)
        return false;
    if (job->body_len > 0 && !job->body)
        return false;
    if (up_text_has_crlf(job->url))
        return false;
    if (job->nheaders > 0 && !job->headers)
        return false;
    for (size_t i = 0; i < job->nheaders; i++) {
        const struct up_header *h = &job->headers[i];
        if (!up_header_name_ok(h->name) || !h->value || up_text_has_crlf(h->value))
            return false;
    }
    return true;
}

/* ---- the transfer pool ----------------------------------------------------------------- */

static void up_finish(struct up_xfer *x);

static void up_xfer_free(struct up_xfer *x)
{
    if (!x)
        return;
    up_curl_xfer_free(x);
    free(x->req);
    free(x->hdrs);
    free(x->resp);
    free(x);
}

/* A pooled transfer (easy handle and buffers already allocated) or a new one. */
static struct up_xfer *up_xfer_get(struct up_engine *e)
{
    struct up_xfer *x;
    if (loop_on_this_thread(e->loop)) {
        x = up_list_pop(&e->local_spare);
    } else {
        pthread_mutex_lock(&e->lock);
        x = up_list_pop(&e->spare);
        pthread_mutex_unlock(&e->lock);
    }
    if (!x && (x = calloc(1, sizeof *x))) {
        x->engine = e;
        x->opt = &e->opt;
        x->finish = up_finish;
    }
    return x;
}

static void up_xfer_put(struct up_engine *e, struct up_xfer *x)
{
    if (x->resp_cap > UP_KEEP_BUFFER_BYTES) {
        free(x->resp);
        x->resp = NULL;
        x->resp_cap = 0;
    }
    if (x->req_cap > UP_KEEP_BUFFER_BYTES) {
        free(x->req);
        x->req = NULL;
        x->req_cap = 0;
    }
    x->on_done = NULL;
    x->arg = NULL;
    /* The loop's thread keeps half the spares for its own thread's jobs, unlocked. */
    if (loop_on_this_thread(e->loop) && e->local_spare.n < e->max_spare / 2) {
        up_list_push(&e->local_spare, x);
        return;
    }
    pthread_mutex_lock(&e->lock);
    bool keep = e->spare.n < e->max_spare;
    if (keep)
        up_list_push(&e->spare, x);
    pthread_mutex_unlock(&e->lock);
    if (!keep)
        up_xfer_free(x);
}

/* ---- submission and completion --------------------------------------------------------- */

bool up_submit(struct up_engine *e, const struct up_job *job)
{
    if (!up_job_valid(job))
        return false;
    struct up_xfer *x = up_xfer_get(e);
    if (!x)
        return false;

    x->resp_len = 0;
    if (x->resp)
        x->resp[0] = '\0';
    x->too_large = x->out_of_memory = false;
    x->errbuf[0] = '\0';
    bool ready = up_nc_prepare(x, job, &x->native);
    if (!x->native)
        ready = up_curl_prepare(x, job, &e->opt);
    if (!ready) {
        up_xfer_put(e, x);
        return false;
    }
    x->on_done = job->on_done;
    x->arg = job->arg;
    x->timeout_ms = job->timeout_ms;
    x->submitted_ns = (uint64_t)xg_monotonic_ns();
    x->deadline_ns = x->submitted_ns + (uint64_t)job->timeout_ms * UP_NS_PER_MS;

    bool accepted;
    if (loop_on_this_thread(e->loop)) {
        /* The loop looks at its own intake before it waits: no lock, no wake-up. */
        accepted = !e->stopped;
        if (accepted)
            up_list_push(&e->local_intake, x);
    } else {
        pthread_mutex_lock(&e->lock);
        accepted = !e->stopping;
        if (accepted) {
            up_list_push(&e->intake, x);
            loop_wake(e->loop); /* under the lock: the engine cannot be torn down in between */
        }
        pthread_mutex_unlock(&e->lock);
    }
    if (!accepted)
        up_xfer_put(e, x);
    return accepted;
}

/* Detaches x from the engine (and whatever list it is on), reports its result to its
 * owner, and recycles it. */
static void up_finish(struct up_xfer *x)
{
    struct up_engine *e = x->engine;
    if (x->list) /* active, or a list being worked through (overdue, cancelled) */
        up_list_unlink(x->list, x);
    up_curl_detach(e->curl, x);
    if (x->native)
        up_nc_abandon(e->nc, x); /* nothing when nodeconn already ended it */
    x->result.seconds = (double)((uint64_t)xg_monotonic_ns() - x->submitted_ns) / 1e9;
    x->on_done(&x->result, x->arg);
    loop_host_due(e->loop); /* the callback may have resumed a client's request */
    up_xfer_put(e, x);
}

char *up_result_take_body(const struct up_result *res)
{
    struct up_xfer *x = (struct up_xfer *)((char *)res - offsetof(struct up_xfer, result));
    if (res->outcome != UP_OK || !x->resp || x->resp_len == 0 || res->body != x->resp)
        return NULL;
    char *body = x->resp;
    x->resp = NULL;
    x->resp_cap = 0;
    x->resp_len = 0;
    return body;
}

/* ---- the loop's round ------------------------------------------------------------------ */

static void up_start_incoming(struct up_engine *e, struct up_list *incoming, uint64_t now)
{
    struct up_xfer *x;
    while ((x = up_list_pop(incoming))) {
        if (now >= x->deadline_ns) {
            up_xfer_fail(x, UP_TIMEOUT, "the deadline passed before the job started");
            continue;
        }
        if (!x->native && !up_curl_start(e->curl, x)) {
            up_xfer_fail(x, UP_INTERNAL_ERROR, "curl_multi_add_handle failed");
            continue;
        }
        up_list_push(&e->active, x);
        if (x->deadline_ns < e->earliest_deadline_ns)
            e->earliest_deadline_ns = x->deadline_ns;
        if (x->native)
            up_nc_start(e->nc, x); /* may finish x before it returns */
    }
}

/* Fails the jobs whose deadline passed, including those curl or nodeconn still hold back
 * while they wait for a connection slot. They are moved off the active list first: ending
 * one may end others (a freed connection slot goes to a waiting job that fails at once). */
static void up_expire_overdue(struct up_engine *e, uint64_t now)
{
    e->connect_due_ns = nc_expire_connects(e->nc, now);
    if (now < e->earliest_deadline_ns || now < e->last_scan_ns + UP_SCAN_INTERVAL_NS)
        return;
    e->last_scan_ns = now;
    uint64_t earliest = UINT64_MAX;
    struct up_list overdue = {0};
    struct up_xfer *x, *next;
    for (x = e->active.head; x; x = next) {
        next = x->next;
        if (x->deadline_ns <= now) {
            up_list_unlink(&e->active, x);
            up_list_push(&overdue, x);
        } else if (x->deadline_ns < earliest) {
            earliest = x->deadline_ns;
        }
    }
    e->earliest_deadline_ns = earliest;
    while ((x = up_list_pop(&overdue))) {
        snprintf(x->msg, sizeof x->msg, "no answer within the %ld ms deadline", x->timeout_ms);
        up_xfer_fail(x, UP_TIMEOUT, x->msg);
    }
}

static uint64_t up_min(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Another thread handed jobs over. */
static void up_on_wake(void *ctx)
{
    struct up_engine *e = ctx;
    pthread_mutex_lock(&e->lock);
    struct up_list remote = e->intake;
    e->intake = (struct up_list){0};
    pthread_mutex_unlock(&e->lock);
    up_start_incoming(e, &remote, (uint64_t)xg_monotonic_ns());
}

static void up_on_round(void *ctx, uint64_t now)
{
    struct up_engine *e = ctx;
    struct up_list local = e->local_intake;
    e->local_intake = (struct up_list){0};
    up_start_incoming(e, &local, now);
    up_curl_run_timer(e->curl, now);
    up_expire_overdue(e, now);
}

/* Until curl's timer, the next deadline scan or a connect deadline, whichever comes
 * first; now when the loop's own thread queued jobs since the round began. */
static uint64_t up_due_ns(void *ctx)
{
    struct up_engine *e = ctx;
    if (e->local_intake.head)
        return 0;
    uint64_t due = up_curl_due_ns(e->curl);
    if (e->earliest_deadline_ns != UINT64_MAX) {
        uint64_t next_scan = e->last_scan_ns + UP_SCAN_INTERVAL_NS;
        due =
            up_min(due, e->earliest_deadline_ns > next_scan ? e->earliest_deadline_ns : next_scan);
    }
    return up_min(due, e->connect_due_ns);
}

static void up_after_events(void *ctx)
{
    struct up_engine *e = ctx;
    nc_release_closed(e->nc);
    up_curl_release_removed(e->curl);
}

static void up_cancel_all(struct up_engine *e, struct up_list *incoming)
{
    static const char why[] = "the upstream engine stopped";
    struct up_xfer *x;
    while ((x = e->active.head))
        up_xfer_fail(x, UP_CANCELLED, why);
    while ((x = up_list_pop(incoming)))
        up_xfer_fail(x, UP_CANCELLED, why);
}

static void up_on_stop(void *ctx)
{
    struct up_engine *e = ctx;
    pthread_mutex_lock(&e->lock);
    struct up_list remote = e->intake;
    e->intake = (struct up_list){0};
    pthread_mutex_unlock(&e->lock);
    e->stopped = true;
    up_cancel_all(e, &remote);
    up_cancel_all(e, &e->local_intake);
}

/* ---- life cycle ------------------------------------------------------------------------ */

static void up_apply_defaults(struct up_engine_options *o)
{
    if (o->max_connections_per_node == 0)
        o->max_connections_per_node = UP_DEFAULT_PER_NODE;
    if (o->max_total_connections == 0)
        o->max_total_connections = UP_DEFAULT_TOTAL;
    if (o->cap_share == 0)
        o->cap_share = 1;
    if (o->connect_timeout_ms <= 0)
        o->connect_timeout_ms = UP_DEFAULT_CONNECT_TIMEOUT_MS;
    if (o->max_response_bytes == 0)
        o->max_response_bytes = UP_DEFAULT_MAX_RESPONSE;
}

struct up_engine *up_engine_start(const struct up_engine_options *opt, char *err, size_t errlen)
{
    struct up_engine *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    e->opt = *opt;
    e->opt.ca_file = NULL;
    if (opt->ca_file && opt->ca_file[0] && !(e->opt.ca_file = strdup(opt->ca_file))) {
        snprintf(err, errlen, "out of memory");
        free(e);
        return NULL;
    }
    up_apply_defaults(&e->opt);
    e->max_spare = e->opt.max_total_connections * 2;
    e->earliest_deadline_ns = UINT64_MAX;
    e->connect_due_ns = UINT64_MAX;
    pthread_mutex_init(&e->lock, NULL);

    struct loop_tasks tasks = {
        .on_wake = up_on_wake,
        .on_round = up_on_round,
        .due_ns = up_due_ns,
        .after_events = up_after_events,
        .on_stop = up_on_stop,
        .ctx = e,
    };
    if (!(e->loop = loop_new(&tasks, err, errlen)))
        goto fail;
    if (!(e->curl = up_curl_new(e->loop, &e->opt, err, errlen)))
        goto fail;
    e->nc = nc_client_new(e->loop, e->opt.max_connections_per_node, e->opt.max_total_connections,
                          e->opt.connect_timeout_ms);
    if (!e->nc) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (!loop_spawn(e->loop)) {
        snprintf(err, errlen, "cannot start the upstream thread");
        goto fail;
    }
    return e;
fail:
    up_engine_free(e);
    return NULL;
}

struct loop *up_engine_loop(struct up_engine *e)
{
    return e->loop;
}

void up_engine_stop(struct up_engine *e)
{
    if (!e->loop)
        return;
    pthread_mutex_lock(&e->lock);
    e->stopping = true;
    pthread_mutex_unlock(&e->lock);
    loop_stop(e->loop);
}

void up_engine_free(struct up_engine *e)
{
    if (!e)
        return;
    up_engine_stop(e);
    struct up_xfer *x;
    while ((x = up_list_pop(&e->spare)))
        up_xfer_free(x);
    while ((x = up_list_pop(&e->local_spare)))
        up_xfer_free(x);
    up_curl_free(e->curl); /* before the loop: curl forgets its sockets there */
    nc_client_free(e->nc);
    loop_free(e->loop);
    pthread_mutex_destroy(&e->lock);
    free((char *)e->opt.ca_file);
    free(e);
}
