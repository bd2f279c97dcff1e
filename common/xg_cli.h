/* xg_cli — the command line both daemons share:
 *
 *   <daemon> [--config FILE | -c FILE] [--check-config] [--config-reference] [--version]
 *            [--help] [operand…]
 *
 * Options come first: parsing stops at the first operand (getopt's "+" mode), so what
 * follows a subcommand is the subcommand's (`xmrgate-billing --config F grant --tier free
 * --days 1`: --tier is grant's, not an unknown option of billing's). --config-reference,
 * --version and --help answer on stdout at once; a usage error is reported on stderr.
 * --version prints the name, the release and the commit (xg_version.h):
 * "xmrgate-gateway 0.3.0 (commit 3f2a9c1d0b7e)". */
#ifndef XG_CLI_H
#define XG_CLI_H

#include "xg_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* What differs between the daemons. */
struct xg_cli_daemon {
    const char *name;              /* "xmrgate-gateway": usage, --version, the reference title */
    const char *operands;          /* usage text after the options ("" when none) */
    const struct xg_cfg_key *keys; /* for --config-reference */
    size_t nkeys;
};

struct xg_cli {
    const char *config_path; /* --config; NULL: defaults and environment only */
    bool check_config;       /* --check-config: validate the configuration and exit */
    int operand;             /* argv index of the first operand; argc when there is none */
};

enum xg_cli_result {
    XG_CLI_RUN,   /* go on with *out */
    XG_CLI_DONE,  /* an informational option was answered: exit 0 */
    XG_CLI_USAGE, /* a usage error, already reported: exit 2 */
};

/* Parses argv into *out (getopt's state is reset first, so it may be called again). */
__attribute__((warn_unused_result)) enum xg_cli_result
xg_cli_parse(const struct xg_cli_daemon *d, int argc, char **argv, struct xg_cli *out);

/* The one-line usage, to `out`. */
void xg_cli_usage(const struct xg_cli_daemon *d, FILE *out);

#endif
