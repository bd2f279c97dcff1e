/* pruned_node — a stand-in for a pruned monerod in front of a real node.
 *
 *   pruned_node PORT UPSTREAM_URL COUNTFILE
 *
 * Forwards every request to UPSTREAM_URL (path and body as received) and answers with the
 * upstream's answer, except that in a /get_transactions answer every transaction loses its
 * prunable part the way a pruned monerod answers for an old transaction: status OK,
 * "as_hex" empty, "prunable_hash" kept. A regtest chain is far shorter than the 5500 blocks
 * a pruned node keeps whole, so a real pruned node answers completely there; this shows
 * what the gateway does with the answer a pruned node gives on a real chain. Appends one
 * line per /get_transactions request to COUNTFILE. Stops on SIGTERM. */
#include <curl/curl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct body {
    char *data;
    size_t len;
};

static const char *upstream;
static const char *count_path;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static size_t on_write(char *ptr, size_t size, size_t n, void *arg)
{
    struct body *b = arg;
    char *grown = realloc(b->data, b->len + size * n + 1);
    if (!grown)
        return 0;
    memcpy(grown + b->len, ptr, size * n);
    b->data = grown;
    b->len += size * n;
    b->data[b->len] = '\0';
    return size * n;
}

/* Forwards; returns the HTTP status (0 on failure) with the answer in *out. */
static long forward(const char *url, const struct body *in, struct body *out)
{
    char full[1024];
    snprintf(full, sizeof full, "%s%s", upstream, url);
    CURL *curl = curl_easy_init();
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    long status = 0;
    curl_easy_setopt(curl, CURLOPT_URL, full);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, in->data ? in->data : "");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)in->len);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
    if (curl_easy_perform(curl) == CURLE_OK)
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(curl);
    return status;
}

/* What a pruned node answers for an old transaction. */
static void prune_answer(struct body *b)
{
    json_t *root = json_loadb(b->data, b->len, 0, NULL);
    size_t i;
    json_t *tx;
    json_array_foreach(json_object_get(root, "txs"), i, tx)
    {
        json_object_set_new(tx, "as_hex", json_string(""));
        json_object_del(tx, "as_json");
    }
    char *text = root ? json_dumps(root, JSON_INDENT(2)) : NULL;
    json_decref(root);
    if (text) {
        free(b->data);
        b->data = text;
        b->len = strlen(text);
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **state)
{
    (void)cls;
    (void)method;
    (void)version;
    struct body *in = *state;
    if (!in) {
        *state = calloc(1, sizeof *in);
        return *state ? MHD_YES : MHD_NO;
    }
    if (*size) {
        on_write((char *)data, 1, *size, in);
        *size = 0;
        return MHD_YES;
    }
    struct body out = {0};
    long status = forward(url, in, &out);
    bool txs = strcmp(url, "/get_transactions") == 0 || strcmp(url, "/gettransactions") == 0;
    if (txs && status == 200) {
        prune_answer(&out);
        FILE *f = fopen(count_path, "a");
        if (f) {
            fputs("get_transactions\n", f);
            fclose(f);
        }
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(out.len, out.data ? out.data : (void *)"",
                                        out.data ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    enum MHD_Result rc = MHD_queue_response(conn, status ? (unsigned)status : 502, resp);
    MHD_destroy_response(resp);
    return rc;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **state,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct body *in = *state;
    if (in) {
        free(in->data);
        free(in);
    }
    *state = NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: pruned_node PORT UPSTREAM_URL COUNTFILE\n");
        return 2;
    }
    upstream = argv[2];
    count_path = argv[3];
    curl_global_init(CURL_GLOBAL_ALL);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
                         (uint16_t)atoi(argv[1]), NULL, NULL, on_request, NULL,
                         MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "pruned_node: cannot listen on %s\n", argv[1]);
        return 1;
    }
    while (!stop)
        usleep(100000);
    MHD_stop_daemon(d);
    curl_global_cleanup();
    return 0;
}
