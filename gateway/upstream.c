/* upstream — one thread and one curl multi handle for every transfer to every node.
 *
 * A job travels: caller thread (up_submit: copy the job into a pooled transfer, set up
 * its easy handle) → intake list (mutex) → engine thread (curl_multi_add_handle, driven
 * by curl_multi_perform/curl_multi_poll) → on_done on the engine thread → back to the
 * spare list with its easy handle and buffers, for the next job.
 *
 * curl 7.88 does not time out a transfer while it waits for a connection slot under
 * CURLMOPT_MAX_HOST_CONNECTIONS (its timer only runs once it holds a connection), so the
 * engine keeps each job's deadline itself and expires overdue jobs on its own; curl's
 * CURLOPT_TIMEOUT_MS covers the running ones. */
#include "upstream.h"

#include <assert.h>
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define UP_NS_PER_MS                  1000000ULL
#define UP_DEFAULT_PER_NODE           24U
#define UP_DEFAULT_TOTAL              256U
#define UP_DEFAULT_CONNECT_TIMEOUT_MS 3000L
#define UP_DEFAULT_MAX_RESPONSE       ((size_t)64 << 20)
/* Buffers above this size go back to malloc when a transfer is recycled, so one huge
 * answer does not pin its memory in the spare list. */
#define UP_KEEP_BUFFER_BYTES  ((size_t)256 << 10)
#define UP_FIRST_RESPONSE_CAP ((size_t)16 << 10)
/* Deadline scans walk every active transfer; run them at most this often. */
#define UP_SCAN_INTERVAL_NS (5 * UP_NS_PER_MS)
#define UP_MAX_POLL_MS      1000
#define UP_TCP_KEEPIDLE_S   30L
#define UP_TCP_KEEPINTVL_S  10L

/* Request headers curl adds on its own unless a "Name:" entry removes them. */
static const char *const up_curl_default_headers[] = {"Accept", "Expect", "User-Agent",
                                                      "Content-Type"};
#define UP_N_DEFAULT_HEADERS (sizeof up_curl_default_headers / sizeof up_curl_default_headers[0])

struct up_xfer {
    struct up_xfer *next, *prev; /* on exactly one list, or none while being finished */
    struct up_engine *engine;
    CURL *easy;
    bool in_multi;

    /* The copied job: URL, body and header lines live in req; hdrs is curl's header
     * list built in place over req (no allocation per header). */
    char *req;
    size_t req_cap;
    struct curl_slist *hdrs;
    size_t hdrs_cap;
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

struct up_list {
    struct up_xfer *head, *tail;
    size_t n;
};

struct up_engine {
    struct up_engine_options opt;
    size_t max_spare;
    CURLM *multi;
    pthread_t thread;
    bool thread_running; /* owner thread only: between start and stop */

    pthread_mutex_t lock;
    struct up_list intake; /* lock */
    struct up_list spare;  /* lock */
    bool stopping;         /* lock */
    struct up_host host;   /* lock; fd -1 when none */

    /* Engine thread only. */
    struct up_list active;
    uint64_t earliest_deadline_ns; /* of the active transfers, UINT64_MAX if none */
    uint64_t last_scan_ns;
};

/* The engine whose loop runs on this thread, if any: a submission from there (the host's
 * handlers) needs no cross-thread wake-up. */
static _Thread_local struct up_engine *up_engine_of_this_thread;

static uint64_t up_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void up_list_push(struct up_list *l, struct up_xfer *x)
{
    x->next = NULL;
    x->prev = l->tail;
    if (l->tail)
        l->tail->next = x;
    else
        l->head = x;
    l->tail = x;
    l->n++;
}

static void up_list_unlink(struct up_list *l, struct up_xfer *x)
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
    l->n--;
}

static struct up_xfer *up_list_pop(struct up_list *l)
{
    struct up_xfer *x = l->head;
    if (x)
        up_list_unlink(l, x);
    return x;
}

static void up_xfer_free(struct up_xfer *x)
{
    if (!x)
        return;
    curl_easy_cleanup(x->easy);
    free(x->req);
    free(x->hdrs);
    free(x->resp);
    free(x);
}

static struct up_xfer *up_xfer_new(struct up_engine *e)
{
    struct up_xfer *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->engine = e;
    x->easy = curl_easy_init();
    if (!x->easy) {
        free(x);
        return NULL;
    }
    return x;
}

/* A pooled transfer (easy handle and buffers already allocated) or a new one. */
static struct up_xfer *up_xfer_get(struct up_engine *e)
{
    pthread_mutex_lock(&e->lock);
    struct up_xfer *x = up_list_pop(&e->spare);
    pthread_mutex_unlock(&e->lock);
    return x ? x : up_xfer_new(e);
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
    pthread_mutex_lock(&e->lock);
    bool keep = e->spare.n < e->max_spare;
    if (keep)
        up_list_push(&e->spare, x);
    pthread_mutex_unlock(&e->lock);
    if (!keep)
        up_xfer_free(x);
}

/* Grows *buf to at least need bytes, discarding its contents (they are rewritten). */
static bool up_reserve_fresh(char **buf, size_t *cap, size_t need)
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

static bool up_job_has_header(const struct up_job *job, const char *name)
{
    for (size_t i = 0; i < job->nheaders; i++)
        if (strcasecmp(job->headers[i].name, name) == 0)
            return true;
    return false;
}

/* curl drops "Name: " (nothing after the colon) instead of sending it; "Name;" is its
 * spelling for an empty value. */
static bool up_value_blank(const char *v)
{
    return v[strspn(v, " \t")] == '\0';
}

static char *up_put_line(char *p, const char *name, const char *value)
{
    size_t n = strlen(name);
    memcpy(p, name, n);
    p += n;
    if (!value) { /* removes one of curl's own headers */
        *p++ = ':';
    } else if (up_value_blank(value)) {
        *p++ = ';';
    } else {
        size_t v = strlen(value);
        *p++ = ':';
        *p++ = ' ';
        memcpy(p, value, v);
        p += v;
    }
    *p++ = '\0';
    return p;
}

/* Copies the job's URL, body and header lines into x->req and links x->hdrs over them.
 * The list is never empty: each of curl's default headers is either the caller's or
 * removed. */
static bool up_xfer_copy_job(struct up_xfer *x, const struct up_job *job)
{
    bool suppress[UP_N_DEFAULT_HEADERS];
    size_t url_len = strlen(job->url);
    size_t need = url_len + 1 + job->body_len + 1;
    size_t nlines = job->nheaders;

    for (size_t i = 0; i < job->nheaders; i++)
        need += strlen(job->headers[i].name) + 2 + strlen(job->headers[i].value) + 1;
    for (size_t i = 0; i < UP_N_DEFAULT_HEADERS; i++) {
        suppress[i] = !up_job_has_header(job, up_curl_default_headers[i]);
        if (suppress[i]) {
            need += strlen(up_curl_default_headers[i]) + 2;
            nlines++;
        }
    }
    if (!up_reserve_fresh(&x->req, &x->req_cap, need))
        return false;
    if (x->hdrs_cap < nlines) {
        struct curl_slist *h = malloc(nlines * sizeof *h);
        if (!h)
            return false;
        free(x->hdrs);
        x->hdrs = h;
        x->hdrs_cap = nlines;
    }

    char *p = x->req;
    memcpy(p, job->url, url_len + 1);
    p += url_len + 1;
    if (job->body_len > 0)
        memcpy(p, job->body, job->body_len);
    p[job->body_len] = '\0';
    p += job->body_len + 1;

    size_t k = 0;
    for (size_t i = 0; i < job->nheaders; i++) {
        x->hdrs[k++].data = p;
        p = up_put_line(p, job->headers[i].name, job->headers[i].value);
    }
    for (size_t i = 0; i < UP_N_DEFAULT_HEADERS; i++) {
        if (suppress[i]) {
            x->hdrs[k++].data = p;
            p = up_put_line(p, up_curl_default_headers[i], NULL);
        }
    }
    for (size_t i = 0; i < k; i++)
        x->hdrs[i].next = i + 1 < k ? &x->hdrs[i + 1] : NULL;
    return true;
}

static size_t up_on_write(char *data, size_t size, size_t nmemb, void *userp)
{
    struct up_xfer *x = userp;
    size_t n = size * nmemb;
    size_t max = x->engine->opt.max_response_bytes;

    if (n > max - x->resp_len) {
        x->too_large = true;
        return 0;
    }
    if (x->resp_len + n + 1 > x->resp_cap) {
        size_t cap = x->resp_cap ? x->resp_cap : UP_FIRST_RESPONSE_CAP;
        while (cap < x->resp_len + n + 1)
            cap *= 2;
        if (cap > max + 1)
            cap = max + 1;
        char *p = realloc(x->resp, cap);
        if (!p) {
            x->out_of_memory = true;
            return 0;
        }
        x->resp = p;
        x->resp_cap = cap;
    }
    memcpy(x->resp + x->resp_len, data, n);
    x->resp_len += n;
    x->resp[x->resp_len] = '\0';
    return n;
}

#define UP_SET(opt, val) ok &= curl_easy_setopt(easy, opt, val) == CURLE_OK

/* Sets every option from scratch: a recycled handle carries nothing from its last job
 * except its allocations. */
static bool up_xfer_setup_easy(struct up_xfer *x, const struct up_job *job,
                               const struct up_engine_options *opt)
{
    CURL *easy = x->easy;
    const char *body = x->req + strlen(x->req) + 1;
    bool ok = true;

    curl_easy_reset(easy);
    UP_SET(CURLOPT_URL, x->req);
    UP_SET(CURLOPT_PRIVATE, x);
    UP_SET(CURLOPT_NOSIGNAL, 1L);
    UP_SET(CURLOPT_PROXY, "");
    UP_SET(CURLOPT_PROTOCOLS_STR, "http,https");
    UP_SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    UP_SET(CURLOPT_TCP_KEEPALIVE, 1L);
    UP_SET(CURLOPT_TCP_KEEPIDLE, UP_TCP_KEEPIDLE_S);
    UP_SET(CURLOPT_TCP_KEEPINTVL, UP_TCP_KEEPINTVL_S);
    UP_SET(CURLOPT_CONNECTTIMEOUT_MS, opt->connect_timeout_ms);
    UP_SET(CURLOPT_TIMEOUT_MS, job->timeout_ms);
    UP_SET(CURLOPT_HTTPHEADER, x->hdrs);
    UP_SET(CURLOPT_WRITEFUNCTION, up_on_write);
    UP_SET(CURLOPT_WRITEDATA, x);
    UP_SET(CURLOPT_ERRORBUFFER, x->errbuf);
    UP_SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)opt->max_response_bytes);
    UP_SET(CURLOPT_SSL_VERIFYPEER, job->verify_tls ? 1L : 0L);
    UP_SET(CURLOPT_SSL_VERIFYHOST, job->verify_tls ? 2L : 0L);
    if (strcmp(job->method, "POST") == 0) {
        UP_SET(CURLOPT_POST, 1L);
        UP_SET(CURLOPT_POSTFIELDS, body);
        UP_SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)job->body_len);
    } else {
        UP_SET(CURLOPT_HTTPGET, 1L);
    }
    return ok;
}

#undef UP_SET

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
    if (!up_xfer_copy_job(x, job) || !up_xfer_setup_easy(x, job, &e->opt)) {
        up_xfer_put(e, x);
        return false;
    }
    x->on_done = job->on_done;
    x->arg = job->arg;
    x->timeout_ms = job->timeout_ms;
    x->submitted_ns = up_now_ns();
    x->deadline_ns = x->submitted_ns + (uint64_t)job->timeout_ms * UP_NS_PER_MS;

    bool on_engine_thread = up_engine_of_this_thread == e;
    pthread_mutex_lock(&e->lock);
    bool accepted = !e->stopping;
    if (accepted) {
        up_list_push(&e->intake, x);
        /* Under the lock, so the multi handle cannot be torn down in between. The engine's
         * own thread (the host's handlers) needs no wake-up: it looks at the intake before
         * it waits. */
        if (!on_engine_thread)
            curl_multi_wakeup(e->multi);
    }
    pthread_mutex_unlock(&e->lock);
    if (!accepted)
        up_xfer_put(e, x);
    return accepted;
}

static enum up_outcome up_outcome_of(CURLcode code, const struct up_xfer *x)
{
    switch (code) {
    case CURLE_OK:
        return UP_OK;
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
        return UP_CONNECT_ERROR;
    case CURLE_OPERATION_TIMEDOUT:
        return UP_TIMEOUT;
    case CURLE_FILESIZE_EXCEEDED:
        return UP_TOO_LARGE;
    case CURLE_OUT_OF_MEMORY:
        return UP_INTERNAL_ERROR;
    case CURLE_WRITE_ERROR:
        if (x->too_large)
            return UP_TOO_LARGE;
        if (x->out_of_memory)
            return UP_INTERNAL_ERROR;
        return UP_PROTOCOL_ERROR;
    default:
        return UP_PROTOCOL_ERROR;
    }
}

/* Detaches x from the engine, reports res to its owner, and recycles it. */
static void up_finish(struct up_engine *e, struct up_xfer *x, bool on_active_list)
{
    if (on_active_list)
        up_list_unlink(&e->active, x);
    if (x->in_multi) {
        curl_multi_remove_handle(e->multi, x->easy);
        x->in_multi = false;
    }
    x->result.seconds = (double)(up_now_ns() - x->submitted_ns) / 1e9;
    x->on_done(&x->result, x->arg);
    up_xfer_put(e, x);
}

static void up_finish_with(struct up_engine *e, struct up_xfer *x, bool on_active_list,
                           enum up_outcome outcome, const char *error)
{
    memset(&x->result, 0, sizeof x->result);
    x->result.outcome = outcome;
    x->result.error = error;
    up_finish(e, x, on_active_list);
}

static void up_finish_curl(struct up_engine *e, struct up_xfer *x, CURLcode code)
{
    struct up_result *r = &x->result;
    memset(r, 0, sizeof *r);
    r->outcome = up_outcome_of(code, x);
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &r->http_status);
    if (r->outcome == UP_OK) {
        r->body = x->resp ? x->resp : "";
        r->body_len = x->resp_len;
        char *ct = NULL;
        curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct);
        r->content_type = ct;
    } else if (r->outcome == UP_TOO_LARGE) {
        snprintf(x->msg, sizeof x->msg, "the node's answer exceeds %zu bytes",
                 e->opt.max_response_bytes);
        r->error = x->msg;
    } else {
        r->error = x->errbuf[0] ? x->errbuf : curl_easy_strerror(code);
    }
    up_finish(e, x, true);
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

static void up_start_incoming(struct up_engine *e, struct up_list *incoming, uint64_t now)
{
    struct up_xfer *x;
    while ((x = up_list_pop(incoming))) {
        if (now >= x->deadline_ns) {
            up_finish_with(e, x, false, UP_TIMEOUT, "the deadline passed before the job started");
            continue;
        }
        if (curl_multi_add_handle(e->multi, x->easy) != CURLM_OK) {
            up_finish_with(e, x, false, UP_INTERNAL_ERROR, "curl_multi_add_handle failed");
            continue;
        }
        x->in_multi = true;
        up_list_push(&e->active, x);
        if (x->deadline_ns < e->earliest_deadline_ns)
            e->earliest_deadline_ns = x->deadline_ns;
    }
}

static void up_collect_finished(struct up_engine *e)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(e->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        char *priv = NULL;
        CURLcode code = msg->data.result;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
        up_finish_curl(e, (struct up_xfer *)priv, code);
    }
}

/* Fails the jobs whose deadline passed, including those curl still holds back while
 * they wait for a connection slot. */
static void up_expire_overdue(struct up_engine *e, uint64_t now)
{
    if (now < e->earliest_deadline_ns || now < e->last_scan_ns + UP_SCAN_INTERVAL_NS)
        return;
    e->last_scan_ns = now;
    uint64_t earliest = UINT64_MAX;
    struct up_xfer *next;
    for (struct up_xfer *x = e->active.head; x; x = next) {
        next = x->next;
        if (x->deadline_ns <= now) {
            snprintf(x->msg, sizeof x->msg, "no answer within the %ld ms deadline", x->timeout_ms);
            up_finish_with(e, x, true, UP_TIMEOUT, x->msg);
        } else if (x->deadline_ns < earliest) {
            earliest = x->deadline_ns;
        }
    }
    e->earliest_deadline_ns = earliest;
}

static int up_poll_timeout_ms(const struct up_engine *e, uint64_t now)
{
    if (e->earliest_deadline_ns == UINT64_MAX)
        return UP_MAX_POLL_MS;
    uint64_t due = e->earliest_deadline_ns;
    if (due < e->last_scan_ns + UP_SCAN_INTERVAL_NS)
        due = e->last_scan_ns + UP_SCAN_INTERVAL_NS;
    if (due <= now)
        return 0;
    uint64_t ms = (due - now + UP_NS_PER_MS - 1) / UP_NS_PER_MS;
    return ms < UP_MAX_POLL_MS ? (int)ms : UP_MAX_POLL_MS;
}

static void up_cancel_all(struct up_engine *e, struct up_list *incoming)
{
    static const char why[] = "the upstream engine stopped";
    struct up_xfer *x;
    while ((x = e->active.head))
        up_finish_with(e, x, true, UP_CANCELLED, why);
    while ((x = up_list_pop(incoming)))
        up_finish_with(e, x, false, UP_CANCELLED, why);
}

static bool up_intake_pending(struct up_engine *e)
{
    pthread_mutex_lock(&e->lock);
    bool pending = e->intake.head != NULL;
    pthread_mutex_unlock(&e->lock);
    return pending;
}

/* One iteration's wait: the node sockets, the engine's wake-up and the host's fd. */
static void up_wait(struct up_engine *e, const struct up_host *host, int timeout_ms)
{
    struct curl_waitfd extra = {.fd = host->fd, .events = CURL_WAIT_POLLIN};
    if (host->fd >= 0) {
        long host_ms = host->timeout_ms(host->ctx);
        if (host_ms >= 0 && host_ms < timeout_ms)
            timeout_ms = (int)host_ms;
    }
    curl_multi_poll(e->multi, host->fd >= 0 ? &extra : NULL, host->fd >= 0 ? 1 : 0, timeout_ms,
                    NULL);
}

static void *up_loop(void *arg)
{
    struct up_engine *e = arg;
    up_engine_of_this_thread = e;
    for (;;) {
        pthread_mutex_lock(&e->lock);
        struct up_list incoming = e->intake;
        e->intake = (struct up_list){0};
        bool stopping = e->stopping;
        struct up_host host = e->host;
        pthread_mutex_unlock(&e->lock);

        if (stopping) {
            up_cancel_all(e, &incoming);
            return NULL;
        }
        up_start_incoming(e, &incoming, up_now_ns());
        int running;
        curl_multi_perform(e->multi, &running);
        up_collect_finished(e);
        uint64_t now = up_now_ns();
        up_expire_overdue(e, now);
        /* Before the wait: the callbacks above resumed connections whose answers the host
         * sends now (a resumption does not wake the host's fd). After it: new client I/O. */
        if (host.fd >= 0)
            host.run(host.ctx);
        up_wait(e, &host, up_intake_pending(e) ? 0 : up_poll_timeout_ms(e, now));
        if (host.fd >= 0)
            host.run(host.ctx);
    }
}

void up_engine_attach_host(struct up_engine *e, const struct up_host *host)
{
    pthread_mutex_lock(&e->lock);
    e->host = *host;
    curl_multi_wakeup(e->multi);
    pthread_mutex_unlock(&e->lock);
}

static void up_apply_defaults(struct up_engine_options *o)
{
    if (o->max_connections_per_node == 0)
        o->max_connections_per_node = UP_DEFAULT_PER_NODE;
    if (o->max_total_connections == 0)
        o->max_total_connections = UP_DEFAULT_TOTAL;
    if (o->connect_timeout_ms <= 0)
        o->connect_timeout_ms = UP_DEFAULT_CONNECT_TIMEOUT_MS;
    if (o->max_response_bytes == 0)
        o->max_response_bytes = UP_DEFAULT_MAX_RESPONSE;
}

static bool up_multi_configure(struct up_engine *e)
{
    CURLM *m = e->multi;
    bool ok = true;
    ok &= curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS,
                            (long)e->opt.max_connections_per_node) == CURLM_OK;
    ok &= curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS,
                            (long)e->opt.max_total_connections) == CURLM_OK;
    /* The cache keeps idle keep-alive connections up to the cap instead of curl's
     * default of four per added handle, which closes them in quiet moments. */
    ok &=
        curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)e->opt.max_total_connections) == CURLM_OK;
    ok &= curl_multi_setopt(m, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING) == CURLM_OK;
    return ok;
}

/* The engine thread takes no signals: the daemon's main thread handles them. */
static bool up_spawn_thread(struct up_engine *e)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&e->thread, NULL, up_loop, e);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc == 0;
}

struct up_engine *up_engine_start(const struct up_engine_options *opt, char *err, size_t errlen)
{
    struct up_engine *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    e->opt = *opt;
    up_apply_defaults(&e->opt);
    e->max_spare = e->opt.max_total_connections * 2;
    e->earliest_deadline_ns = UINT64_MAX;
    e->host.fd = -1;
    pthread_mutex_init(&e->lock, NULL);

    /* Reference-counted, and thread-safe in curl >= 7.84. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, errlen, "curl_global_init failed");
        pthread_mutex_destroy(&e->lock);
        free(e);
        return NULL;
    }
    e->multi = curl_multi_init();
    if (!e->multi || !up_multi_configure(e)) {
        snprintf(err, errlen, "cannot set up a curl multi handle");
        goto fail;
    }
    if (!up_spawn_thread(e)) {
        snprintf(err, errlen, "cannot start the upstream thread");
        goto fail;
    }
    e->thread_running = true;
    return e;
fail:
    up_engine_free(e);
    return NULL;
}

void up_engine_stop(struct up_engine *e)
{
    if (!e->thread_running)
        return;
    assert(!pthread_equal(pthread_self(), e->thread) && "up_engine_stop from a callback");
    pthread_mutex_lock(&e->lock);
    e->stopping = true;
    curl_multi_wakeup(e->multi);
    pthread_mutex_unlock(&e->lock);
    pthread_join(e->thread, NULL);
    e->thread_running = false;
}

void up_engine_free(struct up_engine *e)
{
    if (!e)
        return;
    up_engine_stop(e);
    struct up_xfer *x;
    while ((x = up_list_pop(&e->spare)))
        up_xfer_free(x);
    if (e->multi)
        curl_multi_cleanup(e->multi);
    pthread_mutex_destroy(&e->lock);
    free(e);
    curl_global_cleanup();
}

const char *up_outcome_name(enum up_outcome outcome)
{
    switch (outcome) {
    case UP_OK:
        return "ok";
    case UP_CONNECT_ERROR:
        return "connect_error";
    case UP_TIMEOUT:
        return "timeout";
    case UP_TOO_LARGE:
        return "too_large";
    case UP_PROTOCOL_ERROR:
        return "protocol_error";
    case UP_CANCELLED:
        return "cancelled";
    case UP_INTERNAL_ERROR:
        return "internal_error";
    }
    return "unknown";
}
