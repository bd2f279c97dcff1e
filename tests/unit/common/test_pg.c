/* Tests for xg_pg without a server: the retryable SQLSTATEs, the classifiers (which
 * failures mean "broken: reconnect", which ones may be retried on a new connection, when
 * the outcome is unknown), and the failure paths (no connection, refused connection) whose contract
 * the daemons rely on. Queries against a real PostgreSQL are covered by the integration tests. */
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

#include "test_sockets.h"

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

static void test_fault_of(void **state)
{
    (void)state;
    static const struct {
        const char *sqlstate;
        bool bad; /* libpq reports the connection as bad */
        enum xg_pg_fault fault;
    } cases[] = {
        /* class 08: connection exceptions, from libpq or the server */
        {"08000", false, XG_PG_FAULT_CONNECTION},
        {"08003", false, XG_PG_FAULT_CONNECTION}, /* connection_does_not_exist */
        {"08006", false, XG_PG_FAULT_CONNECTION}, /* connection_failure */
        {"08001", false, XG_PG_FAULT_CONNECTION}, /* could not establish */
        {"08004", false, XG_PG_FAULT_CONNECTION}, /* the server rejected the connection */
        {"08007", false, XG_PG_FAULT_CONNECTION}, /* transaction_resolution_unknown */
        {"08P01", false, XG_PG_FAULT_CONNECTION}, /* protocol_violation */
        /* the server ends the session */
        {"57P01", false, XG_PG_FAULT_CONNECTION}, /* admin_shutdown: a restart, a switch */
        {"57P02", false, XG_PG_FAULT_CONNECTION}, /* crash_shutdown */
        {"57P03", false, XG_PG_FAULT_CONNECTION}, /* cannot_connect_now: starting up */
        {"57P05", false, XG_PG_FAULT_CONNECTION}, /* idle_session_timeout */
        {"25P03", false, XG_PG_FAULT_CONNECTION}, /* idle_in_transaction_session_timeout */
        /* a standby after a switch: only a new connection finds the primary */
        {"25006", false, XG_PG_FAULT_CONNECTION}, /* read_only_sql_transaction */
        /* conflicts: rerun on the same connection */
        {"40001", false, XG_PG_FAULT_CONFLICT},
        {"40P01", false, XG_PG_FAULT_CONFLICT},
        /* the statement's own errors */
        {"23505", false, XG_PG_FAULT_STATEMENT}, /* unique_violation */
        {"42P01", false, XG_PG_FAULT_STATEMENT}, /* undefined_table */
        {"57014", false, XG_PG_FAULT_STATEMENT}, /* query_canceled: not the session */
        {"57P04", false, XG_PG_FAULT_STATEMENT}, /* database_dropped: no reconnect helps */
        {"25001", false, XG_PG_FAULT_STATEMENT}, /* active_sql_transaction */
        {"0800", false, XG_PG_FAULT_STATEMENT},
        {"080000", false, XG_PG_FAULT_STATEMENT},
        {"", false, XG_PG_FAULT_NONE},
        {NULL, false, XG_PG_FAULT_NONE},
        /* whatever the SQLSTATE, a connection libpq calls bad is gone */
        {NULL, true, XG_PG_FAULT_CONNECTION},
        {"23505", true, XG_PG_FAULT_CONNECTION},
        {"40001", true, XG_PG_FAULT_CONNECTION},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (xg_pg_fault_of(cases[i].sqlstate, cases[i].bad) != cases[i].fault)
            fail_msg("%s (bad %d): expected fault %d, got %d",
                     cases[i].sqlstate ? cases[i].sqlstate : "NULL", cases[i].bad, cases[i].fault,
                     xg_pg_fault_of(cases[i].sqlstate, cases[i].bad));
}

static void test_sqlstate_not_run(void **state)
{
    (void)state;
    static const struct {
        const char *sqlstate;
        bool not_run;
    } cases[] = {
        {"08003", true},                   /* never sent */
        {"08001", true},  {"08004", true}, /* refused at connect */
        {"57P03", true},                   /* the server was not accepting sessions */
        {"25006", true},                   /* refused before it ran: read-only */
        {"08006", false},                  /* broke after sending: it may have run */
        {"57P01", false}, /* shutdown: may come after a commit (sync replication wait) */
        {"08007", false}, {"40001", false}, {"", false}, {NULL, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (xg_pg_sqlstate_not_run(cases[i].sqlstate) != cases[i].not_run)
            fail_msg("%s: expected %s", cases[i].sqlstate ? cases[i].sqlstate : "NULL",
                     cases[i].not_run ? "not run" : "maybe run");
}

static void test_statement_next(void **state)
{
    (void)state;
    enum { C = XG_PG_FAULT_CONNECTION, S = XG_PG_FAULT_STATEMENT, X = XG_PG_FAULT_CONFLICT };
    enum {
        REPORT = XG_PG_NEXT_REPORT,
        RETRY = XG_PG_NEXT_RETRY,
        UNKNOWN = XG_PG_NEXT_REPORT_UNKNOWN
    };
    static const struct {
        int fault;
        bool in_tx, bound, idempotent, not_run, retried;
        int next;
    } cases[] = {
        /* outside a transaction, a broken connection */
        {C, false, false, true, false, false, RETRY}, /* a read: once more */
        {C, false, false, true, false, true, REPORT}, /* ... only once */
        {C, false, false, false, true, false, RETRY}, /* a write that did not run */
        {C, false, false, false, true, true, REPORT},
        {C, false, false, false, false, false, UNKNOWN}, /* a write that may have run */
        {C, false, false, false, false, true, UNKNOWN},
        /* a session-bound handle: the owner must learn its session is gone */
        {C, false, true, true, true, false, REPORT},
        /* inside a transaction: the runner reruns the whole transaction */
        {C, true, false, true, true, false, REPORT},
        {C, true, false, false, false, false, REPORT},
        /* not a connection fault: never here */
        {S, false, false, true, true, false, REPORT},
        {X, false, false, true, true, false, REPORT},
        {XG_PG_FAULT_NONE, false, false, true, true, false, REPORT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = xg_pg_statement_next(cases[i].fault, cases[i].in_tx, cases[i].bound,
                                       cases[i].idempotent, cases[i].not_run, cases[i].retried);
        if (got != cases[i].next)
            fail_msg("case %zu: expected %d, got %d", i, cases[i].next, got);
    }
}

static void test_tx_next(void **state)
{
    (void)state;
    enum { C = XG_PG_FAULT_CONNECTION, S = XG_PG_FAULT_STATEMENT, X = XG_PG_FAULT_CONFLICT };
    enum {
        REPORT = XG_PG_NEXT_REPORT,
        RETRY = XG_PG_NEXT_RETRY,
        UNKNOWN = XG_PG_NEXT_REPORT_UNKNOWN
    };
    static const struct {
        int fault;
        bool commit_sent, not_run, retried;
        int next;
    } cases[] = {
        {C, false, false, false, RETRY},  /* broke before COMMIT: rolled back, rerun */
        {C, false, false, true, REPORT},  /* ... once */
        {C, true, false, false, UNKNOWN}, /* COMMIT's answer lost: never repeated */
        {C, true, false, true, UNKNOWN},
        {C, true, true, false, RETRY},    /* COMMIT found no connection: never sent */
        {S, false, false, false, REPORT}, /* the transaction's own error */
        {S, true, false, false, REPORT},
        {X, true, false, false, REPORT}, /* conflicts: retried apart */
        {XG_PG_FAULT_NONE, false, false, false, REPORT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got =
            xg_pg_tx_next(cases[i].fault, cases[i].commit_sent, cases[i].not_run, cases[i].retried);
        if (got != cases[i].next)
            fail_msg("case %zu: expected %d, got %d", i, cases[i].next, got);
    }
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
    assert_false(xg_pg_outcome_unknown(pg)); /* never sent: nothing unknown */
    assert_false(xg_pg_alive(pg));
    assert_null(xg_pg_exec_sql(pg, "SELECT 1"));
    xg_pg_free(pg);
}

static void test_refused_connection(void **state)
{
    (void)state;
    static const char *const queries[] = {"never_prepared", NULL};
    char conninfo[128];
    snprintf(conninfo, sizeof conninfo, "host=127.0.0.1 port=%d connect_timeout=2",
             loopback_refused_port());
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
    assert_false(xg_pg_outcome_unknown(pg));
    assert_int_equal(xg_pg_reconnects(pg), 0);

    /* a stop already requested: no attempt, no sleep */
    volatile sig_atomic_t stop = 1;
    assert_false(xg_pg_connect_backoff(pg, &stop));
    xg_pg_free(pg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sqlstate_retryable),
        cmocka_unit_test(test_fault_of),
        cmocka_unit_test(test_sqlstate_not_run),
        cmocka_unit_test(test_statement_next),
        cmocka_unit_test(test_tx_next),
        cmocka_unit_test(test_unconnected_handle),
        cmocka_unit_test(test_refused_connection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
