/* stand_in_node — the stand-in nodes the upstream engine's unit tests run against, and
 * the checks each of its two clients (nodeconn, curl) must pass. Test helpers, not product
 * code; static inline so each test takes only what it uses.
 *
 * The libmicrohttpd node (thread per connection, 127.0.0.1, port chosen by the kernel;
 * server_start, or the group setup) counts TCP connections (open now, most at once,
 * total) and records the last request it was asked to capture. Routes:
 *   /echo            records headers and body, answers all 256 byte values
 *   /headers         records headers, answers "ok"
 *   /sleep?ms=N      waits N ms, answers "slept"
 *   /big?n=N         answers N bytes ('&chunked=1': without Content-Length)
 *   /status?code=N   answers HTTP status N
 * The raw node (raw_listen) is played by the test's own thread over plain sockets, for
 * answers no server library would send. A URL spelled with NATIVE_HOST goes through
 * nodeconn, with CURL_HOST through curl.
 *
 * Longer than a module should be: both stand-in nodes, the recorder of outcomes and the
 * checks both clients run are used together by the engine's three test files, and one
 * header keeps them from drifting apart. */
#ifndef STAND_IN_NODE_H
#define STAND_IN_NODE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nodes/upstream.h"

#define MAX_CAPTURED_HEADERS 32

struct captured_header {
    char name[64];
    char value[256];
};

struct server {
    struct MHD_Daemon *daemon;
    uint16_t port;
    atomic_int conns_open, conns_peak, conns_total, requests;
    atomic_bool stopping;

    pthread_mutex_t lock;
    struct captured_header headers[MAX_CAPTURED_HEADERS];
    size_t nheaders;
    unsigned char *body;
    size_t body_len;
};

struct request_state {
    unsigned char *body;
    size_t len, cap;
};

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleeps in steps so that stopping the server does not wait out a long sleep. */
static inline void server_sleep_ms(struct server *srv, long ms)
{
    double until = now_s() + (double)ms / 1000.0;
    while (now_s() < until && !atomic_load(&srv->stopping))
        usleep(1000);
}

static inline void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                                 enum MHD_ConnectionNotificationCode code)
{
    struct server *srv = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        int open = atomic_fetch_add(&srv->conns_open, 1) + 1;
        atomic_fetch_add(&srv->conns_total, 1);
        int peak = atomic_load(&srv->conns_peak);
        while (open > peak && !atomic_compare_exchange_weak(&srv->conns_peak, &peak, open))
            ;
    } else {
        atomic_fetch_sub(&srv->conns_open, 1);
    }
}

static inline enum MHD_Result capture_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                             const char *value)
{
    struct server *srv = cls;
    if (srv->nheaders < MAX_CAPTURED_HEADERS) {
        struct captured_header *h = &srv->headers[srv->nheaders++];
        snprintf(h->name, sizeof h->name, "%s", key);
        snprintf(h->value, sizeof h->value, "%s", value ? value : "");
    }
    return MHD_YES;
}

static inline void capture_request(struct server *srv, struct MHD_Connection *conn,
                                   const struct request_state *rs)
{
    pthread_mutex_lock(&srv->lock);
    srv->nheaders = 0;
    MHD_get_connection_values(conn, MHD_HEADER_KIND, capture_header, srv);
    free(srv->body);
    srv->body = NULL;
    srv->body_len = rs->len;
    if (rs->len > 0) {
        srv->body = malloc(rs->len);
        memcpy(srv->body, rs->body, rs->len);
    }
    pthread_mutex_unlock(&srv->lock);
}

static inline long query_long(struct MHD_Connection *conn, const char *key, long fallback)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
    return v ? strtol(v, NULL, 10) : fallback;
}

static inline ssize_t fill_x(void *cls, uint64_t pos, char *buf, size_t max)
{
    uint64_t n = (uint64_t)(uintptr_t)cls;
    if (pos >= n)
        return MHD_CONTENT_READER_END_OF_STREAM;
    size_t k = n - pos < max ? (size_t)(n - pos) : max;
    memset(buf, 'x', k);
    return (ssize_t)k;
}

static inline enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const void *data,
                                    size_t len, const char *content_type)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
    if (content_type)
        MHD_add_response_header(r, "Content-Type", content_type);
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static inline enum MHD_Result answer(struct server *srv, struct MHD_Connection *conn,
                                     const char *url, const struct request_state *rs)
{
    atomic_fetch_add(&srv->requests, 1);
    if (strcmp(url, "/echo") == 0) {
        unsigned char all[256];
        for (int i = 0; i < 256; i++)
            all[i] = (unsigned char)i;
        capture_request(srv, conn, rs);
        return reply(conn, 200, all, sizeof all, "application/x-test-binary");
    }
    if (strcmp(url, "/headers") == 0) {
        capture_request(srv, conn, rs);
        return reply(conn, 200, "ok", 2, "text/plain");
    }
    if (strcmp(url, "/sleep") == 0) {
        server_sleep_ms(srv, query_long(conn, "ms", 0));
        return reply(conn, 200, "slept", 5, "text/plain");
    }
    if (strcmp(url, "/big") == 0) {
        long n = query_long(conn, "n", 0);
        if (query_long(conn, "chunked", 0)) {
            struct MHD_Response *r = MHD_create_response_from_callback(
                MHD_SIZE_UNKNOWN, 4096, fill_x, (void *)(uintptr_t)n, NULL);
            enum MHD_Result ret = MHD_queue_response(conn, 200, r);
            MHD_destroy_response(r);
            return ret;
        }
        char *buf = malloc((size_t)n + 1);
        memset(buf, 'x', (size_t)n);
        enum MHD_Result ret = reply(conn, 200, buf, (size_t)n, NULL);
        free(buf);
        return ret;
    }
    if (strcmp(url, "/status") == 0)
        return reply(conn, (unsigned)query_long(conn, "code", 500), "{}", 2, "application/json");
    return reply(conn, 404, "", 0, NULL);
}

static inline enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                         const char *method, const char *version,
                                         const char *upload_data, size_t *upload_data_size,
                                         void **con_cls)
{
    struct server *srv = cls;
    struct request_state *rs = *con_cls;
    if (!rs) {
        rs = calloc(1, sizeof *rs);
        *con_cls = rs;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        if (rs->len + n > rs->cap) {
            rs->cap = (rs->len + n) * 2;
            rs->body = realloc(rs->body, rs->cap);
        }
        memcpy(rs->body + rs->len, upload_data, n);
        rs->len += n;
        *upload_data_size = 0;
        return MHD_YES;
    }
    return answer(srv, conn, url, rs);
}

static inline void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                                enum MHD_RequestTerminationCode toe)
{
    struct request_state *rs = *con_cls;
    if (rs) {
        free(rs->body);
        free(rs);
        *con_cls = NULL;
    }
}

static inline struct server *server_start(void)
{
    struct server *srv = calloc(1, sizeof *srv);
    pthread_mutex_init(&srv->lock, NULL);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    srv->daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0,
        NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
        srv, MHD_OPTION_END);
    assert_non_null(srv->daemon);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    assert_non_null(info);
    srv->port = info->port;
    return srv;
}

static inline void server_stop(struct server *srv)
{
    atomic_store(&srv->stopping, true);
    MHD_stop_daemon(srv->daemon);
    pthread_mutex_destroy(&srv->lock);
    free(srv->body);
    free(srv);
}

static inline const char *server_header(struct server *srv, const char *name)
{
    for (size_t i = 0; i < srv->nheaders; i++)
        if (strcasecmp(srv->headers[i].name, name) == 0)
            return srv->headers[i].value;
    return NULL;
}

/* The server saw exactly these header names (any order, any case), each once. */
static inline void assert_header_names(struct server *srv, const char *const *names, size_t n)
{
    pthread_mutex_lock(&srv->lock);
    for (size_t i = 0; i < srv->nheaders; i++)
        fprintf(stderr, "#   seen: %s: %s\n", srv->headers[i].name, srv->headers[i].value);
    assert_int_equal(srv->nheaders, n);
    for (size_t i = 0; i < n; i++)
        assert_non_null(server_header(srv, names[i]));
    pthread_mutex_unlock(&srv->lock);
}

/* ---- a synchronous wrapper: submit, wait for the callback, keep a copy ---- */

struct outcome {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int calls;
    enum up_outcome outcome;
    long http_status;
    char *body;
    size_t body_len;
    char content_type[128];
    bool has_content_type;
    double seconds;
    char error[256];
    bool take_body, took_body, nul_terminated;
};

static inline void outcome_init(struct outcome *o)
{
    memset(o, 0, sizeof *o);
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->cond, NULL);
}

static inline void outcome_clear(struct outcome *o)
{
    free(o->body);
    pthread_mutex_destroy(&o->lock);
    pthread_cond_destroy(&o->cond);
}

static inline void on_done_record(const struct up_result *res, void *arg)
{
    struct outcome *o = arg;
    pthread_mutex_lock(&o->lock);
    o->calls++;
    o->outcome = res->outcome;
    o->http_status = res->http_status;
    o->body_len = res->body_len;
    /* cmocka asserts only on the test's own thread: record, check later. */
    o->nul_terminated = !res->body || res->body[res->body_len] == '\0';
    if (res->body && o->take_body) {
        o->body = up_result_take_body(res);
        o->took_body = o->body == res->body && up_result_take_body(res) == NULL;
    } else if (res->body) {
        o->body = malloc(res->body_len + 1);
        memcpy(o->body, res->body, res->body_len + 1);
    }
    o->has_content_type = res->content_type != NULL;
    if (res->content_type)
        snprintf(o->content_type, sizeof o->content_type, "%s", res->content_type);
    o->seconds = res->seconds;
    if (res->error)
        snprintf(o->error, sizeof o->error, "%s", res->error);
    pthread_cond_signal(&o->cond);
    pthread_mutex_unlock(&o->lock);
}

/* Waits up to limit_s for the callback count to reach calls; true when it did. */
static inline bool outcome_await(struct outcome *o, int calls, double limit_s)
{
    double until = now_s() + limit_s;
    pthread_mutex_lock(&o->lock);
    while (o->calls < calls && now_s() < until) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&o->cond, &o->lock, &ts);
    }
    bool reached = o->calls >= calls;
    pthread_mutex_unlock(&o->lock);
    return reached;
}

static inline void outcome_wait(struct outcome *o, int calls, double limit_s)
{
    outcome_await(o, calls, limit_s);
    assert_int_equal(o->calls, calls);
    assert_true(o->nul_terminated);
}

/* Submits the job with o recording its outcome; does not wait. */
static inline bool submit_recorded(struct up_engine *e, struct up_job job, struct outcome *o)
{
    job.on_done = on_done_record;
    job.arg = o;
    return up_submit(e, &job);
}

static inline void run_job(struct up_engine *e, struct up_job job, struct outcome *o)
{
    assert_true(submit_recorded(e, job, o));
    outcome_wait(o, 1, 20.0);
}

static inline struct up_engine *engine_start(unsigned per_node, unsigned total, size_t max_response)
{
    char err[256] = "";
    struct up_engine_options opt = {
        .max_connections_per_node = per_node,
        .max_total_connections = total,
        .connect_timeout_ms = 2000,
        .max_response_bytes = max_response,
    };
    struct up_engine *e = up_engine_start(&opt, err, sizeof err);
    if (!e)
        fail_msg("up_engine_start: %s", err);
    return e;
}

#define NATIVE_HOST "127.0.0.1" /* served by nodeconn */
#define CURL_HOST   "localhost" /* a host name: served by curl */

/* The server's URL with its address spelled as host: a numeric address goes through the
 * engine's own client (nodeconn), a host name ("localhost") through curl. */
static inline void url_at(char *buf, size_t len, const char *host, const struct server *srv,
                          const char *path)
{
    snprintf(buf, len, "http://%s:%u%s", host, (unsigned)srv->port, path);
}

static inline void url_of(char *buf, size_t len, const struct server *srv, const char *path)
{
    url_at(buf, len, NATIVE_HOST, srv, path);
}

static inline void wait_until_done(atomic_int *done, int n, double limit_s)
{
    double until = now_s() + limit_s;
    while (atomic_load(done) < n && now_s() < until)
        usleep(2000);
    assert_int_equal(atomic_load(done), n);
}

/* Connections of an earlier test's engine may still be closing on the server side. */
static inline void wait_until_closed(struct server *srv)
{
    double until = now_s() + 5.0;
    while (atomic_load(&srv->conns_open) > 0 && now_s() < until)
        usleep(2000);
    assert_int_equal(atomic_load(&srv->conns_open), 0);
}

static inline void check_exact_headers(struct server *srv, const char *host)
{
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128];
    url_at(url, sizeof url, host, srv, "/headers");
    struct outcome o;

    /* POST with a JSON body: the two given headers plus HTTP/1.1 framing. */
    const struct up_header two[] = {{"Content-Type", "application/json; charset=utf-8"},
                                    {"X-Probe", "abc"}};
    const char json[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"get_info\"}";
    outcome_init(&o);
    run_job(e,
            (struct up_job){.url = url,
                            .method = "POST",
                            .body = json,
                            .body_len = sizeof json - 1,
                            .headers = two,
                            .nheaders = 2,
                            .timeout_ms = 5000},
            &o);
    assert_int_equal(o.outcome, UP_OK);
    static const char *const post_names[] = {"Host", "Content-Length", "Content-Type", "X-Probe"};
    assert_header_names(srv, post_names, 4);
    assert_string_equal(server_header(srv, "Content-Type"), "application/json; charset=utf-8");
    assert_string_equal(server_header(srv, "X-Probe"), "abc");
    char authority[96]; /* Host: the URL's host and port as spelled */
    snprintf(authority, sizeof authority, "%s:%u", host, (unsigned)srv->port);
    assert_string_equal(server_header(srv, "Host"), authority);
    outcome_clear(&o);

    /* GET without headers: Host only — no User-Agent, Accept, Accept-Encoding. */
    outcome_init(&o);
    run_job(e, (struct up_job){.url = url, .method = "GET", .timeout_ms = 5000}, &o);
    assert_int_equal(o.outcome, UP_OK);
    static const char *const get_names[] = {"Host"};
    assert_header_names(srv, get_names, 1);
    outcome_clear(&o);

    /* A 2 MiB POST without a Content-Type (as wallets send .bin requests): no form
     * Content-Type, no Expect: 100-continue; an empty header value survives. */
    size_t big_len = (size_t)2 << 20;
    char *big = malloc(big_len);
    for (size_t i = 0; i < big_len; i++)
        big[i] = (char)(i * 7);
    const struct up_header empty[] = {{"X-Empty", ""}};
    outcome_init(&o);
    run_job(e,
            (struct up_job){.url = url,
                            .method = "POST",
                            .body = big,
                            .body_len = big_len,
                            .headers = empty,
                            .nheaders = 1,
                            .timeout_ms = 10000},
            &o);
    assert_int_equal(o.outcome, UP_OK);
    static const char *const bin_names[] = {"Host", "Content-Length", "X-Empty"};
    assert_header_names(srv, bin_names, 3);
    assert_string_equal(server_header(srv, "X-Empty"), "");
    pthread_mutex_lock(&srv->lock);
    assert_int_equal(srv->body_len, big_len);
    assert_memory_equal(srv->body, big, big_len);
    pthread_mutex_unlock(&srv->lock);
    free(big);
    outcome_clear(&o);
    up_engine_free(e);
}

/* Runs one job against the MHD server with its address spelled as host. */
static inline void fetch_at(struct up_engine *e, struct server *srv, const char *host,
                            const char *method, const char *path, const void *body, size_t body_len,
                            struct outcome *o)
{
    char url[128];
    url_at(url, sizeof url, host, srv, path);
    outcome_init(o);
    run_job(
        e,
        (struct up_job){
            .url = url, .method = method, .body = body, .body_len = body_len, .timeout_ms = 5000},
        o);
}

static inline void assert_same_answer(const struct outcome *a, const struct outcome *b)
{
    assert_int_equal(a->outcome, UP_OK);
    assert_int_equal(b->outcome, UP_OK);
    assert_int_equal(a->http_status, b->http_status);
    assert_int_equal(a->body_len, b->body_len);
    if (a->body_len > 0)
        assert_memory_equal(a->body, b->body, a->body_len);
    assert_int_equal(a->has_content_type, b->has_content_type);
    assert_string_equal(a->content_type, b->content_type);
}

/* ---- the per-node cap under slow answers ---- */

#define CAP_JOBS     20
#define CAP_PER_NODE 2

static inline void check_cap_holds(struct server *srv, const char *host)
{
    struct up_engine *e = engine_start(CAP_PER_NODE, 16, 0);
    char url[128];
    url_at(url, sizeof url, host, srv, "/sleep?ms=50");
    wait_until_closed(srv);
    atomic_store(&srv->conns_peak, 0);
    int total_before = atomic_load(&srv->conns_total);
    struct outcome o[CAP_JOBS];
    double t0 = now_s();
    for (int i = 0; i < CAP_JOBS; i++) {
        outcome_init(&o[i]);
        assert_true(submit_recorded(
            e, (struct up_job){.url = url, .method = "GET", .timeout_ms = 10000}, &o[i]));
    }
    for (int i = 0; i < CAP_JOBS; i++) {
        outcome_wait(&o[i], 1, 20.0);
        assert_int_equal(o[i].outcome, UP_OK);
        assert_int_equal(o[i].http_status, 200);
        assert_string_equal(o[i].body, "slept");
        outcome_clear(&o[i]);
    }
    double took = now_s() - t0;
    int peak = atomic_load(&srv->conns_peak);
    int opened = atomic_load(&srv->conns_total) - total_before;
    fprintf(stderr, "#   %s: %d jobs in %.3f s, peak %d connections, %d opened\n", host, CAP_JOBS,
            took, peak, opened);
    assert_int_equal(peak, CAP_PER_NODE); /* never more, and the jobs did overlap */
    assert_int_equal(opened, CAP_PER_NODE);
    assert_true(took >= 0.050 * CAP_JOBS / CAP_PER_NODE * 0.9);
    up_engine_free(e);
}

/* ---- a node played by the test's own thread over raw sockets ----
 *
 * The engine runs on its own thread, so the test thread can be the node: accept, read a
 * request, write exactly the bytes a case needs, close when the case says so. Every wait
 * is bounded (RAW_WAIT_MS). */

#define RAW_WAIT_MS 5000
#define RAW_REQUEST 8192

struct raw_node {
    int fd; /* listening */
    uint16_t port;
    char host[16]; /* as spelled in a URL */
};

static const char raw_ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/* Listens on 127.0.0.1, or on ::1 when v6; false when the address cannot be bound. */
static inline bool raw_listen(struct raw_node *r, bool v6)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    if (v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        len = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *a;
    }
    r->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (r->fd < 0)
        return false;
    if (bind(r->fd, (struct sockaddr *)&ss, len) != 0 || listen(r->fd, 16) != 0 ||
        getsockname(r->fd, (struct sockaddr *)&ss, &len) != 0) {
        close(r->fd);
        r->fd = -1;
        return false;
    }
    r->port =
        ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
    snprintf(r->host, sizeof r->host, "%s", v6 ? "[::1]" : "127.0.0.1");
    return true;
}

/* The node's URL; host NULL spells its own address. */
static inline void raw_url(char *buf, size_t len, const struct raw_node *r, const char *host,
                           const char *path)
{
    snprintf(buf, len, "http://%s:%u%s", host ? host : r->host, (unsigned)r->port, path);
}

/* Waits up to ms for fd to be readable (or to report a hang-up or an error). */
static inline bool readable(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int rc;
    while ((rc = poll(&p, 1, ms)) < 0 && errno == EINTR)
        ;
    return rc > 0;
}

/* The next connection to the node, or -1 when none comes within RAW_WAIT_MS. */
static inline int raw_accept(struct raw_node *r)
{
    if (!readable(r->fd, RAW_WAIT_MS))
        return -1;
    int c = accept4(r->fd, NULL, NULL, SOCK_CLOEXEC);
    if (c >= 0) {
        int one = 1;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return c;
}

/* Like raw_accept, but gives up as soon as job o ended without the connection. */
static inline int raw_accept_for(struct raw_node *r, struct outcome *o)
{
    double until = now_s() + RAW_WAIT_MS / 1000.0;
    while (now_s() < until) {
        if (readable(r->fd, 10))
            return raw_accept(r);
        pthread_mutex_lock(&o->lock);
        bool ended = o->calls > 0;
        pthread_mutex_unlock(&o->lock);
        if (ended)
            return readable(r->fd, 0) ? raw_accept(r) : -1;
    }
    return -1;
}

/* Reads one request (head, and a body by Content-Length) into buf, NUL-terminated. Returns
 * its length, 0 when the engine closed the connection first, -1 on an error or timeout. */
static inline ssize_t raw_read_request(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    double until = now_s() + RAW_WAIT_MS / 1000.0;
    for (;;) {
        buf[len] = '\0';
        const char *end = strstr(buf, "\r\n\r\n");
        if (end) {
            size_t need = (size_t)(end + 4 - buf);
            const char *cl = strcasestr(buf, "\r\nContent-Length:");
            if (cl && cl < end)
                need += strtoul(cl + 17, NULL, 10);
            if (len >= need)
                return (ssize_t)len;
        }
        int left_ms = (int)((until - now_s()) * 1000.0);
        if (len + 1 >= cap || left_ms <= 0 || !readable(fd, left_ms))
            return -1;
        ssize_t n = recv(fd, buf + len, cap - 1 - len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 && len == 0 ? 0 : -1;
        len += (size_t)n;
    }
}

static inline bool raw_send(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        len -= (size_t)w;
    }
    return true;
}

/* Reads one request on c and answers it "ok" (Content-Length, connection kept open). */
static inline bool raw_answer_ok(int c)
{
    char req[RAW_REQUEST];
    return raw_read_request(c, req, sizeof req) > 0 && raw_send(c, raw_ok, sizeof raw_ok - 1);
}

/* Waits for the engine to close its end of c: true on EOF (or a reset), false when bytes
 * arrive instead or nothing happens within RAW_WAIT_MS. */
static inline bool raw_peer_closes(int c)
{
    char b;
    if (!readable(c, RAW_WAIT_MS))
        return false;
    ssize_t n = recv(c, &b, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
}

/* Closes c with a reset instead of a FIN. */
static inline void raw_reset(int c)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(c);
}

/* This process's descriptor at the other end of the accepted connection c: the engine's
 * socket. -1 when not found. */
static inline int engine_end_of(int c)
{
    struct sockaddr_storage peer, me;
    socklen_t peer_len = sizeof peer;
    memset(&peer, 0, sizeof peer);
    if (getpeername(c, (struct sockaddr *)&peer, &peer_len) != 0)
        return -1;
    for (int fd = 0; fd < 65536; fd++) {
        socklen_t me_len = sizeof me;
        memset(&me, 0, sizeof me);
        if (fd != c && getsockname(fd, (struct sockaddr *)&me, &me_len) == 0 &&
            me_len == peer_len && memcmp(&me, &peer, peer_len) == 0)
            return fd;
    }
    return -1;
}

static inline struct up_job get_job(const char *url, long timeout_ms)
{
    return (struct up_job){.url = url, .method = "GET", .timeout_ms = timeout_ms};
}

/* Bytes 0..n-1 of a binary test body: every byte value, NULs included. */
static inline void fill_binary(unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 7);
}

static inline void assert_binary_body(const struct outcome *o, size_t n)
{
    unsigned char want[1024];
    assert_true(n <= sizeof want);
    fill_binary(want, n);
    assert_int_equal(o->outcome, UP_OK);
    assert_int_equal(o->http_status, 200);
    assert_int_equal(o->body_len, n);
    assert_memory_equal(o->body, want, n);
}

/* One GET job to url that the raw node r takes on a new connection and answers "ok": the
 * job ends UP_OK with that body. o holds its outcome (outcome_clear it); returns the node's
 * end of the connection, which the engine keeps alive. */
static inline int raw_exchange_ok(struct up_engine *e, struct raw_node *r, const char *url,
                                  struct outcome *o)
{
    outcome_init(o);
    assert_true(submit_recorded(e, get_job(url, 5000), o));
    int c = raw_accept(r);
    assert_true(c >= 0);
    assert_true(raw_answer_ok(c));
    outcome_wait(o, 1, 5.0);
    assert_int_equal(o->outcome, UP_OK);
    assert_string_equal(o->body, "ok");
    return c;
}

/* ---- the cap on connections to all nodes together ---- */

/* With room for one connection in all, a connection kept alive to one node must give way
 * to a job for another node (curl closes the oldest idle connection in that case). */
static inline void check_idle_connection_yields_to_another_node(const char *host)
{
    struct raw_node r1, r2;
    assert_true(raw_listen(&r1, false));
    assert_true(raw_listen(&r2, false));
    struct up_engine *e = engine_start(1, 1, 0);
    char url1[128], url2[128];
    raw_url(url1, sizeof url1, &r1, host, "/get_info");
    raw_url(url2, sizeof url2, &r2, host, "/get_info");
    struct outcome o;
    int c1 = raw_exchange_ok(e, &r1, url1, &o);
    outcome_clear(&o);

    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url2, 2000), &o));
    int c2 = raw_accept_for(&r2, &o);
    if (c2 < 0) {
        outcome_wait(&o, 1, 5.0);
        fail_msg("no connection to the second node: the idle one to the first kept the only "
                 "slot, and the job ended %s: %s",
                 up_outcome_name(o.outcome), o.error);
    }
    assert_true(raw_answer_ok(c2));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
    assert_string_equal(o.body, "ok");
    assert_true(raw_peer_closes(c1)); /* the idle one was closed: one connection in all */
    outcome_clear(&o);
    close(c1);
    close(c2);
    up_engine_free(e);
    close(r1.fd);
    close(r2.fd);
}

/* ---- scenarios that crash the engine: run in a child process ---- */

/* Holds the engine thread inside a completion callback until released (bounded), so that
 * socket events and deadlines pile up and the engine meets them together. */
struct blocker {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool entered, released;
};

static inline void timed_wait_10ms(pthread_cond_t *cond, pthread_mutex_t *lock)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 10 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(cond, lock, &ts);
}

static inline void on_done_block(const struct up_result *res, void *arg)
{
    struct blocker *b = arg;
    double until = now_s() + 10.0;
    pthread_mutex_lock(&b->lock);
    b->entered = true;
    pthread_cond_broadcast(&b->cond);
    while (!b->released && now_s() < until)
        timed_wait_10ms(&b->cond, &b->lock);
    pthread_mutex_unlock(&b->lock);
}

/* Sends a job to node r and serves it; returns once its callback holds the engine. */
static inline bool blocker_hold(struct blocker *b, struct up_engine *e, struct raw_node *r)
{
    char url[128];
    raw_url(url, sizeof url, r, NULL, "/block");
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->cond, NULL);
    b->entered = b->released = false;
    struct up_job job = get_job(url, 5000);
    job.on_done = on_done_block;
    job.arg = b;
    if (!up_submit(e, &job))
        return false;
    int c = raw_accept(r);
    if (c < 0 || !raw_answer_ok(c))
        return false;
    close(c);
    double until = now_s() + RAW_WAIT_MS / 1000.0;
    pthread_mutex_lock(&b->lock);
    while (!b->entered && now_s() < until)
        timed_wait_10ms(&b->cond, &b->lock);
    bool entered = b->entered;
    pthread_mutex_unlock(&b->lock);
    return entered;
}

static inline void blocker_release(struct blocker *b)
{
    pthread_mutex_lock(&b->lock);
    b->released = true;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
}

/* In the child, cmocka's asserts are out of bounds: a failed check exits with 3. */
#define CHILD_CHECK(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "#   child, line %d: failed: %s\n", __LINE__, #cond);                  \
            return 3;                                                                              \
        }                                                                                          \
    } while (0)

/* Runs scenario in a child process: these make the engine touch freed memory or call
 * through a recycled job, which would take the whole test binary down. */
static inline void run_in_child(int (*scenario)(void))
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(scenario());
    int status = 0;
    pid_t done = 0;
    double until = now_s() + 30.0;
    while ((done = waitpid(pid, &status, WNOHANG)) == 0 && now_s() < until)
        usleep(2000);
    if (done == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fail_msg("the scenario did not finish within 30 s");
    }
    if (WIFSIGNALED(status))
        fail_msg("the engine crashed: signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    if (WEXITSTATUS(status) != 0)
        fail_msg("the scenario failed: exit status %d (1: a sanitizer report above, 3: a check)",
                 WEXITSTATUS(status));
}

static inline int group_setup(void **state)
{
    *state = server_start();
    return 0;
}

static inline int group_teardown(void **state)
{
    server_stop(*state);
    return 0;
}

#endif
