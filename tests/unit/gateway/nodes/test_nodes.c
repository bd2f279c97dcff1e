/* Table tests for gateway/nodes: the node classes (what a row's NULL columns mean for own
 * and public nodes) and the priority names. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>

#include "nodes/nodes.h"

static void test_apply_class(void **state)
{
    (void)state;
    const struct {
        enum node_priority priority;
        int broadcast;            /* the row's column: -1 NULL */
        unsigned max_connections; /* the row's column: 0 NULL */
        bool own, takes_broadcast;
        unsigned cap;
    } rows[] = {
        {NODE_PRIMARY, -1, 0, true, true, 0},                             /* by class */
        {NODE_STANDBY, -1, 0, true, true, 0},                             /* by class */
        {NODE_PUBLIC, -1, 0, false, false, NODES_PUBLIC_MAX_CONNECTIONS}, /* by class */
        {NODE_PUBLIC, 1, 0, false, true, NODES_PUBLIC_MAX_CONNECTIONS},   /* opted in */
        {NODE_PUBLIC, -1, 8, false, false, 8},                            /* its own cap */
        {NODE_PRIMARY, 0, 4, true, false, 4},                             /* opted out */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct node_info n = {.priority = rows[i].priority};
        nodes_apply_class(&n, rows[i].broadcast, rows[i].max_connections);
        assert_int_equal(nodes_own(&n), rows[i].own);
        assert_int_equal(n.broadcast, rows[i].takes_broadcast);
        assert_int_equal(n.max_connections, rows[i].cap);
    }
}

static void test_priority_parse(void **state)
{
    (void)state;
    enum node_priority p;
    assert_true(nodes_priority_parse("public", &p));
    assert_int_equal(p, NODE_PUBLIC);
    assert_true(nodes_priority_parse("standby", &p));
    assert_int_equal(p, NODE_STANDBY);
    assert_false(nodes_priority_parse("Public", &p));
    assert_false(nodes_priority_parse("", &p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_apply_class),
        cmocka_unit_test(test_priority_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
