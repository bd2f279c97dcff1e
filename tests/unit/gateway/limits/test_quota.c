/* Table tests for gateway/quota: the per-tenant day counts (charge, local refusal, day
 * roll-over, drain, PostgreSQL's totals lowering and raising what is left, weights), the
 * flush rule (each tenant's batch by its remaining quota, at least every
 * QUOTA_FLUSH_INTERVAL_MS), and the table that
 * drains only served tenants; plus usage_flush's merge of rows into one statement. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/methods.h"
#include "limits/quota.h"
#include "limits/usage_flush.h"

#define DAY0 20000 /* 2024-10-04 */
#define T0   ((int64_t)DAY0 * 86400)

/* A scripted sequence of operations on one tenant's counts. */
enum op_kind { CHARGE, DRAIN, APPLY, STATUS };

struct op {
    enum op_kind kind;
    int32_t day;
    int64_t limit;  /* CHARGE, STATUS */
    int64_t a;      /* CHARGE: weight; DRAIN: expected current-day amount; APPLY: amount */
    int64_t b;      /* CHARGE: 1 allowed / 0 refused; DRAIN: expected carry; APPLY: total */
    int64_t expect; /* remaining after the op on `day` under `limit` (-1: not checked) */
};

struct script {
    const char *name;
    struct op ops[16];
};

static const struct script SCRIPTS[] = {
    {"charges until the quota, then refuses locally",
     {{CHARGE, DAY0, 3, 1, 1, 2},
      {CHARGE, DAY0, 3, 1, 1, 1},
      {CHARGE, DAY0, 3, 1, 1, 0},
      {CHARGE, DAY0, 3, 1, 0, 0},
      {STATUS, DAY0, 3, 0, 0, 0},
      {-1, 0, 0, 0, 0, 0}}},
    {"weights: a heavy call needs its whole weight left",
     {{CHARGE, DAY0, 15, METHOD_WEIGHT_BULK, 1, 5},
      {CHARGE, DAY0, 15, METHOD_WEIGHT_BULK, 0, 5},
      {CHARGE, DAY0, 15, METHOD_WEIGHT_RANGE, 1, 0},
      {CHARGE, DAY0, 15, METHOD_WEIGHT_POINT, 0, 0},
      {-1, 0, 0, 0, 0, 0}}},
    {"drained counts stay in the view until PostgreSQL answers",
     {{CHARGE, DAY0, 10, 4, 1, 6},
      {DRAIN, DAY0, 0, 4, 0, -1},
      {STATUS, DAY0, 10, 0, 0, 6},
      {CHARGE, DAY0, 10, 1, 1, 5},
      {APPLY, DAY0, 0, 4, 4, -1},
      {STATUS, DAY0, 10, 0, 0, 5},
      {-1, 0, 0, 0, 0, 0}}},
    {"PostgreSQL's total lowers what is left (other replicas served the tenant)",
     {{CHARGE, DAY0, 100, 10, 1, 90},
      {DRAIN, DAY0, 0, 10, 0, -1},
      {APPLY, DAY0, 0, 10, 95, -1},
      {STATUS, DAY0, 100, 0, 0, 5},
      {CHARGE, DAY0, 100, 5, 1, 0},
      {CHARGE, DAY0, 100, 1, 0, 0},
      {-1, 0, 0, 0, 0, 0}}},
    {"PostgreSQL's total raises what is left (the day's row was reset)",
     {{CHARGE, DAY0, 10, 10, 1, 0},
      {DRAIN, DAY0, 0, 10, 0, -1},
      {CHARGE, DAY0, 10, 1, 0, 0},
      {APPLY, DAY0, 0, 10, 3, -1},
      {STATUS, DAY0, 10, 0, 0, 7},
      {CHARGE, DAY0, 10, 1, 1, 6},
      {-1, 0, 0, 0, 0, 0}}},
    {"a raised quota (renewal, tier change) lets the tenant through at once",
     {{CHARGE, DAY0, 2, 2, 1, 0},
      {CHARGE, DAY0, 2, 1, 0, 0},
      {CHARGE, DAY0, 50, 1, 1, 47},
      {CHARGE, DAY0, 1, 1, 0, 0},
      {-1, 0, 0, 0, 0, 0}}},
    {"UTC midnight: a new day starts from zero; yesterday's counts drain for yesterday",
     {{CHARGE, DAY0, 5, 5, 1, 0},
      {CHARGE, DAY0, 5, 1, 0, 0},
      {STATUS, DAY0 + 1, 5, 0, 0, 5},
      {CHARGE, DAY0 + 1, 5, 2, 1, 3},
      {DRAIN, DAY0 + 1, 0, 2, 5, -1},
      {APPLY, DAY0, 0, 5, 5, -1},
      {STATUS, DAY0 + 1, 5, 0, 0, 3},
      {APPLY, DAY0 + 1, 0, 2, 2, -1},
      {STATUS, DAY0 + 1, 5, 0, 0, 3},
      {-1, 0, 0, 0, 0, 0}}},
    {"a late answer for yesterday does not touch today",
     {{CHARGE, DAY0, 5, 3, 1, 2},
      {DRAIN, DAY0, 0, 3, 0, -1},
      {CHARGE, DAY0 + 1, 5, 1, 1, 4},
      {APPLY, DAY0, 0, 3, 1000, -1},
      {STATUS, DAY0 + 1, 5, 0, 0, 4},
      {-1, 0, 0, 0, 0, 0}}},
    {"a clock set back keeps counting on the later day",
     {{CHARGE, DAY0 + 1, 5, 2, 1, 3},
      {CHARGE, DAY0, 5, 2, 1, 1},
      {STATUS, DAY0 + 1, 5, 0, 0, 1},
      {-1, 0, 0, 0, 0, 0}}},
};

static void run_script(const struct script *sc)
{
    struct quota_counts c = {0};
    for (size_t i = 0; i < 16 && sc->ops[i].kind != (enum op_kind) - 1; i++) {
        const struct op *op = &sc->ops[i];
        struct quota_status st;
        switch (op->kind) {
        case CHARGE:
            if (quota_counts_charge(&c, op->day, op->limit, (uint32_t)op->a) != (op->b == 1)) {
                print_error("%s, op %zu: charge verdict\n", sc->name, i);
                fail();
            }
            break;
        case DRAIN: {
            struct quota_row rows[2];
            size_t n = quota_counts_drain(&c, 42, rows);
            int64_t today = 0, carry = 0;
            for (size_t r = 0; r < n; r++) {
                assert_int_equal(rows[r].tenant_id, 42);
                assert_true(rows[r].amount > 0);
                if (rows[r].day == op->day)
                    today += rows[r].amount;
                else
                    carry += rows[r].amount;
            }
            if (today != op->a || carry != op->b) {
                print_error("%s, op %zu: drained %lld today, %lld carry\n", sc->name, i,
                            (long long)today, (long long)carry);
                fail();
            }
            break;
        }
        case APPLY:
            quota_counts_apply(&c, op->day, op->a, op->b);
            break;
        case STATUS:
            break;
        }
        if (op->expect >= 0) {
            quota_counts_status(&c, op->day, op->limit, &st);
            if (st.remaining != op->expect || st.limit != op->limit ||
                st.used + st.remaining < op->limit) {
                print_error("%s, op %zu: remaining %lld, expected %lld\n", sc->name, i,
                            (long long)st.remaining, (long long)op->expect);
                fail();
            }
        }
    }
}

static void test_scripts(void **state)
{
    (void)state;
    for (size_t s = 0; s < sizeof SCRIPTS / sizeof SCRIPTS[0]; s++)
        run_script(&SCRIPTS[s]);
}

static void test_day_arithmetic(void **state)
{
    (void)state;
    const struct {
        int64_t unix_s;
        int32_t day;
        int64_t reset;
    } cases[] = {
        {0, 0, 86400},
        {86399, 0, 86400},
        {86400, 1, 172800},
        {T0 - 1, DAY0 - 1, T0},
        {T0, DAY0, T0 + 86400},
        {1795996800, 20787, 1796083200}, /* 2026-11-30T00:00:00Z */
        {-1, -1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(quota_day(cases[i].unix_s), cases[i].day);
        assert_int_equal(quota_day_end(quota_day(cases[i].unix_s)), cases[i].reset);
    }
}

static void test_flush_batch_by_remaining_quota(void **state)
{
    (void)state;
    const struct {
        int64_t limit, remaining, batch;
    } cases[] = {
        /* 1 % of the quota is under 100: the batch is 100 throughout. */
        {500, 500, 100},
        {500, 150, 100},
        {500, 0, 100},
        {0, 0, 100},
        {10000, 10000, 100}, /* 1 % is exactly 100 */
        /* 1 % over 100 is the batch while twice it is left... */
        {100000, 100000, 1000},
        {100000, 2000, 1000},
        {100000, 1999, 100}, /* ...and 100 below that */
        {100000, 0, 100},
        {10099, 10099, 100}, /* 1 % rounds down */
        {20000, 400, 200},
        {20000, 399, 100},
        {INT64_MAX, INT64_MAX, INT64_MAX / 100}, /* no overflow for an unlimited quota */
        {INT64_MAX, 0, 100},
    };
    assert_int_equal(QUOTA_FLUSH_MIN_BATCH, 100);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(quota_flush_batch(cases[i].limit, cases[i].remaining), cases[i].batch);
}

static void test_counts_batch_full(void **state)
{
    (void)state;
    const struct {
        int64_t confirmed, pending, carry, limit;
        bool full;
    } cases[] = {
        {0, 99, 0, 500, false},         {0, 100, 0, 500, true},
        {0, 90, 10, 500, true}, /* yesterday's undrained counts go with the same flush */
        {0, 999, 0, 100000, false},     {0, 1000, 0, 100000, true},
        {97000, 100, 0, 100000, false}, /* 2900 left: still batches of 1000 */
        {98000, 100, 0, 100000, true},  /* 1900 left: batches of 100 */
        {98000, 99, 0, 100000, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct quota_counts c = {.day = DAY0,
                                 .confirmed = cases[i].confirmed,
                                 .pending = cases[i].pending,
                                 .carry_day = DAY0 - 1,
                                 .carry = cases[i].carry};
        assert_int_equal(quota_counts_batch_full(&c, cases[i].limit), cases[i].full);
    }
}

static void test_flush_trigger(void **state)
{
    (void)state;
    const struct {
        bool batch_full;
        int64_t elapsed_ms;
        bool anything, due;
    } cases[] = {
        {false, 0, false, false},
        {false, 999, true, false},
        {false, QUOTA_FLUSH_INTERVAL_MS - 1, true, false},
        {true, 0, true, true},
        {true, 10, true, true},
        {false, QUOTA_FLUSH_INTERVAL_MS, true, true},
        {false, QUOTA_FLUSH_INTERVAL_MS, true, true}, /* rows held from a failed flush */
        {false, 5 * QUOTA_FLUSH_INTERVAL_MS, false, false},
    };
    assert_int_equal(QUOTA_FLUSH_INTERVAL_MS, 5000);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(
            quota_flush_due(cases[i].batch_full, cases[i].elapsed_ms, cases[i].anything),
            cases[i].due);
}

static void count_kick(void *cls)
{
    (*(int *)cls)++;
}

static void test_table_kicks_every_batch_and_drains_served_tenants(void **state)
{
    (void)state;
    int kicks = 0;
    struct quota_table *t = quota_table_new(count_kick, &kicks);
    assert_non_null(t);
    struct quota_status st;
    /* 99 requests over three tenants, weight 2: no tenant has a batch of 100 yet. */
    for (int i = 0; i < 99; i++)
        assert_true(quota_charge(t, 1 + i % 3, 1000, 2, T0 + 5, &st));
    assert_int_equal(kicks, 0);
    assert_int_equal(quota_batches_full(t), 0);
    assert_int_equal(quota_unflushed_requests(t), 99);
    for (int i = 0; i < 17; i++) /* tenant 1: 33 + 17 = 50 requests, 100 weighted */
        assert_true(quota_charge(t, 1, 1000, 2, T0 + 5, &st));
    assert_int_equal(kicks, 1);
    assert_int_equal(quota_batches_full(t), 1);
    assert_true(quota_charge(t, 1, 1000, 2, T0 + 5, &st)); /* once per batch */
    assert_int_equal(kicks, 1);

    struct quota_row *rows = NULL;
    size_t n = 0, cap = 0;
    assert_true(quota_drain(t, &rows, &n, &cap));
    assert_int_equal(quota_unflushed_requests(t), 0);
    assert_int_equal(n, 3);
    n = usage_flush_merge(rows, n);
    assert_int_equal(n, 3);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rows[i].tenant_id, (int64_t)i + 1);
        assert_int_equal(rows[i].day, DAY0);
        total += rows[i].amount;
    }
    assert_int_equal(total, 117 * 2);
    assert_int_equal(rows[0].amount, 51 * 2);
    /* The drain re-arms tenant 1's batch; another tenant filling its own kicks again. */
    assert_int_equal(quota_batches_full(t), 0);
    for (int i = 0; i < 50; i++)
        assert_true(quota_charge(t, 1, 1000, 2, T0 + 5, &st));
    assert_int_equal(kicks, 2);
    for (int i = 0; i < 100; i++)
        assert_true(quota_charge(t, 3, 1000, 1, T0 + 5, &st));
    assert_int_equal(kicks, 3);
    assert_int_equal(quota_batches_full(t), 2);
    n = 0;
    assert_true(quota_drain(t, &rows, &n, &cap));
    assert_int_equal(n, 2);
    /* Nothing new: nothing to drain. */
    size_t again = 0;
    assert_true(quota_drain(t, &rows, &again, &cap));
    assert_int_equal(again, 0);
    /* Only a tenant served since the drain comes back. */
    assert_true(quota_charge(t, 2, 1000, 1, T0 + 6, &st));
    assert_true(quota_drain(t, &rows, &again, &cap));
    assert_int_equal(again, 1);
    assert_int_equal(rows[0].tenant_id, 2);
    free(rows);
    quota_table_free(t);
}

static void test_table_answers_and_peek(void **state)
{
    (void)state;
    struct quota_table *t = quota_table_new(NULL, NULL);
    struct quota_status st;
    quota_peek(t, 9, 100, T0, &st); /* an unknown tenant has it all */
    assert_int_equal(st.remaining, 100);
    assert_int_equal(st.reset, T0 + 86400);
    assert_int_equal(quota_count(t), 0); /* peeking creates nothing */
    assert_true(quota_charge(t, 9, 100, 10, T0, &st));
    assert_int_equal(st.remaining, 90);
    struct quota_row *rows = NULL;
    size_t n = 0, cap = 0;
    assert_true(quota_drain(t, &rows, &n, &cap));
    /* Another replica served 85 more: PostgreSQL's total is 95. */
    quota_apply_total(t, 9, DAY0, 10, 95);
    quota_peek(t, 9, 100, T0, &st);
    assert_int_equal(st.remaining, 5);
    assert_false(quota_charge(t, 9, 100, 10, T0, &st));
    assert_true(quota_charge(t, 9, 100, 5, T0, &st));
    assert_false(quota_charge(t, 9, 100, 1, T0, &st));
    assert_int_equal(st.remaining, 0);
    /* The next day the tenant starts over, without a flush. */
    assert_true(quota_charge(t, 9, 100, 1, T0 + 86400, &st));
    assert_int_equal(st.remaining, 99);
    assert_int_equal(st.reset, T0 + 2 * 86400);
    free(rows);
    quota_table_free(t);
}

static void test_merge(void **state)
{
    (void)state;
    struct quota_row rows[] = {
        {5, DAY0, 1}, {3, DAY0, 2}, {5, DAY0 - 1, 4}, {5, DAY0, 8}, {3, DAY0, 16},
    };
    size_t n = usage_flush_merge(rows, 5);
    assert_int_equal(n, 3);
    assert_true(rows[0].tenant_id == 3 && rows[0].day == DAY0 && rows[0].amount == 18);
    assert_true(rows[1].tenant_id == 5 && rows[1].day == DAY0 - 1 && rows[1].amount == 4);
    assert_true(rows[2].tenant_id == 5 && rows[2].day == DAY0 && rows[2].amount == 9);
    assert_int_equal(usage_flush_merge(rows, 0), 0);
}

struct worker {
    struct quota_table *t;
    int64_t counted;
};

static void *charge_run(void *arg)
{
    struct worker *w = arg;
    struct quota_status st;
    for (int i = 0; i < 50000; i++)
        w->counted += quota_charge(w->t, 1 + i % 7, 1000000, 1, T0, &st);
    return NULL;
}

/* Charges on four threads while the test drains: every count comes out exactly once. */
static void test_concurrent_charges_drain_exactly(void **state)
{
    (void)state;
    struct quota_table *t = quota_table_new(NULL, NULL);
    struct worker w[4] = {{t, 0}, {t, 0}, {t, 0}, {t, 0}};
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, charge_run, &w[i]), 0);
    struct quota_row *rows = NULL;
    size_t cap = 0;
    int64_t drained = 0;
    for (int round = 0; round < 2000; round++) {
        size_t n = 0;
        assert_true(quota_drain(t, &rows, &n, &cap));
        for (size_t i = 0; i < n; i++)
            drained += rows[i].amount;
    }
    int64_t counted = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        counted += w[i].counted;
    }
    size_t n = 0;
    assert_true(quota_drain(t, &rows, &n, &cap));
    for (size_t i = 0; i < n; i++)
        drained += rows[i].amount;
    assert_int_equal(counted, 200000);
    assert_int_equal(drained, counted);
    free(rows);
    quota_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scripts),
        cmocka_unit_test(test_day_arithmetic),
        cmocka_unit_test(test_flush_batch_by_remaining_quota),
        cmocka_unit_test(test_counts_batch_full),
        cmocka_unit_test(test_flush_trigger),
        cmocka_unit_test(test_table_kicks_every_batch_and_drains_served_tenants),
        cmocka_unit_test(test_table_answers_and_peek),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_concurrent_charges_drain_exactly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
