/* linger — the lingering close of client sockets (see linger.h for why and what). */
#include "http/linger.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xg_clock.h"

#define LINGER_READ_SIZE 65536

struct linger_sock {
    struct loop_watch watch; /* first: the loop hands it back on events */
    struct linger_set *set;
    int fd; /* -1 once closed */
    struct linger_progress progress;
    struct linger_sock *quieter, *busier; /* live sockets, the one quiet the longest first */
    struct linger_sock *next_dead;
};

struct linger_set {
    struct loop *loop;
    struct linger_budget budget;
    size_t max_sockets, count;
    struct linger_sock *quietest, *busiest;
    struct linger_sock *dead;       /* closed, freed by linger_run */
    char scratch[LINGER_READ_SIZE]; /* where dropped input lands */
};

/* ---- the rule ------------------------------------------------------------------------- */

int64_t linger_deadline(const struct linger_budget *b, const struct linger_progress *p)
{
    int64_t idle_end = p->last_ms + b->idle_ms;
    int64_t hard_end = p->since_ms + b->max_ms;
    return idle_end < hard_end ? idle_end : hard_end;
}

enum linger_verdict linger_verdict(const struct linger_budget *b, const struct linger_progress *p,
                                   enum linger_read got, int64_t now_ms)
{
    if (got == LINGER_GOT_EOF || p->drained >= b->max_bytes || now_ms >= linger_deadline(b, p))
        return LINGER_CLOSE;
    return got == LINGER_GOT_DATA ? LINGER_READ_MORE : LINGER_WAIT;
}

/* ---- the set -------------------------------------------------------------------------- */

static void unlink_live(struct linger_set *s, struct linger_sock *l)
{
    if (l->quieter)
        l->quieter->busier = l->busier;
    else
        s->quietest = l->busier;
    if (l->busier)
        l->busier->quieter = l->quieter;
    else
        s->busiest = l->quieter;
    l->quieter = l->busier = NULL;
}

static void link_busiest(struct linger_set *s, struct linger_sock *l)
{
    l->quieter = s->busiest;
    l->busier = NULL;
    if (s->busiest)
        s->busiest->busier = l;
    else
        s->quietest = l;
    s->busiest = l;
}

/* Closes l's socket now (with input still unread the kernel resets the connection: the
 * budget is spent); the memory goes in linger_run. */
static void sock_close(struct linger_set *s, struct linger_sock *l)
{
    close(l->fd);
    l->fd = -1;
    unlink_live(s, l);
    s->count--;
    l->next_dead = s->dead;
    s->dead = l;
    loop_host_due(s->loop);
}

/* Reads and drops what is there, as the budget allows. */
static void drain(struct linger_set *s, struct linger_sock *l)
{
    bool got_some = false;
    for (;;) {
        ssize_t n = recv(l->fd, s->scratch, sizeof s->scratch, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        enum linger_read got = n > 0 ? LINGER_GOT_DATA
                               : n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
                                   ? LINGER_GOT_NOTHING
                                   : LINGER_GOT_EOF;
        int64_t now = xg_monotonic_coarse_ms();
        if (got == LINGER_GOT_DATA) {
            l->progress.drained += (uint64_t)n;
            l->progress.last_ms = now;
            got_some = true;
        }
        switch (linger_verdict(&s->budget, &l->progress, got, now)) {
        case LINGER_READ_MORE:
            continue;
        case LINGER_WAIT:
            if (got_some) { /* now the busiest: the quiet ones' deadlines come first */
                unlink_live(s, l);
                link_busiest(s, l);
            }
            return;
        case LINGER_CLOSE:
            sock_close(s, l);
            return;
        }
    }
}

static void on_sock_event(struct loop_watch *w, uint32_t events)
{
    (void)events; /* whatever it is (input, EOF, an error), the read tells */
    struct linger_sock *l = (struct linger_sock *)w;
    if (l->fd >= 0)
        drain(l->set, l);
}

struct linger_set *linger_new(struct loop *l, const struct linger_budget *b, size_t max_sockets)
{
    assert(max_sockets > 0);
    struct linger_set *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->loop = l;
    s->budget = *b;
    s->max_sockets = max_sockets;
    return s;
}

static void free_dead(struct linger_set *s)
{
    while (s->dead) {
        struct linger_sock *l = s->dead;
        s->dead = l->next_dead;
        free(l);
    }
}

void linger_free(struct linger_set *s)
{
    if (!s)
        return;
    while (s->quietest)
        sock_close(s, s->quietest);
    free_dead(s);
    free(s);
}

void linger_take(struct linger_set *s, int fd, bool watched)
{
    struct linger_sock *l = calloc(1, sizeof *l);
    if (!l) {
        close(fd);
        return;
    }
    if (s->count >= s->max_sockets)
        sock_close(s, s->quietest);
    l->watch.on_event = on_sock_event;
    l->set = s;
    l->fd = fd;
    uint32_t events = EPOLLIN | EPOLLRDHUP | EPOLLET;
    if (!(watched ? loop_watch_change(s->loop, fd, events, &l->watch)
                  : loop_watch_add(s->loop, fd, events, &l->watch))) {
        close(fd);
        free(l);
        return;
    }
    /* The FIN goes after the answer: the client reads all of it, then EOF. */
    shutdown(fd, SHUT_WR);
    int64_t now = xg_monotonic_coarse_ms();
    l->progress = (struct linger_progress){.since_ms = now, .last_ms = now};
    link_busiest(s, l);
    s->count++;
    drain(s, l);
}

bool linger_shed(struct linger_set *s)
{
    if (!s->quietest)
        return false;
    sock_close(s, s->quietest);
    return true;
}

void linger_run(struct linger_set *s)
{
    int64_t now = xg_monotonic_coarse_ms();
    while (s->quietest && linger_verdict(&s->budget, &s->quietest->progress, LINGER_GOT_NOTHING,
                                         now) == LINGER_CLOSE)
        sock_close(s, s->quietest);
    free_dead(s);
}

long linger_timeout_ms(const struct linger_set *s)
{
    if (!s->quietest)
        return -1;
    int64_t due = linger_deadline(&s->budget, &s->quietest->progress);
    int64_t now = xg_monotonic_coarse_ms();
    return due > now ? (long)(due - now) : 0;
}

size_t linger_count(const struct linger_set *s)
{
    return s->count;
}
