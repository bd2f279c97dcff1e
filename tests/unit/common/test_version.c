/* Tests for common/xg_version: the release compiled in is the VERSION file's, and
 * xmrgate_build_info renders once, with both labels, at 1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xg_metrics.h"
#include "xg_version.h"

/* run-unit.sh runs the tests from the repository root */
static void test_version_is_the_files(void **state)
{
    (void)state;
    FILE *f = fopen("VERSION", "r");
    assert_non_null(f);
    char line[64] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    assert_string_equal(xg_version(), line);
    assert_true(strlen(xg_version_commit()) > 0);
}

static void test_build_info_metric(void **state)
{
    (void)state;
    struct xg_metrics *reg = xg_metrics_new();
    assert_non_null(reg);
    assert_true(xg_version_register_metric(reg));
    /* a second registration is refused: the name is taken */
    assert_false(xg_version_register_metric(reg));
    size_t len;
    char *text = xg_metrics_render(reg, &len);
    assert_non_null(text);
    char want[256];
    snprintf(want, sizeof want, "\nxmrgate_build_info{version=\"%s\",commit=\"%s\"} 1\n",
             xg_version(), xg_version_commit());
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "# TYPE xmrgate_build_info gauge\n"));
    /* one series only: the "other" values are never set */
    assert_null(strstr(text, "version=\"other\""));
    assert_null(strstr(text, "commit=\"other\""));
    free(text);
    xg_metrics_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_is_the_files),
        cmocka_unit_test(test_build_info_metric),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
