/* Tests for billing/hook_event: which events each settling step writes to the outbox (the
 * rows an invoice's webhook gets), their stable ids, and the body's fields. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "hooks/hook_event.h"

#define P  INVOICE_PENDING
#define SE INVOICE_SEEN
#define C  INVOICE_CONFIRMING
#define PA INVOICE_PAID
#define PR INVOICE_PROVISIONED
#define U  INVOICE_UNDERPAID
#define E  INVOICE_EXPIRED
#define L  INVOICE_LATE
#define R  INVOICE_REVERTED

/* events written as "seen confirming:3 provisioned" */
static const struct {
    enum invoice_state before, after;
    int64_t conf_before, conf_after;
    const char *events;
} rows[] = {
    {P, P, 0, 0, ""},
    {P, SE, 0, 0, "seen"},
    {SE, SE, 0, 0, "seen"},            /* rewritten: the outbox's unique key makes it a no-op */
    {P, C, 0, 1, "seen confirming:1"}, /* mined before the pool was seen */
    {SE, C, 0, 1, "seen confirming:1"},
    {C, C, 1, 2, "seen confirming:2"},
    {C, C, 2, 2, "seen"},
    {C, C, 3, 2, "seen"}, /* a reorg took one back: no event for a lower count */
    {C, PA, 9, 10, "seen confirming:10"},
    {C, PR, 9, 10, "provisioned"},
    {SE, PR, 0, 10, "provisioned"},
    {P, PR, 0, 0, "seen provisioned"}, /* zero-conf or many blocks at once */
    {U, PR, 0, 3, "seen provisioned"},
    {L, PR, 2, 3, "seen provisioned"},
    {PR, PR, 10, 11, ""}, /* sticky */
    {P, E, 0, 0, "expired"},
    {U, E, 0, 0, "expired"},
    {R, E, 0, 0, "expired"},
    {E, E, 0, 0, ""},
    {P, U, 0, 0, ""},
    {SE, R, 0, 0, ""},
    {C, R, 2, 0, ""},
    {E, L, 0, 0, ""},
    {L, L, 0, 1, "confirming:1"},
};

static void render(const struct hook_event *ev, size_t n, char *out, size_t len)
{
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char one[40];
        if (ev[i].type == HOOK_EVENT_CONFIRMING)
            snprintf(one, sizeof one, "%sconfirming:%lld", i ? " " : "",
                     (long long)ev[i].confirmations);
        else
            snprintf(one, sizeof one, "%s%s", i ? " " : "", hook_event_type_name(ev[i].type));
        strncat(out, one, len - strlen(out) - 1);
    }
}

static void test_transitions(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct hook_transition t = {rows[i].before, rows[i].after, rows[i].conf_before,
                                    rows[i].conf_after};
        struct hook_event ev[HOOK_EVENT_MAX];
        size_t n = hook_event_from_transition(&t, ev);
        assert_true(n <= HOOK_EVENT_MAX);
        char got[128];
        render(ev, n, got, sizeof got);
        if (strcmp(got, rows[i].events) != 0)
            fail_msg("row %zu %s -> %s (%lld -> %lld): \"%s\", expected \"%s\"", i,
                     invoice_state_name(rows[i].before), invoice_state_name(rows[i].after),
                     (long long)rows[i].conf_before, (long long)rows[i].conf_after, got,
                     rows[i].events);
    }
}

static void test_ids(void **state)
{
    (void)state;
    const char *inv = "0b7e7a7c-1111-4222-8333-444455556666";
    char id[HOOK_EVENT_ID_SIZE];
    struct hook_event seen = {HOOK_EVENT_SEEN, 0}, c3 = {HOOK_EVENT_CONFIRMING, 3},
                      c4 = {HOOK_EVENT_CONFIRMING, 4}, pr = {HOOK_EVENT_PROVISIONED, 10},
                      ex = {HOOK_EVENT_EXPIRED, 0};
    hook_event_id(inv, &seen, id);
    assert_string_equal(id, "0b7e7a7c-1111-4222-8333-444455556666.seen");
    hook_event_id(inv, &c3, id);
    assert_string_equal(id, "0b7e7a7c-1111-4222-8333-444455556666.confirming.3");
    hook_event_id(inv, &c4, id);
    assert_string_equal(id, "0b7e7a7c-1111-4222-8333-444455556666.confirming.4");
    hook_event_id(inv, &pr, id);
    assert_string_equal(id, "0b7e7a7c-1111-4222-8333-444455556666.provisioned");
    hook_event_id(inv, &ex, id);
    assert_string_equal(id, "0b7e7a7c-1111-4222-8333-444455556666.expired");
}

static void test_body(void **state)
{
    (void)state;
    struct hook_event c3 = {HOOK_EVENT_CONFIRMING, 3};
    struct hook_event_facts f = {.invoice_id = "0b7e7a7c-1111-4222-8333-444455556666",
                                 .status = INVOICE_CONFIRMING,
                                 .amount = 10000000000,
                                 .paid = 10000012345,
                                 .confirmations_required = 10,
                                 .created = 1700000000};
    char *body = hook_event_body(&c3, &f);
    assert_non_null(body);
    assert_null(strchr(body, '\n')); /* compact: the signed bytes are the sent bytes */
    json_error_t err;
    json_t *doc = json_loads(body, 0, &err);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "id")),
                        "0b7e7a7c-1111-4222-8333-444455556666.confirming.3");
    assert_string_equal(json_string_value(json_object_get(doc, "type")), "confirming");
    assert_int_equal(json_integer_value(json_object_get(doc, "created")), 1700000000);
    json_t *inv = json_object_get(doc, "invoice");
    assert_string_equal(json_string_value(json_object_get(inv, "id")), f.invoice_id);
    assert_string_equal(json_string_value(json_object_get(inv, "status")), "confirming");
    assert_string_equal(json_string_value(json_object_get(inv, "amount")), "10000000000");
    assert_string_equal(json_string_value(json_object_get(inv, "paid")), "10000012345");
    assert_int_equal(json_integer_value(json_object_get(inv, "confirmations")), 3);
    assert_int_equal(json_integer_value(json_object_get(inv, "confirmations_required")), 10);
    json_decref(doc);
    /* the same event gives the same bytes (a rerun settle writes nothing new) */
    char *again = hook_event_body(&c3, &f);
    assert_string_equal(body, again);
    free(again);
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transitions),
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
