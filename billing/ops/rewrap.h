/* rewrap — the operator subcommand `xmrgate-billing rewrap-ha1 [--batch N]`: the middle
 * step of a rotation of [gateway] ha1_key (docs/OPERATIONS.md, "Rotating the HA1 key").
 *
 * Reads every tenant, then every purchase not yet provisioned, in batches of N rows in id
 * order, and decides each stored Digest HA1 with ha1_rewrap_plan (core/ha1_rewrap.h): one
 * wrapped under [gateway] ha1_key_previous is wrapped again under ha1_key and written
 * back with an UPDATE conditional on the bytes read, so a token rotated meanwhile is never
 * overwritten (counted as changed, its new value already under the current key). A batch's
 * UPDATEs commit together (one commit per batch: 20,000 rows took 9.1 s committed one by
 * one, 1.3 s in batches of 1000). The gateways follow the tenants through the NOTIFY each
 * UPDATE raises, delivered at the batch's commit. Running it again
 * changes nothing. Prints one line per table on stdout, shell-sourceable:
 *     TENANTS_REWRAPPED=… TENANTS_CURRENT=… TENANTS_UNWRAPPABLE=… TENANTS_CHANGED=…
 *     INVOICES_REWRAPPED=… INVOICES_CURRENT=… INVOICES_UNWRAPPABLE=… INVOICES_CHANGED=…
 * Without ha1_key_previous nothing is re-wrapped: the rows are only counted. */
#ifndef REWRAP_H
#define REWRAP_H

#include "core/bl_config.h"

/* argv[0] is "rewrap-ha1"; returns the process exit status (0 ok, 1 failure, 2 usage). */
int rewrap_main(const struct bl_config *cfg, int argc, char **argv);

#endif
