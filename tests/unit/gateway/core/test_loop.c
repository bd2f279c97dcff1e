/* Tests of gateway/core/loop: watches, the host and the tasks' hooks on a real loop
 * thread, with eventfds for descriptors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core/loop.h"
#include "xg_clock.h"

#define WAIT_LIMIT_US 5000000

struct probe {
    struct loop *loop;
    struct loop_watch watch; /* on an eventfd */
    int fd;
    atomic_int events, on_loop_thread, wakes, rounds, batches, stops, host_runs;
    atomic_int stop_was_last; /* no hook ran after on_stop */
    atomic_uint last_events;
    bool host_due_on_event; /* the watch asks for a host run */
    long host_timeout_ms;   /* -1: none */
    int64_t due_every_us;   /* 0: the tasks set no due time */
    int64_t next_due_us;
};

#define PROBE_OF(w) ((struct probe *)((char *)(w)-offsetof(struct probe, watch)))

static void note_hook(struct probe *p)
{
    if (atomic_load(&p->stops) > 0)
        atomic_store(&p->stop_was_last, 0);
}

static void on_event(struct loop_watch *w, uint32_t events)
{
    struct probe *p = PROBE_OF(w);
    uint64_t count;
    ssize_t r = read(p->fd, &count, sizeof count);
    (void)r;
    atomic_store(&p->last_events, events);
    if (loop_on_this_thread(p->loop))
        atomic_fetch_add(&p->on_loop_thread, 1);
    if (p->host_due_on_event)
        loop_host_due(p->loop);
    atomic_fetch_add(&p->events, 1);
}

static void on_wake(void *ctx)
{
    note_hook(ctx);
    atomic_fetch_add(&((struct probe *)ctx)->wakes, 1);
}

static void on_round(void *ctx, uint64_t now_ns)
{
    struct probe *p = ctx;
    (void)now_ns;
    note_hook(p);
    atomic_fetch_add(&p->rounds, 1);
}

static uint64_t due_ns(void *ctx)
{
    struct probe *p = ctx;
    if (p->due_every_us == 0)
        return UINT64_MAX;
    int64_t now = xg_monotonic_us();
    if (now >= p->next_due_us)
        p->next_due_us = now + p->due_every_us;
    return (uint64_t)p->next_due_us * 1000;
}

static void after_events(void *ctx)
{
    note_hook(ctx);
    atomic_fetch_add(&((struct probe *)ctx)->batches, 1);
}

static void on_stop(void *ctx)
{
    struct probe *p = ctx;
    atomic_store(&p->stop_was_last, 1);
    atomic_fetch_add(&p->stops, 1);
}

static void host_run(void *ctx)
{
    struct probe *p = ctx;
    note_hook(p);
    atomic_fetch_add(&p->host_runs, 1);
}

static long host_timeout(void *ctx)
{
    return ((struct probe *)ctx)->host_timeout_ms;
}

static void probe_start(struct probe *p)
{
    char err[256] = "";
    struct loop_tasks tasks = {on_wake, on_round, due_ns, after_events, on_stop, p};
    p->loop = loop_new(&tasks, err, sizeof err);
    if (!p->loop)
        fail_msg("loop_new: %s", err);
    p->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    assert_true(p->fd >= 0);
    p->watch.on_event = on_event;
    assert_true(loop_watch_add(p->loop, p->fd, EPOLLIN, &p->watch));
    assert_true(loop_spawn(p->loop));
}

static void probe_stop(struct probe *p)
{
    loop_stop(p->loop);
    loop_stop(p->loop); /* idempotent */
    loop_free(p->loop);
    close(p->fd);
}

static void poke(struct probe *p)
{
    uint64_t one = 1;
    assert_int_equal(write(p->fd, &one, sizeof one), (ssize_t)sizeof one);
}

/* Waits until *counter reaches at least n; false after WAIT_LIMIT_US. */
static bool wait_for(atomic_int *counter, int n)
{
    int64_t until = xg_monotonic_us() + WAIT_LIMIT_US;
    while (atomic_load(counter) < n && xg_monotonic_us() < until)
        usleep(1000);
    return atomic_load(counter) >= n;
}

static void test_watch_runs_on_the_loop_thread(void **state)
{
    (void)state;
    static struct probe p = {.host_timeout_ms = -1};
    probe_start(&p);
    assert_false(loop_on_this_thread(p.loop));
    poke(&p);
    assert_true(wait_for(&p.events, 1));
    assert_true(atomic_load(&p.last_events) & EPOLLIN);
    assert_true(wait_for(&p.batches, 1)); /* after_events follows the batch */
    poke(&p);
    assert_true(wait_for(&p.events, 2));
    assert_int_equal(atomic_load(&p.on_loop_thread), 2);

    /* No events watched for now: a poke goes unnoticed until they are asked for again. */
    assert_true(loop_watch_change(p.loop, p.fd, 0, &p.watch));
    poke(&p);
    usleep(50000);
    assert_int_equal(atomic_load(&p.events), 2);
    assert_true(loop_watch_change(p.loop, p.fd, EPOLLIN, &p.watch));
    assert_true(wait_for(&p.events, 3));

    /* Out of the set: nothing more. */
    loop_watch_remove(p.loop, p.fd);
    poke(&p);
    usleep(50000);
    assert_int_equal(atomic_load(&p.events), 3);
    probe_stop(&p);
}

static void test_wake_and_stop_hooks(void **state)
{
    (void)state;
    static struct probe p = {.host_timeout_ms = -1};
    probe_start(&p);
    assert_true(wait_for(&p.wakes, 1)); /* once as the loop starts */
    assert_true(wait_for(&p.rounds, 1));
    int wakes = atomic_load(&p.wakes);
    loop_wake(p.loop);
    assert_true(wait_for(&p.wakes, wakes + 1));
    probe_stop(&p);
    assert_int_equal(atomic_load(&p.stops), 1);
    assert_int_equal(atomic_load(&p.stop_was_last), 1);
}

static void test_host_runs_when_due_and_on_its_timeout(void **state)
{
    (void)state;
    static struct probe p = {.host_timeout_ms = -1, .host_due_on_event = true};
    probe_start(&p);
    struct loop_host host = {.fd = -1, .run = host_run, .timeout_ms = host_timeout, .ctx = &p};
    loop_attach_host(p.loop, &host);
    /* Quiet: the loop waits its full second between rounds, the host runs on timeouts. */
    usleep(100000);
    int runs = atomic_load(&p.host_runs);
    assert_true(runs <= 2);
    /* A watch that makes the host due gets it run after its batch. */
    poke(&p);
    assert_true(wait_for(&p.events, 1));
    assert_true(wait_for(&p.host_runs, runs + 1));
    probe_stop(&p);

    /* A host timeout of 10 ms bounds every wait: the host runs again and again. */
    static struct probe q = {.host_timeout_ms = 10};
    probe_start(&q);
    struct loop_host timed = {.fd = -1, .run = host_run, .timeout_ms = host_timeout, .ctx = &q};
    loop_attach_host(q.loop, &timed);
    assert_true(wait_for(&q.host_runs, 10));
    probe_stop(&q);
}

static void test_host_descriptor_is_watched(void **state)
{
    (void)state;
    static struct probe p = {.host_timeout_ms = -1};
    probe_start(&p);
    int host_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    assert_true(host_fd >= 0);
    struct loop_host host = {.fd = host_fd, .run = host_run, .timeout_ms = host_timeout, .ctx = &p};
    loop_attach_host(p.loop, &host);
    usleep(50000);
    int runs = atomic_load(&p.host_runs);
    uint64_t one = 1;
    assert_int_equal(write(host_fd, &one, sizeof one), (ssize_t)sizeof one);
    /* The host's descriptor stays readable (nobody reads it): the host runs at once. */
    assert_true(wait_for(&p.host_runs, runs + 5));
    probe_stop(&p);
    close(host_fd);
}

static void test_tasks_due_time_bounds_the_wait(void **state)
{
    (void)state;
    static struct probe p = {.host_timeout_ms = -1, .due_every_us = 10000};
    probe_start(&p);
    /* Without a due time the loop would wait a second per round. */
    int64_t start = xg_monotonic_us();
    assert_true(wait_for(&p.rounds, 10));
    assert_true(xg_monotonic_us() - start < 1000000);
    probe_stop(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_watch_runs_on_the_loop_thread),
        cmocka_unit_test(test_wake_and_stop_hooks),
        cmocka_unit_test(test_host_runs_when_due_and_on_its_timeout),
        cmocka_unit_test(test_host_descriptor_is_watched),
        cmocka_unit_test(test_tasks_due_time_bounds_the_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
