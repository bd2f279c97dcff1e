/* client_limit — per-client token buckets for invoice creation, free grants, token
 * rotations and XMR402 challenges and proofs, in memory.
 *
 * A table given a prefix policy (client_prefix.h) counts an address twice, both or
 * neither: in its client key's bucket (its /32 or /64 by default) at the table's rate, and
 * in its network key's bucket (its /24 or /48) at network_factor times that rate, so that
 * the addresses of one rented range share one allowance. A table without a policy counts
 * keys as given (one bucket "all" for a global limit).
 *
 * In memory on purpose: the limit protects this instance's wallet and database from a
 * flood; each billing instance counts on its own (with N instances behind a balancer a
 * client gets at most N times the rate, which still bounds subaddresses and rows).
 * Counters are lost on restart, which an attacker cannot trigger.
 *
 * The table holds at most `capacity` addresses; when full, the entry refilled longest ago
 * is recycled (a full bucket and a forgotten one are the same thing). Thread-safe. */
#ifndef CLIENT_LIMIT_H
#define CLIENT_LIMIT_H

#include "api/client_prefix.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Pure: one bucket, as a GCRA "theoretical arrival time" (0 = a full bucket). */
struct client_limit_bucket {
    int64_t tat;
};

/* Refills at per_hour (>= 1) tokens an hour up to burst (>= 1), then takes one if there is
 * one. now_ms is a monotonic clock.
 * Returns true when allowed; otherwise *retry_after_s says when the next token comes. */
__attribute__((warn_unused_result)) bool client_limit_bucket_take(struct client_limit_bucket *b,
                                                                  int64_t now_ms, int64_t per_hour,
                                                                  int64_t burst,
                                                                  int64_t *retry_after_s);

struct client_limit_table;

/* networks NULL: keys are counted as given. Otherwise *networks is copied and each key is
 * an address counted by its client and network keys, the network's bucket refilling
 * network_factor (>= 1) times faster and holding network_factor times the burst. */
struct client_limit_table *client_limit_table_new(size_t capacity, int64_t per_hour, int64_t burst,
                                                  const struct client_prefix_policy *networks,
                                                  int64_t network_factor);
void client_limit_table_free(struct client_limit_table *t);

/* Takes a token for `key` (a client address, or any text for a table without networks):
 * from both its buckets or from neither. now_ms: a monotonic clock. */
__attribute__((warn_unused_result)) bool client_limit_table_take(struct client_limit_table *t,
                                                                 const char *key, int64_t now_ms,
                                                                 int64_t *retry_after_s);

#endif
