/* up_nc — the upstream engine's adapter to nodeconn (nodeconn.h), its own HTTP/1.1 client
 * for plain-HTTP nodes at a numeric address: builds a job's request bytes once, reads the
 * answer into the transfer's buffer, and turns how the exchange ended into the engine's
 * result. Engine internal (see up_xfer.h); everything runs on the engine's loop thread
 * except up_nc_prepare, which runs on the submitting thread. */
#ifndef UP_NC_H
#define UP_NC_H

#include <stdbool.h>

#include "nodes/nodeconn.h"
#include "nodes/up_xfer.h"

/* Whether nodeconn serves job's URL; if so, builds the request (head, then body) in
 * x->req. The head carries exactly the job's headers plus Host and, for POST,
 * Content-Length, as curl's request would. False on either count (*served tells which). */
__attribute__((warn_unused_result)) bool up_nc_prepare(struct up_xfer *x, const struct up_job *job,
                                                       bool *served);

/* Starts x's exchange; x->finish may run before this returns (a refused connect). */
void up_nc_start(struct nc_client *c, struct up_xfer *x);

/* Gives up on x's exchange without a report (nothing when nodeconn already ended it). */
void up_nc_abandon(struct nc_client *c, struct up_xfer *x);

#endif
