/* loop — one thread, one epoll set; see loop.h.
 *
 * A round: take what other threads handed over (when woken), run the tasks' round (the
 * engine's intake, timers and deadlines), run the host if a finished job made it due,
 * wait for events or the earliest due time, hand each event to its watch, let the tasks
 * free what the batch closed, and run the host again. */
#include "core/loop.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "xg_clock.h"

#define LOOP_NS_PER_MS   1000000ULL
#define LOOP_MAX_POLL_MS 1000
#define LOOP_MAX_EVENTS  64

struct loop {
    struct loop_tasks tasks;
    int epoll_fd, wake_fd;
    struct loop_watch wake_watch; /* the wake-up eventfd */
    struct loop_watch host_watch; /* the host's descriptor, when it has one */
    pthread_t thread;
    bool thread_running; /* owner thread only: between start and stop */

    pthread_mutex_t lock;
    bool stopping;         /* lock */
    struct loop_host host; /* lock; fd -1 when none */

    /* The loop's thread only. */
    bool woken;      /* take the host and the stop flag, and tell the tasks */
    bool host_ready; /* the host's descriptor fired in this batch */
    bool host_dirty; /* something since the host last ran may let it answer */
};

/* The loop that runs on this thread, if any. */
static _Thread_local struct loop *loop_of_this_thread;

#define LOOP_OF(w, member) ((struct loop *)((char *)(w)-offsetof(struct loop, member)))

static void loop_on_wake_event(struct loop_watch *w, uint32_t events)
{
    (void)events;
    struct loop *l = LOOP_OF(w, wake_watch);
    uint64_t count;
    ssize_t r = read(l->wake_fd, &count, sizeof count);
    (void)r;
    l->woken = true;
}

static void loop_on_host_event(struct loop_watch *w, uint32_t events)
{
    (void)events;
    LOOP_OF(w, host_watch)->host_ready = true;
}

void loop_wake(struct loop *l)
{
    uint64_t one = 1;
    ssize_t w = write(l->wake_fd, &one, sizeof one);
    (void)w; /* EAGAIN: the counter is already non-zero, a wake-up is pending */
}

bool loop_on_this_thread(const struct loop *l)
{
    return loop_of_this_thread == l;
}

bool loop_watch_add(struct loop *l, int fd, uint32_t events, struct loop_watch *w)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    return epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0;
}

bool loop_watch_change(struct loop *l, int fd, uint32_t events, struct loop_watch *w)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    return epoll_ctl(l->epoll_fd, EPOLL_CTL_MOD, fd, &ev) == 0;
}

void loop_watch_remove(struct loop *l, int fd)
{
    epoll_ctl(l->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
}

void loop_host_due(struct loop *l)
{
    l->host_dirty = true;
}

void loop_attach_host(struct loop *l, const struct loop_host *host)
{
    pthread_mutex_lock(&l->lock);
    l->host = *host;
    if (host->fd >= 0 && !loop_watch_add(l, host->fd, EPOLLIN, &l->host_watch))
        l->host.fd = -1; /* run on timeouts and batches only, as before it had one */
    loop_wake(l);
    pthread_mutex_unlock(&l->lock);
}

static void loop_run_host(struct loop *l, const struct loop_host *host)
{
    l->host_dirty = false;
    if (host->run)
        host->run(host->ctx);
}

/* How long the next wait may last: until the tasks are due or the host's own timeout,
 * whichever comes first, and never beyond LOOP_MAX_POLL_MS. */
static int loop_wait_timeout_ms(const struct loop *l, const struct loop_host *host)
{
    uint64_t due = l->tasks.due_ns ? l->tasks.due_ns(l->tasks.ctx) : UINT64_MAX;
    uint64_t now = (uint64_t)xg_monotonic_ns();
    if (due <= now)
        return 0;
    long ms = LOOP_MAX_POLL_MS;
    if (due != UINT64_MAX)
        ms = (long)((due - now + LOOP_NS_PER_MS - 1) / LOOP_NS_PER_MS);
    if (host->timeout_ms) {
        long host_ms = host->timeout_ms(host->ctx);
        if (host_ms >= 0 && host_ms < ms)
            ms = host_ms;
    }
    return ms < LOOP_MAX_POLL_MS ? (int)ms : LOOP_MAX_POLL_MS;
}

static void *loop_thread(void *arg)
{
    struct loop *l = arg;
    const struct loop_tasks *t = &l->tasks;
    struct epoll_event events[LOOP_MAX_EVENTS];
    struct loop_host host = {.fd = -1};
    loop_of_this_thread = l;
    l->woken = true;
    for (;;) {
        if (l->woken) {
            l->woken = false;
            pthread_mutex_lock(&l->lock);
            bool stopped = l->stopping;
            host = l->host;
            pthread_mutex_unlock(&l->lock);
            if (stopped) {
                if (t->on_stop)
                    t->on_stop(t->ctx);
                return NULL;
            }
            if (t->on_wake)
                t->on_wake(t->ctx);
        }
        if (t->on_round)
            t->on_round(t->ctx, (uint64_t)xg_monotonic_ns());
        /* Jobs that ended above resumed client connections: the host answers them now (a
         * resumption alone would wake the host's descriptor one round later). */
        if (l->host_dirty)
            loop_run_host(l, &host);

        int n = epoll_wait(l->epoll_fd, events, LOOP_MAX_EVENTS, loop_wait_timeout_ms(l, &host));
        l->host_ready = n == 0; /* a timeout: the host may have its own to run */
        for (int i = 0; i < n; i++) {
            struct loop_watch *w = events[i].data.ptr;
            w->on_event(w, events[i].events);
        }
        if (t->after_events)
            t->after_events(t->ctx);
        if (l->host_ready || l->host_dirty)
            loop_run_host(l, &host);
    }
}

struct loop *loop_new(const struct loop_tasks *tasks, char *err, size_t errlen)
{
    struct loop *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    l->tasks = *tasks;
    l->host.fd = -1;
    l->wake_watch.on_event = loop_on_wake_event;
    l->host_watch.on_event = loop_on_host_event;
    pthread_mutex_init(&l->lock, NULL);
    l->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    l->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->epoll_fd < 0 || l->wake_fd < 0 ||
        !loop_watch_add(l, l->wake_fd, EPOLLIN, &l->wake_watch)) {
        snprintf(err, errlen, "cannot set up the loop's epoll set: %s", strerror(errno));
        loop_free(l);
        return NULL;
    }
    return l;
}

bool loop_spawn(struct loop *l)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&l->thread, NULL, loop_thread, l);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    l->thread_running = rc == 0;
    return l->thread_running;
}

void loop_stop(struct loop *l)
{
    if (!l->thread_running)
        return;
    assert(!pthread_equal(pthread_self(), l->thread) && "loop_stop from the loop's own thread");
    pthread_mutex_lock(&l->lock);
    l->stopping = true;
    loop_wake(l); /* under the lock: the loop cannot be torn down in between */
    pthread_mutex_unlock(&l->lock);
    pthread_join(l->thread, NULL);
    l->thread_running = false;
}

void loop_free(struct loop *l)
{
    if (!l)
        return;
    loop_stop(l);
    if (l->wake_fd >= 0)
        close(l->wake_fd);
    if (l->epoll_fd >= 0)
        close(l->epoll_fd);
    pthread_mutex_destroy(&l->lock);
    free(l);
}
