/* loop — one event loop of the gateway: a thread, an epoll set, and whatever runs on them.
 *
 * Everything a loop serves shares its one epoll_wait: the tenant-facing listener and its
 * client sockets (front.h, or libmicrohttpd's own epoll descriptor), the lingering closes
 * (linger.h), the burst limit's timer (hold.h), and the upstream engine's node sockets
 * and deadlines (upstream.h). A proxied request thus costs no thread hand-off at all.
 *
 * One watch type for every descriptor. Each descriptor in the set carries a struct
 * loop_watch, usually embedded in its owner's record, whose on_event runs on the loop's
 * thread with the epoll events; the loop's own descriptors (its wake-up eventfd, the
 * host's descriptor) are watches too. Nothing else is ever put in an event's data.
 *
 * Two more parties plug into a loop:
 * - the host (struct loop_host): the listener, run after every batch of events, on a
 *   timeout, and whenever a watch or a finished job says it is due (loop_host_due);
 * - the tasks (struct loop_tasks, given at loop_new): the upstream engine's intake,
 *   timers and deadlines, run once per round before the loop waits.
 *
 * Threads. loop_new, loop_spawn, loop_stop and loop_free belong to the owner's thread;
 * loop_wake and loop_attach_host may be called from any thread; everything else from the
 * loop's own thread (or before loop_spawn). */
#ifndef LOOP_H
#define LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loop;

/* A descriptor in a loop's epoll set. */
struct loop_watch {
    void (*on_event)(struct loop_watch *w, uint32_t events);
};

/* The tenant-facing listener run on the loop's thread. fd, when it has one
 * (libmicrohttpd's epoll descriptor; -1 for the front end, whose sockets are watched one
 * by one with loop_watch_add), is in the loop's epoll set. run() is called when that fd
 * is readable, when the wait timed out, after a batch of events and after loop_host_due;
 * it must not block. timeout_ms() bounds the wait (-1: no bound). */
struct loop_host {
    int fd;
    void (*run)(void *ctx);
    long (*timeout_ms)(void *ctx);
    void *ctx;
};

/* What runs on the loop besides its descriptors (the upstream engine). Every hook runs
 * on the loop's thread; any may be NULL. */
struct loop_tasks {
    /* loop_wake was called from another thread (and once when the loop starts). */
    void (*on_wake)(void *ctx);
    /* Once per round, before the wait; now is CLOCK_MONOTONIC in ns. */
    void (*on_round)(void *ctx, uint64_t now_ns);
    /* When the next round is due at the latest (CLOCK_MONOTONIC ns; UINT64_MAX: no
     * bound; now or earlier: do not wait). */
    uint64_t (*due_ns)(void *ctx);
    /* After each batch of epoll events: what the watches closed may be freed now. */
    void (*after_events)(void *ctx);
    /* The loop stops: the last call on its thread. */
    void (*on_stop)(void *ctx);
    void *ctx;
};

/* A loop with its epoll set, not running yet (tasks is copied). NULL with a message in
 * err on failure. */
struct loop *loop_new(const struct loop_tasks *tasks, char *err, size_t errlen);

/* Starts the loop's thread, which takes no signals (the daemon's main thread handles
 * them). */
__attribute__((warn_unused_result)) bool loop_spawn(struct loop *l);

/* Stops the thread after its current round (tasks.on_stop runs on it last) and joins it.
 * Idempotent; never from the loop's own thread. */
void loop_stop(struct loop *l);

/* Stops the loop if needed and frees it. */
void loop_free(struct loop *l);

/* Wakes the loop from another thread: tasks.on_wake runs on it soon. */
void loop_wake(struct loop *l);

/* Whether the caller runs on l's thread (a submission from there needs no wake-up). */
bool loop_on_this_thread(const struct loop *l);

/* Adds fd to the epoll set with events (EPOLLIN, EPOLLET, …); w must outlive the
 * registration. Close the fd to remove it (or loop_watch_remove); an event already fetched
 * in the same batch may still arrive, so free w only after the batch (tasks.after_events,
 * or the host's run). */
__attribute__((warn_unused_result)) bool loop_watch_add(struct loop *l, int fd, uint32_t events,
                                                        struct loop_watch *w);

/* Changes the events watched on fd (0: none for now), and the watch they go to. */
bool loop_watch_change(struct loop *l, int fd, uint32_t events, struct loop_watch *w);

/* Takes fd out of the epoll set while it stays open. */
void loop_watch_remove(struct loop *l, int fd);

/* From the loop's thread: run the host once more after this batch of events. */
void loop_host_due(struct loop *l);

/* Attaches the host (copied); from then on host->run is called on the loop's thread.
 * Stop the loop before tearing the host down. */
void loop_attach_host(struct loop *l, const struct loop_host *host);

#endif
