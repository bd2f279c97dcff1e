/* Tests for gateway/front: the front end on a real upstream engine and loopback sockets.
 * An answer far larger than the socket buffers reaches a client that reads slowly, whole
 * and in order, and the keep-alive connection then carries the next request; a client
 * that leaves in the middle of an answer ends its request exactly once. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "front.h"
#include "upstream.h"

#define BIG_ANSWER ((size_t)8 << 20) /* far above loopback's socket buffers */

struct server {
    struct up_engine *engine;
    struct front *front;
    char *answer;
    atomic_int completed;
    int token; /* what on_head hands back as the request */
};

static char byte_at(size_t i)
{
    return (char)('a' + (i * 7 + i / 4096) % 26);
}

static void *on_head(void *cls, struct front_conn *c, const struct hreq *head)
{
    (void)c;
    (void)head;
    struct server *s = cls;
    return &s->token;
}

static void on_body(void *cls, struct front_conn *c, void *req, char *body, size_t len,
                    bool too_large)
{
    (void)req;
    (void)len;
    (void)too_large;
    struct server *s = cls;
    free(body);
    static const struct front_header type = {"Content-Type", "application/octet-stream"};
    front_respond(c, 200, &type, 1, s->answer, BIG_ANSWER, false);
}

static void on_resume(void *cls, struct front_conn *c, void *req)
{
    (void)cls;
    (void)c;
    (void)req;
}

static void on_completed(void *cls, void *req)
{
    struct server *s = cls;
    assert_ptr_equal(req, &s->token);
    atomic_fetch_add(&s->completed, 1);
}

static uint16_t server_start(struct server *s)
{
    char err[256];
    s->answer = malloc(BIG_ANSWER);
    assert_non_null(s->answer);
    for (size_t i = 0; i < BIG_ANSWER; i++)
        s->answer[i] = byte_at(i);
    struct up_engine_options eopt = {0};
    s->engine = up_engine_start(&eopt, err, sizeof err);
    assert_non_null(s->engine);
    struct front_options fopt = {
        .addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)},
        .max_head = 16384,
        .max_body = 1 << 20,
        .idle_timeout_ms = 10000,
        .max_connections = 64,
    };
    struct front_handler handler = {s, on_head, on_body, on_resume, on_completed};
    s->front = front_start(&fopt, &handler, s->engine, err, sizeof err);
    if (!s->front)
        fail_msg("front_start: %s", err);
    struct up_host host = {
        .fd = -1, .run = front_run, .timeout_ms = front_timeout_ms, .ctx = s->front};
    up_engine_attach_host(s->engine, &host);
    return front_port(s->front);
}

static void server_stop(struct server *s)
{
    up_engine_stop(s->engine);
    front_stop(s->front);
    up_engine_free(s->engine);
    free(s->answer);
}

/* A client socket with a small receive buffer, connected to the front end. */
static int client_connect(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static void send_all(int fd, const char *s)
{
    size_t n = strlen(s);
    assert_int_equal(send(fd, s, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* Reads one answer slowly: the head up to the blank line, then Content-Length bytes,
 * checked against the pattern. */
static void read_answer_slowly(int fd)
{
    char head[4096];
    size_t n = 0;
    while (n < sizeof head - 1 && !(n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0)) {
        ssize_t r = recv(fd, head + n, 1, 0);
        assert_int_equal(r, 1);
        n++;
    }
    head[n] = '\0';
    assert_non_null(strstr(head, "HTTP/1.1 200 OK\r\n"));
    char want[64];
    snprintf(want, sizeof want, "Content-Length: %zu\r\n", BIG_ANSWER);
    assert_non_null(strstr(head, want));
    static char buf[65536];
    size_t got = 0;
    struct timespec pause = {0, 200000}; /* 0.2 ms between reads: the writer waits */
    while (got < BIG_ANSWER) {
        size_t want_now = BIG_ANSWER - got < sizeof buf ? BIG_ANSWER - got : sizeof buf;
        ssize_t r = recv(fd, buf, want_now, 0);
        assert_true(r > 0);
        for (ssize_t i = 0; i < r; i++)
            if (buf[i] != byte_at(got + (size_t)i))
                fail_msg("byte %zu differs", got + (size_t)i);
        got += (size_t)r;
        nanosleep(&pause, NULL);
    }
}

static void wait_completed(struct server *s, int n)
{
    struct timespec pause = {0, 1000000};
    for (int i = 0; i < 5000 && atomic_load(&s->completed) < n; i++)
        nanosleep(&pause, NULL);
    assert_int_equal(atomic_load(&s->completed), n);
}

static void test_big_answer_to_a_slow_reader(void **state)
{
    (void)state;
    struct server s = {0};
    uint16_t port = server_start(&s);
    int fd = client_connect(port);
    send_all(fd, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
    read_answer_slowly(fd);
    wait_completed(&s, 1);
    send_all(fd, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n"); /* the same connection, again */
    read_answer_slowly(fd);
    wait_completed(&s, 2);
    close(fd);
    server_stop(&s);
}

static void test_client_leaves_mid_answer(void **state)
{
    (void)state;
    struct server s = {0};
    uint16_t port = server_start(&s);
    int fd = client_connect(port);
    send_all(fd, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
    char buf[1024];
    assert_true(recv(fd, buf, sizeof buf, 0) > 0); /* the answer has started */
    close(fd);
    wait_completed(&s, 1); /* ended once, by the reset */
    /* The front end serves the next client. */
    fd = client_connect(port);
    send_all(fd, "GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    read_answer_slowly(fd);
    wait_completed(&s, 2);
    close(fd);
    server_stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_big_answer_to_a_slow_reader),
        cmocka_unit_test(test_client_leaves_mid_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
