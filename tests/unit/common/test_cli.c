/* Tests for common/xg_cli: the options both daemons share, and that parsing stops at the
 * first operand so a subcommand keeps its own options. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "xg_cli.h"

#define MAX_ARGS 8

struct cli_case {
    const char *argv[MAX_ARGS]; /* NULL-terminated, after the program name */
    enum xg_cli_result result;
    const char *config_path;
    bool check_config;
    int operand; /* argv index of the first operand (argc when none) */
};

static const struct cli_case cases[] = {
    {{NULL}, XG_CLI_RUN, NULL, false, 1},
    {{"--config", "/etc/x.ini", NULL}, XG_CLI_RUN, "/etc/x.ini", false, 3},
    {{"-c", "/etc/x.ini", NULL}, XG_CLI_RUN, "/etc/x.ini", false, 3},
    {{"--config=/etc/x.ini", "--check-config", NULL}, XG_CLI_RUN, "/etc/x.ini", true, 3},
    /* a subcommand's options are its own */
    {{"--config", "F", "grant", "--tier", "free", "--days", "1", NULL}, XG_CLI_RUN, "F", false, 3},
    {{"migrate", NULL}, XG_CLI_RUN, NULL, false, 1},
    /* options after an operand are not ours */
    {{"serve", "--check-config", NULL}, XG_CLI_RUN, NULL, false, 1},
    {{"--version", NULL}, XG_CLI_DONE, NULL, false, 0},
    {{"--help", NULL}, XG_CLI_DONE, NULL, false, 0},
    {{"--config-reference", NULL}, XG_CLI_DONE, NULL, false, 0},
    {{"--bogus", NULL}, XG_CLI_USAGE, NULL, false, 0},
    {{"--config", NULL}, XG_CLI_USAGE, NULL, false, 0},
    {{"-x", NULL}, XG_CLI_USAGE, NULL, false, 0},
};

static void test_parse(void **state)
{
    (void)state;
    static const struct xg_cfg_key keys[] = {
        {"log", "level", XG_CFG_STRING, 0, sizeof(char *), "info", 0, 0, true, "level"},
    };
    const struct xg_cli_daemon d = {
        .name = "xmrgate-test", .operands = "[run]", .keys = keys, .nkeys = 1};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *argv[MAX_ARGS + 2] = {"xmrgate-test"};
        int argc = 1;
        for (; cases[i].argv[argc - 1]; argc++)
            argv[argc] = (char *)cases[i].argv[argc - 1];
        struct xg_cli cli;
        enum xg_cli_result r = xg_cli_parse(&d, argc, argv, &cli);
        print_message("case %zu\n", i);
        assert_int_equal(r, cases[i].result);
        if (r != XG_CLI_RUN)
            continue;
        if (cases[i].config_path)
            assert_string_equal(cli.config_path, cases[i].config_path);
        else
            assert_null(cli.config_path);
        assert_int_equal(cli.check_config, cases[i].check_config);
        assert_int_equal(cli.operand, cases[i].operand);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
