/* Tests for gateway/front with proxy_protocol on, over loopback sockets: a PROXY header
 * (v1 or v2, whole or in pieces) from a trusted peer names the client the request path
 * sees (front_client_address, answered back here as the body); a trusted peer may send
 * plain HTTP (its own health check); an untrusted peer's header is read past and its
 * address ignored; an untrusted peer without a header, and a malformed header from
 * anyone, get the connection closed without an answer. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/front.h"
#include "core/loop.h"

#include "front_fixture.h"
#include "test_sockets.h"

struct server {
    struct front_fixture f;
    int token;
};

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
    (void)cls;
    (void)req;
    (void)len;
    (void)too_large;
    free(body);
    char addr[64];
    front_client_address(c, addr, sizeof addr);
    char *copy = strdup(addr);
    bool queued = copy && front_respond(c, 200, NULL, 0, copy, strlen(copy), true);
    (void)queued; /* out of memory: the client sees the connection close */
}

static void on_completed(void *cls, void *req)
{
    (void)cls;
    (void)req;
}

static uint16_t server_start(struct server *s, const char *trusted)
{
    char err[256];
    struct front_options fopt = front_fixture_options();
    fopt.proxy_protocol = true;
    assert_true(xg_proxy_trust_parse(trusted, &fopt.trusted_proxies, err, sizeof err));
    struct front_handler handler = {s, on_head, on_body, front_fixture_no_resume, on_completed};
    return front_fixture_start(&s->f, &fopt, &handler, NULL);
}

static void server_stop(struct server *s)
{
    front_fixture_stop(&s->f);
}

/* Everything the server sends until it closes (or 5 s pass), into out. */
static void read_all(int fd, char *out, size_t cap)
{
    size_t n = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 5000) != 1)
            fail_msg("no answer and no close within 5 s");
        char buf[1024];
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r <= 0)
            break;
        size_t keep = (size_t)r < cap - 1 - n ? (size_t)r : cap - 1 - n;
        memcpy(out + n, buf, keep);
        n += keep;
    }
    out[n] = '\0';
}

static const char request[] = "GET /x HTTP/1.1\r\nConnection: close\r\n\r\n";

/* The body of the answer (the address the request path saw), or "" when none came. */
static const char *answer_body(const char *answer)
{
    const char *end = strstr(answer, "\r\n\r\n");
    return end ? end + 4 : "";
}

#define V2SIG "\r\n\r\n\0\r\nQUIT\n"

static void test_trusted_header_names_the_client(void **state)
{
    (void)state;
    struct server s = {0};
    uint16_t port = server_start(&s, "127.0.0.1");
    static const char v2[] =
        V2SIG "\x21\x11\x00\x0c\xc0\x00\x02\x07\x7f\x00\x00\x01\x12\x34\x00\x50";
    static const char v1[] = "PROXY TCP6 2001:db8::9 ::1 4711 80\r\n";
    char answer[4096];

    int fd = loopback_connect(port, 0);
    send_exactly(fd, v2, sizeof v2 - 1);
    send_exactly(fd, request, sizeof request - 1);
    read_all(fd, answer, sizeof answer);
    close(fd);
    assert_string_equal(answer_body(answer), "192.0.2.7");

    fd = loopback_connect(port, 0); /* v1 in pieces, the request right behind it */
    send_exactly(fd, v1, 9);
    usleep(20000);
    send_exactly(fd, v1 + 9, sizeof v1 - 1 - 9);
    send_exactly(fd, request, sizeof request - 1);
    read_all(fd, answer, sizeof answer);
    close(fd);
    assert_string_equal(answer_body(answer), "2001:db8::9");

    fd = loopback_connect(port, 0); /* v2 LOCAL: the balancer's own check */
    send_exactly(fd, V2SIG "\x20\x00\x00\x00", 16);
    send_exactly(fd, request, sizeof request - 1);
    read_all(fd, answer, sizeof answer);
    close(fd);
    assert_string_equal(answer_body(answer), "127.0.0.1");

    fd = loopback_connect(port, 0); /* no header from the trusted peer: plain HTTP */
    send_exactly(fd, request, sizeof request - 1);
    read_all(fd, answer, sizeof answer);
    close(fd);
    assert_string_equal(answer_body(answer), "127.0.0.1");

    fd = loopback_connect(port, 0); /* a malformed header, even from the trusted peer */
    send_exactly(fd, "PROXY TCP4 nonsense\r\n", 21);
    send_exactly(fd, request, sizeof request - 1);
    read_all(fd, answer, sizeof answer);
    close(fd);
    assert_string_equal(answer, "");
    server_stop(&s);
}

static void test_untrusted_peer(void **state)
{
    (void)state;
    struct server s = {0};
    uint16_t port = server_start(&s, "10.0.0.0/8"); /* loopback is not trusted */
    char answer[4096];

    int fd = loopback_connect(port, 0);
    send_exactly(fd, request, sizeof request - 1);
    read_all(fd, answer, sizeof answer);
    close(fd);
    assert_string_equal(answer, ""); /* refused: no header */

    fd = loopback_connect(port, 0);
    static const char v1[] = "PROXY TCP4 192.0.2.66 127.0.0.1 4711 80\r\n";
    send_exactly(fd, v1, sizeof v1 - 1);
    send_exactly(fd, request, sizeof request - 1);
    read_all(fd, answer, sizeof answer);
    close(fd);
    assert_string_equal(answer_body(answer), "127.0.0.1"); /* its claim is ignored */
    server_stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trusted_header_names_the_client),
        cmocka_unit_test(test_untrusted_peer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
