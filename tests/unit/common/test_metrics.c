/* Tests for xg_metrics (registry, label folding, exposition) and the admin credential
 * check of xg_admin. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "xg_admin.h"
#include "xg_metrics.h"

static const char *const classes[] = {"immutable", "tip", "passthrough", NULL};
static const char *const statuses[] = {"200", "429", NULL};

/* Whether `line` appears as a whole line of text. */
static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
            return true;
    return false;
}

static char *render(struct xg_metrics *reg)
{
    size_t len = 0;
    char *text = xg_metrics_render(reg, &len);
    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    return text;
}

static void test_names(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        bool metric, label;
    } cases[] = {
        {"xmrgate_requests_total", true, true},
        {"a:b", true, false},
        {"_x", true, true},
        {"__reserved", true, false},
        {"le", true, false},
        {"9lives", false, false},
        {"has-dash", false, false},
        {"has space", false, false},
        {"", false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (xg_metrics_name_valid(cases[i].name) != cases[i].metric)
            fail_msg("metric name \"%s\"", cases[i].name);
        if (xg_metrics_label_name_valid(cases[i].name) != cases[i].label)
            fail_msg("label name \"%s\"", cases[i].name);
    }
}

static void test_counter_labels_and_folding(void **state)
{
    (void)state;
    struct xg_metrics *reg = xg_metrics_new();
    struct xg_metric_labels *cls = xg_metric_labels_fixed(reg, "class", classes);
    struct xg_metric_labels *st = xg_metric_labels_fixed(reg, "status", statuses);
    struct xg_metric *req = xg_metric_counter(reg, "t_requests_total", "Requests.",
                                              (struct xg_metric_labels *[]){cls, st}, 2);
    assert_non_null(req);
    assert_int_equal(xg_metric_label_count(cls), 4);
    assert_int_equal(xg_metric_label_index(cls, "tip"), 1);
    /* Unknown values fold into "other" rather than growing the set. */
    unsigned other = xg_metric_label_index(cls, "mining");
    assert_int_equal(other, 3);
    assert_int_equal(xg_metric_label_index(cls, NULL), 3);

    xg_metric_inc(req, (unsigned[]){1, 0});
    xg_metric_add(req, (unsigned[]){1, 0}, 4);
    xg_metric_inc(req, (unsigned[]){other, xg_metric_label_index(st, "418")});
    /* An index out of range is clamped to "other", never written out of bounds. */
    xg_metric_inc(req, (unsigned[]){99, 99});
    assert_true(xg_metric_value(req, (unsigned[]){1, 0}) == 5);
    assert_true(xg_metric_value(req, (unsigned[]){3, 2}) == 2);

    char *text = render(reg);
    assert_true(has_line(text, "# HELP t_requests_total Requests."));
    assert_true(has_line(text, "# TYPE t_requests_total counter"));
    assert_true(has_line(text, "t_requests_total{class=\"tip\",status=\"200\"} 5"));
    assert_true(has_line(text, "t_requests_total{class=\"other\",status=\"other\"} 2"));
    /* Series that never moved are not shown. */
    assert_null(strstr(text, "class=\"immutable\""));
    free(text);
    xg_metrics_free(reg);
}

static void test_unlabelled_counter_always_shown(void **state)
{
    (void)state;
    struct xg_metrics *reg = xg_metrics_new();
    struct xg_metric *c = xg_metric_counter(reg, "t_flushes_total", "Flushes.", NULL, 0);
    assert_non_null(c);
    char *text = render(reg);
    assert_true(has_line(text, "t_flushes_total 0"));
    free(text);
    xg_metric_inc(c, NULL);
    text = render(reg);
    assert_true(has_line(text, "t_flushes_total 1"));
    free(text);
    xg_metrics_free(reg);
}

static void test_gauges(void **state)
{
    (void)state;
    struct xg_metrics *reg = xg_metrics_new();
    struct xg_metric_labels *node = xg_metric_labels_dynamic(reg, "node", 2);
    struct xg_metric *h =
        xg_metric_gauge(reg, "t_node_height", "Height.", (struct xg_metric_labels *[]){node}, 1);
    struct xg_metric *deg = xg_metric_gauge(reg, "t_degraded", "Degraded.", NULL, 0);
    assert_non_null(h);
    /* A gauge never set is not shown at all; a gauge set to 0 is. */
    char *text = render(reg);
    assert_null(strstr(text, "\nt_degraded "));
    free(text);
    xg_metric_set(deg, NULL, 0);
    unsigned a = xg_metric_label_index(node, "a");
    unsigned b = xg_metric_label_index(node, "b\"q");
    assert_int_equal(xg_metric_label_index(node, "a"), a);
    /* The set is full: a third name folds into "other". */
    assert_int_equal(xg_metric_label_index(node, "c"), 2);
    xg_metric_set(h, &a, 1234);
    xg_metric_set(h, &b, 0.5);
    text = render(reg);
    assert_true(has_line(text, "t_degraded 0"));
    assert_true(has_line(text, "t_node_height{node=\"a\"} 1234"));
    assert_true(has_line(text, "t_node_height{node=\"b\\\"q\"} 0.5"));
    assert_null(strstr(text, "node=\"other\""));
    free(text);
    xg_metric_set(h, &a, NAN);
    assert_true(isnan(xg_metric_value(h, &a)));
    xg_metric_set(deg, NULL, INFINITY);
    text = render(reg);
    assert_true(has_line(text, "t_node_height{node=\"a\"} NaN"));
    assert_true(has_line(text, "t_degraded +Inf"));
    free(text);
    xg_metric_reset(h);
    assert_true(isnan(xg_metric_value(h, &a)));
    text = render(reg);
    assert_null(strstr(text, "t_node_height{"));
    free(text);
    xg_metrics_free(reg);
}

static void test_histogram(void **state)
{
    (void)state;
    struct xg_metrics *reg = xg_metrics_new();
    struct xg_metric_labels *cls = xg_metric_labels_fixed(reg, "class", classes);
    static const double bounds[] = {0.01, 0.1, 1};
    struct xg_metric *lat = xg_metric_histogram(reg, "t_seconds", "Latency.",
                                                (struct xg_metric_labels *[]){cls}, 1, bounds, 3);
    assert_non_null(lat);
    unsigned tip = 1;
    xg_metric_observe(lat, &tip, 0.005);
    xg_metric_observe(lat, &tip, 0.01); /* le is inclusive */
    xg_metric_observe(lat, &tip, 0.5);
    xg_metric_observe(lat, &tip, 7);
    char *text = render(reg);
    assert_true(has_line(text, "# TYPE t_seconds histogram"));
    assert_true(has_line(text, "t_seconds_bucket{class=\"tip\",le=\"0.01\"} 2"));
    assert_true(has_line(text, "t_seconds_bucket{class=\"tip\",le=\"0.1\"} 2"));
    assert_true(has_line(text, "t_seconds_bucket{class=\"tip\",le=\"1\"} 3"));
    assert_true(has_line(text, "t_seconds_bucket{class=\"tip\",le=\"+Inf\"} 4"));
    assert_true(has_line(text, "t_seconds_count{class=\"tip\"} 4"));
    assert_true(has_line(text, "t_seconds_sum{class=\"tip\"} 7.5149999999999997") ||
                has_line(text, "t_seconds_sum{class=\"tip\"} 7.515"));
    assert_null(strstr(text, "class=\"immutable\""));
    free(text);
    xg_metrics_free(reg);
}

static void test_registration_refusals(void **state)
{
    (void)state;
    struct xg_metrics *reg = xg_metrics_new();
    assert_non_null(xg_metric_counter(reg, "t_x", "", NULL, 0));
    assert_null(xg_metric_counter(reg, "t_x", "", NULL, 0));            /* taken */
    assert_null(xg_metric_gauge(reg, "bad-name", "", NULL, 0));         /* invalid */
    assert_null(xg_metric_histogram(reg, "t_h", "", NULL, 0, NULL, 0)); /* no buckets */
    static const double unsorted[] = {1, 0.5};
    assert_null(xg_metric_histogram(reg, "t_h", "", NULL, 0, unsorted, 2));
    assert_null(xg_metric_labels_fixed(reg, "le", classes));
    /* Too many series: cardinality is refused at registration, not discovered later. */
    struct xg_metric_labels *big = xg_metric_labels_dynamic(reg, "big", 100);
    assert_null(
        xg_metric_counter(reg, "t_big", "", (struct xg_metric_labels *[]){big, big, big}, 3));
    /* A NULL family is a no-op, so code paths may run without a registry. */
    xg_metric_inc(NULL, NULL);
    xg_metric_observe(NULL, NULL, 1);
    assert_string_equal(xg_metrics_family_name(reg, 0), "t_x");
    assert_null(xg_metrics_family_name(reg, 1));
    xg_metrics_free(reg);
}

static void test_help_escaping(void **state)
{
    (void)state;
    struct xg_metrics *reg = xg_metrics_new();
    assert_non_null(xg_metric_counter(reg, "t_e", "a\\b\nc", NULL, 0));
    char *text = render(reg);
    assert_true(has_line(text, "# HELP t_e a\\\\b\\nc"));
    free(text);
    xg_metrics_free(reg);
}

struct collect_ctx {
    struct xg_metric *g;
    int calls;
};

static void on_collect(void *arg)
{
    struct collect_ctx *c = arg;
    c->calls++;
    xg_metric_set(c->g, NULL, c->calls * 10);
}

static void test_collectors(void **state)
{
    (void)state;
    struct xg_metrics *reg = xg_metrics_new();
    struct collect_ctx c = {.g = xg_metric_gauge(reg, "t_collected", "", NULL, 0)};
    assert_true(xg_metrics_add_collector(reg, on_collect, &c));
    char *text = render(reg);
    assert_true(has_line(text, "t_collected 10"));
    free(text);
    text = render(reg);
    assert_true(has_line(text, "t_collected 20"));
    free(text);
    xg_metrics_free(reg);
}

struct hammer {
    struct xg_metric *c, *h;
    struct xg_metric_labels *node;
};

static void *hammer_thread(void *arg)
{
    struct hammer *hm = arg;
    char name[8];
    for (int i = 0; i < 100000; i++) {
        snprintf(name, sizeof name, "n%d", i % 5);
        unsigned idx = xg_metric_label_index(hm->node, name);
        xg_metric_inc(hm->c, &idx);
        xg_metric_observe(hm->h, &idx, 0.001);
    }
    return NULL;
}

/* Concurrent writers lose no update and never grow a set past its bound. */
static void test_concurrent_updates(void **state)
{
    (void)state;
    struct xg_metrics *reg = xg_metrics_new();
    static const double bounds[] = {0.01};
    struct hammer hm;
    hm.node = xg_metric_labels_dynamic(reg, "node", 3);
    hm.c = xg_metric_counter(reg, "t_c", "", (struct xg_metric_labels *[]){hm.node}, 1);
    hm.h =
        xg_metric_histogram(reg, "t_hh", "", (struct xg_metric_labels *[]){hm.node}, 1, bounds, 1);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer_thread, &hm), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    double total = 0, observed = 0;
    for (unsigned i = 0; i < xg_metric_label_count(hm.node); i++) {
        total += xg_metric_value(hm.c, &i);
        observed += xg_metric_value(hm.h, &i);
    }
    assert_true(total == 400000);
    assert_true(observed == 400000);
    /* n0..n4 into three slots: two names share "other" (2 × 80000). */
    unsigned other = 3;
    assert_true(xg_metric_value(hm.c, &other) == 160000);
    xg_metrics_free(reg);
}

static void test_admin_bearer(void **state)
{
    (void)state;
    static const struct {
        const char *header, *token;
        bool ok;
    } cases[] = {
        {"Bearer s3cret", "s3cret", true},
        {"bearer s3cret", "s3cret", true},
        {"Bearer s3cre", "s3cret", false},
        {"Bearer s3cretX", "s3cret", false},
        {"Basic s3cret", "s3cret", false},
        {"s3cret", "s3cret", false},
        {NULL, "s3cret", false},
        {"Bearer ", "", false}, /* an empty token disables the API */
        {"Bearer x", NULL, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (xg_admin_bearer_ok(cases[i].header, cases[i].token) != cases[i].ok)
            fail_msg("case %zu: \"%s\"", i, cases[i].header ? cases[i].header : "(null)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_counter_labels_and_folding),
        cmocka_unit_test(test_unlabelled_counter_always_shown),
        cmocka_unit_test(test_gauges),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_registration_refusals),
        cmocka_unit_test(test_help_escaping),
        cmocka_unit_test(test_collectors),
        cmocka_unit_test(test_concurrent_updates),
        cmocka_unit_test(test_admin_bearer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
