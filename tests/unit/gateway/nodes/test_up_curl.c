/* Tests of the upstream engine's curl client (gateway/nodes/up_curl.c): host names (and
 * https:// nodes) go through curl, and what a job sends and gets back there is what it
 * sends and gets through nodeconn. Against the stand-in nodes of
 * tests/unit/stand_in_node.h. */
#include "stand_in_node.h"

/* ---- the curl path: host names still go through curl ---- */

static void test_request_carries_exactly_the_given_headers_through_curl(void **state)
{
    check_exact_headers(*state, CURL_HOST);
}

static void test_curl_path_matches_native_path(void **state)
{
    struct server *srv = *state;
    struct up_engine *e = engine_start(4, 16, 0);
    unsigned char body[300];
    for (size_t i = 0; i < sizeof body; i++)
        body[i] = (unsigned char)(i * 7);
    struct outcome native, curl;

    fetch_at(e, srv, NATIVE_HOST, "POST", "/echo", body, sizeof body, &native);
    fetch_at(e, srv, CURL_HOST, "POST", "/echo", body, sizeof body, &curl);
    assert_int_equal(native.http_status, 200);
    assert_int_equal(native.body_len, 256);
    assert_same_answer(&native, &curl);
    pthread_mutex_lock(&srv->lock); /* the curl request's body arrived intact too */
    assert_int_equal(srv->body_len, sizeof body);
    assert_memory_equal(srv->body, body, sizeof body);
    pthread_mutex_unlock(&srv->lock);
    outcome_clear(&native);
    outcome_clear(&curl);

    fetch_at(e, srv, NATIVE_HOST, "GET", "/status?code=503", NULL, 0, &native);
    fetch_at(e, srv, CURL_HOST, "GET", "/status?code=503", NULL, 0, &curl);
    assert_int_equal(native.http_status, 503);
    assert_same_answer(&native, &curl);
    outcome_clear(&native);
    outcome_clear(&curl);

    fetch_at(e, srv, NATIVE_HOST, "GET", "/big?n=100000&chunked=1", NULL, 0, &native);
    fetch_at(e, srv, CURL_HOST, "GET", "/big?n=100000&chunked=1", NULL, 0, &curl);
    assert_int_equal(native.body_len, 100000);
    assert_same_answer(&native, &curl);
    outcome_clear(&native);
    outcome_clear(&curl);
    up_engine_free(e);
}

static void test_per_node_cap_holds_under_slow_answers_through_curl(void **state)
{
    check_cap_holds(*state, CURL_HOST);
}

static void test_idle_connection_yields_to_another_node_through_curl(void **state)
{
    check_idle_connection_yields_to_another_node(CURL_HOST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_carries_exactly_the_given_headers_through_curl),
        cmocka_unit_test(test_curl_path_matches_native_path),
        cmocka_unit_test(test_per_node_cap_holds_under_slow_answers_through_curl),
        cmocka_unit_test(test_idle_connection_yields_to_another_node_through_curl),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
