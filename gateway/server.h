/* server — the tenant-facing HTTP(S) listener: receives a request, authenticates it,
 * classifies it with the method table, and either answers it at once (errors, denials)
 * or suspends the connection and hands it to proxy.
 *
 * Threading (why this model): libmicrohttpd runs `threads` event loops (epoll) that
 * accept and read every client connection; a request that needs a node suspends its
 * connection (MHD_suspend_connection) and the single curl multi loop in upstream carries
 * it. No thread waits on a node, so thousands of concurrent clients cost sockets and a
 * little state each, and the node side stays within a fixed connection pool per node
 * (monerod resets connections above its per-IP cap). */
#ifndef SERVER_H
#define SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gw_context;
struct gw_server;

struct gw_server *gw_server_start(struct gw_context *ctx, char *err, size_t errlen);
uint16_t gw_server_port(const struct gw_server *srv);
/* Stops accepting new connections; in-flight requests go on. */
void gw_server_quiesce(struct gw_server *srv);
/* Number of requests not yet completed. */
long gw_server_inflight(const struct gw_server *srv);
void gw_server_stop(struct gw_server *srv);

#endif
