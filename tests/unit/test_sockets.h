/* test_sockets — loopback sockets for the tests that talk to a server of their own: a
 * client connected to a port, bytes sent all at once, and a port that refuses connections.
 * Test helpers, not product code (include after cmocka.h); each failure is an assertion. */
#ifndef TEST_SOCKETS_H
#define TEST_SOCKETS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

/* A TCP client connected to 127.0.0.1:port; rcvbuf > 0 sets a small receive buffer first
 * (a slow reader). The caller closes it. */
static inline int loopback_connect(uint16_t port, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* Sends p[0..n) in one send, all of it (no SIGPIPE when the peer is gone: a failure). */
static inline void send_exactly(int fd, const void *p, size_t n)
{
    assert_int_equal(send(fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* A loopback port nothing listens on: bound, then closed, so connecting is refused (until
 * the kernel hands it out again, which it does not do at once). */
static inline uint16_t loopback_refused_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

#endif
