/* blocksub — the ZMQ subscriber thread (libzmq) behind prober_publication. */
#define _LGPL_SOURCE
#include "nodes/blocksub.h"

#include "xg_log.h"
#include "xg_clock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-bp.h>
#include <zmq.h>

/* How often the thread looks at the registry and at its stop flag. */
#define SUB_RESYNC_MS 250
/* Read buffer: a json-minimal-chain_main names ~66 bytes per block, so this holds a reorg
 * of some 15,000 blocks; a longer one is cut, fails to parse and counts as malformed. */
#define SUB_MAX_MESSAGE (1 << 20)
/* At most this many nodes get a socket (the prober ranks at most 64). */
#define SUB_MAX_NODES 64

struct sub_socket {
    int32_t node_id;
    char name[65];
    char addr[BLOCKPUB_ADDR_MAX + 1];
    void *sock;
    bool failed; /* zmq_connect refused the address: not tried again until it changes */
};

struct blocksub {
    char *map;
    struct node_registry *reg;
    blocksub_on_tip on_tip;
    void *cls;
    void *zctx;
    pthread_t thread;
    atomic_bool stop;
    struct sub_socket socks[SUB_MAX_NODES]; /* owned by the thread */
    size_t nsocks;
    char *buf;
    atomic_uint_fast64_t publications, malformed, subscribed;
};

static void close_socket(struct sub_socket *s)
{
    if (s->sock)
        zmq_close(s->sock);
    s->sock = NULL;
}

static bool open_socket(struct blocksub *b, struct sub_socket *s)
{
    s->sock = zmq_socket(b->zctx, ZMQ_SUB);
    if (!s->sock)
        return false;
    int linger = 0, hwm = 1000;
    /* Reconnects to a restarted node quickly, but never hammers a dead one. */
    int ivl = 100, ivl_max = 5000;
    (void)zmq_setsockopt(s->sock, ZMQ_LINGER, &linger, sizeof linger);
    (void)zmq_setsockopt(s->sock, ZMQ_RCVHWM, &hwm, sizeof hwm);
    (void)zmq_setsockopt(s->sock, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl);
    (void)zmq_setsockopt(s->sock, ZMQ_RECONNECT_IVL_MAX, &ivl_max, sizeof ivl_max);
    if (zmq_setsockopt(s->sock, ZMQ_SUBSCRIBE, BLOCKPUB_TOPIC_CHAIN_MAIN,
                       strlen(BLOCKPUB_TOPIC_CHAIN_MAIN)) != 0 ||
        zmq_connect(s->sock, s->addr) != 0) {
        xg_log(XG_LOG_WARN, "zmq_connect_failed", "node %s: %s: %s (probing only)", s->name,
               s->addr, zmq_strerror(zmq_errno()));
        close_socket(s);
        s->failed = true;
        return false;
    }
    xg_log(XG_LOG_INFO, "zmq_subscribed", "node %s: subscribed to %s at %s", s->name,
           BLOCKPUB_TOPIC_CHAIN_MAIN, s->addr);
    return true;
}

/* Brings the sockets in line with the registry: keeps a node's socket while its id, name
 * and address stay, opens one for a new node, closes the rest. */
static void resync(struct blocksub *b)
{
    struct sub_socket want[SUB_MAX_NODES];
    size_t nwant = 0;
    nodes_read_lock();
    const struct node_set *set = nodes_current(b->reg);
    for (size_t i = 0; i < set->count && nwant < SUB_MAX_NODES; i++) {
        struct sub_socket *w = &want[nwant];
        if (!blockpub_map_find(b->map, set->nodes[i].name, w->addr))
            continue;
        w->node_id = set->nodes[i].id;
        snprintf(w->name, sizeof w->name, "%s", set->nodes[i].name);
        w->sock = NULL;
        w->failed = false;
        nwant++;
    }
    nodes_read_unlock();
    for (size_t i = 0; i < nwant; i++)
        for (size_t j = 0; j < b->nsocks; j++) {
            struct sub_socket *have = &b->socks[j];
            if ((have->sock || have->failed) && have->node_id == want[i].node_id &&
                strcmp(have->name, want[i].name) == 0 && strcmp(have->addr, want[i].addr) == 0) {
                want[i].sock = have->sock;
                want[i].failed = have->failed;
                have->sock = NULL; /* taken over */
                have->failed = false;
            }
        }
    for (size_t j = 0; j < b->nsocks; j++)
        close_socket(&b->socks[j]);
    size_t subscribed = 0;
    for (size_t i = 0; i < nwant; i++) {
        if (!want[i].sock && !want[i].failed)
            (void)open_socket(b, &want[i]);
        subscribed += want[i].sock != NULL;
        b->socks[i] = want[i];
    }
    b->nsocks = nwant;
    atomic_store(&b->subscribed, subscribed);
}

/* Reads every message waiting on s (non-blocking) and hands the tips over. */
static void drain(struct blocksub *b, struct sub_socket *s)
{
    for (;;) {
        int len = zmq_recv(s->sock, b->buf, SUB_MAX_MESSAGE, ZMQ_DONTWAIT);
        if (len < 0)
            return; /* EAGAIN: nothing more; anything else shows at the next poll */
        struct blockpub_chain chain;
        size_t got = (size_t)len > SUB_MAX_MESSAGE ? SUB_MAX_MESSAGE : (size_t)len;
        switch (blockpub_parse(b->buf, got, &chain)) {
        case BLOCKPUB_CHAIN_MAIN:
            atomic_fetch_add(&b->publications, 1);
            b->on_tip(b->cls, s->node_id, &chain);
            break;
        case BLOCKPUB_MALFORMED:
            if (atomic_fetch_add(&b->malformed, 1) == 0)
                xg_log(XG_LOG_WARN, "zmq_malformed",
                       "node %s published a %s that does not parse (ignored; logged once)", s->name,
                       BLOCKPUB_TOPIC_CHAIN_MAIN);
            break;
        case BLOCKPUB_OTHER:
            break;
        }
    }
}

static void *sub_loop(void *arg)
{
    struct blocksub *b = arg;
    rcu_register_thread();
    int64_t next_resync = 0;
    while (!atomic_load(&b->stop)) {
        int64_t now = xg_monotonic_ms();
        if (now >= next_resync) {
            resync(b);
            next_resync = now + SUB_RESYNC_MS;
        }
        zmq_pollitem_t items[SUB_MAX_NODES];
        struct sub_socket *polled[SUB_MAX_NODES];
        int n = 0;
        for (size_t i = 0; i < b->nsocks; i++)
            if (b->socks[i].sock) {
                polled[n] = &b->socks[i];
                items[n++] = (zmq_pollitem_t){.socket = b->socks[i].sock, .events = ZMQ_POLLIN};
            }
        /* With no socket, zmq_poll sleeps the timeout. */
        int ready = zmq_poll(items, n, SUB_RESYNC_MS);
        for (int i = 0; ready > 0 && i < n; i++)
            if (items[i].revents & ZMQ_POLLIN)
                drain(b, polled[i]);
    }
    for (size_t i = 0; i < b->nsocks; i++)
        close_socket(&b->socks[i]);
    b->nsocks = 0;
    rcu_unregister_thread();
    return NULL;
}

struct blocksub *blocksub_start(const char *map, struct node_registry *reg, blocksub_on_tip on_tip,
                                void *cls, char *err, size_t errlen)
{
    struct blocksub *b = calloc(1, sizeof *b);
    if (!b || !(b->map = strdup(map)) || !(b->buf = malloc(SUB_MAX_MESSAGE))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    b->reg = reg;
    b->on_tip = on_tip;
    b->cls = cls;
    b->zctx = zmq_ctx_new();
    if (!b->zctx) {
        snprintf(err, errlen, "zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
        goto fail;
    }
    if (pthread_create(&b->thread, NULL, sub_loop, b) != 0) {
        snprintf(err, errlen, "cannot start the ZMQ subscriber thread");
        goto fail;
    }
    return b;
fail:
    if (b && b->zctx)
        zmq_ctx_term(b->zctx);
    if (b) {
        free(b->buf);
        free(b->map);
    }
    free(b);
    return NULL;
}

void blocksub_stop(struct blocksub *s)
{
    if (!s)
        return;
    atomic_store(&s->stop, true);
    pthread_join(s->thread, NULL);
    zmq_ctx_term(s->zctx);
    free(s->buf);
    free(s->map);
    free(s);
}

void blocksub_stats(struct blocksub *s, struct blocksub_stats *out)
{
    out->publications = atomic_load(&s->publications);
    out->malformed = atomic_load(&s->malformed);
    out->subscribed = atomic_load(&s->subscribed);
}
