/* Table tests for gateway/up_job: a node's own connection cap split between the engines
 * that share it, under each engine's cap. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "nodes/up_job.h"

static void test_node_cap(void **state)
{
    (void)state;
    const struct {
        unsigned node_cap, share, engine_cap, expected;
    } rows[] = {
        {0, 2, 8, 8},  /* no cap of its own: the engine's */
        {3, 1, 8, 3},  /* a public node, one loop */
        {3, 2, 8, 1},  /* two loops: together they stay within 3 */
        {3, 4, 8, 1},  /* more loops than connections: one each */
        {3, 0, 8, 3},  /* share 0 counts as 1 */
        {40, 2, 8, 8}, /* the engine's cap is lower */
        {16, 2, 8, 8},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(up_job_node_cap(rows[i].node_cap, rows[i].share, rows[i].engine_cap),
                         rows[i].expected);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
