/* grant — the operator subcommand `xmrgate-billing grant --tier ID --days N`: creates a
 * tenant directly, without an invoice or payment (demo tenants, tests, support), and
 * prints its credentials on stdout as shell-sourceable lines:
 *     TENANT_ID=…  HANDLE=…  TOKEN=…  VALID_UNTIL=…  (RFC 3339, UTC)
 * The token is printed once and never stored. */
#ifndef GRANT_H
#define GRANT_H

#include "core/bl_config.h"

/* argv[0] is "grant"; returns the process exit status (0 ok, 1 failure, 2 usage). */
int grant_main(const struct bl_config *cfg, int argc, char **argv);

#endif
