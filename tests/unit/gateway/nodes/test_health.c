/* Table tests for gateway/health: probe parsing and verdict, hysteresis, cooldown doubling
 * and ceiling, circuit breaker, EMA, quorum tip (ties, no majority, one node, lagging nodes),
 * tip distance and fork points. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "nodes/health.h"

/* A 64-hex hash made of one repeated character. */
static void hash_of(char c, char out[HEALTH_HASH_LEN + 1])
{
    memset(out, c, HEALTH_HASH_LEN);
    out[HEALTH_HASH_LEN] = '\0';
}

static struct health_probe good_probe(int64_t height, char top, char prev)
{
    struct health_probe p = {.responded = true,
                             .status_ok = true,
                             .synchronized = true,
                             .height = height,
                             .target_height = 0,
                             .rtt_ms = 10};
    hash_of(top, p.top_hash);
    hash_of(prev, p.prev_hash);
    return p;
}

static struct health_probe bad_probe(void)
{
    return (struct health_probe){.responded = false};
}

/* ---- parsing and the probe verdict ------------------------------------------------------ */

static void test_probe_parse(void **state)
{
    (void)state;
    char hash[65], prev[65];
    hash_of('a', hash);
    hash_of('b', prev);
    char info[512], header[512];
    snprintf(info, sizeof info,
             "{\"id\":0,\"jsonrpc\":\"2.0\",\"result\":{\"status\":\"OK\",\"height\":101,"
             "\"target_height\":0,\"synchronized\":true,\"busy_syncing\":false,"
             "\"top_block_hash\":\"%s\"}}",
             hash);
    snprintf(header, sizeof header,
             "{\"id\":0,\"jsonrpc\":\"2.0\",\"result\":{\"status\":\"OK\",\"block_header\":"
             "{\"height\":100,\"hash\":\"%s\",\"prev_hash\":\"%s\"}}}",
             hash, prev);
    struct health_probe p;
    health_probe_parse(&p, 200, info, 200, header, 12.5);
    assert_true(p.responded);
    assert_true(p.status_ok);
    assert_true(p.synchronized);
    assert_int_equal(p.height, 101);
    assert_string_equal(p.top_hash, hash);
    assert_string_equal(p.prev_hash, prev);
    struct health_params hp = health_params_default();
    assert_true(health_probe_good(&p, &hp));

    /* BUSY from the header call: answered, but not OK. */
    health_probe_parse(&p, 200, info, 200,
                       "{\"id\":0,\"jsonrpc\":\"2.0\",\"result\":{\"status\":\"BUSY\"}}", 1);
    assert_true(p.responded);
    assert_false(p.status_ok);
    assert_false(health_probe_good(&p, &hp));

    /* No answer, an HTTP error, or garbage. */
    health_probe_parse(&p, 0, NULL, 200, header, 1);
    assert_false(p.responded);
    health_probe_parse(&p, 500, info, 200, header, 1);
    assert_false(p.responded);
    health_probe_parse(&p, 200, "not json", 200, header, 1);
    assert_false(p.responded);
}

static void test_probe_verdict_table(void **state)
{
    (void)state;
    struct health_params hp = health_params_default();
    struct {
        bool responded, status_ok, synced, busy;
        int64_t height, target;
        bool misfit, good;
    } rows[] = {
        {true, true, true, false, 100, 0, false, true},    /* target 0: at the tip */
        {true, true, true, false, 100, 100, false, true},  /* target = height */
        {true, true, true, false, 100, 102, false, true},  /* 2 behind its target: allowed */
        {true, true, true, false, 100, 103, false, false}, /* 3 behind */
        {true, true, false, false, 100, 0, false, false},  /* not synchronized */
        {true, true, true, true, 100, 0, false, false},    /* busy syncing */
        {true, false, true, false, 100, 0, false, false},  /* status not OK */
        {false, true, true, false, 100, 0, false, false},  /* no answer */
        {true, true, true, false, 100, 0, true, false},    /* not of the pool (fit.h) */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct health_probe p = {.responded = rows[i].responded,
                                 .status_ok = rows[i].status_ok,
                                 .synchronized = rows[i].synced,
                                 .busy_syncing = rows[i].busy,
                                 .height = rows[i].height,
                                 .target_height = rows[i].target,
                                 .misfit = rows[i].misfit};
        assert_int_equal(health_probe_good(&p, &hp), rows[i].good);
    }
}

/* ---- hysteresis, cooldown, ceiling ------------------------------------------------------ */

static void test_hysteresis(void **state)
{
    (void)state;
    struct health_params hp = health_params_default();
    struct health_node n;
    health_node_init(&n, false);
    struct health_probe good = good_probe(100, 'a', 'b'), bad = bad_probe();
    /* A new node needs three good probes. */
    assert_false(health_node_observe(&n, &good, 0, &hp));
    assert_false(health_node_observe(&n, &good, 2000, &hp));
    assert_false(n.up);
    assert_true(health_node_observe(&n, &good, 4000, &hp));
    assert_true(n.up);
    /* One failure does not take it down; two in a row do. */
    assert_false(health_node_observe(&n, &bad, 6000, &hp));
    assert_true(n.up);
    assert_false(health_node_observe(&n, &good, 8000, &hp)); /* resets the count */
    assert_false(health_node_observe(&n, &bad, 10000, &hp));
    assert_true(health_node_observe(&n, &bad, 12000, &hp));
    assert_false(n.up);
    /* Two good probes are not enough to come back, a bad one resets, three are. */
    health_node_observe(&n, &good, 14000, &hp);
    health_node_observe(&n, &good, 16000, &hp);
    health_node_observe(&n, &bad, 18000, &hp);
    health_node_observe(&n, &good, 20000, &hp);
    health_node_observe(&n, &good, 22000, &hp);
    assert_false(n.up);
    assert_true(health_node_observe(&n, &good, 24000, &hp));
    assert_true(n.up);
}

/* A node the gateway started with serves after its first good probe; one that failed
 * first, and any node added later, earns `rise`. */
static void test_startup_nodes_need_one_good_probe(void **state)
{
    (void)state;
    struct health_params hp = health_params_default();
    struct health_probe good = good_probe(100, 'a', 'b'), bad = bad_probe();
    struct health_node n;
    health_node_init(&n, true);
    assert_true(health_node_observe(&n, &good, 0, &hp));
    assert_true(n.up);

    health_node_init(&n, true);
    assert_false(health_node_observe(&n, &bad, 0, &hp));
    assert_false(health_node_observe(&n, &good, 2000, &hp));
    assert_false(health_node_observe(&n, &good, 4000, &hp));
    assert_true(health_node_observe(&n, &good, 6000, &hp));

    /* Back up after a fall: the hysteresis applies again. */
    health_node_init(&n, true);
    health_node_observe(&n, &good, 0, &hp);
    health_node_observe(&n, &bad, 2000, &hp);
    assert_true(health_node_observe(&n, &bad, 4000, &hp));
    assert_false(health_node_observe(&n, &good, 6000, &hp));
    assert_false(n.up);

    health_node_init(&n, false);
    assert_false(health_node_observe(&n, &good, 0, &hp));
    assert_false(n.up);
}

static void test_cooldown_doubles_then_ceiling(void **state)
{
    (void)state;
    struct health_params hp = health_params_default();
    hp.cooldown_base_ms = 60000;
    hp.cooldown_ceiling_ms = 17LL * 3600 * 1000;
    struct health_node n;
    health_node_init(&n, false);
    struct health_probe bad = bad_probe();
    int64_t now = 0;
    /* Probed every round (2 s) for the first minute. */
    for (; now < 60000; now += 2000) {
        assert_true(health_probe_due(&n, now));
        health_node_observe(&n, &bad, now, &hp);
        assert_int_equal(n.cooldown_ms, 0);
    }
    /* Then 1, 2, 4, 8 … minutes between probes. */
    int64_t expected = 60000;
    int doublings = 0;
    while (!n.dropped) {
        assert_true(health_probe_due(&n, now));
        health_node_observe(&n, &bad, now, &hp);
        if (n.dropped)
            break;
        assert_int_equal(n.cooldown_ms, expected);
        assert_false(health_probe_due(&n, now + expected - 1));
        assert_true(health_probe_due(&n, now + expected));
        now += expected;
        expected *= 2;
        doublings++;
    }
    /* 1 + 1 + 2 + … + 512 min ≈ 17 h: dropped at the probe after the ceiling. */
    assert_int_equal(doublings, 10);
    assert_true(now >= hp.cooldown_ceiling_ms);
    assert_false(health_probe_due(&n, now + 365LL * 86400000));
    /* A good probe resets the cooldown of a node that is not dropped. */
    struct health_node m;
    health_node_init(&m, false);
    for (now = 0; now <= 70000; now += 2000)
        health_node_observe(&m, &bad, now, &hp);
    assert_true(m.cooldown_ms > 0);
    struct health_probe good = good_probe(100, 'a', 'b');
    health_node_observe(&m, &good, now, &hp);
    assert_int_equal(m.cooldown_ms, 0);
    assert_true(health_probe_due(&m, now + 1));
}

static void test_ema(void **state)
{
    (void)state;
    struct health_params hp = health_params_default();
    struct health_node n;
    health_node_init(&n, false);
    struct health_probe p = good_probe(100, 'a', 'b');
    double samples[] = {10, 20, 20, 0};
    double expected[] = {10, 13, 15.1, 10.57};
    for (size_t i = 0; i < 4; i++) {
        p.rtt_ms = samples[i];
        health_node_observe(&n, &p, (int64_t)i * 2000, &hp);
        assert_float_equal(n.ema_ms, expected[i], 1e-9);
    }
}

/* ---- circuit breaker ------------------------------------------------------------------- */

static void test_breaker(void **state)
{
    (void)state;
    struct health_params hp = health_params_default();
    hp.breaker_failures = 3;
    hp.breaker_open_ms = 5000;
    struct health_node n;
    health_node_init(&n, false);
    assert_true(health_breaker_allows(&n, 0, true));
    health_breaker_record(&n, false, 0, &hp);
    health_breaker_record(&n, false, 10, &hp);
    assert_int_equal(n.breaker, HEALTH_BREAKER_CLOSED);
    health_breaker_record(&n, false, 20, &hp);
    assert_int_equal(n.breaker, HEALTH_BREAKER_OPEN);
    assert_false(health_breaker_allows(&n, 4000, true));
    /* After the open period: one trial, and only one. */
    assert_true(health_breaker_allows(&n, 5020, false)); /* looking does not take it */
    assert_int_equal(n.breaker, HEALTH_BREAKER_HALF_OPEN);
    assert_true(health_breaker_allows(&n, 5020, true));
    assert_false(health_breaker_allows(&n, 5021, true));
    /* The trial fails: open again at once. */
    health_breaker_record(&n, false, 5030, &hp);
    assert_int_equal(n.breaker, HEALTH_BREAKER_OPEN);
    assert_false(health_breaker_allows(&n, 10029, true));
    assert_true(health_breaker_allows(&n, 10030, true));
    /* The trial succeeds: closed, and failures count from zero. */
    health_breaker_record(&n, true, 10040, &hp);
    assert_int_equal(n.breaker, HEALTH_BREAKER_CLOSED);
    health_breaker_record(&n, false, 10050, &hp);
    assert_int_equal(n.breaker, HEALTH_BREAKER_CLOSED);
}

/* ---- quorum ----------------------------------------------------------------------------- */

/* A node whose chain shows tops (height, hash char) in order, newest last. */
struct fake_node {
    bool responsive;
    const char *tops; /* "100a 101b": heights and hash characters */
    bool non_voting;  /* a public node */
    struct health_history_entry history[HEALTH_HISTORY];
};

static void fill_history(struct fake_node *f)
{
    memset(f->history, 0, sizeof f->history);
    size_t i = 0;
    const char *s = f->tops;
    while (s && *s && i < HEALTH_HISTORY) {
        long long h;
        char c;
        int used;
        if (sscanf(s, "%lld%c%n", &h, &c, &used) != 2)
            break;
        f->history[i].height = h;
        hash_of(c, f->history[i].hash);
        i++;
        s += used;
        while (*s == ' ')
            s++;
    }
}

static struct health_quorum quorum_of(struct fake_node *nodes, size_t count)
{
    struct health_chain_view views[8];
    for (size_t i = 0; i < count; i++) {
        fill_history(&nodes[i]);
        views[i] =
            (struct health_chain_view){nodes[i].responsive, nodes[i].history, nodes[i].non_voting};
    }
    return health_quorum_compute(views, count);
}

static void test_quorum_table(void **state)
{
    (void)state;
    struct {
        const char *name;
        struct fake_node nodes[4];
        size_t count;
        bool degraded;
        int64_t height;
        char hash;
        size_t agreeing;
    } rows[] = {
        {"three agree",
         {{.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "100a"}},
         3,
         false,
         100,
         'a',
         3},
        {"one node is its own quorum", {{.responsive = true, .tops = "7x"}}, 1, false, 7, 'x', 1},
        {"two of three at the tip, one a block behind on the same chain",
         {{.responsive = true, .tops = "100a 101b"},
          {.responsive = true, .tops = "100a 101b"},
          {.responsive = true, .tops = "100a"}},
         3,
         false,
         101,
         'b',
         2},
        {"one ahead: the majority's tip, which the leader's history holds",
         {{.responsive = true, .tops = "100a 101b"},
          {.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "100a"}},
         3,
         false,
         100,
         'a',
         3},
        {"three different tips at one height: no majority",
         {{.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "100b"},
          {.responsive = true, .tops = "100c"}},
         3,
         true,
         100,
         'a',
         0},
        {"two nodes disagree: a tie is no majority",
         {{.responsive = true, .tops = "100a"}, {.responsive = true, .tops = "100b"}},
         2,
         true,
         100,
         'a',
         0},
        {"a frozen node does not count",
         {{.responsive = false, .tops = "100a"},
          {.responsive = true, .tops = "101b"},
          {.responsive = true, .tops = "101b"}},
         3,
         false,
         101,
         'b',
         2},
        {"a fork: two on b, one on c at a greater height",
         {{.responsive = true, .tops = "99z 100b"},
          {.responsive = true, .tops = "99z 100b"},
          {.responsive = true, .tops = "99z 100c 101d"}},
         3,
         false,
         100,
         'b',
         2},
        {"degraded serves from the highest node",
         {{.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "102c"},
          {.responsive = true, .tops = "101b"}},
         3,
         true,
         102,
         'c',
         0},
        {"two of four is not a majority",
         {{.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "100b"},
          {.responsive = true, .tops = "100b"}},
         4,
         true,
         100,
         'a',
         0},
        {"three of four is",
         {{.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "100b"}},
         4,
         false,
         100,
         'a',
         3},
        {"nobody answers",
         {{.responsive = false, .tops = "100a"}, {.responsive = false, .tops = "100a"}},
         2,
         true,
         0,
         0,
         0},
        {"one survivor of three configured is no quorum: degraded on its tip",
         {{.responsive = false, .tops = "100a"},
          {.responsive = false, .tops = "100a"},
          {.responsive = true, .tops = "100a 101b"}},
         3,
         true,
         101,
         'b',
         0},
        {"two silent of four: the two that answer are no majority of four",
         {{.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "100a"},
          {.responsive = false, .tops = "100a"},
          {.responsive = false, .tops = ""}},
         4,
         true,
         100,
         'a',
         0},
        {"a public node does not vote: two own nodes agree below it",
         {{.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "100a 101p", .non_voting = true}},
         3,
         false,
         100,
         'a',
         2},
        {"public nodes cannot outvote: one own against two public on another tip",
         {{.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "100b", .non_voting = true},
          {.responsive = true, .tops = "100b", .non_voting = true}},
         3,
         false,
         100,
         'a',
         1},
        {"public nodes do not make a quorum for a silent own pair",
         {{.responsive = false, .tops = "100a"},
          {.responsive = false, .tops = "100a"},
          {.responsive = true, .tops = "100a", .non_voting = true},
          {.responsive = true, .tops = "100a", .non_voting = true}},
         4,
         true,
         100,
         'a',
         0},
        {"degraded prefers the highest own node to a higher public one",
         {{.responsive = true, .tops = "100a"},
          {.responsive = true, .tops = "101b"},
          {.responsive = true, .tops = "105p", .non_voting = true}},
         3,
         true,
         101,
         'b',
         0},
        {"only public nodes: degraded, on the highest of them",
         {{.responsive = true, .tops = "100a", .non_voting = true},
          {.responsive = true, .tops = "101b", .non_voting = true}},
         2,
         true,
         101,
         'b',
         0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct health_quorum q = quorum_of(rows[i].nodes, rows[i].count);
        printf("# %s\n", rows[i].name);
        assert_int_equal(q.degraded, rows[i].degraded);
        assert_int_equal(q.height, rows[i].height);
        assert_int_equal(q.agreeing, rows[i].agreeing);
        if (rows[i].hash) {
            char expected[65];
            hash_of(rows[i].hash, expected);
            assert_string_equal(q.hash, expected);
        }
    }
}

/* The counts the quorum reports: voters are the configured own nodes, answered or not. */
static void test_quorum_counts(void **state)
{
    (void)state;
    struct fake_node nodes[] = {
        {.responsive = true, .tops = "100a"},
        {.responsive = false, .tops = "100a"},
        {.responsive = true, .tops = "100a"},
        {.responsive = true, .tops = "100a", .non_voting = true},
    };
    struct health_quorum q = quorum_of(nodes, 4);
    assert_false(q.degraded);
    assert_int_equal(q.voters, 3);
    assert_int_equal(q.responsive, 2);
    assert_int_equal(q.agreeing, 2);
}

/* The history a node builds from its probes: a switch to another chain forgets the past. */
static void test_history_follows_the_node(void **state)
{
    (void)state;
    struct health_params hp = health_params_default();
    struct health_node n;
    health_node_init(&n, false);
    struct health_probe p = good_probe(100, 'a', '9');
    health_node_observe(&n, &p, 0, &hp);
    p = good_probe(101, 'b', 'a');
    health_node_observe(&n, &p, 1, &hp);
    struct health_chain_view view = {true, n.history, false};
    struct health_quorum q = health_quorum_compute(&view, 1);
    assert_int_equal(q.height, 101);
    /* Its new top's parent is not the 'b' it showed: it reorganised. */
    p = good_probe(102, 'd', 'c');
    health_node_observe(&n, &p, 2, &hp);
    size_t kept = 0;
    for (size_t i = 0; i < HEALTH_HISTORY; i++)
        kept += n.history[i].height != 0;
    assert_int_equal(kept, 1);
    /* Going back down (pop_blocks) drops what is above the new top. */
    p = good_probe(90, 'e', 'f');
    health_node_observe(&n, &p, 3, &hp);
    for (size_t i = 0; i < HEALTH_HISTORY; i++)
        assert_true(n.history[i].height <= 90);
}

static void test_tip_distance(void **state)
{
    (void)state;
    char chain[5][HEALTH_HASH_LEN + 1];
    /* The quorum chain: block heights 96..100 = 'p','q','r','s','t'; tip length 101. */
    for (int i = 0; i < 5; i++)
        hash_of((char)('p' + i), chain[i]);
    struct health_quorum q = {.height = 101};
    hash_of('t', q.hash);
    struct fake_node on_tip = {.responsive = true, .tops = "100s 101t"},
                     behind = {.responsive = true, .tops = "99r"},
                     other = {.responsive = true, .tops = "99x"},
                     far = {.responsive = true, .tops = "50r"},
                     ahead = {.responsive = true, .tops = "101t 102u"},
                     fork_high = {.responsive = true, .tops = "101z"};
    struct fake_node *all[] = {&on_tip, &behind, &other, &far, &ahead, &fork_high};
    int64_t expected[] = {0, 2, -1, -1, 0, -1};
    for (size_t i = 0; i < 6; i++) {
        fill_history(all[i]);
        assert_int_equal(health_tip_distance(all[i]->history, &q,
                                             (const char(*)[HEALTH_HASH_LEN + 1]) chain, 5, 96),
                         expected[i]);
    }
}

/* ---- fork points ----------------------------------------------------------------------- */

static void chain_from(const char *hashes, char (*out)[HEALTH_HASH_LEN + 1])
{
    for (size_t i = 0; hashes[i]; i++)
        hash_of(hashes[i], out[i]);
}

static void test_fork_point_table(void **state)
{
    (void)state;
    struct {
        const char *old;
        int64_t old_first;
        const char *fresh;
        int64_t new_first;
        int64_t fork;
    } rows[] = {
        {"abcde", 10, "abcde", 10, INT64_MAX}, /* same chain */
        {"abcde", 10, "bcdef", 11, INT64_MAX}, /* one block on top */
        {"abcde", 10, "abcXY", 10, 12},        /* heights 13, 14 replaced */
        {"abcde", 10, "bcXYZ", 11, 12},        /* replaced and extended */
        {"abcde", 10, "VWXYZ", 10, -1},        /* deeper than the record */
        {"abcde", 10, "fghij", 15, INT64_MAX}, /* no shared height: nothing to compare */
        {"abcde", 10, "aXcde", 10, 10},        /* the lowest difference decides */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char old_chain[8][HEALTH_HASH_LEN + 1], new_chain[8][HEALTH_HASH_LEN + 1];
        chain_from(rows[i].old, old_chain);
        chain_from(rows[i].fresh, new_chain);
        int64_t fork =
            health_fork_point((const char(*)[HEALTH_HASH_LEN + 1]) old_chain, strlen(rows[i].old),
                              rows[i].old_first, (const char(*)[HEALTH_HASH_LEN + 1]) new_chain,
                              strlen(rows[i].fresh), rows[i].new_first);
        assert_int_equal(fork, rows[i].fork);
    }
}

/* ---- the prober's own liveness --------------------------------------------------------- */

static void test_prober_stalled_table(void **state)
{
    (void)state;
    struct {
        int64_t now, since, interval, timeout;
        bool stalled;
        int64_t age;
    } rows[] = {
        {1000, 1000, 2000, 1500, false, 0},    /* a round just ended */
        {7000, 1000, 2000, 1500, false, 6000}, /* exactly three intervals: not yet */
        {7001, 1000, 2000, 1500, true, 6001},  /* past three intervals */
        {5000, 0, 2000, 1500, false, 5000},    /* interval + 2 × timeout: a slow round */
        {500, 1000, 2000, 1500, false, 0},     /* now before since: no time passed */
        {9000, 0, 2000, 3000, false, 9000},    /* timeout > interval: three timeouts */
        {9001, 0, 2000, 3000, true, 9001},     /* … and past them */
        {8000, 0, 1000, 3000, false, 8000},    /* interval + 2 × timeout < 3 × timeout */
        {301, 0, 100, 50, true, 301},          /* the shortest interval */
        {INT64_MAX / 2, 0, 60000, 60000, true, INT64_MAX / 2}, /* never ended one */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t age = -1;
        bool stalled = health_prober_stalled(rows[i].now, rows[i].since, rows[i].interval,
                                             rows[i].timeout, &age);
        if (stalled != rows[i].stalled || age != rows[i].age)
            fail_msg("row %zu: stalled %d age %lld", i, stalled, (long long)age);
    }
    assert_int_equal(health_stall_limit_ms(2000, 1500), 6000);
    assert_int_equal(health_stall_limit_ms(2000, 3000), 9000);
    assert_false(health_prober_stalled(0, 0, 2000, 1500, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe_parse),
        cmocka_unit_test(test_probe_verdict_table),
        cmocka_unit_test(test_hysteresis),
        cmocka_unit_test(test_startup_nodes_need_one_good_probe),
        cmocka_unit_test(test_cooldown_doubles_then_ceiling),
        cmocka_unit_test(test_ema),
        cmocka_unit_test(test_breaker),
        cmocka_unit_test(test_quorum_table),
        cmocka_unit_test(test_quorum_counts),
        cmocka_unit_test(test_history_follows_the_node),
        cmocka_unit_test(test_tip_distance),
        cmocka_unit_test(test_fork_point_table),
        cmocka_unit_test(test_prober_stalled_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
