/* stand_in — what the stand-in node servers in tests/tools share: collecting a request
 * body, answering JSON, freeing the body when the request ends, the answer of a
 * synchronized node, and running until SIGTERM or SIGINT. Test helpers, not product code;
 * static inline so each tool takes only what it uses. */
#ifndef STAND_IN_H
#define STAND_IN_H

#include <microhttpd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct stand_in_body {
    char *data; /* NUL-terminated; NULL while empty */
    size_t len;
};

/* Appends n bytes to b; false when memory runs out. */
static inline bool stand_in_append(struct stand_in_body *b, const char *data, size_t n)
{
    char *grown = realloc(b->data, b->len + n + 1);
    if (!grown)
        return false;
    memcpy(grown + b->len, data, n);
    b->data = grown;
    b->len += n;
    b->data[b->len] = '\0';
    return true;
}

/* The start of every access handler: allocates the request's body on the first call and
 * appends upload data on the next ones. Returns the body once it is complete (the handler
 * answers now); otherwise NULL, with what the handler returns in *rc. */
static inline struct stand_in_body *stand_in_collect(void **state, const char *data, size_t *size,
                                                     enum MHD_Result *rc)
{
    struct stand_in_body *b = *state;
    if (!b) {
        *state = calloc(1, sizeof *b);
        *rc = *state ? MHD_YES : MHD_NO;
        return NULL;
    }
    if (*size) {
        *rc = stand_in_append(b, data, *size) ? MHD_YES : MHD_NO;
        *size = 0;
        return NULL;
    }
    return b;
}

/* MHD_OPTION_NOTIFY_COMPLETED: frees what stand_in_collect allocated. */
static inline void stand_in_free_body(void *cls, struct MHD_Connection *conn, void **state,
                                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct stand_in_body *b = *state;
    if (b) {
        free(b->data);
        free(b);
    }
    *state = NULL;
}

/* Queues a JSON answer; mode as for MHD_create_response_from_buffer. */
static inline enum MHD_Result stand_in_answer_json(struct MHD_Connection *conn, unsigned status,
                                                   const char *body, size_t len,
                                                   enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body, mode);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    enum MHD_Result rc = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* One body that answers every health probe of the gateway (get_info,
 * get_last_block_header, get_block_headers_range) as a synchronized node at height 100,
 * and the simple reads the tests make. */
#define STAND_IN_TOP  "4242424242424242424242424242424242424242424242424242424242424242"
#define STAND_IN_PREV "4141414141414141414141414141414141414141414141414141414141414141"
#define STAND_IN_SYNCED_ANSWER                                                                     \
    "{\"id\":0,\"jsonrpc\":\"2.0\",\"result\":{\"count\":100,\"status\":\"OK\","                   \
    "\"untrusted\":false,\"height\":100,\"target_height\":0,\"synchronized\":true,"                \
    "\"busy_syncing\":false,\"nettype\":\"fakechain\",\"top_block_hash\":\"" STAND_IN_TOP "\","    \
    "\"block_header\":{\"height\":99,\"hash\":\"" STAND_IN_TOP "\",\"prev_hash\":\"" STAND_IN_PREV \
    "\",\"depth\":0},"                                                                             \
    "\"headers\":[{\"height\":99,\"hash\":\"" STAND_IN_TOP "\"}]},"                                \
    "\"height\":100,\"hash\":\"" STAND_IN_TOP "\",\"tx_hashes\":[],\"status\":\"OK\","             \
    "\"untrusted\":false}"

static volatile sig_atomic_t stand_in_stop;

static inline void stand_in_on_signal(int sig)
{
    (void)sig;
    stand_in_stop = 1;
}

/* Installs the stop handler; call before starting the daemon. */
static inline void stand_in_catch_signals(void)
{
    signal(SIGTERM, stand_in_on_signal);
    signal(SIGINT, stand_in_on_signal);
}

/* Serves with d (NULL: it could not listen; said on stderr as NAME) until SIGTERM or
 * SIGINT, then stops it. Returns the tool's exit status. */
static inline int stand_in_run(struct MHD_Daemon *d, const char *name, const char *port)
{
    if (!d) {
        fprintf(stderr, "%s: cannot listen on %s\n", name, port);
        return 1;
    }
    while (!stand_in_stop)
        usleep(100000);
    MHD_stop_daemon(d);
    return 0;
}

#endif
