/* Tests for xg_http and xg_httpd together, over loopback: routing (exact, prefix, 404,
 * 405 with Allow), body limits (413 by Content-Length and by chunked upload), request
 * accessors, JSON-RPC calls and their failures, the response cap, timeouts, quiesce,
 * start-up errors, and the handlers' three results (queued, suspended and resumed,
 * closed). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "xg_http.h"
#include "xg_httpd.h"
#include "xg_reply.h"

#define MAX_BODY 1024

struct fixture {
    struct xg_httpd *srv;
    struct xg_http_client *client;
    char base[64];
};

/* ---- server side ------------------------------------------------------------------ */

static enum xg_httpd_result on_echo(const struct xg_httpd_request *req)
{
    char addr[64];
    const char *q = xg_httpd_query(req, "q");
    const char *h = xg_httpd_header(req, "Content-Type");
    xg_httpd_client_addr(req, addr, sizeof addr);
    return xg_reply_json(
        req->conn, MHD_HTTP_OK,
        json_pack("{s:s,s:s,s:s%,s:I,s:s?,s:s?,s:s,s:b}", "method", req->method, "path", req->path,
                  "body", req->body, req->body_len, "body_len", (json_int_t)req->body_len, "q", q,
                  "header", h, "addr", addr, "closure_ok",
                  req->closure != NULL && strcmp((const char *)req->closure, "ctx") == 0));
}

static enum xg_httpd_result on_json_rpc(const struct xg_httpd_request *req)
{
    json_t *call = json_loadb(req->body, req->body_len, 0, NULL);
    const char *method = json_string_value(json_object_get(call, "method"));
    enum xg_httpd_result ret;
    if (!method)
        ret = xg_reply_json(
            req->conn, MHD_HTTP_BAD_REQUEST,
            json_pack("{s:{s:s,s:s}}", "error", "code", "bad_request", "message", "no method"));
    else if (strcmp(method, "fail") == 0)
        ret = xg_reply_json(req->conn, MHD_HTTP_OK,
                            json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id",
                                      json_object_get(call, "id"), "error", "code", -32601,
                                      "message", "Method not found"));
    else if (strcmp(method, "garbage") == 0)
        ret = xg_reply_bytes(req->conn, MHD_HTTP_OK, "application/json", "{not json", 9);
    else if (strcmp(method, "server_error") == 0)
        ret = xg_reply_bytes(req->conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", "boom", 4);
    else
        ret = xg_reply_json(req->conn, MHD_HTTP_OK,
                            json_pack("{s:s,s:O,s:{s:O,s:O}}", "jsonrpc", "2.0", "id",
                                      json_object_get(call, "id"), "result", "request", call,
                                      "params", json_object_get(call, "params") ?: json_null()));
    json_decref(call);
    return ret;
}

static enum xg_httpd_result on_big(const struct xg_httpd_request *req)
{
    size_t len = XG_HTTP_MAX_RESPONSE + 1;
    char *body = malloc(len);
    if (!body)
        return XG_HTTPD_CLOSE;
    memset(body, 'x', len);
    enum xg_httpd_result ret = xg_reply_bytes(req->conn, MHD_HTTP_OK, "text/plain", body, len);
    free(body);
    return ret;
}

static enum xg_httpd_result on_slow(const struct xg_httpd_request *req)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 600 * 1000000L};
    nanosleep(&ts, NULL);
    return xg_reply_bytes(req->conn, MHD_HTTP_OK, "text/plain", "late", 4);
}

/* XG_HTTPD_CLOSE: no answer at all. */
static int close_calls;

static enum xg_httpd_result on_close(const struct xg_httpd_request *req)
{
    (void)req;
    __atomic_add_fetch(&close_calls, 1, __ATOMIC_SEQ_CST);
    return XG_HTTPD_CLOSE;
}

/* XG_HTTPD_DONE: the first call suspends the request and answers nothing; the test resumes
 * it, and the second call answers. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    struct MHD_Connection *suspended;
    int calls;
    bool answered; /* the client has its answer */
} held = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, false};

static enum xg_httpd_result on_held(const struct xg_httpd_request *req)
{
    pthread_mutex_lock(&held.lock);
    int call = ++held.calls;
    pthread_mutex_unlock(&held.lock);
    if (call > 1)
        return xg_reply_bytes(req->conn, MHD_HTTP_OK, "text/plain", "resumed", 7);
    MHD_suspend_connection(req->conn);
    pthread_mutex_lock(&held.lock);
    held.suspended = req->conn;
    pthread_cond_broadcast(&held.changed);
    pthread_mutex_unlock(&held.lock);
    return XG_HTTPD_DONE;
}

static const struct xg_httpd_route routes[] = {
    {"GET", "/echo", on_echo},
    {"POST", "/echo", on_echo},
    {"POST", "/json_rpc", on_json_rpc},
    {"GET", "/prefix/*", on_echo},
    {NULL, "/any", on_echo},
    {"GET", "/big", on_big},
    {"GET", "/slow", on_slow},
    {"GET", "/close", on_close},
    {"GET", "/held", on_held},
    {NULL, NULL, NULL},
};

static char closure_text[] = "ctx";

static struct xg_httpd *start_server(uint16_t port, unsigned threads, char *err, size_t errlen)
{
    struct xg_httpd_options opt = {
        .bind_addr = "127.0.0.1",
        .port = port,
        .threads = threads,
        .max_body = MAX_BODY,
        .timeout_s = 5,
        .routes = routes,
        .closure = closure_text,
    };
    return xg_httpd_start(&opt, err, errlen);
}

static int setup_with_threads(void **state, unsigned threads)
{
    struct fixture *f = calloc(1, sizeof *f);
    char err[256] = "";
    if (!f)
        return -1;
    f->srv = start_server(0, threads, err, sizeof err);
    if (!f->srv) {
        fprintf(stderr, "server did not start: %s\n", err);
        free(f);
        return -1;
    }
    f->client = xg_http_client_new();
    snprintf(f->base, sizeof f->base, "http://127.0.0.1:%u", (unsigned)xg_httpd_port(f->srv));
    *state = f;
    return 0;
}

static int setup(void **state)
{
    return setup_with_threads(state, 1);
}

static int setup_pool(void **state)
{
    return setup_with_threads(state, 3);
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    xg_http_client_free(f->client);
    xg_httpd_stop(f->srv);
    free(f);
    return 0;
}

/* ---- helpers ---------------------------------------------------------------------- */

static json_t *request_json(struct fixture *f, const char *method, const char *path,
                            const char *body, size_t len, long expect_status)
{
    char url[256];
    struct xg_http_response r;
    snprintf(url, sizeof url, "%s%s", f->base, path);
    bool ok = xg_http_request(f->client, method, url, body ? "application/json" : NULL, body, len,
                              5000, &r);
    if (!ok)
        fail_msg("%s %s: transport error %s", method, path, r.error);
    if (r.status != expect_status)
        fail_msg("%s %s: status %ld, expected %ld (%s)", method, path, r.status, expect_status,
                 r.body ? r.body : "");
    json_t *obj = json_loadb(r.body ? r.body : "", r.len, 0, NULL);
    if (!obj)
        fail_msg("%s %s: body is not JSON: %s", method, path, r.body ? r.body : "(none)");
    xg_http_response_clear(&r);
    return obj;
}

static const char *get_s(json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static const char *error_code(json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "error"), "code"));
}

struct raw_response {
    long status;
    char allow[128];
    char body[4096];
    size_t body_len;
};

static size_t on_raw_header(char *data, size_t size, size_t n, void *user)
{
    struct raw_response *r = user;
    size_t len = size * n;
    if (len > 6 && strncasecmp(data, "Allow:", 6) == 0) {
        snprintf(r->allow, sizeof r->allow, "%.*s", (int)(len - 6), data + 6);
        char *p = r->allow;
        while (*p == ' ')
            memmove(p, p + 1, strlen(p));
        p[strcspn(p, "\r\n")] = '\0';
    }
    return len;
}

static size_t on_raw_body(char *data, size_t size, size_t n, void *user)
{
    struct raw_response *r = user;
    size_t len = size * n, room = sizeof r->body - 1 - r->body_len;
    memcpy(r->body + r->body_len, data, len < room ? len : room);
    r->body_len += len < room ? len : room;
    r->body[r->body_len] = '\0';
    return len;
}

struct upload {
    size_t left;
};

static size_t on_raw_read(char *buf, size_t size, size_t n, void *user)
{
    struct upload *u = user;
    size_t len = size * n;
    if (len > 300)
        len = 300; /* several chunks */
    if (len > u->left)
        len = u->left;
    memset(buf, 'a', len);
    u->left -= len;
    return len;
}

/* A request the client module cannot make: any method, headers captured, optionally a
 * chunked upload of `chunked` bytes. */
static void raw_request(struct fixture *f, const char *method, const char *path, size_t chunked,
                        struct raw_response *out)
{
    char url[256];
    struct upload up = {chunked};
    struct curl_slist *headers = NULL;
    memset(out, 0, sizeof *out);
    snprintf(url, sizeof url, "%s%s", f->base, path);
    CURL *c = curl_easy_init();
    assert_non_null(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_raw_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, out);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_raw_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    if (chunked) {
        headers = curl_slist_append(headers, "Transfer-Encoding: chunked");
        headers = curl_slist_append(headers, "Expect:");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, on_raw_read);
        curl_easy_setopt(c, CURLOPT_READDATA, &up);
    }
    CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK)
        fail_msg("%s %s: %s", method, path, curl_easy_strerror(rc));
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(c);
}

/* ---- tests ------------------------------------------------------------------------ */

static void test_get_with_query_and_header(void **state)
{
    struct fixture *f = *state;
    char url[256];
    struct xg_http_response r;
    /* the module sends no custom headers, so the header check goes through raw curl */
    snprintf(url, sizeof url, "%s/echo?q=hello%%20world&other=1", f->base);
    assert_true(xg_http_request(f->client, "GET", url, NULL, NULL, 0, 5000, &r));
    assert_int_equal(r.status, 200);
    json_t *obj = json_loadb(r.body, r.len, 0, NULL);
    assert_non_null(obj);
    assert_int_equal(strlen(r.body), r.len);
    assert_string_equal(get_s(obj, "method"), "GET");
    assert_string_equal(get_s(obj, "path"), "/echo");
    assert_string_equal(get_s(obj, "q"), "hello world");
    assert_string_equal(get_s(obj, "body"), "");
    assert_string_equal(get_s(obj, "addr"), "127.0.0.1");
    assert_true(json_is_null(json_object_get(obj, "header"))); /* no Content-Type on a GET */
    assert_true(json_is_true(json_object_get(obj, "closure_ok")));
    json_decref(obj);
    xg_http_response_clear(&r);
    assert_null(r.body);
}

static void test_post_body_up_to_limit(void **state)
{
    struct fixture *f = *state;
    char body[MAX_BODY];
    for (size_t i = 0; i < sizeof body; i++)
        body[i] = (char)('a' + i % 26);
    json_t *obj = request_json(f, "POST", "/echo", body, sizeof body, 200);
    assert_string_equal(get_s(obj, "method"), "POST");
    assert_string_equal(get_s(obj, "header"), "application/json");
    assert_int_equal(json_integer_value(json_object_get(obj, "body_len")), MAX_BODY);
    assert_memory_equal(get_s(obj, "body"), body, MAX_BODY);
    json_decref(obj);
}

static void test_body_too_large(void **state)
{
    struct fixture *f = *state;
    char body[MAX_BODY + 1];
    memset(body, 'z', sizeof body);
    json_t *obj = request_json(f, "POST", "/echo", body, sizeof body, 413);
    assert_string_equal(error_code(obj), "body_too_large");
    assert_non_null(json_string_value(json_object_get(json_object_get(obj, "error"), "message")));
    json_decref(obj);
    /* the client recovers: the next request on the same client works */
    obj = request_json(f, "GET", "/echo", NULL, 0, 200);
    json_decref(obj);
}

static void test_chunked_bodies(void **state)
{
    struct fixture *f = *state;
    struct raw_response r;
    raw_request(f, "POST", "/echo", MAX_BODY, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"body_len\":1024"));
    raw_request(f, "POST", "/echo", MAX_BODY + 1, &r);
    assert_int_equal(r.status, 413);
    assert_non_null(strstr(r.body, "\"code\":\"body_too_large\""));
}

static void test_not_found(void **state)
{
    struct fixture *f = *state;
    json_t *obj = request_json(f, "GET", "/nope", NULL, 0, 404);
    assert_string_equal(error_code(obj), "not_found");
    json_decref(obj);
    obj = request_json(f, "POST", "/nope", "{\"a\":1}", 7, 404);
    assert_string_equal(error_code(obj), "not_found");
    json_decref(obj);
    /* a prefix route needs the slash after "/prefix" */
    obj = request_json(f, "GET", "/prefix", NULL, 0, 404);
    json_decref(obj);
    obj = request_json(f, "GET", "/echo/more", NULL, 0, 404);
    json_decref(obj);
}

static void test_method_not_allowed(void **state)
{
    struct fixture *f = *state;
    struct raw_response r;
    raw_request(f, "PUT", "/echo", 0, &r);
    assert_int_equal(r.status, 405);
    assert_string_equal(r.allow, "GET, POST");
    assert_non_null(strstr(r.body, "\"code\":\"method_not_allowed\""));
    raw_request(f, "DELETE", "/json_rpc", 0, &r);
    assert_int_equal(r.status, 405);
    assert_string_equal(r.allow, "POST");
    /* a route without a method takes any */
    raw_request(f, "DELETE", "/any", 0, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\"method\":\"DELETE\""));
}

static void test_head_uses_get_route(void **state)
{
    struct fixture *f = *state;
    char url[256];
    struct xg_http_response r;
    snprintf(url, sizeof url, "%s/echo", f->base);
    assert_true(xg_http_request(f->client, "HEAD", url, NULL, NULL, 0, 5000, &r));
    assert_int_equal(r.status, 200);
    assert_null(r.body);
    xg_http_response_clear(&r);
}

static void test_prefix_route(void **state)
{
    struct fixture *f = *state;
    json_t *obj = request_json(f, "GET", "/prefix/a/b", NULL, 0, 200);
    assert_string_equal(get_s(obj, "path"), "/prefix/a/b");
    json_decref(obj);
}

static void test_jsonrpc_result(void **state)
{
    struct fixture *f = *state;
    char url[128], err[256] = "";
    snprintf(url, sizeof url, "%s/json_rpc", f->base);
    json_t *res = xg_jsonrpc_call(f->client, url, "get_info", json_pack("{s:i}", "height", 7), 5000,
                                  err, sizeof err);
    assert_non_null(res);
    json_t *sent = json_object_get(res, "request");
    assert_string_equal(get_s(sent, "jsonrpc"), "2.0");
    assert_string_equal(get_s(sent, "id"), "0");
    assert_string_equal(get_s(sent, "method"), "get_info");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(res, "params"), "height")),
                     7);
    json_decref(res);

    /* no params: the member is absent, the result still arrives */
    res = xg_jsonrpc_call(f->client, url, "get_height", NULL, 5000, err, sizeof err);
    assert_non_null(res);
    assert_null(json_object_get(json_object_get(res, "request"), "params"));
    json_decref(res);
}

static void test_jsonrpc_failures(void **state)
{
    struct fixture *f = *state;
    char url[128], err[256];
    snprintf(url, sizeof url, "%s/json_rpc", f->base);

    err[0] = '\0';
    assert_null(xg_jsonrpc_call(f->client, url, "fail", json_array(), 5000, err, sizeof err));
    assert_string_equal(err, "fail: RPC error -32601: Method not found");

    err[0] = '\0';
    assert_null(xg_jsonrpc_call(f->client, url, "garbage", NULL, 5000, err, sizeof err));
    assert_non_null(strstr(err, "garbage: unparsable response"));

    err[0] = '\0';
    assert_null(xg_jsonrpc_call(f->client, url, "server_error", NULL, 5000, err, sizeof err));
    assert_string_equal(err, "server_error: HTTP 500: boom");

    err[0] = '\0';
    snprintf(url, sizeof url, "%s/nope", f->base);
    assert_null(xg_jsonrpc_call(f->client, url, "x", NULL, 5000, err, sizeof err));
    assert_non_null(strstr(err, "x: HTTP 404"));
}

static void test_response_cap(void **state)
{
    struct fixture *f = *state;
    char url[128];
    struct xg_http_response r;
    snprintf(url, sizeof url, "%s/big", f->base);
    assert_false(xg_http_request(f->client, "GET", url, NULL, NULL, 0, 20000, &r));
    assert_int_equal(r.status, 0);
    assert_null(r.body);
    assert_string_equal(r.error, "response larger than 64 MiB");
    xg_http_response_clear(&r);
}

static void test_timeout(void **state)
{
    struct fixture *f = *state;
    char url[128];
    struct xg_http_response r;
    snprintf(url, sizeof url, "%s/slow", f->base);
    assert_false(xg_http_request(f->client, "GET", url, NULL, NULL, 0, 100, &r));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.error, "imeout"));
    xg_http_response_clear(&r);
    assert_true(xg_http_request(f->client, "GET", url, NULL, NULL, 0, 5000, &r));
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "late");
    xg_http_response_clear(&r);
}

static void test_quiesce_then_refused(void **state)
{
    struct fixture *f = *state;
    char url[128];
    struct xg_http_response r;
    snprintf(url, sizeof url, "%s/echo", f->base);
    xg_httpd_quiesce(f->srv);
    xg_httpd_quiesce(f->srv); /* idempotent */
    struct xg_http_client *fresh = xg_http_client_new();
    assert_false(xg_http_request(fresh, "GET", url, NULL, NULL, 0, 2000, &r));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.error, "onnect")); /* refused, not left waiting */
    xg_http_response_clear(&r);
    xg_http_client_free(fresh);
}

static void test_port_in_use(void **state)
{
    struct fixture *f = *state;
    char err[256] = "", expected[128];
    struct xg_httpd *second = start_server(xg_httpd_port(f->srv), 1, err, sizeof err);
    assert_null(second);
    snprintf(expected, sizeof expected,
             "cannot listen on 127.0.0.1 port %u: ", (unsigned)xg_httpd_port(f->srv));
    assert_non_null(strstr(err, expected));
    assert_non_null(strstr(err, "in use"));
}

static void test_bad_bind_addr(void **state)
{
    (void)state;
    char err[256] = "";
    struct xg_httpd_options opt = {
        .bind_addr = "localhost", .threads = 1, .max_body = 1, .timeout_s = 1, .routes = routes};
    assert_null(xg_httpd_start(&opt, err, sizeof err));
    assert_string_equal(err, "invalid listen address \"localhost\" (expected an IP address)");
}

static void test_stopped_server_is_a_transport_error(void **state)
{
    (void)state;
    char err[256] = "", url[128];
    struct xg_httpd *srv = start_server(0, 1, err, sizeof err);
    assert_non_null(srv);
    snprintf(url, sizeof url, "http://127.0.0.1:%u/echo", (unsigned)xg_httpd_port(srv));
    xg_httpd_stop(srv);
    struct xg_http_client *client = xg_http_client_new();
    struct xg_http_response r;
    assert_false(xg_http_request(client, "GET", url, NULL, NULL, 0, 2000, &r));
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.error, "onnect"));
    xg_http_response_clear(&r);
    xg_http_client_free(client);
}

static void test_thread_pool_serves(void **state)
{
    struct fixture *f = *state;
    for (int i = 0; i < 20; i++) {
        json_t *obj = request_json(f, "POST", "/echo", "[1,2,3]", 7, 200);
        assert_string_equal(get_s(obj, "body"), "[1,2,3]");
        json_decref(obj);
    }
}

static void test_close_drops_the_connection(void **state)
{
    struct fixture *f = *state;
    char url[256];
    struct xg_http_response r;
    snprintf(url, sizeof url, "%s/close", f->base);
    assert_false(xg_http_request(f->client, "GET", url, NULL, NULL, 0, 5000, &r));
    assert_int_equal(r.status, 0);                        /* no status line: nothing was sent */
    assert_non_null(strstr(r.error, "returned nothing")); /* not a timeout */
    /* dropped at once, not called again and again as a request that answers nothing */
    assert_int_equal(__atomic_load_n(&close_calls, __ATOMIC_SEQ_CST), 1);
    xg_http_response_clear(&r);
    /* the server serves the next request as ever */
    json_t *obj = request_json(f, "GET", "/echo", NULL, 0, 200);
    json_decref(obj);
}

struct held_client {
    const char *base;
    struct xg_http_response r;
    bool ok;
};

static void *held_client_main(void *arg)
{
    struct held_client *c = arg;
    char url[256];
    snprintf(url, sizeof url, "%s/held", c->base);
    struct xg_http_client *client = xg_http_client_new();
    c->ok = xg_http_request(client, "GET", url, NULL, NULL, 0, 10000, &c->r);
    xg_http_client_free(client);
    pthread_mutex_lock(&held.lock);
    held.answered = true;
    pthread_cond_broadcast(&held.changed);
    pthread_mutex_unlock(&held.lock);
    return NULL;
}

static void test_done_suspends_until_resumed(void **state)
{
    struct fixture *f = *state;
    struct held_client c = {.base = f->base};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, held_client_main, &c), 0);
    pthread_mutex_lock(&held.lock);
    while (!held.suspended)
        pthread_cond_wait(&held.changed, &held.lock);
    /* suspended: the client has nothing yet, and the handler ran once */
    assert_false(held.answered);
    assert_int_equal(held.calls, 1);
    struct MHD_Connection *conn = held.suspended;
    pthread_mutex_unlock(&held.lock);
    MHD_resume_connection(conn);
    pthread_join(t, NULL);
    assert_true(c.ok);
    assert_int_equal(c.r.status, 200);
    assert_string_equal(c.r.body, "resumed");
    assert_int_equal(held.calls, 2); /* called again after the resume, with the same request */
    xg_http_response_clear(&c.r);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_get_with_query_and_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_post_body_up_to_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_body_too_large, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chunked_bodies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_method_not_allowed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_head_uses_get_route, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefix_route, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jsonrpc_result, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jsonrpc_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_response_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quiesce_then_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_port_in_use, setup, teardown),
        cmocka_unit_test(test_bad_bind_addr),
        cmocka_unit_test(test_stopped_server_is_a_transport_error),
        cmocka_unit_test_setup_teardown(test_thread_pool_serves, setup_pool, teardown),
        cmocka_unit_test_setup_teardown(test_close_drops_the_connection, setup, teardown),
        cmocka_unit_test_setup_teardown(test_done_suspends_until_resumed, setup_pool, teardown),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return failed;
}
