/* client_limit — per-client-address token buckets for invoice creation, in memory.
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

struct client_limit_table *client_limit_table_new(size_t capacity, int64_t per_hour, int64_t burst);
void client_limit_table_free(struct client_limit_table *t);

/* Takes a token for `key` (a client address). now_ms: a monotonic clock. */
__attribute__((warn_unused_result)) bool client_limit_table_take(struct client_limit_table *t,
                                                                 const char *key, int64_t now_ms,
                                                                 int64_t *retry_after_s);

#endif
