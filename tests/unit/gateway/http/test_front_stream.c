/* Tests for gateway/front's streamed answers, on a real event loop and loopback sockets:
 * the head goes out without a length and with Connection: close, each write reaches the
 * client as it is made, and the end closes the connection after the rest; a client that
 * leaves mid-stream makes the next write fail and front_peer_left say so, and the
 * request still ends exactly once, when its handler ends the stream. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http/front.h"
#include "core/loop.h"

#include "front_fixture.h"
#include "test_sockets.h"

enum command { CMD_NONE, CMD_WRITE_AND_END, CMD_PROBE_AND_END };

struct server {
    struct front_fixture f;
    struct front_conn *stream; /* the open stream (loop thread) */
    atomic_int cmd;            /* what on_wake does on the loop thread */
    atomic_int done;           /* on_wake has done it */
    atomic_bool began, wrote, peer_left, wrote_after_leaving;
    atomic_int completed;
    int token;
};

static void *on_head(void *cls, struct front_conn *c, const struct hreq *head)
{
    (void)c;
    (void)head;
    return &((struct server *)cls)->token;
}

static void on_body(void *cls, struct front_conn *c, void *req, char *body, size_t len,
                    bool too_large)
{
    (void)req;
    (void)len;
    (void)too_large;
    struct server *s = cls;
    free(body);
    static const struct front_header type = {"Content-Type", "text/event-stream"};
    bool began = front_stream_begin(c, 200, &type, 1);
    atomic_store(&s->began, began);
    if (began && front_stream_write(c, "event: a\n\n", 10))
        s->stream = c;
}

static void on_completed(void *cls, void *req)
{
    struct server *s = cls;
    assert_ptr_equal(req, &s->token);
    atomic_fetch_add(&s->completed, 1);
}

static void on_wake(void *ctx)
{
    struct server *s = ctx;
    int cmd = atomic_exchange(&s->cmd, CMD_NONE);
    if (cmd == CMD_NONE || !s->stream)
        return;
    if (cmd == CMD_PROBE_AND_END) {
        atomic_store(&s->peer_left, front_peer_left(s->stream));
        atomic_store(&s->wrote_after_leaving, front_stream_write(s->stream, "event: x\n\n", 10));
    } else {
        atomic_store(&s->wrote, front_stream_write(s->stream, "event: b\ndata: 1\n\n", 18));
    }
    front_stream_end(s->stream);
    s->stream = NULL;
    atomic_fetch_add(&s->done, 1);
}

static uint16_t server_start(struct server *s)
{
    struct loop_tasks tasks = {.on_wake = on_wake, .ctx = s};
    struct front_options fopt = front_fixture_options();
    fopt.idle_timeout_ms = 300; /* a stream outlives it: streams are not idle-timed */
    struct front_handler handler = {s, on_head, on_body, front_fixture_no_resume, on_completed};
    return front_fixture_start(&s->f, &fopt, &handler, &tasks);
}

static void server_stop(struct server *s)
{
    front_fixture_stop(&s->f);
}

static int client_request(uint16_t port)
{
    int fd = loopback_connect(port, 0);
    static const char req[] = "POST /s HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
    send_exactly(fd, req, sizeof req - 1);
    return fd;
}

/* Reads into buf (from *n on) until it holds want, or EOF (returns false), or 5 s pass. */
static bool read_until(int fd, char *buf, size_t cap, size_t *n, const char *want)
{
    while (!strstr(buf, want)) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        assert_int_equal(poll(&p, 1, 5000), 1);
        ssize_t r = recv(fd, buf + *n, cap - 1 - *n, 0);
        assert_true(r >= 0);
        if (r == 0)
            return false;
        *n += (size_t)r;
        buf[*n] = '\0';
    }
    return true;
}

static void wait_for(atomic_int *v, int n)
{
    struct timespec pause = {0, 1000000};
    for (int i = 0; i < 5000 && atomic_load(v) < n; i++)
        nanosleep(&pause, NULL);
    assert_int_equal(atomic_load(v), n);
}

static void test_stream_writes_then_ends(void **state)
{
    (void)state;
    struct server s = {0};
    uint16_t port = server_start(&s);
    int fd = client_request(port);
    char buf[4096] = "";
    size_t n = 0;
    assert_true(read_until(fd, buf, sizeof buf, &n, "event: a\n\n"));
    assert_true(atomic_load(&s.began));
    assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
    assert_non_null(strstr(buf, "Content-Type: text/event-stream\r\n"));
    assert_non_null(strstr(buf, "Connection: close\r\n"));
    assert_null(strstr(buf, "Content-Length"));
    struct timespec idle = {0, 500000000}; /* past the idle timeout: the stream stays */
    nanosleep(&idle, NULL);
    assert_int_equal(atomic_load(&s.completed), 0);
    atomic_store(&s.cmd, CMD_WRITE_AND_END);
    loop_wake(s.f.loop);
    assert_true(read_until(fd, buf, sizeof buf, &n, "event: b\ndata: 1\n\n"));
    assert_true(atomic_load(&s.wrote));
    assert_false(read_until(fd, buf, sizeof buf, &n, "never sent")); /* then EOF */
    wait_for(&s.completed, 1);
    close(fd);
    server_stop(&s);
}

static void test_client_leaves_mid_stream(void **state)
{
    (void)state;
    struct server s = {0};
    uint16_t port = server_start(&s);
    int fd = client_request(port);
    char buf[4096] = "";
    size_t n = 0;
    assert_true(read_until(fd, buf, sizeof buf, &n, "event: a\n\n"));
    close(fd);
    struct timespec pause = {0, 100000000};
    nanosleep(&pause, NULL);
    assert_int_equal(atomic_load(&s.completed), 0); /* the handler still holds it */
    atomic_store(&s.cmd, CMD_PROBE_AND_END);
    loop_wake(s.f.loop);
    wait_for(&s.done, 1);
    assert_true(atomic_load(&s.peer_left));
    assert_false(atomic_load(&s.wrote_after_leaving));
    wait_for(&s.completed, 1); /* once, when the stream ended */
    /* The front end serves the next client. */
    fd = client_request(port);
    n = 0;
    buf[0] = '\0';
    assert_true(read_until(fd, buf, sizeof buf, &n, "event: a\n\n"));
    close(fd);
    server_stop(&s); /* a stream still open ends with the front end */
    assert_int_equal(atomic_load(&s.completed), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_writes_then_ends),
        cmocka_unit_test(test_client_leaves_mid_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
