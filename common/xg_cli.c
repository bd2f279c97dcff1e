/* xg_cli — see xg_cli.h. */
#include "xg_cli.h"

#include "xg_version.h"

#include <getopt.h>

void xg_cli_usage(const struct xg_cli_daemon *d, FILE *out)
{
    fprintf(out,
            "usage: %s [--config FILE] [--check-config] [--config-reference] [--version]%s%s\n",
            d->name, d->operands[0] ? " " : "", d->operands);
}

enum xg_cli_result xg_cli_parse(const struct xg_cli_daemon *d, int argc, char **argv,
                                struct xg_cli *out)
{
    static const struct option longopts[] = {{"config", required_argument, NULL, 'c'},
                                             {"check-config", no_argument, NULL, 'k'},
                                             {"config-reference", no_argument, NULL, 'r'},
                                             {"version", no_argument, NULL, 'v'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    *out = (struct xg_cli){.config_path = NULL, .check_config = false, .operand = argc};
    optind = 0; /* glibc: a full reset, "+" included */
    int opt;
    while ((opt = getopt_long(argc, argv, "+c:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'c':
            out->config_path = optarg;
            break;
        case 'k':
            out->check_config = true;
            break;
        case 'r':
            xg_config_print_reference(d->keys, d->nkeys, d->name);
            return XG_CLI_DONE;
        case 'v':
            printf("%s %s (commit %s)\n", d->name, xg_version(), xg_version_commit());
            return XG_CLI_DONE;
        case 'h':
            xg_cli_usage(d, stdout);
            return XG_CLI_DONE;
        default:
            xg_cli_usage(d, stderr);
            return XG_CLI_USAGE;
        }
    }
    out->operand = optind;
    return XG_CLI_RUN;
}
