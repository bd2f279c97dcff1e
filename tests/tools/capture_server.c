/* capture_server — a stand-in for a monerod node that records what reaches it.
 *
 *   capture_server PORT OUTFILE
 *
 * Appends one JSON line per request to OUTFILE: {"method","url","headers":{…},"body"}
 * and answers 200 with one monerod-shaped JSON body that satisfies the gateway's health
 * probes (a synchronized node at height 100) and any simple read. Used by the privacy
 * test to prove which headers and fields the gateway forwards. Stops on SIGTERM. */
#include <jansson.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct capture {
    char *body;
    size_t len;
};

static FILE *out_file;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    (void)kind;
    json_object_set_new(cls, key, json_string(value ? value : ""));
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **state)
{
    (void)cls;
    (void)version;
    struct capture *cap = *state;
    if (!cap) {
        *state = calloc(1, sizeof *cap);
        return *state ? MHD_YES : MHD_NO;
    }
    if (*size) {
        char *grown = realloc(cap->body, cap->len + *size + 1);
        if (!grown)
            return MHD_NO;
        cap->body = grown;
        memcpy(cap->body + cap->len, data, *size);
        cap->len += *size;
        cap->body[cap->len] = '\0';
        *size = 0;
        return MHD_YES;
    }
    json_t *headers = json_object();
    MHD_get_connection_values(conn, MHD_HEADER_KIND, add_header, headers);
    json_t *line = json_pack("{s:s,s:s,s:o,s:s%}", "method", method, "url", url, "headers", headers,
                             "body", cap->body ? cap->body : "", cap->len);
    json_dumpf(line, out_file, JSON_COMPACT);
    fputc('\n', out_file);
    fflush(out_file);
    json_decref(line);
#define TOP  "4242424242424242424242424242424242424242424242424242424242424242"
#define PREV "4141414141414141414141414141414141414141414141414141414141414141"
    static const char answer[] =
        "{\"id\":0,\"jsonrpc\":\"2.0\",\"result\":{\"count\":100,\"status\":\"OK\","
        "\"untrusted\":false,\"height\":100,\"target_height\":0,\"synchronized\":true,"
        "\"busy_syncing\":false,\"nettype\":\"fakechain\",\"top_block_hash\":\"" TOP "\","
        "\"block_header\":{\"height\":99,\"hash\":\"" TOP "\",\"prev_hash\":\"" PREV
        "\",\"depth\":0}},"
        "\"height\":100,\"hash\":\"" TOP "\",\"status\":\"OK\",\"untrusted\":false}";
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
    struct capture *cap = *state;
    if (cap) {
        free(cap->body);
        free(cap);
    }
    *state = NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: capture_server PORT OUTFILE\n");
        return 2;
    }
    out_file = fopen(argv[2], "a");
    if (!out_file) {
        perror(argv[2]);
        return 1;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, (uint16_t)atoi(argv[1]), NULL, NULL,
        on_request, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "capture_server: cannot listen on %s\n", argv[1]);
        return 1;
    }
    while (!stop)
        pause();
    MHD_stop_daemon(d);
    fclose(out_file);
    return 0;
}
