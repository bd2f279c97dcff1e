/* Unit tests of the upstream engine against a small libmicrohttpd server started here
 * (thread per connection, 127.0.0.1, port chosen by the kernel). The server counts TCP
 * connections (open now, most at once, total) and records the last request it was
 * asked to capture. Routes:
 *   /echo            records headers and body, answers all 256 byte values
 *   /headers         records headers, answers "ok"
 *   /sleep?ms=N      waits N ms, answers "slept"
 *   /big?n=N         answers N bytes ('&chunked=1': without Content-Length)
 *   /status?code=N   answers HTTP status N */
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleeps in steps so that stopping the server does not wait out a long sleep. */
static void server_sleep_ms(struct server *srv, long ms)
{
    double until = now_s() + (double)ms / 1000.0;
    while (now_s() < until && !atomic_load(&srv->stopping))
        usleep(1000);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
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

static enum MHD_Result capture_header(void *cls, enum MHD_ValueKind kind, const char *key,
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

static void capture_request(struct server *srv, struct MHD_Connection *conn,
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

static long query_long(struct MHD_Connection *conn, const char *key, long fallback)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
    return v ? strtol(v, NULL, 10) : fallback;
}

static ssize_t fill_x(void *cls, uint64_t pos, char *buf, size_t max)
{
    uint64_t n = (uint64_t)(uintptr_t)cls;
    if (pos >= n)
        return MHD_CONTENT_READER_END_OF_STREAM;
    size_t k = n - pos < max ? (size_t)(n - pos) : max;
    memset(buf, 'x', k);
    return (ssize_t)k;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const void *data,
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

static enum MHD_Result answer(struct server *srv, struct MHD_Connection *conn, const char *url,
                              const struct request_state *rs)
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
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

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct request_state *rs = *con_cls;
    if (rs) {
        free(rs->body);
        free(rs);
        *con_cls = NULL;
    }
}

static struct server *server_start(void)
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

static void server_stop(struct server *srv)
{
    atomic_store(&srv->stopping, true);
    MHD_stop_daemon(srv->daemon);
    pthread_mutex_destroy(&srv->lock);
    free(srv->body);
    free(srv);
}

static const char *server_header(struct server *srv, const char *name)
{
    for (size_t i = 0; i < srv->nheaders; i++)
        if (strcasecmp(srv->headers[i].name, name) == 0)
            return srv->headers[i].value;
    return NULL;
}

/* The server saw exactly these header names (any order, any case), each once. */
static void assert_header_names(struct server *srv, const char *const *names, size_t n)
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

static void outcome_init(struct outcome *o)
{
    memset(o, 0, sizeof *o);
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->cond, NULL);
}

static void outcome_clear(struct outcome *o)
{
    free(o->body);
    pthread_mutex_destroy(&o->lock);
    pthread_cond_destroy(&o->cond);
}

static void on_done_record(const struct up_result *res, void *arg)
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
static bool outcome_await(struct outcome *o, int calls, double limit_s)
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

static void outcome_wait(struct outcome *o, int calls, double limit_s)
{
    outcome_await(o, calls, limit_s);
    assert_int_equal(o->calls, calls);
    assert_true(o->nul_terminated);
}

/* Submits the job with o recording its outcome; does not wait. */
static bool submit_recorded(struct up_engine *e, struct up_job job, struct outcome *o)
{
    job.on_done = on_done_record;
    job.arg = o;
    return up_submit(e, &job);
}

static void run_job(struct up_engine *e, struct up_job job, struct outcome *o)
{
    assert_true(submit_recorded(e, job, o));
    outcome_wait(o, 1, 20.0);
}

static struct up_engine *engine_start(unsigned per_node, unsigned total, size_t max_response)
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
static void url_at(char *buf, size_t len, const char *host, const struct server *srv,
                   const char *path)
{
    snprintf(buf, len, "http://%s:%u%s", host, (unsigned)srv->port, path);
}

static void url_of(char *buf, size_t len, const struct server *srv, const char *path)
{
    url_at(buf, len, NATIVE_HOST, srv, path);
}

/* ---- tests ---- */

static void test_binary_body_and_answer_pass_through(void **state)
{
    struct server *srv = *state;
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128];
    url_of(url, sizeof url, srv, "/echo");

    /* Every byte value, NULs included, twice over. */
    unsigned char body[512];
    for (size_t i = 0; i < sizeof body; i++)
        body[i] = (unsigned char)(255 - i % 256);
    const struct up_header hdrs[] = {{"Content-Type", "application/octet-stream"}};
    struct outcome o;
    outcome_init(&o);
    o.take_body = true;
    run_job(e,
            (struct up_job){.url = url,
                            .method = "POST",
                            .body = body,
                            .body_len = sizeof body,
                            .headers = hdrs,
                            .nheaders = 1,
                            .timeout_ms = 5000},
            &o);

    assert_int_equal(o.outcome, UP_OK);
    assert_int_equal(o.http_status, 200);
    assert_true(o.took_body);
    assert_int_equal(o.body_len, 256);
    for (int i = 0; i < 256; i++)
        assert_int_equal((unsigned char)o.body[i], i);
    assert_true(o.has_content_type);
    assert_string_equal(o.content_type, "application/x-test-binary");
    assert_true(o.seconds > 0.0 && o.seconds < 5.0);
    pthread_mutex_lock(&srv->lock);
    assert_int_equal(srv->body_len, sizeof body);
    assert_memory_equal(srv->body, body, sizeof body);
    pthread_mutex_unlock(&srv->lock);
    outcome_clear(&o);
    up_engine_free(e);
}

static void check_exact_headers(struct server *srv, const char *host)
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

static void test_request_carries_exactly_the_given_headers(void **state)
{
    check_exact_headers(*state, NATIVE_HOST);
}

static void test_request_carries_exactly_the_given_headers_through_curl(void **state)
{
    check_exact_headers(*state, CURL_HOST);
}

/* ---- many jobs from many threads ---- */

#define LOAD_THREADS         4
#define LOAD_JOBS_PER_THREAD 50
#define LOAD_CAP             6

struct load {
    struct up_engine *e;
    char url[128];
    atomic_int done, ok, bad;
    atomic_int thread_mismatch;
    pthread_t callback_thread;
    atomic_bool callback_thread_set;
    pthread_t submitters[LOAD_THREADS];
};

static void on_load_done(const struct up_result *res, void *arg)
{
    struct load *l = arg;
    bool expected = false;
    if (atomic_compare_exchange_strong(&l->callback_thread_set, &expected, true))
        l->callback_thread = pthread_self();
    else if (!pthread_equal(l->callback_thread, pthread_self()))
        atomic_fetch_add(&l->thread_mismatch, 1);
    if (res->outcome == UP_OK && res->http_status == 200 && res->body_len == 5 &&
        memcmp(res->body, "slept", 5) == 0)
        atomic_fetch_add(&l->ok, 1);
    else
        atomic_fetch_add(&l->bad, 1);
    atomic_fetch_add(&l->done, 1);
}

static void *submit_many(void *arg)
{
    struct load *l = arg;
    for (int i = 0; i < LOAD_JOBS_PER_THREAD; i++) {
        struct up_job job = {
            .url = l->url, .method = "GET", .timeout_ms = 20000, .on_done = on_load_done, .arg = l};
        if (!up_submit(l->e, &job))
            atomic_fetch_add(&l->bad, 1);
    }
    return NULL;
}

static void wait_until_done(atomic_int *done, int n, double limit_s)
{
    double until = now_s() + limit_s;
    while (atomic_load(done) < n && now_s() < until)
        usleep(2000);
    assert_int_equal(atomic_load(done), n);
}

/* Connections of an earlier test's engine may still be closing on the server side. */
static void wait_until_closed(struct server *srv)
{
    double until = now_s() + 5.0;
    while (atomic_load(&srv->conns_open) > 0 && now_s() < until)
        usleep(2000);
    assert_int_equal(atomic_load(&srv->conns_open), 0);
}

static void run_load(struct load *l, int already_done)
{
    for (int t = 0; t < LOAD_THREADS; t++)
        assert_int_equal(pthread_create(&l->submitters[t], NULL, submit_many, l), 0);
    for (int t = 0; t < LOAD_THREADS; t++)
        pthread_join(l->submitters[t], NULL);
    wait_until_done(&l->done, already_done + LOAD_THREADS * LOAD_JOBS_PER_THREAD, 30.0);
}

static void test_many_threads_share_a_capped_keepalive_pool(void **state)
{
    struct server *srv = *state;
    const int n = LOAD_THREADS * LOAD_JOBS_PER_THREAD;
    struct load *l = calloc(1, sizeof *l);
    l->e = engine_start(LOAD_CAP, 64, 0);
    url_of(l->url, sizeof l->url, srv, "/sleep?ms=3");
    wait_until_closed(srv);
    atomic_store(&srv->conns_peak, 0);
    int total_before = atomic_load(&srv->conns_total);
    int requests_before = atomic_load(&srv->requests);

    run_load(l, 0);
    int opened = atomic_load(&srv->conns_total) - total_before;
    fprintf(stderr, "#   %d jobs: %d ok, %d connections opened, peak %d at once\n", n,
            atomic_load(&l->ok), opened, atomic_load(&srv->conns_peak));
    assert_int_equal(atomic_load(&l->ok), n);
    assert_int_equal(atomic_load(&l->bad), 0);
    assert_int_equal(atomic_load(&srv->requests) - requests_before, n);
    assert_int_equal(atomic_load(&l->thread_mismatch), 0);
    for (int t = 0; t < LOAD_THREADS; t++)
        assert_false(pthread_equal(l->callback_thread, l->submitters[t]));
    /* The cap held, the jobs overlapped, and connections were reused. */
    assert_true(atomic_load(&srv->conns_peak) <= LOAD_CAP);
    assert_true(atomic_load(&srv->conns_peak) >= 2);
    assert_true(opened <= LOAD_CAP + 2);

    /* A quiet moment with one job at a time, then another burst: the idle connections
     * stayed in the cache (curl's default cache, four per running transfer, would
     * have closed some of them). */
    usleep(100 * 1000);
    for (int i = 0; i < 5; i++) {
        struct outcome o;
        outcome_init(&o);
        run_job(l->e, (struct up_job){.url = l->url, .method = "GET", .timeout_ms = 5000}, &o);
        assert_int_equal(o.outcome, UP_OK);
        outcome_clear(&o);
    }
    run_load(l, n);
    int reopened = atomic_load(&srv->conns_total) - total_before - opened;
    fprintf(stderr, "#   second burst: %d new connections\n", reopened);
    assert_int_equal(atomic_load(&l->ok), 2 * n);
    assert_true(atomic_load(&srv->conns_peak) <= LOAD_CAP);
    assert_int_equal(reopened, 0);

    up_engine_free(l->e);
    free(l);
}

static void test_timeout(void **state)
{
    struct server *srv = *state;
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128];
    url_of(url, sizeof url, srv, "/sleep?ms=3000");
    struct outcome o;
    outcome_init(&o);
    double t0 = now_s();
    run_job(e, (struct up_job){.url = url, .method = "GET", .timeout_ms = 250}, &o);
    double took = now_s() - t0;
    assert_int_equal(o.outcome, UP_TIMEOUT);
    assert_null(o.body);
    assert_true(o.error[0] != '\0');
    assert_true(took >= 0.24 && took < 1.0);
    assert_true(o.seconds >= 0.24 && o.seconds < 1.0);
    outcome_clear(&o);
    up_engine_free(e);
}

/* With one connection per node, a short job queued behind a long one must still fail at
 * its own deadline, not when the connection frees up. */
static void test_deadline_covers_time_queued_for_a_connection(void **state)
{
    struct server *srv = *state;
    struct up_engine *e = engine_start(1, 16, 0);
    char slow[128], fast[128];
    url_of(slow, sizeof slow, srv, "/sleep?ms=1500");
    url_of(fast, sizeof fast, srv, "/sleep?ms=0");
    struct outcome a, b;
    outcome_init(&a);
    outcome_init(&b);
    struct up_job ja = {
        .url = slow, .method = "GET", .timeout_ms = 5000, .on_done = on_done_record, .arg = &a};
    struct up_job jb = {
        .url = fast, .method = "GET", .timeout_ms = 250, .on_done = on_done_record, .arg = &b};
    assert_true(up_submit(e, &ja));
    usleep(50 * 1000); /* a holds the only connection */
    double t0 = now_s();
    assert_true(up_submit(e, &jb));
    outcome_wait(&b, 1, 5.0);
    double took = now_s() - t0;
    fprintf(stderr, "#   queued job gave up after %.3f s: %s\n", took, b.error);
    assert_int_equal(b.outcome, UP_TIMEOUT);
    assert_true(took >= 0.24 && took < 0.8);
    outcome_wait(&a, 1, 5.0);
    assert_int_equal(a.outcome, UP_OK);
    assert_int_equal(a.http_status, 200);
    outcome_clear(&a);
    outcome_clear(&b);
    up_engine_free(e);
}

static uint16_t unused_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    close(fd); /* bound, never listened: connecting is refused */
    return ntohs(sa.sin_port);
}

static void test_connection_refused(void **state)
{
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/json_rpc", (unsigned)unused_port());
    struct outcome o;
    outcome_init(&o);
    run_job(e,
            (struct up_job){
                .url = url, .method = "POST", .body = "{}", .body_len = 2, .timeout_ms = 5000},
            &o);
    assert_int_equal(o.outcome, UP_CONNECT_ERROR);
    assert_int_equal(o.http_status, 0);
    assert_null(o.body);
    assert_true(o.error[0] != '\0');
    assert_true(o.seconds < 2.0);
    outcome_clear(&o);
    up_engine_free(e);
}

/* A peer that accepts and hangs up at once (monerod over its per-IP cap does this). */
struct hangup_peer {
    int fd;
    uint16_t port;
    pthread_t thread;
};

static void *hangup_once(void *arg)
{
    struct hangup_peer *p = arg;
    int c = accept(p->fd, NULL, NULL);
    if (c >= 0)
        close(c);
    return NULL;
}

static void test_hangup_is_a_protocol_error(void **state)
{
    struct hangup_peer p;
    p.fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    assert_int_equal(bind(p.fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(p.fd, 4), 0);
    assert_int_equal(getsockname(p.fd, (struct sockaddr *)&sa, &len), 0);
    p.port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&p.thread, NULL, hangup_once, &p), 0);

    struct up_engine *e = engine_start(4, 16, 0);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/get_info", (unsigned)p.port);
    struct outcome o;
    outcome_init(&o);
    run_job(e, (struct up_job){.url = url, .method = "GET", .timeout_ms = 5000}, &o);
    assert_int_equal(o.outcome, UP_PROTOCOL_ERROR);
    assert_true(o.error[0] != '\0');
    outcome_clear(&o);
    up_engine_free(e);
    pthread_join(p.thread, NULL);
    close(p.fd);
}

static void test_any_http_status_is_an_answer(void **state)
{
    struct server *srv = *state;
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128];
    url_of(url, sizeof url, srv, "/status?code=503");
    struct outcome o;
    outcome_init(&o);
    run_job(e, (struct up_job){.url = url, .method = "GET", .timeout_ms = 5000}, &o);
    assert_int_equal(o.outcome, UP_OK);
    assert_int_equal(o.http_status, 503);
    assert_string_equal(o.body, "{}");
    assert_string_equal(o.content_type, "application/json");
    outcome_clear(&o);
    up_engine_free(e);
}

static void expect_big(struct up_engine *e, struct server *srv, const char *path,
                       enum up_outcome want, size_t want_len)
{
    char url[128];
    url_of(url, sizeof url, srv, path);
    struct outcome o;
    outcome_init(&o);
    run_job(e, (struct up_job){.url = url, .method = "GET", .timeout_ms = 5000}, &o);
    assert_int_equal(o.outcome, want);
    if (want == UP_OK) {
        assert_int_equal(o.body_len, want_len);
        for (size_t i = 0; i < want_len; i++)
            assert_int_equal(o.body[i], 'x');
    } else {
        assert_null(o.body);
        assert_non_null(strstr(o.error, "exceeds"));
    }
    outcome_clear(&o);
}

static void test_oversized_answer(void **state)
{
    struct server *srv = *state;
    struct up_engine *e = engine_start(4, 16, 100000);
    expect_big(e, srv, "/big?n=100000", UP_OK, 100000);
    expect_big(e, srv, "/big?n=100000&chunked=1", UP_OK, 100000);
    expect_big(e, srv, "/big?n=100001", UP_TOO_LARGE, 0);           /* by Content-Length */
    expect_big(e, srv, "/big?n=300000&chunked=1", UP_TOO_LARGE, 0); /* while reading */
    expect_big(e, srv, "/big?n=0", UP_OK, 0);
    up_engine_free(e);
}

/* ---- stop with work in flight ---- */

#define STOP_JOBS 40

struct stop_record {
    atomic_int calls[STOP_JOBS];
    atomic_int cancelled, ok, other;
};

struct stop_arg {
    struct stop_record *rec;
    int index;
};

static void on_stop_done(const struct up_result *res, void *arg)
{
    struct stop_arg *a = arg;
    atomic_fetch_add(&a->rec->calls[a->index], 1);
    if (res->outcome == UP_CANCELLED)
        atomic_fetch_add(&a->rec->cancelled, 1);
    else if (res->outcome == UP_OK && res->http_status == 200)
        atomic_fetch_add(&a->rec->ok, 1);
    else
        atomic_fetch_add(&a->rec->other, 1);
}

static void test_stop_finishes_every_pending_job_once(void **state)
{
    struct server *srv = *state;
    struct up_engine *e = engine_start(2, 16, 0);
    char url[128];
    url_of(url, sizeof url, srv, "/sleep?ms=200");
    struct stop_record rec;
    memset(&rec, 0, sizeof rec);
    struct stop_arg args[STOP_JOBS];
    for (int i = 0; i < STOP_JOBS; i++) {
        args[i] = (struct stop_arg){&rec, i};
        struct up_job job = {.url = url,
                             .method = "GET",
                             .timeout_ms = 30000,
                             .on_done = on_stop_done,
                             .arg = &args[i]};
        assert_true(up_submit(e, &job));
    }
    usleep(300 * 1000); /* the first two finish, two more are on the wire */
    up_engine_stop(e);
    for (int i = 0; i < STOP_JOBS; i++)
        assert_int_equal(atomic_load(&rec.calls[i]), 1);
    fprintf(stderr, "#   at stop: %d answered, %d cancelled\n", atomic_load(&rec.ok),
            atomic_load(&rec.cancelled));
    assert_int_equal(atomic_load(&rec.other), 0);
    assert_true(atomic_load(&rec.ok) >= 2);
    assert_true(atomic_load(&rec.cancelled) >= STOP_JOBS - 6);

    struct up_job late = {
        .url = url, .method = "GET", .timeout_ms = 1000, .on_done = on_stop_done, .arg = &args[0]};
    assert_false(up_submit(e, &late));
    up_engine_stop(e); /* idempotent */
    up_engine_free(e);
    assert_int_equal(atomic_load(&rec.calls[0]), 1);
}

/* ---- a callback may submit the next job (a retry on another node does this) ---- */

struct chain {
    struct up_engine *e;
    char url[128];
    atomic_int links;
    atomic_int ok;
};

static void on_chain_done(const struct up_result *res, void *arg)
{
    struct chain *c = arg;
    if (res->outcome == UP_OK && res->http_status == 200)
        atomic_fetch_add(&c->ok, 1);
    if (atomic_fetch_add(&c->links, 1) + 1 < 5) {
        struct up_job next = {
            .url = c->url, .method = "GET", .timeout_ms = 5000, .on_done = on_chain_done, .arg = c};
        if (!up_submit(c->e, &next))
            atomic_store(&c->links, 1000);
    }
}

static void test_callback_may_submit(void **state)
{
    struct server *srv = *state;
    struct chain c = {.e = engine_start(2, 16, 0)};
    url_of(c.url, sizeof c.url, srv, "/sleep?ms=0");
    struct up_job first = {
        .url = c.url, .method = "GET", .timeout_ms = 5000, .on_done = on_chain_done, .arg = &c};
    assert_true(up_submit(c.e, &first));
    wait_until_done(&c.links, 5, 10.0);
    assert_int_equal(atomic_load(&c.ok), 5);
    up_engine_free(c.e);
}

static void on_never(const struct up_result *res, void *arg)
{
    fail_msg("a rejected job must not call back");
}

static void test_malformed_jobs_are_refused(void **state)
{
    struct up_engine *e = engine_start(2, 16, 0);
    const char *url = "http://127.0.0.1:1/x";
    const struct up_header crlf[] = {{"X-A", "b\r\nX-Injected: 1"}};
    const struct up_header colon[] = {{"X-A:", "b"}};
    const struct up_job bad[] = {
        {.url = NULL, .method = "GET", .timeout_ms = 100, .on_done = on_never},
        {.url = url, .method = "PUT", .timeout_ms = 100, .on_done = on_never},
        {.url = url, .method = NULL, .timeout_ms = 100, .on_done = on_never},
        {.url = url, .method = "GET", .timeout_ms = 0, .on_done = on_never},
        {.url = url, .method = "GET", .timeout_ms = 100, .on_done = NULL},
        {.url = url,
         .method = "GET",
         .timeout_ms = 100,
         .on_done = on_never,
         .headers = crlf,
         .nheaders = 1},
        {.url = url,
         .method = "GET",
         .timeout_ms = 100,
         .on_done = on_never,
         .headers = colon,
         .nheaders = 1},
        {.url = url,
         .method = "POST",
         .body = NULL,
         .body_len = 3,
         .timeout_ms = 100,
         .on_done = on_never},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(up_submit(e, &bad[i]));
    up_engine_free(e);
}

static void test_outcome_names(void **state)
{
    assert_string_equal(up_outcome_name(UP_OK), "ok");
    assert_string_equal(up_outcome_name(UP_TIMEOUT), "timeout");
    assert_string_equal(up_outcome_name(UP_CANCELLED), "cancelled");
    assert_string_equal(up_outcome_name((enum up_outcome)99), "unknown");
}

/* ---- the curl path: host names still go through curl ---- */

/* Runs one job against the MHD server with its address spelled as host. */
static void fetch_at(struct up_engine *e, struct server *srv, const char *host, const char *method,
                     const char *path, const void *body, size_t body_len, struct outcome *o)
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

static void assert_same_answer(const struct outcome *a, const struct outcome *b)
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

static void test_curl_path_matches_native_path(void **state)
{
    struct server *srv = *state;
    struct up_engine *e = engine_start(4, 16, 0);
    unsigned char body[300];
    for (size_t i = 0; i < sizeof body; i++)
        body[i] = (unsigned char)(i * 7);
    struct outcome native, curl;

    fetch_at(e, srv, NATIVE_HOST, "POST", "/echo", body, sizeof body, &native);
    fetch_at(e, srv, CURL_HOST, "POST", "/echo", body, sizeof body, &curl);
    assert_int_equal(native.http_status, 200);
    assert_int_equal(native.body_len, 256);
    assert_same_answer(&native, &curl);
    pthread_mutex_lock(&srv->lock); /* the curl request's body arrived intact too */
    assert_int_equal(srv->body_len, sizeof body);
    assert_memory_equal(srv->body, body, sizeof body);
    pthread_mutex_unlock(&srv->lock);
    outcome_clear(&native);
    outcome_clear(&curl);

    fetch_at(e, srv, NATIVE_HOST, "GET", "/status?code=503", NULL, 0, &native);
    fetch_at(e, srv, CURL_HOST, "GET", "/status?code=503", NULL, 0, &curl);
    assert_int_equal(native.http_status, 503);
    assert_same_answer(&native, &curl);
    outcome_clear(&native);
    outcome_clear(&curl);

    fetch_at(e, srv, NATIVE_HOST, "GET", "/big?n=100000&chunked=1", NULL, 0, &native);
    fetch_at(e, srv, CURL_HOST, "GET", "/big?n=100000&chunked=1", NULL, 0, &curl);
    assert_int_equal(native.body_len, 100000);
    assert_same_answer(&native, &curl);
    outcome_clear(&native);
    outcome_clear(&curl);
    up_engine_free(e);
}

/* ---- the per-node cap under slow answers ---- */

#define CAP_JOBS     20
#define CAP_PER_NODE 2

static void check_cap_holds(struct server *srv, const char *host)
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

static void test_per_node_cap_holds_under_slow_answers(void **state)
{
    check_cap_holds(*state, NATIVE_HOST);
}

static void test_per_node_cap_holds_under_slow_answers_through_curl(void **state)
{
    check_cap_holds(*state, CURL_HOST);
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
static bool raw_listen(struct raw_node *r, bool v6)
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
static void raw_url(char *buf, size_t len, const struct raw_node *r, const char *host,
                    const char *path)
{
    snprintf(buf, len, "http://%s:%u%s", host ? host : r->host, (unsigned)r->port, path);
}

/* Waits up to ms for fd to be readable (or to report a hang-up or an error). */
static bool readable(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int rc;
    while ((rc = poll(&p, 1, ms)) < 0 && errno == EINTR)
        ;
    return rc > 0;
}

/* The next connection to the node, or -1 when none comes within RAW_WAIT_MS. */
static int raw_accept(struct raw_node *r)
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
static int raw_accept_for(struct raw_node *r, struct outcome *o)
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
static ssize_t raw_read_request(int fd, char *buf, size_t cap)
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

static bool raw_send(int fd, const void *data, size_t len)
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
static bool raw_answer_ok(int c)
{
    char req[RAW_REQUEST];
    return raw_read_request(c, req, sizeof req) > 0 && raw_send(c, raw_ok, sizeof raw_ok - 1);
}

/* Waits for the engine to close its end of c: true on EOF (or a reset), false when bytes
 * arrive instead or nothing happens within RAW_WAIT_MS. */
static bool raw_peer_closes(int c)
{
    char b;
    if (!readable(c, RAW_WAIT_MS))
        return false;
    ssize_t n = recv(c, &b, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
}

/* Closes c with a reset instead of a FIN. */
static void raw_reset(int c)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(c);
}

/* This process's descriptor at the other end of the accepted connection c: the engine's
 * socket. -1 when not found. */
static int engine_end_of(int c)
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

static struct up_job get_job(const char *url, long timeout_ms)
{
    return (struct up_job){.url = url, .method = "GET", .timeout_ms = timeout_ms};
}

/* Bytes 0..n-1 of a binary test body: every byte value, NULs included. */
static void fill_binary(unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 7);
}

static void assert_binary_body(const struct outcome *o, size_t n)
{
    unsigned char want[1024];
    assert_true(n <= sizeof want);
    fill_binary(want, n);
    assert_int_equal(o->outcome, UP_OK);
    assert_int_equal(o->http_status, 200);
    assert_int_equal(o->body_len, n);
    assert_memory_equal(o->body, want, n);
}

/* ---- keep-alive connections the node closes ---- */

/* The node closes a kept-alive connection while it is idle (after an answer that did not
 * say "Connection: close"): the engine drops it, and the next job goes out on a new one. */
static void test_native_idle_connection_closed_by_node(void **state)
{
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128];
    raw_url(url, sizeof url, &r, NULL, "/get_info");
    struct outcome o;

    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    int c1 = raw_accept(&r);
    assert_true(c1 >= 0);
    assert_true(raw_answer_ok(c1));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
    assert_string_equal(o.body, "ok");
    outcome_clear(&o);

    /* Half-close, then wait until the engine noticed and closed its end. */
    assert_int_equal(shutdown(c1, SHUT_WR), 0);
    assert_true(raw_peer_closes(c1));
    close(c1);

    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    int c2 = raw_accept(&r);
    assert_true(c2 >= 0);
    assert_true(raw_answer_ok(c2));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
    assert_int_equal(o.http_status, 200);
    assert_string_equal(o.body, "ok");
    assert_false(readable(r.fd, 0)); /* two connections in all */
    outcome_clear(&o);
    close(c2);
    up_engine_free(e);
    close(r.fd);
}

/* The node ends a kept-alive connection just as the next request arrives on it (it read the
 * request, answered nothing), with a FIN or a reset: the engine sends the request once more,
 * on a new connection, and the job succeeds. */
static void check_resend_after_reused_connection_ends(bool reset)
{
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], req[RAW_REQUEST];
    raw_url(url, sizeof url, &r, NULL, "/get_info");
    struct outcome o;

    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    int c1 = raw_accept(&r);
    assert_true(c1 >= 0);
    assert_true(raw_answer_ok(c1));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
    outcome_clear(&o);

    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    assert_true(raw_read_request(c1, req, sizeof req) > 0); /* reused: same connection */
    assert_false(readable(r.fd, 0));
    if (reset) /* no answer byte either way */
        raw_reset(c1);
    else
        close(c1);
    int c2 = raw_accept_for(&r, &o);
    if (c2 < 0) {
        outcome_wait(&o, 1, 5.0);
        fail_msg("the request was not sent again after the node %s the kept-alive connection; "
                 "the job ended %s: %s",
                 reset ? "reset" : "closed", up_outcome_name(o.outcome), o.error);
    }
    assert_true(raw_read_request(c2, req, sizeof req) > 0);
    assert_non_null(strstr(req, "GET /get_info HTTP/1.1\r\n"));
    assert_true(raw_send(c2, raw_ok, sizeof raw_ok - 1));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
    assert_int_equal(o.http_status, 200);
    assert_string_equal(o.body, "ok");
    assert_false(readable(r.fd, 0)); /* two connections in all */
    outcome_clear(&o);
    close(c2);
    up_engine_free(e);
    close(r.fd);
}

static void test_native_resends_when_a_reused_connection_is_reset(void **state)
{
    check_resend_after_reused_connection_ends(true);
}

/* A FIN instead of a reset: the common way a node drops an idle connection. */
static void test_native_resends_when_a_reused_connection_closes(void **state)
{
    check_resend_after_reused_connection_ends(false);
}

/* A connection that never carried an answer and closes after the request arrived is no
 * stale keep-alive connection: the job fails, nothing is sent again. */
static void test_native_fresh_connection_closed_before_answer_is_not_resent(void **state)
{
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], req[RAW_REQUEST];
    raw_url(url, sizeof url, &r, NULL, "/get_info");
    struct outcome o;
    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 2000), &o));
    int c = raw_accept(&r);
    assert_true(c >= 0);
    assert_true(raw_read_request(c, req, sizeof req) > 0);
    close(c);
    outcome_wait(&o, 1, 5.0);
    fprintf(stderr, "#   %s: %s\n", up_outcome_name(o.outcome), o.error);
    assert_int_equal(o.outcome, UP_PROTOCOL_ERROR);
    assert_int_equal(o.http_status, 0);
    assert_null(o.body);
    assert_true(o.error[0] != '\0');
    assert_false(readable(r.fd, 0)); /* no second connection */
    outcome_clear(&o);
    up_engine_free(e);
    close(r.fd);
}

/* nodeconn.h: a request whose kept-alive connection turns out closed "is sent once more on
 * a fresh connection". When the node dropped its kept-alive connections (a restart, an idle
 * timeout, a NAT that forgot them), the other idle ones are as dead as the first: sending
 * the request again on one of them fails the job although the node is up. Here the node
 * holds two kept-alive connections and drops each as a request arrives on it. */
static void test_native_resend_uses_a_fresh_connection(void **state)
{
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(2, 16, 0);
    char url[128], req[RAW_REQUEST];
    raw_url(url, sizeof url, &r, NULL, "/get_info");
    struct outcome o1, o2, o3;

    /* Two jobs at once: two connections, both kept alive afterwards. */
    outcome_init(&o1);
    outcome_init(&o2);
    assert_true(submit_recorded(e, get_job(url, 5000), &o1));
    assert_true(submit_recorded(e, get_job(url, 5000), &o2));
    int c1 = raw_accept(&r);
    int c2 = raw_accept(&r);
    assert_true(c1 >= 0 && c2 >= 0);
    assert_true(raw_answer_ok(c1));
    assert_true(raw_answer_ok(c2));
    outcome_wait(&o1, 1, 5.0);
    outcome_wait(&o2, 1, 5.0);
    assert_int_equal(o1.outcome, UP_OK);
    assert_int_equal(o2.outcome, UP_OK);
    outcome_clear(&o1);
    outcome_clear(&o2);

    /* The third job reuses one of them; the node drops it without answering. */
    outcome_init(&o3);
    assert_true(submit_recorded(e, get_job(url, 5000), &o3));
    struct pollfd both[2] = {{.fd = c1, .events = POLLIN}, {.fd = c2, .events = POLLIN}};
    assert_int_equal(poll(both, 2, RAW_WAIT_MS), 1);
    int used = (both[0].revents & POLLIN) ? c1 : c2;
    int other = used == c1 ? c2 : c1;
    assert_true(raw_read_request(used, req, sizeof req) > 0);
    raw_reset(used); /* a reset: a plain close is not resent at all (see above) */

    /* The request must come again on a new connection, not on the other old one. The
     * client may close that one (as likely dead): an end of stream there is no request. */
    struct pollfd next[2] = {{.fd = r.fd, .events = POLLIN}, {.fd = other, .events = POLLIN}};
    for (;;) {
        assert_true(poll(next, 2, RAW_WAIT_MS) >= 1);
        if (!(next[1].revents & (POLLIN | POLLHUP)))
            break;
        ssize_t n = raw_read_request(other, req, sizeof req);
        if (n > 0) {
            close(other); /* as dead as the first one */
            outcome_wait(&o3, 1, 5.0);
            fail_msg("the request was sent again on the other kept-alive connection (%zd "
                     "bytes), not on a fresh one; the job ended %s: %s",
                     n, up_outcome_name(o3.outcome), o3.error);
        }
        next[1].fd = -1; /* closed by the client: ignore it from now on */
        next[1].revents = 0;
        if (next[0].revents & POLLIN)
            break;
    }
    int c3 = raw_accept(&r);
    assert_true(c3 >= 0);
    assert_true(raw_answer_ok(c3));
    outcome_wait(&o3, 1, 5.0);
    assert_int_equal(o3.outcome, UP_OK);
    assert_string_equal(o3.body, "ok");
    outcome_clear(&o3);
    close(c3);
    close(other);
    up_engine_free(e);
    close(r.fd);
}

/* ---- how answers are framed, through the engine's own client ---- */

#define FRAMED_BODY 300

/* Sends data in 7-byte pieces, so that lines and chunk sizes arrive split. */
static bool raw_send_in_pieces(int c, const char *data, size_t len)
{
    for (size_t at = 0; at < len; at += 7)
        if (!raw_send(c, data + at, len - at < 7 ? len - at : 7))
            return false;
    return true;
}

/* A chunked answer with a chunk extension and a trailer: the body arrives intact, and the
 * connection carries the next request. */
static void test_native_chunked_answer(void **state)
{
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], answer[1024];
    raw_url(url, sizeof url, &r, NULL, "/get_blocks.bin");
    unsigned char body[FRAMED_BODY];
    fill_binary(body, sizeof body);

    /* Chunks of 1, 0x80 and 0xab bytes. */
    size_t n = (size_t)snprintf(answer, sizeof answer,
                                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                                "Transfer-Encoding: chunked\r\n\r\n1\r\n");
    answer[n++] = (char)body[0];
    n += (size_t)snprintf(answer + n, sizeof answer - n, "\r\n80;ext=1\r\n");
    memcpy(answer + n, body + 1, 0x80);
    n += 0x80;
    n += (size_t)snprintf(answer + n, sizeof answer - n, "\r\nAB\r\n");
    memcpy(answer + n, body + 1 + 0x80, 0xab);
    n += 0xab;
    n += (size_t)snprintf(answer + n, sizeof answer - n, "\r\n0\r\nX-Trailer: t\r\n\r\n");
    assert_int_equal(1 + 0x80 + 0xab, FRAMED_BODY);

    struct outcome o;
    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    int c = raw_accept(&r);
    assert_true(c >= 0);
    char req[RAW_REQUEST];
    assert_true(raw_read_request(c, req, sizeof req) > 0);
    assert_true(raw_send_in_pieces(c, answer, n));
    outcome_wait(&o, 1, 5.0);
    assert_binary_body(&o, FRAMED_BODY);
    assert_string_equal(o.content_type, "application/octet-stream");
    outcome_clear(&o);

    /* Kept alive: the next request comes on the same connection. */
    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    assert_true(raw_answer_ok(c));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
    assert_string_equal(o.body, "ok");
    assert_false(readable(r.fd, 0));
    outcome_clear(&o);
    close(c);
    up_engine_free(e);
    close(r.fd);
}

/* "Connection: close": the body arrives intact, the engine closes the connection itself
 * (the node here keeps its end open), and the next job opens a new one. */
static void test_native_connection_close_answer(void **state)
{
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], answer[1024], req[RAW_REQUEST];
    raw_url(url, sizeof url, &r, NULL, "/get_blocks.bin");
    unsigned char body[FRAMED_BODY];
    fill_binary(body, sizeof body);
    size_t n = (size_t)snprintf(
        answer, sizeof answer, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n",
        FRAMED_BODY);
    memcpy(answer + n, body, sizeof body);
    n += sizeof body;

    struct outcome o;
    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    int c1 = raw_accept(&r);
    assert_true(c1 >= 0);
    assert_true(raw_read_request(c1, req, sizeof req) > 0);
    assert_true(raw_send(c1, answer, n));
    outcome_wait(&o, 1, 5.0);
    assert_binary_body(&o, FRAMED_BODY);
    assert_false(o.has_content_type);
    outcome_clear(&o);
    assert_true(raw_peer_closes(c1));
    close(c1);

    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    int c2 = raw_accept(&r);
    assert_true(c2 >= 0);
    assert_true(raw_answer_ok(c2));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
    assert_string_equal(o.body, "ok");
    outcome_clear(&o);
    close(c2);
    up_engine_free(e);
    close(r.fd);
}

/* No Content-Length, not chunked: the body ends where the node closes the connection. */
static void test_native_answer_delimited_by_close(void **state)
{
    static const char *const status_lines[] = {"HTTP/1.1 200 OK", "HTTP/1.0 200 OK"};
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], answer[1024], req[RAW_REQUEST];
    raw_url(url, sizeof url, &r, NULL, "/get_blocks.bin");
    unsigned char body[FRAMED_BODY];
    fill_binary(body, sizeof body);
    for (size_t i = 0; i < sizeof status_lines / sizeof status_lines[0]; i++) {
        size_t n = (size_t)snprintf(answer, sizeof answer,
                                    "%s\r\nContent-Type: application/octet-stream\r\n\r\n",
                                    status_lines[i]);
        memcpy(answer + n, body, sizeof body);
        n += sizeof body;
        struct outcome o;
        outcome_init(&o);
        assert_true(submit_recorded(e, get_job(url, 5000), &o));
        int c = raw_accept(&r);
        assert_true(c >= 0);
        assert_true(raw_read_request(c, req, sizeof req) > 0);
        assert_true(raw_send_in_pieces(c, answer, n));
        close(c);
        outcome_wait(&o, 1, 5.0);
        assert_binary_body(&o, FRAMED_BODY);
        assert_string_equal(o.content_type, "application/octet-stream");
        outcome_clear(&o);
    }
    up_engine_free(e);
    close(r.fd);
}

/* Answers that are not HTTP/1.1 as framed: a protocol error with a reason, no body, and the
 * connection is not kept. */
static void test_native_malformed_answers(void **state)
{
    static const struct {
        const char *bytes;
        bool then_close;
    } cases[] = {
        {"HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok", false},
        {"SSH-2.0-OpenSSH_9.2\r\n", false},
        {"HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\nok", false},
        {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", false},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n", false},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokk\r\n0\r\n\r\n", false},
        {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok", true},              /* cut short */
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok", true}, /* no last chunk */
    };
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], req[RAW_REQUEST];
    raw_url(url, sizeof url, &r, NULL, "/get_info");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct outcome o;
        outcome_init(&o);
        assert_true(submit_recorded(e, get_job(url, 5000), &o));
        int c = raw_accept(&r);
        assert_true(c >= 0);
        assert_true(raw_read_request(c, req, sizeof req) > 0);
        assert_true(raw_send(c, cases[i].bytes, strlen(cases[i].bytes)));
        if (cases[i].then_close)
            shutdown(c, SHUT_WR);
        outcome_wait(&o, 1, 5.0);
        fprintf(stderr, "#   case %zu: %s: %s\n", i, up_outcome_name(o.outcome), o.error);
        assert_int_equal(o.outcome, UP_PROTOCOL_ERROR);
        assert_null(o.body);
        assert_true(o.error[0] != '\0');
        assert_true(raw_peer_closes(c)); /* not kept for another request */
        outcome_clear(&o);
        close(c);
    }
    up_engine_free(e);
    close(r.fd);
}

/* A Content-Type the client's answer head would carry with a control character in it is
 * a malformed answer on either path, never an answer passed on (curl itself cuts a value
 * at a CR, so the curl cases are the other control characters). */
static void check_control_in_content_type(const char *host, const char *const *types, size_t n)
{
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], req[RAW_REQUEST], answer[256];
    raw_url(url, sizeof url, &r, host, "/get_info");
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(answer, sizeof answer,
                           "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: %s\r\n"
                           "Connection: close\r\n\r\nok",
                           types[i]);
        struct outcome o;
        outcome_init(&o);
        assert_true(submit_recorded(e, get_job(url, 5000), &o));
        int c = raw_accept(&r);
        assert_true(c >= 0);
        assert_true(raw_read_request(c, req, sizeof req) > 0);
        assert_true(raw_send(c, answer, (size_t)len));
        shutdown(c, SHUT_WR);
        outcome_wait(&o, 1, 5.0);
        fprintf(stderr, "#   %s case %zu: %s: %s\n", host, i, up_outcome_name(o.outcome), o.error);
        assert_int_equal(o.outcome, UP_PROTOCOL_ERROR);
        assert_null(o.body);
        assert_false(o.has_content_type);
        assert_non_null(strstr(o.error, "Content-Type"));
        outcome_clear(&o);
        close(c);
    }
    up_engine_free(e);
    close(r.fd);
}

static void test_control_in_content_type_is_malformed(void **state)
{
    static const char *const native[] = {"a/b\rSet-Cookie: x=1", "a/b\x01", "a/\x7f", "a/b\v"};
    static const char *const curl[] = {"a/b\x01", "a/\x7f", "a/b\x1b[2J"};
    check_control_in_content_type(NATIVE_HOST, native, sizeof native / sizeof native[0]);
    check_control_in_content_type(CURL_HOST, curl, sizeof curl / sizeof curl[0]);
}

static void test_native_ipv6_literal(void **state)
{
    struct raw_node r;
    if (!raw_listen(&r, true)) {
        fprintf(stderr, "#   cannot listen on ::1: %s\n", strerror(errno));
        skip();
    }
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], req[RAW_REQUEST], line[64];
    raw_url(url, sizeof url, &r, NULL, "/json_rpc?x=1");
    const struct up_header hdrs[] = {{"Content-Type", "application/json"}};
    struct outcome o;
    outcome_init(&o);
    assert_true(submit_recorded(e,
                                (struct up_job){.url = url,
                                                .method = "POST",
                                                .body = "{}",
                                                .body_len = 2,
                                                .headers = hdrs,
                                                .nheaders = 1,
                                                .timeout_ms = 5000},
                                &o));
    int c = raw_accept(&r);
    assert_true(c >= 0);
    assert_true(raw_read_request(c, req, sizeof req) > 0);
    assert_non_null(strstr(req, "POST /json_rpc?x=1 HTTP/1.1\r\n"));
    snprintf(line, sizeof line, "\r\nHost: [::1]:%u\r\n", (unsigned)r.port);
    assert_non_null(strstr(req, line));
    assert_non_null(strstr(req, "\r\n\r\n{}"));
    assert_true(raw_send(c, raw_ok, sizeof raw_ok - 1));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
    assert_int_equal(o.http_status, 200);
    assert_string_equal(o.body, "ok");
    outcome_clear(&o);

    outcome_init(&o); /* and the connection is kept */
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    assert_true(raw_answer_ok(c));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
    assert_false(readable(r.fd, 0));
    outcome_clear(&o);
    close(c);
    up_engine_free(e);
    close(r.fd);
}

/* ---- the cap on connections to all nodes together ---- */

/* With room for one connection in all, a connection kept alive to one node must give way
 * to a job for another node (curl closes the oldest idle connection in that case). */
static void check_idle_connection_yields_to_another_node(const char *host)
{
    struct raw_node r1, r2;
    assert_true(raw_listen(&r1, false));
    assert_true(raw_listen(&r2, false));
    struct up_engine *e = engine_start(1, 1, 0);
    char url1[128], url2[128];
    raw_url(url1, sizeof url1, &r1, host, "/get_info");
    raw_url(url2, sizeof url2, &r2, host, "/get_info");
    struct outcome o;
    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url1, 5000), &o));
    int c1 = raw_accept(&r1);
    assert_true(c1 >= 0);
    assert_true(raw_answer_ok(c1));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
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

static void test_native_idle_connection_yields_to_another_node(void **state)
{
    check_idle_connection_yields_to_another_node(NULL);
}

static void test_idle_connection_yields_to_another_node_through_curl(void **state)
{
    check_idle_connection_yields_to_another_node(CURL_HOST);
}

/* With room for one connection in all, a job for a second node waits while the first node's
 * job holds it, and must start once that connection closes. */
static void test_native_freed_slot_goes_to_another_nodes_job(void **state)
{
    struct server *srv = *state;
    struct raw_node r1, r2;
    assert_true(raw_listen(&r1, false));
    assert_true(raw_listen(&r2, false));
    struct up_engine *e = engine_start(1, 1, 0);
    char url1[128], url2[128], req[RAW_REQUEST];
    raw_url(url1, sizeof url1, &r1, NULL, "/get_info");
    raw_url(url2, sizeof url2, &r2, NULL, "/get_info");
    struct outcome o1, o2, marker;
    outcome_init(&o1);
    outcome_init(&o2);
    assert_true(submit_recorded(e, get_job(url1, 5000), &o1));
    int c1 = raw_accept(&r1);
    assert_true(c1 >= 0);
    assert_true(raw_read_request(c1, req, sizeof req) > 0);
    assert_true(submit_recorded(e, get_job(url2, 2000), &o2));
    /* A curl job submitted after it and finished proves the engine took the second job in
     * (jobs start in submission order) and queued it for the slot. */
    fetch_at(e, srv, CURL_HOST, "GET", "/headers", NULL, 0, &marker);
    assert_int_equal(marker.outcome, UP_OK);
    outcome_clear(&marker);
    assert_false(readable(r2.fd, 0));

    static const char last[] =
        "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
    assert_true(raw_send(c1, last, sizeof last - 1));
    outcome_wait(&o1, 1, 5.0);
    assert_int_equal(o1.outcome, UP_OK);
    outcome_clear(&o1);
    assert_true(raw_peer_closes(c1));
    int c2 = raw_accept_for(&r2, &o2);
    if (c2 < 0) {
        outcome_wait(&o2, 1, 5.0);
        fail_msg("the freed slot did not go to the second node's waiting job, which ended "
                 "%s: %s",
                 up_outcome_name(o2.outcome), o2.error);
    }
    assert_true(raw_answer_ok(c2));
    outcome_wait(&o2, 1, 5.0);
    assert_int_equal(o2.outcome, UP_OK);
    outcome_clear(&o2);
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

static void timed_wait_10ms(pthread_cond_t *cond, pthread_mutex_t *lock)
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

static void on_done_block(const struct up_result *res, void *arg)
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
static bool blocker_hold(struct blocker *b, struct up_engine *e, struct raw_node *r)
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

static void blocker_release(struct blocker *b)
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
static void run_in_child(int (*scenario)(void))
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

/* Two kept-alive connections A and B to a node; a request goes out on A; then, in one
 * batch of socket events, both are reset (the node read the request and dropped both).
 * Handling A's close sends the request again on B, whose send fails at once: B is freed,
 * and B's own event of the same batch is then handled on freed memory. */
static int stale_event_scenario(void)
{
    struct raw_node r, rb;
    CHILD_CHECK(raw_listen(&r, false) && raw_listen(&rb, false));
    char err[256] = "", url[128], req[RAW_REQUEST];
    struct up_engine_options opt = {.max_connections_per_node = 2, .max_total_connections = 16};
    struct up_engine *e = up_engine_start(&opt, err, sizeof err);
    CHILD_CHECK(e != NULL);
    raw_url(url, sizeof url, &r, NULL, "/get_info");
    struct outcome o1, o2, o3;
    outcome_init(&o1);
    outcome_init(&o2);
    outcome_init(&o3);
    CHILD_CHECK(submit_recorded(e, get_job(url, 5000), &o1));
    CHILD_CHECK(submit_recorded(e, get_job(url, 5000), &o2));
    int c1 = raw_accept(&r);
    int c2 = raw_accept(&r);
    CHILD_CHECK(c1 >= 0 && c2 >= 0 && raw_answer_ok(c1) && raw_answer_ok(c2));
    CHILD_CHECK(outcome_await(&o1, 1, 5.0) && outcome_await(&o2, 1, 5.0));
    CHILD_CHECK(o1.outcome == UP_OK && o2.outcome == UP_OK);

    CHILD_CHECK(submit_recorded(e, get_job(url, 5000), &o3));
    struct pollfd both[2] = {{.fd = c1, .events = POLLIN}, {.fd = c2, .events = POLLIN}};
    CHILD_CHECK(poll(both, 2, RAW_WAIT_MS) == 1);
    int a = (both[0].revents & POLLIN) ? c1 : c2;
    int b = a == c1 ? c2 : c1;
    CHILD_CHECK(raw_read_request(a, req, sizeof req) > 0);
    int engine_a = engine_end_of(a), engine_b = engine_end_of(b);
    CHILD_CHECK(engine_a >= 0 && engine_b >= 0);

    struct blocker hold;
    CHILD_CHECK(blocker_hold(&hold, e, &rb));
    raw_reset(a); /* a reset: a plain close would not be resent at all */
    raw_reset(b);
    /* Both events are pending on the engine's sockets before it looks again. */
    CHILD_CHECK(readable(engine_a, RAW_WAIT_MS) && readable(engine_b, RAW_WAIT_MS));
    blocker_release(&hold);

    /* As documented, the request goes once more on a fresh connection: serve it. */
    double until = now_s() + RAW_WAIT_MS / 1000.0;
    while (!outcome_await(&o3, 1, 0.01) && now_s() < until) {
        if (readable(r.fd, 0)) {
            int c3 = raw_accept(&r);
            CHILD_CHECK(c3 >= 0 && raw_answer_ok(c3));
        }
    }
    up_engine_free(e); /* joins the engine thread: the rest of that batch has run */
    CHILD_CHECK(o3.calls == 1);
    fprintf(stderr, "#   child: the third job ended %s: %s\n", up_outcome_name(o3.outcome),
            o3.error);
    CHILD_CHECK(o3.outcome == UP_OK);
    return 0;
}

static void test_native_resend_with_stale_events_in_one_batch(void **state)
{
    run_in_child(stale_event_scenario);
}

/* Occupies every free descriptor below limit and lowers RLIMIT_NOFILE to limit: from then
 * on, opening a descriptor fails (EMFILE) even after one above the limit closes. */
static bool exhaust_descriptors(int limit, int *fillers, int max_fillers, int *nfillers)
{
    *nfillers = 0;
    for (;;) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return false;
        if (fd >= limit) {
            close(fd);
            break;
        }
        if (*nfillers == max_fillers)
            return false;
        fillers[(*nfillers)++] = fd;
    }
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = (rlim_t)limit;
    return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

/* One connection per node: job A holds it (the node never answers), B and C wait for it.
 * All three pass their deadline together. Expiring A frees the connection and hands it to
 * B, whose connect fails at once (no descriptor left): B ends inside A's expiry although
 * the engine had already moved it to its list of overdue jobs, which it then walks on. */
static int overdue_scenario(void)
{
    struct raw_node r, rb;
    CHILD_CHECK(raw_listen(&r, false) && raw_listen(&rb, false));
    char err[256] = "", url[128], req[RAW_REQUEST];
    struct up_engine_options opt = {.max_connections_per_node = 1, .max_total_connections = 16};
    struct up_engine *e = up_engine_start(&opt, err, sizeof err);
    CHILD_CHECK(e != NULL);
    raw_url(url, sizeof url, &r, NULL, "/get_info");
    struct outcome o[3];
    for (int i = 0; i < 3; i++)
        outcome_init(&o[i]);
    CHILD_CHECK(submit_recorded(e, get_job(url, 300), &o[0]));
    int ca = raw_accept(&r);
    CHILD_CHECK(ca >= 0 && raw_read_request(ca, req, sizeof req) > 0);
    CHILD_CHECK(submit_recorded(e, get_job(url, 300), &o[1]));
    CHILD_CHECK(submit_recorded(e, get_job(url, 300), &o[2]));
    double last_deadline = now_s() + 0.3;
    struct blocker hold; /* started after B and C: they wait in the queue by now */
    CHILD_CHECK(blocker_hold(&hold, e, &rb));

    int engine_a = engine_end_of(ca);
    CHILD_CHECK(engine_a >= 0);
    int fillers[4096], nfillers;
    struct rlimit saved;
    getrlimit(RLIMIT_NOFILE, &saved);
    CHILD_CHECK(exhaust_descriptors(engine_a, fillers, 4096, &nfillers));
    while (now_s() < last_deadline + 0.05) /* the deadlines themselves */
        usleep(5000);
    blocker_release(&hold);

    bool all = true;
    for (int i = 0; i < 3; i++)
        all &= outcome_await(&o[i], 1, 5.0);
    setrlimit(RLIMIT_NOFILE, &saved);
    for (int i = 0; i < nfillers; i++)
        close(fillers[i]);
    CHILD_CHECK(all);
    for (int i = 0; i < 3; i++) {
        fprintf(stderr, "#   child: job %d: %d call(s), %s: %s\n", i, o[i].calls,
                up_outcome_name(o[i].outcome), o[i].error);
        CHILD_CHECK(o[i].calls == 1);
        CHILD_CHECK(o[i].outcome == UP_TIMEOUT || o[i].outcome == UP_CONNECT_ERROR);
    }
    up_engine_free(e);
    return 0;
}

static void test_overdue_jobs_ending_one_another(void **state)
{
    run_in_child(overdue_scenario);
}

static int group_setup(void **state)
{
    *state = server_start();
    return 0;
}

static int group_teardown(void **state)
{
    server_stop(*state);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary_body_and_answer_pass_through),
        cmocka_unit_test(test_request_carries_exactly_the_given_headers),
        cmocka_unit_test(test_request_carries_exactly_the_given_headers_through_curl),
        cmocka_unit_test(test_many_threads_share_a_capped_keepalive_pool),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_deadline_covers_time_queued_for_a_connection),
        cmocka_unit_test(test_connection_refused),
        cmocka_unit_test(test_hangup_is_a_protocol_error),
        cmocka_unit_test(test_any_http_status_is_an_answer),
        cmocka_unit_test(test_oversized_answer),
        cmocka_unit_test(test_stop_finishes_every_pending_job_once),
        cmocka_unit_test(test_callback_may_submit),
        cmocka_unit_test(test_malformed_jobs_are_refused),
        cmocka_unit_test(test_outcome_names),
        cmocka_unit_test(test_curl_path_matches_native_path),
        cmocka_unit_test(test_per_node_cap_holds_under_slow_answers),
        cmocka_unit_test(test_per_node_cap_holds_under_slow_answers_through_curl),
        cmocka_unit_test(test_native_idle_connection_closed_by_node),
        cmocka_unit_test(test_native_resends_when_a_reused_connection_is_reset),
        cmocka_unit_test(test_native_fresh_connection_closed_before_answer_is_not_resent),
        cmocka_unit_test(test_native_chunked_answer),
        cmocka_unit_test(test_native_connection_close_answer),
        cmocka_unit_test(test_native_answer_delimited_by_close),
        cmocka_unit_test(test_native_malformed_answers),
        cmocka_unit_test(test_control_in_content_type_is_malformed),
        cmocka_unit_test(test_native_ipv6_literal),
        cmocka_unit_test(test_idle_connection_yields_to_another_node_through_curl),
        /* These show bugs (see each test's comment). */
        cmocka_unit_test(test_native_resends_when_a_reused_connection_closes),
        cmocka_unit_test(test_native_resend_uses_a_fresh_connection),
        cmocka_unit_test(test_native_idle_connection_yields_to_another_node),
        cmocka_unit_test(test_native_freed_slot_goes_to_another_nodes_job),
        cmocka_unit_test(test_native_resend_with_stale_events_in_one_batch),
        cmocka_unit_test(test_overdue_jobs_ending_one_another),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
