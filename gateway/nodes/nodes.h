/* nodes — the set of monerod nodes the gateway may forward to, as an immutable snapshot
 * published with RCU: pgsync replaces it whole when the nodes table changes; readers
 * take it inside nodes_read_lock()/unlock() and copy what they keep. */
#ifndef NODES_H
#define NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum node_priority { NODE_PRIMARY, NODE_STANDBY, NODE_PUBLIC };

struct node_info {
    int32_t id;
    char name[65];
    char url[256]; /* base URL without a trailing slash */
    enum node_priority priority;
    bool pruned;
    int64_t revision; /* changes with every UPDATE of the row: resets its health state */
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

#endif
