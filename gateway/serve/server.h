/* server — the tenant-facing HTTP(S) listener: receives a request, authenticates it,
 * classifies it with the method table, and either answers it at once (errors, denials)
 * or hands it to proxy and answers when proxy resumes it.
 *
 * Threading (why this model): an event loop carries client connections and node
 * connections together, on one thread and one epoll set (loop.h), the loop of one
 * upstream engine. Plain HTTP is
 * served by the gateway's own front end (front.h), whose client sockets sit in that epoll
 * set beside the node sockets; HTTPS (and plain HTTP with [server] front_end =
 * libmicrohttpd) by libmicrohttpd in external-loop mode (mhd_front.h), its epoll
 * descriptor in the set (loop_attach_host), a waiting request suspending its
 * connection. Both call the same request path (front.h's front_app, which says what the
 * front end does next: answer queued, done for now, or close); below the loop, server
 * does not know which front end holds a request. A request that needs a node becomes an upstream
 * job; its answer resumes the request on the same thread. No thread waits on a node and no request
 * crosses threads, so thousands of concurrent clients cost sockets and a little state
 * each, a proxied request costs no thread hand-off (measured: three hand-offs added
 * ~100 µs per request on two busy cores), and the node side stays within a fixed
 * connection pool per node (monerod resets connections above its per-IP cap). [server]
 * loops such loops share the port through SO_REUSEPORT; more replicas behind a load
 * balancer also keep a fault in one process from taking the others down. */
#ifndef SERVER_H
#define SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/gw_config.h"
#include "serve/request.h"
#include "http/tls_cert.h"
#include "nodes/upstream.h"

#define GW_SERVER_MAX_LOOPS       16
#define GW_SERVER_MAX_CONNECTIONS 16384               /* client connections per loop */
#define GW_SERVER_MAX_HEAD        GW_REQUEST_MAX_HEAD /* request line and headers (431) */

struct gw_context;
struct gw_server;

/* The engine options for one loop: the per-node connection cap is divided among the
 * [server] loops so that together they stay within it. Main uses it for loop 0's engine
 * (ctx->up, which the prober shares); the server starts the others. */
struct up_engine_options gw_server_engine_options(const struct gw_config *cfg);

struct gw_server *gw_server_start(struct gw_context *ctx, char *err, size_t errlen);
uint16_t gw_server_port(const struct gw_server *srv);

/* The HTTPS listener's certificate (tls_cert_info for the metric); NULL when the gateway
 * serves plain HTTP. */
const struct tls_cert *gw_server_tls(const struct gw_server *srv);

/* SIGHUP: reads [server] tls_cert and tls_key again and serves them to new handshakes;
 * open connections are untouched. False with the reason in err (the certificate in service
 * stays). Only when gw_server_tls is not NULL. */
__attribute__((warn_unused_result)) bool gw_server_reload_tls(struct gw_server *srv, char *err,
                                                              size_t errlen);
/* Stops accepting new connections; in-flight requests go on. */
void gw_server_quiesce(struct gw_server *srv);
/* Number of requests not yet completed, over all loops. */
long gw_server_inflight(const struct gw_server *srv);
/* Stops the loops' own engines, then every daemon. Stop ctx->up (loop 0's engine)
 * before calling this. */
void gw_server_stop(struct gw_server *srv);

#endif
