/* Tests of the upstream engine through its own client (gateway/nodes/up_nc.c over
 * nodeconn.c): plain-HTTP nodes at a numeric address; keep-alive connections the node
 * closes, how answers are framed, IPv6 literals, the caps, and events that arrive for
 * connections already closed. Against the stand-in nodes of tests/unit/stand_in_node.h. */
#include "stand_in_node.h"

static void test_request_carries_exactly_the_given_headers(void **state)
{
    check_exact_headers(*state, NATIVE_HOST);
}

static void test_per_node_cap_holds_under_slow_answers(void **state)
{
    check_cap_holds(*state, NATIVE_HOST);
}

/* ---- keep-alive connections the node closes ---- */

/* The node closes a kept-alive connection while it is idle (after an answer that did not
 * say "Connection: close"): the engine drops it, and the next job goes out on a new one. */
static void test_native_idle_connection_closed_by_node(void **state)
{
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128];
    raw_url(url, sizeof url, &r, NULL, "/get_info");
    struct outcome o;

    int c1 = raw_exchange_ok(e, &r, url, &o);
    outcome_clear(&o);

    /* Half-close, then wait until the engine noticed and closed its end. */
    assert_int_equal(shutdown(c1, SHUT_WR), 0);
    assert_true(raw_peer_closes(c1));
    close(c1);

    int c2 = raw_exchange_ok(e, &r, url, &o);
    assert_int_equal(o.http_status, 200);
    assert_false(readable(r.fd, 0)); /* two connections in all */
    outcome_clear(&o);
    close(c2);
    up_engine_free(e);
    close(r.fd);
}

/* The node ends a kept-alive connection just as the next request arrives on it (it read the
 * request, answered nothing), with a FIN or a reset: the engine sends the request once more,
 * on a new connection, and the job succeeds. */
static void check_resend_after_reused_connection_ends(bool reset)
{
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], req[RAW_REQUEST];
    raw_url(url, sizeof url, &r, NULL, "/get_info");
    struct outcome o;

    int c1 = raw_exchange_ok(e, &r, url, &o);
    outcome_clear(&o);

    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    assert_true(raw_read_request(c1, req, sizeof req) > 0); /* reused: same connection */
    assert_false(readable(r.fd, 0));
    if (reset) /* no answer byte either way */
        raw_reset(c1);
    else
        close(c1);
    int c2 = raw_accept_for(&r, &o);
    if (c2 < 0) {
        outcome_wait(&o, 1, 5.0);
        fail_msg("the request was not sent again after the node %s the kept-alive connection; "
                 "the job ended %s: %s",
                 reset ? "reset" : "closed", up_outcome_name(o.outcome), o.error);
    }
    assert_true(raw_read_request(c2, req, sizeof req) > 0);
    assert_non_null(strstr(req, "GET /get_info HTTP/1.1\r\n"));
    assert_true(raw_send(c2, raw_ok, sizeof raw_ok - 1));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
    assert_int_equal(o.http_status, 200);
    assert_string_equal(o.body, "ok");
    assert_false(readable(r.fd, 0)); /* two connections in all */
    outcome_clear(&o);
    close(c2);
    up_engine_free(e);
    close(r.fd);
}

static void test_native_resends_when_a_reused_connection_is_reset(void **state)
{
    check_resend_after_reused_connection_ends(true);
}

/* A FIN instead of a reset: the common way a node drops an idle connection. */
static void test_native_resends_when_a_reused_connection_closes(void **state)
{
    check_resend_after_reused_connection_ends(false);
}

/* A connection that never carried an answer and closes after the request arrived is no
 * stale keep-alive connection: the job fails, nothing is sent again. */
static void test_native_fresh_connection_closed_before_answer_is_not_resent(void **state)
{
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], req[RAW_REQUEST];
    raw_url(url, sizeof url, &r, NULL, "/get_info");
    struct outcome o;
    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 2000), &o));
    int c = raw_accept(&r);
    assert_true(c >= 0);
    assert_true(raw_read_request(c, req, sizeof req) > 0);
    close(c);
    outcome_wait(&o, 1, 5.0);
    fprintf(stderr, "#   %s: %s\n", up_outcome_name(o.outcome), o.error);
    assert_int_equal(o.outcome, UP_PROTOCOL_ERROR);
    assert_int_equal(o.http_status, 0);
    assert_null(o.body);
    assert_true(o.error[0] != '\0');
    assert_false(readable(r.fd, 0)); /* no second connection */
    outcome_clear(&o);
    up_engine_free(e);
    close(r.fd);
}

/* nodeconn.h: a request whose kept-alive connection turns out closed "is sent once more on
 * a fresh connection". When the node dropped its kept-alive connections (a restart, an idle
 * timeout, a NAT that forgot them), the other idle ones are as dead as the first: sending
 * the request again on one of them fails the job although the node is up. Here the node
 * holds two kept-alive connections and drops each as a request arrives on it. */
static void test_native_resend_uses_a_fresh_connection(void **state)
{
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(2, 16, 0);
    char url[128], req[RAW_REQUEST];
    raw_url(url, sizeof url, &r, NULL, "/get_info");
    struct outcome o1, o2, o3;

    /* Two jobs at once: two connections, both kept alive afterwards. */
    outcome_init(&o1);
    outcome_init(&o2);
    assert_true(submit_recorded(e, get_job(url, 5000), &o1));
    assert_true(submit_recorded(e, get_job(url, 5000), &o2));
    int c1 = raw_accept(&r);
    int c2 = raw_accept(&r);
    assert_true(c1 >= 0 && c2 >= 0);
    assert_true(raw_answer_ok(c1));
    assert_true(raw_answer_ok(c2));
    outcome_wait(&o1, 1, 5.0);
    outcome_wait(&o2, 1, 5.0);
    assert_int_equal(o1.outcome, UP_OK);
    assert_int_equal(o2.outcome, UP_OK);
    outcome_clear(&o1);
    outcome_clear(&o2);

    /* The third job reuses one of them; the node drops it without answering. */
    outcome_init(&o3);
    assert_true(submit_recorded(e, get_job(url, 5000), &o3));
    struct pollfd both[2] = {{.fd = c1, .events = POLLIN}, {.fd = c2, .events = POLLIN}};
    assert_int_equal(poll(both, 2, RAW_WAIT_MS), 1);
    int used = (both[0].revents & POLLIN) ? c1 : c2;
    int other = used == c1 ? c2 : c1;
    assert_true(raw_read_request(used, req, sizeof req) > 0);
    raw_reset(used); /* a reset: a plain close is not resent at all (see above) */

    /* The request must come again on a new connection, not on the other old one. The
     * client may close that one (as likely dead): an end of stream there is no request. */
    struct pollfd next[2] = {{.fd = r.fd, .events = POLLIN}, {.fd = other, .events = POLLIN}};
    for (;;) {
        assert_true(poll(next, 2, RAW_WAIT_MS) >= 1);
        if (!(next[1].revents & (POLLIN | POLLHUP)))
            break;
        ssize_t n = raw_read_request(other, req, sizeof req);
        if (n > 0) {
            close(other); /* as dead as the first one */
            outcome_wait(&o3, 1, 5.0);
            fail_msg("the request was sent again on the other kept-alive connection (%zd "
                     "bytes), not on a fresh one; the job ended %s: %s",
                     n, up_outcome_name(o3.outcome), o3.error);
        }
        next[1].fd = -1; /* closed by the client: ignore it from now on */
        next[1].revents = 0;
        if (next[0].revents & POLLIN)
            break;
    }
    int c3 = raw_accept(&r);
    assert_true(c3 >= 0);
    assert_true(raw_answer_ok(c3));
    outcome_wait(&o3, 1, 5.0);
    assert_int_equal(o3.outcome, UP_OK);
    assert_string_equal(o3.body, "ok");
    outcome_clear(&o3);
    close(c3);
    close(other);
    up_engine_free(e);
    close(r.fd);
}

/* ---- how answers are framed, through the engine's own client ---- */

#define FRAMED_BODY 300

/* Sends data in 7-byte pieces, so that lines and chunk sizes arrive split. */
static bool raw_send_in_pieces(int c, const char *data, size_t len)
{
    for (size_t at = 0; at < len; at += 7)
        if (!raw_send(c, data + at, len - at < 7 ? len - at : 7))
            return false;
    return true;
}

/* A chunked answer with a chunk extension and a trailer: the body arrives intact, and the
 * connection carries the next request. */
static void test_native_chunked_answer(void **state)
{
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], answer[1024];
    raw_url(url, sizeof url, &r, NULL, "/get_blocks.bin");
    unsigned char body[FRAMED_BODY];
    fill_binary(body, sizeof body);

    /* Chunks of 1, 0x80 and 0xab bytes. */
    size_t n = (size_t)snprintf(answer, sizeof answer,
                                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                                "Transfer-Encoding: chunked\r\n\r\n1\r\n");
    answer[n++] = (char)body[0];
    n += (size_t)snprintf(answer + n, sizeof answer - n, "\r\n80;ext=1\r\n");
    memcpy(answer + n, body + 1, 0x80);
    n += 0x80;
    n += (size_t)snprintf(answer + n, sizeof answer - n, "\r\nAB\r\n");
    memcpy(answer + n, body + 1 + 0x80, 0xab);
    n += 0xab;
    n += (size_t)snprintf(answer + n, sizeof answer - n, "\r\n0\r\nX-Trailer: t\r\n\r\n");
    assert_int_equal(1 + 0x80 + 0xab, FRAMED_BODY);

    struct outcome o;
    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    int c = raw_accept(&r);
    assert_true(c >= 0);
    char req[RAW_REQUEST];
    assert_true(raw_read_request(c, req, sizeof req) > 0);
    assert_true(raw_send_in_pieces(c, answer, n));
    outcome_wait(&o, 1, 5.0);
    assert_binary_body(&o, FRAMED_BODY);
    assert_string_equal(o.content_type, "application/octet-stream");
    outcome_clear(&o);

    /* Kept alive: the next request comes on the same connection. */
    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    assert_true(raw_answer_ok(c));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
    assert_string_equal(o.body, "ok");
    assert_false(readable(r.fd, 0));
    outcome_clear(&o);
    close(c);
    up_engine_free(e);
    close(r.fd);
}

/* "Connection: close": the body arrives intact, the engine closes the connection itself
 * (the node here keeps its end open), and the next job opens a new one. */
static void test_native_connection_close_answer(void **state)
{
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], answer[1024], req[RAW_REQUEST];
    raw_url(url, sizeof url, &r, NULL, "/get_blocks.bin");
    unsigned char body[FRAMED_BODY];
    fill_binary(body, sizeof body);
    size_t n = (size_t)snprintf(
        answer, sizeof answer, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n",
        FRAMED_BODY);
    memcpy(answer + n, body, sizeof body);
    n += sizeof body;

    struct outcome o;
    outcome_init(&o);
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    int c1 = raw_accept(&r);
    assert_true(c1 >= 0);
    assert_true(raw_read_request(c1, req, sizeof req) > 0);
    assert_true(raw_send(c1, answer, n));
    outcome_wait(&o, 1, 5.0);
    assert_binary_body(&o, FRAMED_BODY);
    assert_false(o.has_content_type);
    outcome_clear(&o);
    assert_true(raw_peer_closes(c1));
    close(c1);

    int c2 = raw_exchange_ok(e, &r, url, &o);
    outcome_clear(&o);
    close(c2);
    up_engine_free(e);
    close(r.fd);
}

/* No Content-Length, not chunked: the body ends where the node closes the connection. */
static void test_native_answer_delimited_by_close(void **state)
{
    static const char *const status_lines[] = {"HTTP/1.1 200 OK", "HTTP/1.0 200 OK"};
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], answer[1024], req[RAW_REQUEST];
    raw_url(url, sizeof url, &r, NULL, "/get_blocks.bin");
    unsigned char body[FRAMED_BODY];
    fill_binary(body, sizeof body);
    for (size_t i = 0; i < sizeof status_lines / sizeof status_lines[0]; i++) {
        size_t n = (size_t)snprintf(answer, sizeof answer,
                                    "%s\r\nContent-Type: application/octet-stream\r\n\r\n",
                                    status_lines[i]);
        memcpy(answer + n, body, sizeof body);
        n += sizeof body;
        struct outcome o;
        outcome_init(&o);
        assert_true(submit_recorded(e, get_job(url, 5000), &o));
        int c = raw_accept(&r);
        assert_true(c >= 0);
        assert_true(raw_read_request(c, req, sizeof req) > 0);
        assert_true(raw_send_in_pieces(c, answer, n));
        close(c);
        outcome_wait(&o, 1, 5.0);
        assert_binary_body(&o, FRAMED_BODY);
        assert_string_equal(o.content_type, "application/octet-stream");
        outcome_clear(&o);
    }
    up_engine_free(e);
    close(r.fd);
}

/* Answers that are not HTTP/1.1 as framed: a protocol error with a reason, no body, and the
 * connection is not kept. */
static void test_native_malformed_answers(void **state)
{
    static const struct {
        const char *bytes;
        bool then_close;
    } cases[] = {
        {"HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok", false},
        {"SSH-2.0-OpenSSH_9.2\r\n", false},
        {"HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\nok", false},
        {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", false},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n", false},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokk\r\n0\r\n\r\n", false},
        {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok", true},              /* cut short */
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok", true}, /* no last chunk */
    };
    struct raw_node r;
    assert_true(raw_listen(&r, false));
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], req[RAW_REQUEST];
    raw_url(url, sizeof url, &r, NULL, "/get_info");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct outcome o;
        outcome_init(&o);
        assert_true(submit_recorded(e, get_job(url, 5000), &o));
        int c = raw_accept(&r);
        assert_true(c >= 0);
        assert_true(raw_read_request(c, req, sizeof req) > 0);
        assert_true(raw_send(c, cases[i].bytes, strlen(cases[i].bytes)));
        if (cases[i].then_close)
            shutdown(c, SHUT_WR);
        outcome_wait(&o, 1, 5.0);
        fprintf(stderr, "#   case %zu: %s: %s\n", i, up_outcome_name(o.outcome), o.error);
        assert_int_equal(o.outcome, UP_PROTOCOL_ERROR);
        assert_null(o.body);
        assert_true(o.error[0] != '\0');
        assert_true(raw_peer_closes(c)); /* not kept for another request */
        outcome_clear(&o);
        close(c);
    }
    up_engine_free(e);
    close(r.fd);
}

static void test_native_ipv6_literal(void **state)
{
    struct raw_node r;
    if (!raw_listen(&r, true)) {
        fprintf(stderr, "#   cannot listen on ::1: %s\n", strerror(errno));
        skip();
    }
    struct up_engine *e = engine_start(4, 16, 0);
    char url[128], req[RAW_REQUEST], line[64];
    raw_url(url, sizeof url, &r, NULL, "/json_rpc?x=1");
    const struct up_header hdrs[] = {{"Content-Type", "application/json"}};
    struct outcome o;
    outcome_init(&o);
    assert_true(submit_recorded(e,
                                (struct up_job){.url = url,
                                                .method = "POST",
                                                .body = "{}",
                                                .body_len = 2,
                                                .headers = hdrs,
                                                .nheaders = 1,
                                                .timeout_ms = 5000},
                                &o));
    int c = raw_accept(&r);
    assert_true(c >= 0);
    assert_true(raw_read_request(c, req, sizeof req) > 0);
    assert_non_null(strstr(req, "POST /json_rpc?x=1 HTTP/1.1\r\n"));
    snprintf(line, sizeof line, "\r\nHost: [::1]:%u\r\n", (unsigned)r.port);
    assert_non_null(strstr(req, line));
    assert_non_null(strstr(req, "\r\n\r\n{}"));
    assert_true(raw_send(c, raw_ok, sizeof raw_ok - 1));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
    assert_int_equal(o.http_status, 200);
    assert_string_equal(o.body, "ok");
    outcome_clear(&o);

    outcome_init(&o); /* and the connection is kept */
    assert_true(submit_recorded(e, get_job(url, 5000), &o));
    assert_true(raw_answer_ok(c));
    outcome_wait(&o, 1, 5.0);
    assert_int_equal(o.outcome, UP_OK);
    assert_false(readable(r.fd, 0));
    outcome_clear(&o);
    close(c);
    up_engine_free(e);
    close(r.fd);
}

static void test_native_idle_connection_yields_to_another_node(void **state)
{
    check_idle_connection_yields_to_another_node(NULL);
}

/* With room for one connection in all, a job for a second node waits while the first node's
 * job holds it, and must start once that connection closes. */
static void test_native_freed_slot_goes_to_another_nodes_job(void **state)
{
    struct server *srv = *state;
    struct raw_node r1, r2;
    assert_true(raw_listen(&r1, false));
    assert_true(raw_listen(&r2, false));
    struct up_engine *e = engine_start(1, 1, 0);
    char url1[128], url2[128], req[RAW_REQUEST];
    raw_url(url1, sizeof url1, &r1, NULL, "/get_info");
    raw_url(url2, sizeof url2, &r2, NULL, "/get_info");
    struct outcome o1, o2, marker;
    outcome_init(&o1);
    outcome_init(&o2);
    assert_true(submit_recorded(e, get_job(url1, 5000), &o1));
    int c1 = raw_accept(&r1);
    assert_true(c1 >= 0);
    assert_true(raw_read_request(c1, req, sizeof req) > 0);
    assert_true(submit_recorded(e, get_job(url2, 2000), &o2));
    /* A curl job submitted after it and finished proves the engine took the second job in
     * (jobs start in submission order) and queued it for the slot. */
    fetch_at(e, srv, CURL_HOST, "GET", "/headers", NULL, 0, &marker);
    assert_int_equal(marker.outcome, UP_OK);
    outcome_clear(&marker);
    assert_false(readable(r2.fd, 0));

    static const char last[] =
        "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
    assert_true(raw_send(c1, last, sizeof last - 1));
    outcome_wait(&o1, 1, 5.0);
    assert_int_equal(o1.outcome, UP_OK);
    outcome_clear(&o1);
    assert_true(raw_peer_closes(c1));
    int c2 = raw_accept_for(&r2, &o2);
    if (c2 < 0) {
        outcome_wait(&o2, 1, 5.0);
        fail_msg("the freed slot did not go to the second node's waiting job, which ended "
                 "%s: %s",
                 up_outcome_name(o2.outcome), o2.error);
    }
    assert_true(raw_answer_ok(c2));
    outcome_wait(&o2, 1, 5.0);
    assert_int_equal(o2.outcome, UP_OK);
    outcome_clear(&o2);
    close(c1);
    close(c2);
    up_engine_free(e);
    close(r1.fd);
    close(r2.fd);
}

/* Two kept-alive connections A and B to a node; a request goes out on A; then, in one
 * batch of socket events, both are reset (the node read the request and dropped both).
 * Handling A's close sends the request again on B, whose send fails at once: B is freed,
 * and B's own event of the same batch is then handled on freed memory. */
static int stale_event_scenario(void)
{
    struct raw_node r, rb;
    CHILD_CHECK(raw_listen(&r, false) && raw_listen(&rb, false));
    char err[256] = "", url[128], req[RAW_REQUEST];
    struct up_engine_options opt = {.max_connections_per_node = 2, .max_total_connections = 16};
    struct up_engine *e = up_engine_start(&opt, err, sizeof err);
    CHILD_CHECK(e != NULL);
    raw_url(url, sizeof url, &r, NULL, "/get_info");
    struct outcome o1, o2, o3;
    outcome_init(&o1);
    outcome_init(&o2);
    outcome_init(&o3);
    CHILD_CHECK(submit_recorded(e, get_job(url, 5000), &o1));
    CHILD_CHECK(submit_recorded(e, get_job(url, 5000), &o2));
    int c1 = raw_accept(&r);
    int c2 = raw_accept(&r);
    CHILD_CHECK(c1 >= 0 && c2 >= 0 && raw_answer_ok(c1) && raw_answer_ok(c2));
    CHILD_CHECK(outcome_await(&o1, 1, 5.0) && outcome_await(&o2, 1, 5.0));
    CHILD_CHECK(o1.outcome == UP_OK && o2.outcome == UP_OK);

    CHILD_CHECK(submit_recorded(e, get_job(url, 5000), &o3));
    struct pollfd both[2] = {{.fd = c1, .events = POLLIN}, {.fd = c2, .events = POLLIN}};
    CHILD_CHECK(poll(both, 2, RAW_WAIT_MS) == 1);
    int a = (both[0].revents & POLLIN) ? c1 : c2;
    int b = a == c1 ? c2 : c1;
    CHILD_CHECK(raw_read_request(a, req, sizeof req) > 0);
    int engine_a = engine_end_of(a), engine_b = engine_end_of(b);
    CHILD_CHECK(engine_a >= 0 && engine_b >= 0);

    struct blocker hold;
    CHILD_CHECK(blocker_hold(&hold, e, &rb));
    raw_reset(a); /* a reset: a plain close would not be resent at all */
    raw_reset(b);
    /* Both events are pending on the engine's sockets before it looks again. */
    CHILD_CHECK(readable(engine_a, RAW_WAIT_MS) && readable(engine_b, RAW_WAIT_MS));
    blocker_release(&hold);

    /* As documented, the request goes once more on a fresh connection: serve it. */
    double until = now_s() + RAW_WAIT_MS / 1000.0;
    while (!outcome_await(&o3, 1, 0.01) && now_s() < until) {
        if (readable(r.fd, 0)) {
            int c3 = raw_accept(&r);
            CHILD_CHECK(c3 >= 0 && raw_answer_ok(c3));
        }
    }
    up_engine_free(e); /* joins the engine thread: the rest of that batch has run */
    CHILD_CHECK(o3.calls == 1);
    fprintf(stderr, "#   child: the third job ended %s: %s\n", up_outcome_name(o3.outcome),
            o3.error);
    CHILD_CHECK(o3.outcome == UP_OK);
    return 0;
}

static void test_native_resend_with_stale_events_in_one_batch(void **state)
{
    run_in_child(stale_event_scenario);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_carries_exactly_the_given_headers),
        cmocka_unit_test(test_per_node_cap_holds_under_slow_answers),
        cmocka_unit_test(test_native_idle_connection_closed_by_node),
        cmocka_unit_test(test_native_resends_when_a_reused_connection_is_reset),
        cmocka_unit_test(test_native_fresh_connection_closed_before_answer_is_not_resent),
        cmocka_unit_test(test_native_chunked_answer),
        cmocka_unit_test(test_native_connection_close_answer),
        cmocka_unit_test(test_native_answer_delimited_by_close),
        cmocka_unit_test(test_native_malformed_answers),
        cmocka_unit_test(test_native_ipv6_literal),
        /* These show bugs (see each test's comment). */
        cmocka_unit_test(test_native_resends_when_a_reused_connection_closes),
        cmocka_unit_test(test_native_resend_uses_a_fresh_connection),
        cmocka_unit_test(test_native_idle_connection_yields_to_another_node),
        cmocka_unit_test(test_native_freed_slot_goes_to_another_nodes_job),
        cmocka_unit_test(test_native_resend_with_stale_events_in_one_batch),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
