/* Table tests for gateway/cache/flight: who leads and who follows identical misses in
 * flight, landing, leases that run out, and the bound on open leads. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "cache/flight.h"

static void key_n(unsigned n, uint8_t key[CACHE_KEY_LEN])
{
    memset(key, 0, CACHE_KEY_LEN);
    memcpy(key, &n, sizeof n);
}

enum op { JOIN, LAND, OPEN };

/* One script: each step joins, lands or asks about key k at time t. */
static void test_script_table(void **state)
{
    (void)state;
    struct step {
        enum op op;
        unsigned k;
        int64_t t, lease;
        int want; /* JOIN: the role; OPEN: whether it is open */
    } steps[] = {
        {JOIN, 1, 0, 100, FLIGHT_LEAD},    /* the first miss leads */
        {JOIN, 1, 10, 100, FLIGHT_FOLLOW}, /* the same key while it flies: follows */
        {JOIN, 1, 20, 100, FLIGHT_FOLLOW},
        {JOIN, 2, 20, 100, FLIGHT_LEAD}, /* another key has its own flight */
        {OPEN, 1, 30, 0, true},
        {LAND, 1, 40, 0, 0},
        {OPEN, 1, 40, 0, false},          /* landed: followers look in the cache */
        {JOIN, 1, 41, 1000, FLIGHT_LEAD}, /* nothing stored: the next one leads */
        {LAND, 3, 42, 0, 0},              /* a key not led: ignored */
        {OPEN, 2, 119, 0, true},          /* key 2's lease ends at 120 */
        {OPEN, 2, 120, 0, false},         /* its leader is gone or slow: the key is free */
        {JOIN, 2, 121, 100, FLIGHT_LEAD}, /* and is led anew */
        {LAND, 2, 130, 0, 0},
        {LAND, 2, 131, 0, 0}, /* idempotent */
        {OPEN, 2, 131, 0, false},
        {JOIN, 4, 140, 0, FLIGHT_LEAD},  /* no lease: leads, opens nothing */
        {JOIN, 4, 141, 10, FLIGHT_LEAD}, /* so the next one leads too */
    };
    struct flight *f = flight_new();
    assert_non_null(f);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        const struct step *s = &steps[i];
        uint8_t key[CACHE_KEY_LEN];
        key_n(s->k, key);
        print_message("# step %zu\n", i);
        switch (s->op) {
        case JOIN:
            assert_int_equal(flight_join(f, key, s->t, s->lease), s->want);
            break;
        case LAND:
            flight_land(f, key);
            break;
        case OPEN:
            assert_int_equal(flight_open(f, key, s->t), s->want);
            break;
        }
    }
    struct flight_stats st = flight_stats(f);
    assert_int_equal(st.led, 6);
    assert_int_equal(st.followed, 2);
    assert_int_equal(st.expired, 1);
    assert_int_equal(st.open, 2); /* keys 1 (led at 41) and 4 (led at 141) */
    flight_free(f);
}

/* Past FLIGHT_MAX open leads everyone leads: nothing is coalesced, nothing refused. */
static void test_bound(void **state)
{
    (void)state;
    struct flight *f = flight_new();
    assert_non_null(f);
    uint8_t key[CACHE_KEY_LEN];
    for (unsigned i = 0; i < FLIGHT_MAX; i++) {
        key_n(i, key);
        assert_int_equal(flight_join(f, key, 0, 1000), FLIGHT_LEAD);
    }
    key_n(FLIGHT_MAX, key);
    assert_int_equal(flight_join(f, key, 0, 1000), FLIGHT_LEAD);
    assert_int_equal(flight_join(f, key, 0, 1000), FLIGHT_LEAD); /* not kept: no follower */
    key_n(7, key);
    assert_int_equal(flight_join(f, key, 0, 1000), FLIGHT_FOLLOW); /* the kept ones still fly */
    assert_int_equal(flight_stats(f).open, FLIGHT_MAX);
    /* Once they expire, the room is back. */
    key_n(FLIGHT_MAX, key);
    assert_int_equal(flight_join(f, key, 1000, 1000), FLIGHT_LEAD);
    assert_int_equal(flight_join(f, key, 1001, 1000), FLIGHT_FOLLOW);
    assert_int_equal(flight_stats(f).open, 1);
    flight_free(f);
}

/* No set (coalescing off): everyone leads, nothing is open. */
static void test_null_set(void **state)
{
    (void)state;
    uint8_t key[CACHE_KEY_LEN];
    key_n(1, key);
    assert_int_equal(flight_join(NULL, key, 0, 100), FLIGHT_LEAD);
    assert_int_equal(flight_join(NULL, key, 0, 100), FLIGHT_LEAD);
    assert_false(flight_open(NULL, key, 0));
    flight_land(NULL, key);
    assert_int_equal(flight_stats(NULL).led, 0);
    flight_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_script_table),
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_null_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
