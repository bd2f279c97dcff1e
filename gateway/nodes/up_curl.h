/* up_curl — the upstream engine's curl client, for https:// nodes and host names (TLS and
 * asynchronous name resolution): one curl multi handle driven by
 * curl_multi_socket_action, its sockets watched in the engine's loop (one struct
 * loop_watch per socket), its timer kept for the loop's round.
 *
 * Requests carry exactly the job's headers plus what HTTP/1.1 framing requires: curl's
 * own Accept, Expect, User-Agent and Content-Type are removed unless the job sets them.
 * Environment proxies are ignored and redirects are not followed.
 *
 * Engine internal (see up_xfer.h). Everything runs on the engine's loop thread, except
 * up_curl_prepare (the submitting thread) and up_curl_new / up_curl_free (the owner's). */
#ifndef UP_CURL_H
#define UP_CURL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/loop.h"
#include "nodes/up_xfer.h"

struct up_curl;

/* A multi handle whose sockets go into l (which outlives it), capped and timed as opt
 * says (the engine's, outliving it too). NULL with a message in err on failure. */
struct up_curl *up_curl_new(struct loop *l, const struct up_engine_options *opt, char *err,
                            size_t errlen);

/* Frees the multi handle. No transfer may still be in it (detach them first). */
void up_curl_free(struct up_curl *c);

/* Copies job's URL, body and header lines into x and sets up x's easy handle from
 * scratch: a recycled handle carries nothing from its last job except its allocations. */
__attribute__((warn_unused_result)) bool
up_curl_prepare(struct up_xfer *x, const struct up_job *job, const struct up_engine_options *opt);

/* Adds x to the multi handle; x->finish runs once it ends. */
__attribute__((warn_unused_result)) bool up_curl_start(struct up_curl *c, struct up_xfer *x);

/* Takes x out of the multi handle, if it is in (without a report). */
void up_curl_detach(struct up_curl *c, struct up_xfer *x);

/* Runs curl's timer when it is due; now is CLOCK_MONOTONIC in ns. */
void up_curl_run_timer(struct up_curl *c, uint64_t now);

/* When curl's timer is due (UINT64_MAX: unset). */
uint64_t up_curl_due_ns(const struct up_curl *c);

/* After a batch of events: frees the watches of the sockets curl let go of. */
void up_curl_release_removed(struct up_curl *c);

/* Frees x's easy handle, if it has one. */
void up_curl_xfer_free(struct up_xfer *x);

#endif
