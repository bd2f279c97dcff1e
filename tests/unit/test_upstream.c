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
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "upstream.h"

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

static void outcome_wait(struct outcome *o, int calls, double limit_s)
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
    pthread_mutex_unlock(&o->lock);
    assert_int_equal(o->calls, calls);
    assert_true(o->nul_terminated);
}

static void run_job(struct up_engine *e, struct up_job job, struct outcome *o)
{
    job.on_done = on_done_record;
    job.arg = o;
    assert_true(up_submit(e, &job));
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

static void url_of(char *buf, size_t len, const struct server *srv, const char *path)
{
    snprintf(buf, len, "http://127.0.0.1:%u%s", (unsigned)srv->port, path);
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

static void test_request_carries_exactly_the_given_headers(void **state)
{
    struct server *srv = *state;
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128];
    url_of(url, sizeof url, srv, "/headers");
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
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
