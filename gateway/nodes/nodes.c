/* nodes — the node set snapshot. */
#define _LGPL_SOURCE
#include <urcu-bp.h>

#include "nodes/nodes.h"

#include <stdlib.h>
#include <string.h>

struct node_set_box {
    struct rcu_head rcu;
    struct node_set set;
};

struct node_registry {
    struct node_set_box *current; /* RCU-protected */
};

static struct node_set_box *box_new(const struct node_info *nodes, size_t count)
{
    struct node_set_box *box = malloc(sizeof *box + count * sizeof(struct node_info));
    if (!box)
        return NULL;
    box->set.count = count;
    if (count)
        memcpy(box->set.nodes, nodes, count * sizeof *nodes);
    return box;
}

struct node_registry *nodes_new(void)
{
    struct node_registry *reg = calloc(1, sizeof *reg);
    if (!reg)
        return NULL;
    reg->current = box_new(NULL, 0);
    if (!reg->current) {
        free(reg);
        return NULL;
    }
    return reg;
}

void nodes_free(struct node_registry *reg)
{
    if (!reg)
        return;
    rcu_barrier();
    free(reg->current);
    free(reg);
}

static void free_box_rcu(struct rcu_head *head)
{
    free(caa_container_of(head, struct node_set_box, rcu));
}

bool nodes_publish(struct node_registry *reg, const struct node_info *nodes, size_t count)
{
    struct node_set_box *fresh = box_new(nodes, count);
    if (!fresh)
        return false;
#ifndef __clang_analyzer__
    struct node_set_box *old = rcu_xchg_pointer(&reg->current, fresh);
#else
    /* The analyzer loses fresh inside uatomic_xchg's asm and reports it leaked; for the
     * analysis the exchange is spelled out. */
    struct node_set_box *old = reg->current;
    reg->current = fresh;
#endif
    call_rcu(&old->rcu, free_box_rcu);
    return true;
}

void nodes_read_lock(void)
{
    rcu_read_lock();
}

void nodes_read_unlock(void)
{
    rcu_read_unlock();
}

const struct node_set *nodes_current(struct node_registry *reg)
{
    return &rcu_dereference(reg->current)->set;
}

bool nodes_priority_parse(const char *text, enum node_priority *out)
{
    static const char *const names[] = {"primary", "standby", "public"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(text, names[i]) == 0) {
            *out = (enum node_priority)i;
            return true;
        }
    }
    return false;
}

uint64_t nodes_bit(int32_t id)
{
    return UINT64_C(1) << ((uint32_t)id % 64u);
}

bool nodes_own(const struct node_info *node)
{
    return node->priority != NODE_PUBLIC;
}

void nodes_apply_class(struct node_info *node, int broadcast, unsigned max_connections)
{
    bool own = nodes_own(node);
    node->broadcast = broadcast < 0 ? own : broadcast > 0;
    node->max_connections = max_connections ? max_connections
                            : own           ? 0
                                            : NODES_PUBLIC_MAX_CONNECTIONS;
}
