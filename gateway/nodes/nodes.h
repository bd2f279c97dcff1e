/* nodes — the set of monerod nodes the gateway may forward to, as an immutable snapshot
 * published with RCU: pgsync replaces it whole when the nodes table changes; readers
 * take it inside nodes_read_lock()/unlock() and copy what they keep.
 *
 * Node classes. Primary and standby nodes are the operator's own; a public node is a third
 * party's, kept at arm's length: it serves a read only while no own node can (rank.h), it
 * votes in no quorum (prober.h), an answer it served is never cached (proxy.h), and it is
 * given a transaction to relay only when its row says broadcast = true. Its connections
 * are capped at NODES_PUBLIC_MAX_CONNECTIONS unless its row says otherwise. */
#ifndef NODES_H
#define NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum node_priority { NODE_PRIMARY, NODE_STANDBY, NODE_PUBLIC };

/* monerod 0.18.4 and later accepts this many RPC connections per client IP when it runs as
 * a public node (--public-node, restricted RPC) and resets the ones above it. */
#define NODES_PUBLIC_MAX_CONNECTIONS 3U

struct node_info {
    int32_t id;
    char name[65];
    char url[256]; /* base URL without a trailing slash */
    enum node_priority priority;
    bool pruned;
    int64_t revision;         /* changes with every UPDATE of the row: resets its health state */
    bool broadcast;           /* send_raw_transaction is sent to it (nodes_apply_class) */
    unsigned max_connections; /* at most this many at once; 0: the engine's own cap */
};

struct node_set {
    size_t count;
    struct node_info nodes[]; /* in the order they are tried */
};

struct node_registry;

struct node_registry *nodes_new(void);
void nodes_free(struct node_registry *reg);

/* Writer: publishes a copy of the given nodes (already ordered). False on OOM. */
__attribute__((warn_unused_result)) bool nodes_publish(struct node_registry *reg,
                                                       const struct node_info *nodes, size_t count);

/* Reader: the current snapshot (never NULL; may be empty) until nodes_read_unlock. */
void nodes_read_lock(void);
void nodes_read_unlock(void);
const struct node_set *nodes_current(struct node_registry *reg);

/* Pure: "primary" → NODE_PRIMARY …; false for anything else. */
__attribute__((warn_unused_result)) bool nodes_priority_parse(const char *text,
                                                              enum node_priority *out);

/* Pure: the node is one of the operator's own (primary or standby), not a third party's. */
bool nodes_own(const struct node_info *node);

/* Pure: node id's bit in a set of nodes held as 64 bits (bit id mod 64: two nodes whose ids
 * are a multiple of 64 apart share one). */
uint64_t nodes_bit(int32_t id);

/* Pure: fills node->broadcast and node->max_connections from its row's columns, where
 * broadcast < 0 and max_connections == 0 mean NULL (by class): own nodes take broadcasts
 * and the engine's cap (0), public nodes take no broadcast and NODES_PUBLIC_MAX_CONNECTIONS.
 * node->priority must be set. */
void nodes_apply_class(struct node_info *node, int broadcast, unsigned max_connections);

#endif
