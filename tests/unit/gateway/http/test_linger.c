/* Table tests for gateway/linger: the budget rule of a lingering close (when a socket
 * reads on, waits, or closes) and its deadline. The sockets themselves are tested through
 * the front end in test_front.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "http/linger.h"

/* 1 MiB, 2 s without input, 10 s in all; the socket began lingering at t = 1000 ms. */
static const struct linger_budget BUDGET = {
    .max_bytes = (uint64_t)1 << 20, .idle_ms = 2000, .max_ms = 10000};

struct row {
    const char *name;
    uint64_t drained;
    int64_t last_ms;
    enum linger_read got;
    int64_t now_ms;
    enum linger_verdict want;
};

static const struct row ROWS[] = {
    {"input: read on", 1000, 1500, LINGER_GOT_DATA, 1500, LINGER_READ_MORE},
    {"none for now: wait", 1000, 1500, LINGER_GOT_NOTHING, 1500, LINGER_WAIT},
    {"the client closed: close", 0, 1000, LINGER_GOT_EOF, 1000, LINGER_CLOSE},
    {"the client closed after input: close", 5000, 1200, LINGER_GOT_EOF, 1200, LINGER_CLOSE},
    {"one byte under the byte budget: read on", ((uint64_t)1 << 20) - 1, 1500, LINGER_GOT_DATA,
     1500, LINGER_READ_MORE},
    {"the byte budget spent: close", (uint64_t)1 << 20, 1500, LINGER_GOT_DATA, 1500, LINGER_CLOSE},
    {"the byte budget spent, nothing more there: close", (uint64_t)3 << 20, 1500,
     LINGER_GOT_NOTHING, 1500, LINGER_CLOSE},
    {"quiet 1999 ms: wait", 0, 1000, LINGER_GOT_NOTHING, 2999, LINGER_WAIT},
    {"quiet 2000 ms (a timer): close", 0, 1000, LINGER_GOT_NOTHING, 3000, LINGER_CLOSE},
    {"input keeps it going past the idle time", 4000, 4000, LINGER_GOT_DATA, 4000,
     LINGER_READ_MORE},
    {"busy at 9999 ms: read on", 9000, 10999, LINGER_GOT_DATA, 10999, LINGER_READ_MORE},
    {"busy at 10000 ms: close all the same", 9000, 11000, LINGER_GOT_DATA, 11000, LINGER_CLOSE},
    {"a clock that went back is no reason to close", 0, 1000, LINGER_GOT_NOTHING, 500, LINGER_WAIT},
};

static void test_verdicts(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
        const struct row *r = &ROWS[i];
        struct linger_progress p = {.drained = r->drained, .since_ms = 1000, .last_ms = r->last_ms};
        enum linger_verdict v = linger_verdict(&BUDGET, &p, r->got, r->now_ms);
        if (v != r->want) {
            print_error("%s: verdict %d, want %d\n", r->name, v, r->want);
            fail();
        }
    }
}

/* The deadline is the idle end while the socket is young, the hard end once input kept it
 * going; at the deadline the verdict closes, a millisecond before it waits. */
static void test_deadline(void **state)
{
    (void)state;
    struct {
        int64_t last_ms, want;
    } cases[] = {{1000, 3000}, {5000, 7000}, {8000, 10000}, {8001, 10001}, {10500, 11000}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct linger_progress p = {.drained = 10, .since_ms = 1000, .last_ms = cases[i].last_ms};
        int64_t due = linger_deadline(&BUDGET, &p);
        assert_int_equal(due, cases[i].want);
        assert_int_equal(linger_verdict(&BUDGET, &p, LINGER_GOT_NOTHING, due - 1), LINGER_WAIT);
        assert_int_equal(linger_verdict(&BUDGET, &p, LINGER_GOT_NOTHING, due), LINGER_CLOSE);
    }
}

/* The gateway's own budget is within what the issue asked for: bounded bytes and time. */
static void test_default_budget(void **state)
{
    (void)state;
    struct linger_budget b = LINGER_BUDGET_DEFAULT;
    assert_true(b.max_bytes >= 64 * 1024 && b.max_bytes <= 1024 * 1024);
    assert_true(b.idle_ms > 0 && b.idle_ms <= b.max_ms && b.max_ms <= 30000);
    assert_true(LINGER_MAX_SOCKETS > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_default_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
