/* sessions — what this gateway has served each tenant, for the per-tenant read rules
 * (gateway/rpc/consistency.h): the highest chain height it answered the tenant with, and
 * the nodes that accepted the tenant's last transaction with until when they are asked
 * first.
 *
 * One entry per tenant that was served since the gateway started (32 bytes of state, plus
 * the hash node and its RCU head: 72 bytes), keyed by tenant id in an RCU lock-free hash
 * table (liburcu-bp), like the burst buckets (limits/ratelimit.h). Every field is an atomic
 * of its own: a request reads them with one lookup and no lock, and raises the tip with a
 * compare-and-swap that only ever moves it up. Entries are not swept: they are bounded by
 * the tenants the gateway holds anyway (state/tenants.h), and dropping one would lose the
 * guarantee for that tenant.
 *
 * Threads: every call from any thread; sessions_free when no other call can run. */
#ifndef SESSIONS_H
#define SESSIONS_H

#include <stddef.h>
#include <stdint.h>

struct sessions;

/* What a request reads of its tenant: zeros for a tenant not served yet. */
struct session_view {
    int64_t served_tip; /* the highest chain height answered; 0: none */
    uint64_t accepted;  /* node bits (nodes_bit, nodes/nodes.h) of the last accepted broadcast */
    int64_t accepted_until_ms; /* monotonic: when read-your-writes lapses for it */
};

/* NULL when out of memory. */
struct sessions *sessions_new(void);
void sessions_free(struct sessions *s);

/* The tenant's state; zeros when it has none (or s is NULL). */
struct session_view sessions_get(struct sessions *s, int64_t tenant_id);

/* The tenant was answered with a tip of `height`: its served tip becomes the larger of the
 * two. Out of memory: nothing is remembered (the rule then holds from the next answer). */
void sessions_served_tip(struct sessions *s, int64_t tenant_id, int64_t height);

/* The nodes `accepted` took the tenant's transaction: its pool and transaction queries go
 * to them until until_ms. Replaces what an earlier broadcast left. */
void sessions_accepted(struct sessions *s, int64_t tenant_id, uint64_t accepted, int64_t until_ms);

/* Entries held. */
size_t sessions_count(struct sessions *s);

#endif
