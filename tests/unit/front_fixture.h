/* front_fixture — the gateway's own front end on an event loop of its own, on a loopback
 * port the kernel picks, as the front end's tests run it: each test brings its handler
 * (what the request path would do) and the options it varies. Test helpers, not product
 * code. Include it after cmocka.h and after the front end's and the loop's own headers
 * (http/front.h, core/loop.h), which it uses and does not name itself. */
#ifndef FRONT_FIXTURE_H
#define FRONT_FIXTURE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>

struct front_fixture {
    struct loop *loop;
    struct front *front;
};

/* The options every front end test starts from: loopback, 16 KiB heads, 1 MiB bodies,
 * 10 s idle, 64 connections, the default lingering budget. */
static inline struct front_options front_fixture_options(void)
{
    struct front_options o = {
        .max_head = 16384,
        .max_body = 1 << 20,
        .idle_timeout_ms = 10000,
        .max_connections = 64,
        .linger = LINGER_BUDGET_DEFAULT,
        .max_lingering = LINGER_MAX_SOCKETS,
    };
    assert_true(xg_bind_addr_parse("127.0.0.1", 0, &o.addr) > 0);
    return o;
}

/* Starts a loop (with tasks, or none) and the front end on it with handler; returns the
 * port it listens on. front_fixture_stop frees both. */
static inline uint16_t front_fixture_start(struct front_fixture *f, const struct front_options *opt,
                                           const struct front_handler *handler,
                                           const struct loop_tasks *tasks)
{
    char err[256];
    struct loop_tasks none = {0};
    f->loop = loop_new(tasks ? tasks : &none, err, sizeof err);
    assert_non_null(f->loop);
    assert_true(loop_spawn(f->loop));
    f->front = front_start(opt, handler, f->loop, err, sizeof err);
    if (!f->front)
        fail_msg("front_start: %s", err);
    struct loop_host host = {
        .fd = -1, .run = front_run, .timeout_ms = front_timeout_ms, .ctx = f->front};
    loop_attach_host(f->loop, &host);
    return front_port(f->front);
}

static inline void front_fixture_stop(struct front_fixture *f)
{
    loop_stop(f->loop);
    front_stop(f->front);
    loop_free(f->loop);
}

/* A handler's on_resume for tests whose requests are never suspended. */
static inline void front_fixture_no_resume(void *cls, struct front_conn *c, void *req)
{
    (void)cls;
    (void)c;
    (void)req;
}

#endif
