/* nodeconn — the upstream engine's own HTTP/1.1 client for nodes reached over plain HTTP
 * at a numeric address (the usual deployment: monerod beside the gateway or on a private
 * network). Each node gets a keep-alive pool capped at a number of connections; requests
 * above the cap wait in a FIFO for the next free connection.
 *
 * Why not curl for these. A proxied call is a few hundred bytes each way over a kept-alive
 * connection; curl spends more CPU setting up and tearing down a transfer (URL parsing,
 * option handling, header formatting and scanning, a liveness poll on every reuse) than
 * the proxying itself costs. Here a request is one send() of bytes built once, an answer
 * is read into the caller's buffer by a small parser (http1.h), and connections stay
 * registered in the engine's loop for their whole life. curl stays the client for
 * https:// nodes and host names (TLS and asynchronous name resolution).
 *
 * Threads. Everything here runs on the thread of the loop the client watches its sockets
 * in (loop.h); nothing is locked. Each connection is a struct loop_watch of its own.
 *
 * A request whose kept-alive connection turns out closed by the node before one byte of
 * the answer arrived is sent once more on a new connection (the node closed an idle
 * connection as the request crossed it); the node's other idle connections are closed
 * with it, as likely gone too. Any other failure ends the exchange.
 *
 * Caps: at most max_per_node connections to one node and max_total to all; under the total
 * cap an idle connection to another node is closed to make room for a waiting request. */
#ifndef NODECONN_H
#define NODECONN_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/loop.h"
#include "nodes/http1.h"

#define NC_AUTHORITY_MAX 64 /* "[v6 address]:port" */

/* Where a URL points, when nodeconn can serve it. */
struct nc_target {
    char authority[NC_AUTHORITY_MAX]; /* host:port as spelled in the URL (the Host header) */
    struct sockaddr_storage addr;
    socklen_t addr_len;
    const char *path; /* into the URL: "/json_rpc", or "/" when the URL has none */
};

enum nc_end {
    NC_ANSWERED,       /* a complete answer arrived (any status): see parser */
    NC_CONNECT_FAILED, /* refused, unreachable, or the connect timeout passed */
    NC_BROKEN,         /* reset or closed mid-answer, or a malformed answer */
};

struct nc_client;
struct nc_conn;
struct nc_node;

/* One request and its answer, embedded in the caller's own record. */
struct nc_exchange {
    /* Set by the caller before nc_start; request stays valid until on_end. */
    const char *request; /* head and body, ready to send */
    size_t request_len;
    h1_body_fn on_body; /* body bytes; returning false ends the exchange NC_BROKEN */
    /* Called once, on the engine thread, after the exchange is detached: the callback may
     * start new exchanges. error explains any end but NC_ANSWERED. */
    void (*on_end)(struct nc_exchange *x, enum nc_end end, const char *error);
    void *ctx; /* passed to on_body */
    /* The node's connection cap (0: the client's max_per_node; the lower applies). The
     * latest exchange started for a node sets it for that node. */
    unsigned max_conns;

    /* Owned by nodeconn between nc_start and on_end (or nc_abandon). */
    struct h1_parser parser;
    struct nc_node *node;
    struct nc_conn *conn; /* NULL while waiting for one */
    struct nc_exchange *wait_next, *wait_prev;
    size_t sent;
    bool resent; /* already sent once more after a closed keep-alive connection */
};

/* Fills target when url is http://<IPv4 or [IPv6]>[:port][/path] with no user info;
 * returns false for anything else (https, host names), which curl serves. */
bool nc_target_of(const char *url, struct nc_target *target);

/* A client watching its sockets in loop l (the caller's, outliving the client). NULL when
 * out of memory. */
struct nc_client *nc_client_new(struct loop *l, unsigned max_per_node, unsigned max_total,
                                long connect_timeout_ms);

/* Closes every connection. No exchange may be in progress (abandon them first). */
void nc_client_free(struct nc_client *c);

/* Starts x toward target: on an idle connection of the node, a new one under the caps, or
 * queued for the next free one. on_end may run before this returns (e.g. a refused
 * connect). */
void nc_start(struct nc_client *c, struct nc_exchange *x, const struct nc_target *target);

/* Gives up on x without calling on_end (its deadline passed, or the engine stops): out of
 * the queue, or its connection closed when the answer is still on its way. */
void nc_abandon(struct nc_client *c, struct nc_exchange *x);

/* Frees the connections closed since the last call. The engine calls it after each batch
 * of the loop's events (an event for a closed connection is then ignored, not read from
 * freed memory). */
void nc_release_closed(struct nc_client *c);

/* Ends the connects that passed the connect timeout; now is CLOCK_MONOTONIC in ns.
 * Returns the earliest connect deadline still pending, or UINT64_MAX. */
uint64_t nc_expire_connects(struct nc_client *c, uint64_t now);

/* Connections open (connecting, busy or idle) to all nodes. */
unsigned nc_open_connections(const struct nc_client *c);

#endif
