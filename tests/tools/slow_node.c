/* slow_node — a stand-in for a monerod node that takes its time: it answers the gateway's
 * health probes (get_info, get_last_block_header, get_block_headers_range) at once, as a
 * synchronized node at height 100, and every other request after DELAY_MS. Used by the
 * drain test to have client requests in flight when SIGTERM arrives.
 *
 *   slow_node PORT DELAY_MS
 *
 * One thread per connection, so slow answers do not hold up the probes. Stops on SIGTERM. */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct pending {
    char *body;
    size_t len;
};

static volatile sig_atomic_t stop;
static long delay_ms;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int is_probe(const char *url, const char *body)
{
    return strcmp(url, "/json_rpc") == 0 && body &&
           (strstr(body, "\"get_info\"") || strstr(body, "\"get_last_block_header\"") ||
            strstr(body, "\"get_block_headers_range\""));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **state)
{
    (void)cls;
    (void)method;
    (void)version;
    struct pending *p = *state;
    if (!p) {
        *state = calloc(1, sizeof *p);
        return *state ? MHD_YES : MHD_NO;
    }
    if (*size) {
        char *grown = realloc(p->body, p->len + *size + 1);
        if (!grown)
            return MHD_NO;
        p->body = grown;
        memcpy(p->body + p->len, data, *size);
        p->len += *size;
        p->body[p->len] = '\0';
        *size = 0;
        return MHD_YES;
    }
    if (!is_probe(url, p->body)) {
        struct timespec t = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
        nanosleep(&t, NULL);
    }
#define TOP  "4242424242424242424242424242424242424242424242424242424242424242"
#define PREV "4141414141414141414141414141414141414141414141414141414141414141"
    static const char answer[] =
        "{\"id\":0,\"jsonrpc\":\"2.0\",\"result\":{\"count\":100,\"status\":\"OK\","
        "\"untrusted\":false,\"height\":100,\"target_height\":0,\"synchronized\":true,"
        "\"busy_syncing\":false,\"nettype\":\"fakechain\",\"top_block_hash\":\"" TOP "\","
        "\"block_header\":{\"height\":99,\"hash\":\"" TOP "\",\"prev_hash\":\"" PREV
        "\",\"depth\":0},"
        "\"headers\":[{\"height\":99,\"hash\":\"" TOP "\"}]},"
        "\"height\":100,\"hash\":\"" TOP "\",\"tx_hashes\":[],\"status\":\"OK\","
        "\"untrusted\":false}";
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(sizeof answer - 1, (void *)answer, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    enum MHD_Result rc = MHD_queue_response(conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return rc;
}

static void on_done(void *cls, struct MHD_Connection *conn, void **state,
                    enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct pending *p = *state;
    if (p) {
        free(p->body);
        free(p);
    }
    *state = NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: slow_node PORT DELAY_MS\n");
        return 2;
    }
    delay_ms = atol(argv[2]);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, (uint16_t)atoi(argv[1]),
        NULL, NULL, on_request, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "slow_node: cannot listen on %s\n", argv[1]);
        return 1;
    }
    while (!stop)
        pause();
    MHD_stop_daemon(d);
    return 0;
}
