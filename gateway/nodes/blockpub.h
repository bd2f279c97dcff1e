/* blockpub — what a node's ZMQ publications say, and which node publishes where.
 *
 * monerod started with --zmq-pub tcp://IP:PORT publishes, to subscribers of a topic, one
 * single-frame message per event: the topic, a ':' and a JSON document. The gateway
 * subscribes to json-minimal-chain_main, sent whenever the node's main chain grows or
 * changes:
 *
 *   json-minimal-chain_main:{"first_height":N,"first_prev_id":"<hex>","ids":["<hex>",…]}
 *
 * (the blocks first_height … first_height + len(ids) − 1, oldest first). A publication is
 * only a hint that the node has something new: the prober re-probes the node at once and
 * believes its answers, never the message (prober_publication).
 *
 * Which node publishes where is the [nodes] zmq setting: `name=tcp://host:port` pairs, by
 * the node's name in the nodes table, separated by commas (blanks around them ignored).
 *
 * Pure: no I/O and no allocation that outlives a call; table-tested in
 * tests/unit/gateway/nodes/test_blockpub.c and fuzzed by tests/fuzz/fuzz_blockpub.c. */
#ifndef BLOCKPUB_H
#define BLOCKPUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BLOCKPUB_TOPIC_CHAIN_MAIN "json-minimal-chain_main"
#define BLOCKPUB_HASH_LEN         64
/* Longest address taken from the setting (tcp://[v6 address]:port fits). */
#define BLOCKPUB_ADDR_MAX 128

enum blockpub_kind {
    BLOCKPUB_CHAIN_MAIN, /* a well-formed json-minimal-chain_main */
    BLOCKPUB_OTHER,      /* another topic: nothing to do */
    BLOCKPUB_MALFORMED,  /* our topic, but not the document monerod sends */
};

struct blockpub_chain {
    int64_t first_height; /* height of the first block named */
    size_t blocks;        /* blocks named (at least 1) */
    int64_t length;       /* the chain length it announces: first_height + blocks */
    char top_hash[BLOCKPUB_HASH_LEN + 1];
};

/* Parses one message of len bytes (not NUL-terminated). *out is filled only for
 * BLOCKPUB_CHAIN_MAIN. */
enum blockpub_kind blockpub_parse(const char *msg, size_t len, struct blockpub_chain *out);

/* Whether addr is an address monerod's --zmq-pub takes and we connect to: tcp://host:port
 * with a port 1–65535, or ipc://path. */
bool blockpub_addr_valid(const char *addr);

/* Checks the whole [nodes] zmq setting: false with the reason in err when a pair is not
 * `name=address`, a name repeats or an address is not valid. "" is valid (ZMQ off). */
__attribute__((warn_unused_result)) bool blockpub_map_check(const char *map, char *err,
                                                            size_t errlen);

/* The address the setting gives for node `name` into out (BLOCKPUB_ADDR_MAX + 1 bytes):
 * true when there is one. The setting must have passed blockpub_map_check. */
bool blockpub_map_find(const char *map, const char *name, char out[BLOCKPUB_ADDR_MAX + 1]);

#endif
