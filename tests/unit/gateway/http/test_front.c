/* Tests for gateway/front: the front end on a real event loop and loopback sockets.
 * An answer far larger than the socket buffers reaches a client that reads slowly, whole
 * and in order, and the keep-alive connection then carries the next request; a client
 * that leaves in the middle of an answer ends its request exactly once. A client whose
 * head is refused can go on sending (the connection lingers) and reads the refusal, then
 * EOF; lingering ends at the byte budget, at the idle deadline, and for the quietest
 * socket when the set is full. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http/front.h"
#include "http/linger.h"
#include "core/loop.h"

#include "front_fixture.h"
#include "test_sockets.h"

#define BIG_ANSWER ((size_t)8 << 20) /* far above loopback's socket buffers */

struct server {
    struct front_fixture f;
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
    bool queued = front_respond(c, 200, &type, 1, s->answer, BIG_ANSWER, false);
    (void)queued; /* out of memory: the client sees the connection close */
}

static void on_completed(void *cls, void *req)
{
    struct server *s = cls;
    assert_ptr_equal(req, &s->token);
    atomic_fetch_add(&s->completed, 1);
}

static uint16_t server_start_lingering(struct server *s, struct linger_budget linger,
                                       size_t max_lingering)
{
    s->answer = malloc(BIG_ANSWER);
    assert_non_null(s->answer);
    for (size_t i = 0; i < BIG_ANSWER; i++)
        s->answer[i] = byte_at(i);
    struct front_options fopt = front_fixture_options();
    fopt.linger = linger;
    fopt.max_lingering = max_lingering;
    struct front_handler handler = {s, on_head, on_body, front_fixture_no_resume, on_completed};
    return front_fixture_start(&s->f, &fopt, &handler, NULL);
}

static uint16_t server_start(struct server *s)
{
    return server_start_lingering(s, LINGER_BUDGET_DEFAULT, LINGER_MAX_SOCKETS);
}

static void server_stop(struct server *s)
{
    front_fixture_stop(&s->f);
    free(s->answer);
}

/* A client socket with a small receive buffer, connected to the front end. */
static int client_connect(uint16_t port)
{
    return loopback_connect(port, 4096);
}

static void send_all(int fd, const char *s)
{
    send_exactly(fd, s, strlen(s));
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

/* ---- lingering close ------------------------------------------------------------------ */

#define UNREAD_BODY ((size_t)300 * 1000) /* sent after a refused head, never read */

static void wait_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 5000), 1);
}

/* Sends n bytes; false when the connection failed on the way (a send is bounded: 5 s). */
static bool send_bytes(int fd, size_t n)
{
    static const char chunk[16384];
    struct timeval bound = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
    while (n > 0) {
        ssize_t r = send(fd, chunk, n < sizeof chunk ? n : sizeof chunk, MSG_NOSIGNAL);
        if (r <= 0)
            return false;
        n -= (size_t)r;
    }
    return true;
}

/* Reads to EOF; fails on a reset or when nothing comes for 5 s. Returns the bytes read
 * (NUL-terminated, cut at cap - 1). */
static void read_to_eof(int fd, char *out, size_t cap)
{
    size_t n = 0;
    for (;;) {
        char buf[4096];
        wait_readable(fd);
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        assert_true(r >= 0); /* no reset */
        if (r == 0)
            break;
        size_t keep = (size_t)r < cap - 1 - n ? (size_t)r : cap - 1 - n;
        memcpy(out + n, buf, keep);
        n += keep;
    }
    out[n] = '\0';
}

/* Whether the server has let go of fd: a send then meets a reset, and the next one fails.
 * Tries every 20 ms for up to 5 s (the pause is the client's, the bound the test's). */
static bool server_let_go(int fd)
{
    for (int i = 0; i < 250; i++) {
        if (send(fd, "x", 1, MSG_NOSIGNAL) != 1)
            return true;
        poll(NULL, 0, 20);
    }
    return false;
}

/* Connects and sends a head the front end refuses, whole. */
static int send_refused_head(uint16_t port, const char *head)
{
    int fd = client_connect(port);
    send_all(fd, head);
    return fd;
}

static void test_refused_head_then_input_never_read(void **state)
{
    (void)state;
    static char big_head[21000];
    int at = snprintf(big_head, sizeof big_head, "GET /x HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(big_head + at, 'a', 20000);
    memcpy(big_head + at + 20000, "\r\n\r\n", 5);
    const struct {
        const char *name, *head, *status;
    } cases[] = {
        {"HTTP/2.0", "GET /x HTTP/2.0\r\nHost: x\r\n\r\n", "HTTP/1.1 505 "},
        {"Content-Length with Transfer-Encoding",
         "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
         "HTTP/1.1 400 "},
        {"a bad chunk size",
         "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
         "HTTP/1.1 400 "},
        {"a 20 kB header", big_head, "HTTP/1.1 431 "},
    };
    struct server s = {0};
    uint16_t port = server_start(&s);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int fd = send_refused_head(port, cases[i].head);
        wait_readable(fd); /* answered: a server without lingering has closed by now */
        if (!send_bytes(fd, UNREAD_BODY))
            fail_msg("%s: the connection failed while the client sent on", cases[i].name);
        char answer[4096];
        read_to_eof(fd, answer, sizeof answer);
        if (strncmp(answer, cases[i].status, strlen(cases[i].status)) != 0)
            fail_msg("%s: answered \"%.40s\"", cases[i].name, answer);
        close(fd);
    }
    server_stop(&s);
}

static void test_lingering_ends_at_the_byte_budget(void **state)
{
    (void)state;
    struct server s = {0};
    struct linger_budget b = {.max_bytes = 65536, .idle_ms = 60000, .max_ms = 60000};
    uint16_t port = server_start_lingering(&s, b, 4);
    int fd = send_refused_head(port, "GET /x HTTP/2.0\r\n\r\n");
    char answer[4096];
    read_to_eof(fd, answer, sizeof answer);
    assert_true(strncmp(answer, "HTTP/1.1 505 ", 13) == 0);
    bool cut_off = false;
    for (int i = 0; i < 1024 && !cut_off; i++) /* up to 64 MiB, far beyond any buffers */
        cut_off = !send_bytes(fd, 65536);
    assert_true(cut_off);
    close(fd);
    server_stop(&s);
}

static void test_quiet_lingerer_closes_at_its_idle_deadline(void **state)
{
    (void)state;
    struct server s = {0};
    struct linger_budget b = {.max_bytes = 1 << 20, .idle_ms = 5, .max_ms = 60000};
    uint16_t port = server_start_lingering(&s, b, 4);
    int fd = send_refused_head(port, "GET /x HTTP/2.0\r\n\r\n");
    char answer[4096];
    read_to_eof(fd, answer, sizeof answer);
    assert_true(server_let_go(fd)); /* quiet 20 ms between sends: past the 5 ms */
    close(fd);
    server_stop(&s);
}

static void test_full_set_lets_the_quietest_go(void **state)
{
    (void)state;
    struct server s = {0};
    struct linger_budget b = {.max_bytes = 1 << 20, .idle_ms = 60000, .max_ms = 60000};
    uint16_t port = server_start_lingering(&s, b, 1);
    char answer[4096];
    int first = send_refused_head(port, "GET /x HTTP/2.0\r\n\r\n");
    read_to_eof(first, answer, sizeof answer); /* EOF: its linger has begun */
    assert_true(send_bytes(first, 1000));
    int second = send_refused_head(port, "GET /x HTTP/2.0\r\n\r\n");
    read_to_eof(second, answer, sizeof answer);
    assert_true(server_let_go(first)); /* not in 60 s otherwise */
    assert_true(send_bytes(second, UNREAD_BODY));
    close(first);
    close(second);
    server_stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_big_answer_to_a_slow_reader),
        cmocka_unit_test(test_client_leaves_mid_answer),
        cmocka_unit_test(test_refused_head_then_input_never_read),
        cmocka_unit_test(test_lingering_ends_at_the_byte_budget),
        cmocka_unit_test(test_quiet_lingerer_closes_at_its_idle_deadline),
        cmocka_unit_test(test_full_set_lets_the_quietest_go),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
