/* blocksub — subscribes to every node's ZMQ publications (libzmq) and tells the prober
 * when a node announces a new chain tip.
 *
 * One SUB socket per node that the [nodes] zmq setting names (blockpub.h), subscribed to
 * json-minimal-chain_main; the set follows the node registry (a node added, removed or
 * renamed through the nodes table is connected or dropped within SUB_RESYNC_MS). libzmq
 * reconnects by itself when a node restarts; a node that publishes nothing (ZMQ off on its
 * side, a wrong address, a firewall) is simply probed at the probe interval as before.
 *
 * A small thread of its own, blocked in zmq_poll over the sockets, rather than the sockets'
 * ZMQ_FD in an event loop: the prober it feeds is a thread with condition variables, not an
 * event loop, and the client loops must not carry node work; ZMQ_FD is edge-triggered and
 * must be drained through ZMQ_EVENTS after every read, which a poll thread of ~100 lines
 * does not need. The thread only parses and hands over: on_tip runs on it and must return
 * quickly (prober_publication takes the prober's lock for microseconds).
 *
 * Counters (publications, malformed ones) are read with blocksub_stats from any thread. */
#ifndef BLOCKSUB_H
#define BLOCKSUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodes/blockpub.h"
#include "nodes/nodes.h"

struct blocksub;

typedef void (*blocksub_on_tip)(void *cls, int32_t node_id, const struct blockpub_chain *chain);

/* Starts the thread over the registry (which must outlive it), with `map` the [nodes] zmq
 * setting (checked: blockpub_map_check; copied). NULL with a message in err on failure. */
struct blocksub *blocksub_start(const char *map, struct node_registry *reg, blocksub_on_tip on_tip,
                                void *cls, char *err, size_t errlen);

/* Stops and joins the thread, closes the sockets and frees s (NULL: nothing). */
void blocksub_stop(struct blocksub *s);

struct blocksub_stats {
    uint64_t publications; /* well-formed chain_main messages */
    uint64_t malformed;    /* chain_main messages that did not parse (ignored) */
    uint64_t subscribed;   /* nodes with a socket now */
};
void blocksub_stats(struct blocksub *s, struct blocksub_stats *out);

#endif
