/* linger — the lingering close of client sockets, as nginx (lingering_close) and HAProxy
 * do it. A socket the server ends while the client may still be sending (a refused head,
 * a body never read, requests pipelined after a Connection: close) must not be closed
 * with input unread or still arriving: the kernel answers that input with RST, the
 * client's next send fails (EPIPE, ECONNRESET) and most clients then give up without
 * reading the answer; the reset also drops whatever of the answer is still in our send
 * queue. So, once the answer is written, the write side is shut (the client reads the
 * answer, then EOF), and input is read and dropped until the client closes, within a
 * budget of bytes and time; then the socket closes.
 *
 * Pure core: linger_verdict, the budget rule, table-tested in
 * tests/unit/gateway/http/test_linger.c.
 *
 * The shell, struct linger_set, holds the lingering sockets of one event loop, watched on
 * its loop (loop.h): no thread and no sleep; a socket is read when epoll says there is input, and
 * the set's next deadline bounds the host's wait (linger_timeout_ms).
 *
 * Bounds: a set holds at most max_sockets; taking one more closes the oldest first (it
 * has had the longest to read its answer). A lingering socket costs a descriptor and
 * ~64 bytes, no buffers. It is not a serving connection: it counts against no connection
 * limit, and linger_shed gives its descriptor up when the process runs out of them.
 *
 * Threads: everything on the loop's thread, but linger_new and linger_free (after the
 * loop stopped). */
#ifndef LINGER_H
#define LINGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/loop.h"

struct linger_budget {
    uint64_t max_bytes; /* input read and dropped at most */
    int64_t idle_ms;    /* no input for this long ends it */
    int64_t max_ms;     /* nor does input keep it going longer than this after the answer */
};

/* What the gateway uses: a client that sends on gets 10 s and 1 MiB to stop and read its
 * answer; one that is quiet for 2 s is done. */
#define LINGER_BUDGET_DEFAULT                                                                      \
    (struct linger_budget)                                                                         \
    {                                                                                              \
        .max_bytes = (uint64_t)1 << 20, .idle_ms = 2000, .max_ms = 10000                           \
    }
#define LINGER_MAX_SOCKETS 1024 /* per event loop */

/* Where a lingering socket stands: input dropped so far, when it began, last input. */
struct linger_progress {
    uint64_t drained;
    int64_t since_ms, last_ms;
};

/* What the last read found. */
enum linger_read {
    LINGER_GOT_DATA,    /* some input (already counted in drained) */
    LINGER_GOT_NOTHING, /* none for now (EAGAIN), or a timer fired */
    LINGER_GOT_EOF,     /* the client closed, or the socket failed */
};

enum linger_verdict {
    LINGER_READ_MORE, /* read again now */
    LINGER_WAIT,      /* wait for input or a deadline */
    LINGER_CLOSE,     /* close now */
};

/* Pure: what a lingering socket does after a read that found `got`, at now_ms. Closes at
 * EOF, at max_bytes, at max_ms after since_ms, and when idle_ms passed since last_ms.
 * The shell asks after every read and when the deadline of the socket quiet the longest
 * passed, so a socket ends within max_ms + idle_ms (max_ms when its client stays busy). */
enum linger_verdict linger_verdict(const struct linger_budget *b, const struct linger_progress *p,
                                   enum linger_read got, int64_t now_ms);

/* Pure: when the socket is to be closed at the latest if no input comes (ms, the clock
 * of linger_verdict). */
int64_t linger_deadline(const struct linger_budget *b, const struct linger_progress *p);

struct linger_set;

/* A set on loop l; max_sockets > 0. NULL when memory runs out. */
struct linger_set *linger_new(struct loop *l, const struct linger_budget *b, size_t max_sockets);

/* Closes every socket still lingering and frees s. Call after the loop stopped. NULL is
 * fine. */
void linger_free(struct linger_set *s);

/* Takes fd (the set owns it from now on): a connected, non-blocking socket whose answer
 * is written. watched: fd is in the loop's epoll set already (its watch is replaced by
 * the set's); otherwise it is added. Shuts the write side and reads what is there; closes
 * it at once when the client has closed already, or when memory or epoll fail (then
 * without a linger). */
void linger_take(struct linger_set *s, int fd, bool watched);

/* Closes the oldest lingering socket, to give its descriptor to a new connection.
 * Returns false when there was none. */
bool linger_shed(struct linger_set *s);

/* The host's part: closes the sockets whose time is up and frees the closed ones (freed
 * only here: an event already fetched for one may still arrive in the same batch). */
void linger_run(struct linger_set *s);

/* Milliseconds until the next deadline, -1 when nothing lingers. */
long linger_timeout_ms(const struct linger_set *s);

/* Sockets lingering now. */
size_t linger_count(const struct linger_set *s);

#endif
