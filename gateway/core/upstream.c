/* upstream — one thread, one epoll set and one curl multi handle for every transfer to
 * every node of one event loop.
 *
 * A job travels: caller thread (up_submit: copy the job into a pooled transfer) → intake
 * list (mutex; an eventfd wakes the engine when the caller is another thread) → engine
 * thread: plain-http nodes at a numeric address go to nodeconn (our own keep-alive HTTP/1.1
 * client), everything else to curl's multi handle driven by curl_multi_socket_action →
 * on_done on the engine thread → back to the spare list with its buffers, for the next
 * job.
 *
 * The epoll set holds the wake-up eventfd, the host's descriptor (libmicrohttpd's own
 * epoll fd), curl's sockets and nodeconn's sockets, so one epoll_wait serves clients and
 * nodes together. Its data field says whose descriptor an event is for: nodeconn's
 * connection pointers (8-aligned), or a small tag (UP_TAG_*) with a curl socket's number
 * above it.
 *
 * curl 7.88 does not time out a transfer while it waits for a connection slot under
 * CURLMOPT_MAX_HOST_CONNECTIONS (its timer only runs once it holds a connection), so the
 * engine keeps each job's deadline itself and expires overdue jobs on its own, for both
 * clients; curl's CURLOPT_TIMEOUT_MS covers its running ones. */
#include "core/upstream.h"

#include <assert.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "nodes/http1.h"
#include "http/http_text.h"
#include "nodes/nodeconn.h"
#include "xg_clock.h"

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
#define UP_MAX_EVENTS       64
#define UP_TCP_KEEPIDLE_S   30L
#define UP_TCP_KEEPINTVL_S  10L

/* Request headers curl adds on its own unless a "Name:" entry removes them. */
static const char *const up_curl_default_headers[] = {"Accept", "Expect", "User-Agent",
                                                      "Content-Type"};
#define UP_N_DEFAULT_HEADERS (sizeof up_curl_default_headers / sizeof up_curl_default_headers[0])

/* epoll data of the engine's own descriptors; nodeconn's are 8-aligned pointers. */
#define UP_TAG_WAKE    1U
#define UP_TAG_HOST    2U
#define UP_TAG_CURL    3U /* a curl socket: its number << 2 | UP_TAG_CURL */
#define UP_TAG_WATCH   2U /* a watcher's (4-aligned) address | UP_TAG_WATCH; never just 2 */
#define UP_TAG_MASK    3U
#define UP_MAX_HEADERS 32

struct up_xfer {
    struct up_xfer *next, *prev; /* on list */
    struct up_list *list;        /* the one list it is on, or NULL */
    struct up_engine *engine;
    CURL *easy; /* created the first time the transfer goes through curl */
    bool in_multi;

    /* A job for nodeconn: the request is built in req (head, then body) and nx carries it;
     * target is where the URL points. */
    bool native;
    struct nc_target target;
    struct nc_exchange nx;

    /* A job for curl: URL, body and header lines live in req; hdrs is curl's header list
     * built in place over req (no allocation per header). */
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
    struct up_engine_options opt; /* opt.ca_file is the engine's own copy */
    size_t max_spare;
    CURLM *multi;
    int epoll_fd, wake_fd;
    struct nc_client *nc;
    pthread_t thread;
    bool thread_running; /* owner thread only: between start and stop */

    pthread_mutex_t lock;
    struct up_list intake; /* lock: jobs from other threads */
    struct up_list spare;  /* lock: transfers for other threads' jobs */
    bool stopping;         /* lock */
    struct up_host host;   /* lock; fd -1 when none */

    /* Engine thread only. Jobs and transfers of the engine's own thread (the host's
     * handlers, retries from callbacks) skip the lock. */
    struct up_list local_intake;
    struct up_list local_spare;
    bool remote_waiting; /* woken: take the locked intake, the host and the stop flag */
    bool stopped;        /* the loop saw the stop: own-thread submissions are refused */
    struct up_list active;
    uint64_t earliest_deadline_ns; /* of the active transfers, UINT64_MAX if none */
    uint64_t last_scan_ns;
    uint64_t curl_due_ns;    /* curl's timer, UINT64_MAX when unset */
    uint64_t connect_due_ns; /* nodeconn's earliest connect deadline */
    bool host_dirty;         /* a job finished since the host last ran: it may resume */
};

/* The engine whose loop runs on this thread, if any: a submission from there (the host's
 * handlers) needs no cross-thread wake-up. */
static _Thread_local struct up_engine *up_engine_of_this_thread;

static void up_list_push(struct up_list *l, struct up_xfer *x)
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
    x->list = NULL;
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
    if (x->easy)
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
    return x;
}

/* A pooled transfer (easy handle and buffers already allocated) or a new one. */
static struct up_xfer *up_xfer_get(struct up_engine *e)
{
    struct up_xfer *x;
    if (up_engine_of_this_thread == e) {
        x = up_list_pop(&e->local_spare);
    } else {
        pthread_mutex_lock(&e->lock);
        x = up_list_pop(&e->spare);
        pthread_mutex_unlock(&e->lock);
    }
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
    /* The engine thread keeps half the spares for its own thread's jobs, unlocked. */
    if (up_engine_of_this_thread == e && e->local_spare.n < e->max_spare / 2) {
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

/* Appends answer bytes to x->resp, within the engine's answer cap. */
static bool up_append_answer(struct up_xfer *x, const char *data, size_t n)
{
    size_t max = x->engine->opt.max_response_bytes;
    if (n > max - x->resp_len) {
        x->too_large = true;
        return false;
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

static size_t up_on_write(char *data, size_t size, size_t nmemb, void *userp)
{
    size_t n = size * nmemb;
    return up_append_answer(userp, data, n) ? n : 0;
}

static bool up_on_native_body(void *ctx, const char *data, size_t n)
{
    struct up_xfer *x = ctx;
    const struct h1_parser *p = &x->nx.parser;
    /* A declared length sizes the buffer once, exactly: the body is usually handed on to
     * the client without a copy, so the buffer is new for most transfers. */
    if (x->resp_len == 0 && p->has_length && !p->chunked && !p->until_close &&
        p->content_length < x->engine->opt.max_response_bytes &&
        p->content_length + 1 > x->resp_cap) {
        char *buf = realloc(x->resp, (size_t)p->content_length + 1);
        if (!buf) {
            x->out_of_memory = true;
            return false;
        }
        x->resp = buf;
        x->resp_cap = (size_t)p->content_length + 1;
    }
    return up_append_answer(x, data, n);
}

static void up_on_native_end(struct nc_exchange *nx, enum nc_end end, const char *error);

/* Builds the request nodeconn sends (head, then body) in x->req. The head carries exactly
 * the job's headers plus Host and, for POST, Content-Length, as curl's request would. */
static bool up_xfer_build_native(struct up_xfer *x, const struct up_job *job)
{
    struct h1_header headers[UP_MAX_HEADERS];
    if (job->nheaders > UP_MAX_HEADERS)
        return false;
    for (size_t i = 0; i < job->nheaders; i++)
        headers[i] = (struct h1_header){job->headers[i].name, job->headers[i].value};
    bool post = strcmp(job->method, "POST") == 0;
    size_t head = h1_request_head_size(job->method, x->target.path, x->target.authority, headers,
                                       job->nheaders, post, job->body_len);
    if (!up_reserve_fresh(&x->req, &x->req_cap, head + job->body_len + 1))
        return false;
    h1_format_request_head(x->req, job->method, x->target.path, x->target.authority, headers,
                           job->nheaders, post, job->body_len);
    if (post && job->body_len > 0)
        memcpy(x->req + head, job->body, job->body_len);
    /* Field by field: the exchange embeds the parser's line buffer, not worth zeroing. */
    x->nx.request = x->req;
    x->nx.request_len = head + (post ? job->body_len : 0);
    x->nx.on_body = up_on_native_body;
    x->nx.on_end = up_on_native_end;
    x->nx.ctx = x;
    x->nx.node = NULL;
    x->nx.conn = NULL;
    return true;
}

#define UP_SET(opt, val) ok &= curl_easy_setopt(easy, opt, val) == CURLE_OK

/* Sets every option from scratch: a recycled handle carries nothing from its last job
 * except its allocations. */
static bool up_xfer_setup_easy(struct up_xfer *x, const struct up_job *job,
                               const struct up_engine_options *opt)
{
    if (!x->easy && !(x->easy = curl_easy_init()))
        return false;
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
    if (opt->ca_file && opt->ca_file[0])
        UP_SET(CURLOPT_CAINFO, opt->ca_file);
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

static void up_wake(struct up_engine *e)
{
    uint64_t one = 1;
    ssize_t w = write(e->wake_fd, &one, sizeof one);
    (void)w; /* EAGAIN: the counter is already non-zero, a wake-up is pending */
}

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
    x->native = nc_target_of(job->url, &x->target);
    bool ready = x->native ? up_xfer_build_native(x, job)
                           : up_xfer_copy_job(x, job) && up_xfer_setup_easy(x, job, &e->opt);
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
    if (up_engine_of_this_thread == e) {
        /* The loop looks at its own intake before it waits: no lock, no wake-up. */
        accepted = !e->stopped;
        if (accepted)
            up_list_push(&e->local_intake, x);
    } else {
        pthread_mutex_lock(&e->lock);
        accepted = !e->stopping;
        if (accepted) {
            up_list_push(&e->intake, x);
            up_wake(e); /* under the lock: the engine cannot be torn down in between */
        }
        pthread_mutex_unlock(&e->lock);
    }
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

/* Detaches x from the engine (and whatever list it is on), reports its result to its
 * owner, and recycles it. */
static void up_finish(struct up_engine *e, struct up_xfer *x)
{
    if (x->list) /* active, or a list being worked through (overdue, cancelled) */
        up_list_unlink(x->list, x);
    if (x->in_multi) {
        curl_multi_remove_handle(e->multi, x->easy);
        x->in_multi = false;
    }
    if (x->native)
        nc_abandon(e->nc, &x->nx); /* nothing when nodeconn already ended it */
    x->result.seconds = (double)((uint64_t)xg_monotonic_ns() - x->submitted_ns) / 1e9;
    x->on_done(&x->result, x->arg);
    e->host_dirty = true;
    up_xfer_put(e, x);
}

static void up_finish_with(struct up_engine *e, struct up_xfer *x, enum up_outcome outcome,
                           const char *error)
{
    memset(&x->result, 0, sizeof x->result);
    x->result.outcome = outcome;
    x->result.error = error;
    up_finish(e, x);
}

static void up_finish_curl(struct up_engine *e, struct up_xfer *x, CURLcode code)
{
    struct up_result *r = &x->result;
    memset(r, 0, sizeof *r);
    r->outcome = up_outcome_of(code, x);
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &r->http_status);
    char *ct = NULL;
    if (r->outcome == UP_OK)
        curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct);
    if (ct && !http_field_value_ok(ct, strlen(ct))) { /* as http1.c: the answer is refused */
        r->outcome = UP_PROTOCOL_ERROR;
        r->error = "malformed Content-Type";
    } else if (r->outcome == UP_OK) {
        r->body = x->resp ? x->resp : "";
        r->body_len = x->resp_len;
        r->content_type = ct;
    } else if (r->outcome == UP_TOO_LARGE) {
        snprintf(x->msg, sizeof x->msg, "the node's answer exceeds %zu bytes",
                 e->opt.max_response_bytes);
        r->error = x->msg;
    } else {
        r->error = x->errbuf[0] ? x->errbuf : curl_easy_strerror(code);
    }
    up_finish(e, x);
}

static void up_on_native_end(struct nc_exchange *nx, enum nc_end end, const char *error)
{
    struct up_xfer *x = (struct up_xfer *)((char *)nx - offsetof(struct up_xfer, nx));
    struct up_engine *e = x->engine;
    struct up_result *r = &x->result;
    memset(r, 0, sizeof *r);
    if (end == NC_ANSWERED) {
        r->outcome = UP_OK;
        r->http_status = nx->parser.status;
        r->body = x->resp ? x->resp : "";
        r->body_len = x->resp_len;
        r->content_type = nx->parser.content_type[0] ? nx->parser.content_type : NULL;
    } else if (x->too_large) {
        r->outcome = UP_TOO_LARGE;
        snprintf(x->msg, sizeof x->msg, "the node's answer exceeds %zu bytes",
                 e->opt.max_response_bytes);
        r->error = x->msg;
    } else if (x->out_of_memory) {
        r->outcome = UP_INTERNAL_ERROR;
        r->error = "out of memory";
    } else {
        r->outcome = end == NC_CONNECT_FAILED ? UP_CONNECT_ERROR : UP_PROTOCOL_ERROR;
        r->http_status = nx->parser.status;
        r->error = error;
    }
    up_finish(e, x);
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
            up_finish_with(e, x, UP_TIMEOUT, "the deadline passed before the job started");
            continue;
        }
        if (!x->native && curl_multi_add_handle(e->multi, x->easy) != CURLM_OK) {
            up_finish_with(e, x, UP_INTERNAL_ERROR, "curl_multi_add_handle failed");
            continue;
        }
        x->in_multi = !x->native;
        up_list_push(&e->active, x);
        if (x->deadline_ns < e->earliest_deadline_ns)
            e->earliest_deadline_ns = x->deadline_ns;
        if (x->native)
            nc_start(e->nc, &x->nx, &x->target); /* may finish x before it returns */
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
        up_finish_with(e, x, UP_TIMEOUT, x->msg);
    }
}

static uint64_t up_min(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* How long the next wait may last: until curl's timer, the next deadline scan, a
 * connect deadline or the host's own timeout, whichever comes first. */
static int up_wait_timeout_ms(const struct up_engine *e, const struct up_host *host, uint64_t now)
{
    uint64_t due = e->curl_due_ns;
    if (e->earliest_deadline_ns != UINT64_MAX) {
        uint64_t next_scan = e->last_scan_ns + UP_SCAN_INTERVAL_NS;
        due =
            up_min(due, e->earliest_deadline_ns > next_scan ? e->earliest_deadline_ns : next_scan);
    }
    due = up_min(due, e->connect_due_ns);
    long ms = UP_MAX_POLL_MS;
    if (due != UINT64_MAX)
        ms = due <= now ? 0 : (long)((due - now + UP_NS_PER_MS - 1) / UP_NS_PER_MS);
    if (host->timeout_ms) {
        long host_ms = host->timeout_ms(host->ctx);
        if (host_ms >= 0 && host_ms < ms)
            ms = host_ms;
    }
    return ms < UP_MAX_POLL_MS ? (int)ms : UP_MAX_POLL_MS;
}

static void up_cancel_all(struct up_engine *e, struct up_list *incoming)
{
    static const char why[] = "the upstream engine stopped";
    struct up_xfer *x;
    while ((x = e->active.head))
        up_finish_with(e, x, UP_CANCELLED, why);
    while ((x = up_list_pop(incoming)))
        up_finish_with(e, x, UP_CANCELLED, why);
}

/* curl asks to watch (or forget) one of its sockets. */
static int up_on_curl_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    (void)easy;
    (void)socketp;
    struct up_engine *e = userp;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(e->epoll_fd, EPOLL_CTL_DEL, s, NULL);
        return 0;
    }
    struct epoll_event ev = {
        .events = ((what & CURL_POLL_IN) ? EPOLLIN : 0U) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0U),
        .data.u64 = (uint64_t)s << 2 | UP_TAG_CURL,
    };
    if (epoll_ctl(e->epoll_fd, EPOLL_CTL_ADD, s, &ev) != 0 && errno == EEXIST)
        epoll_ctl(e->epoll_fd, EPOLL_CTL_MOD, s, &ev);
    return 0;
}

static int up_on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    struct up_engine *e = userp;
    e->curl_due_ns = timeout_ms < 0
                         ? UINT64_MAX
                         : (uint64_t)xg_monotonic_ns() + (uint64_t)timeout_ms * UP_NS_PER_MS;
    return 0;
}

static void up_curl_action(struct up_engine *e, curl_socket_t s, int flags)
{
    int running;
    curl_multi_socket_action(e->multi, s, flags, &running);
    up_collect_finished(e);
}

static void up_run_curl_timer(struct up_engine *e, uint64_t now)
{
    if (now < e->curl_due_ns)
        return;
    e->curl_due_ns = UINT64_MAX;
    up_curl_action(e, CURL_SOCKET_TIMEOUT, 0);
}

static void up_on_event(struct up_engine *e, const struct epoll_event *ev, bool *host_ready)
{
    uint64_t tag = ev->data.u64 & UP_TAG_MASK;
    if (ev->data.u64 == UP_TAG_WAKE) {
        uint64_t count;
        ssize_t r = read(e->wake_fd, &count, sizeof count);
        (void)r;
        e->remote_waiting = true;
    } else if (ev->data.u64 == UP_TAG_HOST) {
        *host_ready = true;
    } else if (tag == UP_TAG_WATCH) {
        struct up_watch *w = (struct up_watch *)(uintptr_t)(ev->data.u64 & ~(uint64_t)UP_TAG_MASK);
        w->on_event(w, ev->events);
    } else if (tag == UP_TAG_CURL) {
        int flags = ((ev->events & EPOLLIN) ? CURL_CSELECT_IN : 0) |
                    ((ev->events & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                    ((ev->events & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
        up_curl_action(e, (curl_socket_t)(ev->data.u64 >> 2), flags);
    } else {
        nc_on_event(e->nc, ev->data.ptr, ev->events);
    }
}

static void up_run_host(struct up_engine *e, const struct up_host *host)
{
    e->host_dirty = false;
    if (host->run)
        host->run(host->ctx);
}

static void *up_loop(void *arg)
{
    struct up_engine *e = arg;
    struct epoll_event events[UP_MAX_EVENTS];
    struct up_host host = {.fd = -1};
    up_engine_of_this_thread = e;
    e->remote_waiting = true;
    for (;;) {
        if (e->remote_waiting) {
            e->remote_waiting = false;
            pthread_mutex_lock(&e->lock);
            struct up_list remote = e->intake;
            e->intake = (struct up_list){0};
            e->stopped = e->stopping;
            host = e->host;
            pthread_mutex_unlock(&e->lock);
            if (e->stopped) {
                up_cancel_all(e, &remote);
                up_cancel_all(e, &e->local_intake);
                return NULL;
            }
            up_start_incoming(e, &remote, (uint64_t)xg_monotonic_ns());
        }
        uint64_t now = (uint64_t)xg_monotonic_ns();
        struct up_list local = e->local_intake;
        e->local_intake = (struct up_list){0};
        up_start_incoming(e, &local, now);
        up_run_curl_timer(e, now);
        up_expire_overdue(e, now);
        /* Jobs that ended above resumed client connections: the host answers them now (a
         * resumption alone would wake the host's descriptor one round later). */
        if (e->host_dirty)
            up_run_host(e, &host);

        int timeout =
            e->local_intake.head ? 0 : up_wait_timeout_ms(e, &host, (uint64_t)xg_monotonic_ns());
        int n = epoll_wait(e->epoll_fd, events, UP_MAX_EVENTS, timeout);
        bool host_ready = n == 0; /* a timeout: the host may have its own to run */
        for (int i = 0; i < n; i++)
            up_on_event(e, &events[i], &host_ready);
        nc_release_closed(e->nc);
        if (host_ready || e->host_dirty)
            up_run_host(e, &host);
    }
}

bool up_engine_watch(struct up_engine *e, int fd, uint32_t events, struct up_watch *w)
{
    assert(((uintptr_t)w & UP_TAG_MASK) == 0);
    struct epoll_event ev = {.events = events, .data.u64 = (uintptr_t)w | UP_TAG_WATCH};
    return epoll_ctl(e->epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0;
}

bool up_engine_watch_change(struct up_engine *e, int fd, uint32_t events, struct up_watch *w)
{
    struct epoll_event ev = {.events = events, .data.u64 = (uintptr_t)w | UP_TAG_WATCH};
    return epoll_ctl(e->epoll_fd, EPOLL_CTL_MOD, fd, &ev) == 0;
}

void up_engine_host_due(struct up_engine *e)
{
    e->host_dirty = true;
}

void up_engine_attach_host(struct up_engine *e, const struct up_host *host)
{
    pthread_mutex_lock(&e->lock);
    e->host = *host;
    if (host->fd >= 0) {
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = UP_TAG_HOST};
        epoll_ctl(e->epoll_fd, EPOLL_CTL_ADD, host->fd, &ev);
    }
    up_wake(e);
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
    ok &= curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, up_on_curl_socket) == CURLM_OK;
    ok &= curl_multi_setopt(m, CURLMOPT_SOCKETDATA, e) == CURLM_OK;
    ok &= curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, up_on_curl_timer) == CURLM_OK;
    ok &= curl_multi_setopt(m, CURLMOPT_TIMERDATA, e) == CURLM_OK;
    return ok;
}

/* The epoll set with the wake-up eventfd in it, and nodeconn over it. */
static bool up_events_open(struct up_engine *e)
{
    e->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    e->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (e->epoll_fd < 0 || e->wake_fd < 0)
        return false;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = UP_TAG_WAKE};
    if (epoll_ctl(e->epoll_fd, EPOLL_CTL_ADD, e->wake_fd, &ev) != 0)
        return false;
    e->nc = nc_client_new(e->epoll_fd, e->opt.max_connections_per_node,
                          e->opt.max_total_connections, e->opt.connect_timeout_ms);
    return e->nc != NULL;
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
    e->opt.ca_file = NULL;
    if (opt->ca_file && opt->ca_file[0] && !(e->opt.ca_file = strdup(opt->ca_file))) {
        snprintf(err, errlen, "out of memory");
        free(e);
        return NULL;
    }
    up_apply_defaults(&e->opt);
    e->max_spare = e->opt.max_total_connections * 2;
    e->earliest_deadline_ns = UINT64_MAX;
    e->curl_due_ns = UINT64_MAX;
    e->connect_due_ns = UINT64_MAX;
    e->epoll_fd = e->wake_fd = -1;
    e->host.fd = -1;
    pthread_mutex_init(&e->lock, NULL);

    /* Reference-counted, and thread-safe in curl >= 7.84. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, errlen, "curl_global_init failed");
        pthread_mutex_destroy(&e->lock);
        free((char *)e->opt.ca_file);
        free(e);
        return NULL;
    }
    if (!up_events_open(e)) {
        snprintf(err, errlen, "cannot set up the engine's epoll set: %s", strerror(errno));
        goto fail;
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
    up_wake(e);
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
    while ((x = up_list_pop(&e->local_spare)))
        up_xfer_free(x);
    if (e->multi)
        curl_multi_cleanup(e->multi);
    nc_client_free(e->nc);
    if (e->wake_fd >= 0)
        close(e->wake_fd);
    if (e->epoll_fd >= 0)
        close(e->epoll_fd);
    pthread_mutex_destroy(&e->lock);
    free((char *)e->opt.ca_file);
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
