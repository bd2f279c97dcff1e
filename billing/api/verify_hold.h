/* verify_hold — XMR402 proofs waiting for their transaction, off the API's worker threads.
 *
 * A proof sent right after broadcast may beat the relay to billing's node, or the
 * view-only wallet's view of the pool ([xmr402] unseen_hold). Such a proof waits here as a
 * suspended connection (MHD_suspend_connection) plus one entry: no worker thread, no
 * database connection. One thread of the set's own asks again, every entry's poll_ms,
 * through the entry's check (a node or wallet look, no database), and resumes the
 * connection when the check says done or the entry's deadline passes; the handler is then
 * called again (xg_httpd.h, XG_HTTPD_DONE) and answers from what the check left.
 *
 * Bounds: at most max_held entries over all clients and max_per_client for one client key
 * (verify_hold_admit, pure); beyond them a proof is answered at once (the caller's
 * 429/503 + Retry-After), never queued.
 *
 * Ownership: entries are intrusive (they live in the request's state); the set never frees
 * one. An entry stays in the set, and its connection suspended, until it is resumed: so the
 * request cannot complete, nor its state go, while the set holds it. verify_hold_free
 * resumes every held connection first (libmicrohttpd must not stop with suspended ones;
 * verify_hold_stop, before the listener's stop).
 * Threads: verify_hold_add from any worker (inside its access handler); the rest is the
 * set's thread. */
#ifndef VERIFY_HOLD_H
#define VERIFY_HOLD_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VERIFY_HOLD_CLIENT_SIZE 256

enum verify_hold_admission {
    VERIFY_HOLD_ADMIT,
    VERIFY_HOLD_CLIENT_FULL, /* this client holds max_per_client proofs already */
    VERIFY_HOLD_FULL,        /* max_held proofs are waiting over all clients */
    VERIFY_HOLD_STOPPING,    /* the set is shutting down: answer at once */
};

/* Pure: may one more proof wait, with held waiting in all and held_by_client of them the
 * client's? The client's bound is read first (a flooding client is told it is the one). */
enum verify_hold_admission verify_hold_admit(size_t held, size_t held_by_client, size_t max_held,
                                             size_t max_per_client);

struct verify_hold_entry {
    /* set by the caller before verify_hold_add */
    char client[VERIFY_HOLD_CLIENT_SIZE];
    int64_t until_ms, poll_ms;                  /* monotonic deadline; pause between checks */
    bool (*check)(struct verify_hold_entry *e); /* true: done, resume now */
    void *ctx;
    /* the set's */
    struct MHD_Connection *conn;
    int64_t next_ms;
    bool running;
    struct verify_hold_entry *next;
};

struct verify_hold;

/* NULL when memory or the thread fail. */
struct verify_hold *verify_hold_new(size_t max_held, size_t max_per_client);
/* Stops the thread and resumes every held connection (their checks are not run again);
 * later proofs are refused (VERIFY_HOLD_STOPPING). Before the listener stops: the resumed
 * handlers still call verify_hold_add. Idempotent; NULL is fine. */
void verify_hold_stop(struct verify_hold *h);
/* verify_hold_stop, then frees the set: after the listener stopped. NULL is fine. */
void verify_hold_free(struct verify_hold *h);

/* Admits e (verify_hold_admit), suspends conn and queues e for its first check at
 * now + poll_ms. On anything but VERIFY_HOLD_ADMIT nothing is suspended or queued. Call
 * from conn's access handler only, then return XG_HTTPD_DONE. */
__attribute__((warn_unused_result)) enum verify_hold_admission
verify_hold_add(struct verify_hold *h, struct MHD_Connection *conn, struct verify_hold_entry *e);

/* Proofs waiting now (the metrics and the tests). */
size_t verify_hold_count(struct verify_hold *h);

#endif
