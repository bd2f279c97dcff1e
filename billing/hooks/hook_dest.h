/* hook_dest — a webhook destination (the host and port an invoice's webhook_url names) and
 * the two rules that keep one dead receiver from costing anyone else: fairness (at most
 * per_destination attempts to one destination at once, whatever the number of senders)
 * and a breaker per destination. Pure: no I/O, no allocation; hook_sender.c keeps the
 * state, one entry per destination, under its lock.
 *
 * The breaker: closed, every event is sent. After `threshold` attempts in a row that
 * failed as a dead or sick receiver fails (no answer in time, no connection, a 5xx:
 * hook_dest_breaker_counts) it opens for `cooldown`: its events are put back, not sent,
 * and count no attempt. Then it is half-open: one event is sent as a probe; its success
 * closes the breaker, its failure opens it again for twice the last cooldown (never over
 * cooldown_max). A success at any time closes it and forgets the failures.
 *
 * Kept per billing replica, not in PostgreSQL: the breaker bounds this replica's own
 * attempts, and sharing it would cost a write per attempt on one hot row per destination;
 * with R replicas a dead receiver costs at most R × threshold attempts before every one
 * has opened, and R probes per cooldown. Fairness is per replica likewise (R × per_destination
 * at once over the fleet). */
#ifndef HOOK_DEST_H
#define HOOK_DEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "host:port", lower case, IPv6 in brackets; at most this long with its NUL. */
#define HOOK_DEST_KEY_SIZE 272

/* The destination of url (http or https; the default port when none is written; user
 * information dropped) into out. False, out "", for a URL without a host (it is then
 * never sent: the sender's other checks refuse it). */
bool hook_dest_key(const char *url, char out[HOOK_DEST_KEY_SIZE]);

struct hook_breaker_policy {
    int threshold;                        /* failures in a row that open it; >= 1 */
    int64_t cooldown_ms, cooldown_max_ms; /* the first open, the longest */
};

enum hook_breaker_state { HOOK_BREAKER_CLOSED, HOOK_BREAKER_OPEN, HOOK_BREAKER_HALF_OPEN };
#define HOOK_BREAKER_NSTATES 3
extern const char *const hook_breaker_state_names[HOOK_BREAKER_NSTATES + 1]; /* NULL-ended */

struct hook_breaker {
    int failures;        /* in a row, while closed */
    int64_t cooldown_ms; /* the last open's (0: never opened since the last success) */
    int64_t open_until_ms;
    bool probing; /* half-open: the probe is under way */
};

/* Its state at now_ms. */
enum hook_breaker_state hook_breaker_state(const struct hook_breaker *b, int64_t now_ms);

/* True when an attempt's failure says the receiver is dead or sick (counts towards the
 * breaker): no complete answer in time, no connection, a TLS failure, a 5xx. A 4xx, an
 * SSRF refusal or a missing URL cost no wait and say nothing of its health. */
bool hook_dest_breaker_counts(bool timeout, bool connect, bool tls, long status);

/* What to do with one claimed event whose destination has `in_flight` attempts now. */
enum hook_dest_verdict {
    HOOK_DEST_SEND, /* send it (the caller then counts it in flight; a half-open breaker
                     * is probing from now) */
    HOOK_DEST_BUSY, /* its destination has per_destination attempts under way: put back */
    HOOK_DEST_OPEN, /* the breaker is open (or half-open with its probe out): put back
                     * until *retry_at_ms (the end of the cooldown; with the probe out,
                     * one cooldown from now) */
};
enum hook_dest_verdict hook_dest_decide(struct hook_breaker *b, int in_flight, int per_destination,
                                        int64_t now_ms, int64_t *retry_at_ms);

/* One attempt's outcome: delivered, or failed with counts (hook_dest_breaker_counts). */
void hook_breaker_result(struct hook_breaker *b, const struct hook_breaker_policy *p,
                         bool delivered, bool counts, int64_t now_ms);

/* True when b holds nothing worth keeping (closed, no failure): its entry may go. */
bool hook_breaker_idle(const struct hook_breaker *b);

#endif
