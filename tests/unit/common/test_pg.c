/* Tests for xg_pg without a server: the retryable SQLSTATEs, the classifier, and the
 * failure paths (no connection, refused connection) whose contract the daemons rely on.
 * Queries against a real PostgreSQL are covered by the integration tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cmocka.h>

#include "xg_pg.h"

static void test_sqlstate_retryable(void **state)
{
    (void)state;
    static const struct {
        const char *sqlstate;
        bool retry;
    } cases[] = {
        {"40001", true},                    /* serialization_failure */
        {"40P01", true},                    /* deadlock_detected */
        {"40002", false},                   /* transaction_integrity_constraint_violation */
        {"40003", false}, {"23505", false}, /* unique_violation */
        {"08006", false},                   /* connection_failure: reconnect, not a blind retry */
        {"57014", false},                   /* query_canceled */
        {"4000", false},  {"400011", false}, {"40p01", false}, {"", false}, {NULL, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (xg_pg_sqlstate_retryable(cases[i].sqlstate) != cases[i].retry)
            fail_msg("%s: expected %s", cases[i].sqlstate ? cases[i].sqlstate : "NULL",
                     cases[i].retry ? "retryable" : "not retryable");
}

static int calls;

static enum xg_tx_result count_call(struct xg_pg *pg, void *ctx)
{
    (void)pg;
    (void)ctx;
    calls++;
    return XG_TX_COMMIT;
}

static void test_unconnected_handle(void **state)
{
    (void)state;
    static const char *const queries[] = {NULL};
    struct xg_pg *pg = xg_pg_new("host=127.0.0.1 port=1", queries);
    assert_non_null(pg);
    assert_false(xg_pg_ok(pg));
    assert_null(xg_pg_conn(pg));
    assert_string_equal(xg_pg_last_sqlstate(pg), "");

    assert_null(xg_pg_exec(pg, "anything", 0, NULL));
    assert_string_equal(xg_pg_last_sqlstate(pg), "08003");
    assert_string_equal(xg_pg_last_error(pg), "not connected to PostgreSQL");
    assert_int_equal(xg_pg_tx_classify(pg), XG_TX_ERROR);
    assert_null(xg_pg_exec_sql(pg, "SELECT 1"));
    xg_pg_free(pg);
}

/* A loopback port with nobody listening: bind one, note it, close it. */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void test_refused_connection(void **state)
{
    (void)state;
    static const char *const queries[] = {"never_prepared", NULL};
    char conninfo[128];
    snprintf(conninfo, sizeof conninfo, "host=127.0.0.1 port=%d connect_timeout=2", closed_port());
    struct xg_pg *pg = xg_pg_new(conninfo, queries);
    assert_non_null(pg);
    assert_false(xg_pg_connect(pg));
    assert_false(xg_pg_ok(pg));
    assert_non_null(strstr(xg_pg_last_error(pg), "connecting: "));
    assert_non_null(strstr(xg_pg_last_error(pg), "refused"));
    assert_null(strchr(xg_pg_last_error(pg), '\n'));
    assert_string_equal(xg_pg_last_sqlstate(pg), "08006");

    /* the transaction runner connects first and never runs fn without a connection */
    calls = 0;
    assert_int_equal(xg_pg_transaction(pg, "SERIALIZABLE", count_call, NULL), XG_TX_ERROR);
    assert_int_equal(calls, 0);

    /* a stop already requested: no attempt, no sleep */
    volatile sig_atomic_t stop = 1;
    assert_false(xg_pg_connect_backoff(pg, &stop));
    xg_pg_free(pg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sqlstate_retryable),
        cmocka_unit_test(test_unconnected_handle),
        cmocka_unit_test(test_refused_connection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
