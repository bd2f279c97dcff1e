/* xmr402_streams — how many of the [xmr402] streams places one payment holds.
 *
 * Each v2.1 event stream takes one request of its payment's pending allowance
 * ([xmr402] pending_requests in billing, 20 by default) and a place for up to
 * stream_max_duration (1 h), so one payment could hold 20 of the 256 places and thirteen
 * cheap ones every place. A payment (its txid) holds at most [xmr402] streams_per_payment
 * places at once (2: its stream, and a reconnect before the gateway saw the old one go);
 * beyond, 503 streams_full before billing is asked, as when every place is taken.
 *
 * Pure core: xmr402_streams_admit. The table counts open streams by txid, at most
 * capacity txids (the streams cap: a txid holds a place, so there are never more); it is
 * shared by every loop under one mutex held for a scan of at most capacity entries.
 * Threads: any. */
#ifndef XMR402_STREAMS_H
#define XMR402_STREAMS_H

#include <stdbool.h>
#include <stddef.h>

/* Pure: may a payment holding `held` streams open one more? */
bool xmr402_streams_admit(int held, int per_payment);

struct xmr402_streams;

/* A table for capacity open streams (>= 1), per_payment (>= 1) each. NULL when out of
 * memory. */
struct xmr402_streams *xmr402_streams_new(size_t capacity, int per_payment);
void xmr402_streams_free(struct xmr402_streams *s);

/* Takes a place for a stream of payment txid: false when the payment holds per_payment
 * already, or the table is full (then nothing is taken). s NULL: always true. */
__attribute__((warn_unused_result)) bool xmr402_streams_take(struct xmr402_streams *s,
                                                             const char *txid);

/* Gives back a place xmr402_streams_take took. */
void xmr402_streams_give(struct xmr402_streams *s, const char *txid);

/* Streams payment txid holds now (tests). */
int xmr402_streams_held(struct xmr402_streams *s, const char *txid);

#endif
