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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stand_in.h"

static const char *upstream;
static const char *count_path;

static size_t on_write(char *ptr, size_t size, size_t n, void *arg)
{
    return stand_in_append(arg, ptr, size * n) ? size * n : 0;
}

/* Forwards; returns the HTTP status (0 on failure) with the answer in *out. */
static long forward(const char *url, const struct stand_in_body *in, struct stand_in_body *out)
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
static void prune_answer(struct stand_in_body *b)
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
    enum MHD_Result rc;
    struct stand_in_body *in = stand_in_collect(state, data, size, &rc);
    if (!in)
        return rc;
    struct stand_in_body out = {0};
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
    return stand_in_answer_json(conn, status ? (unsigned)status : 502, out.data ? out.data : "",
                                out.len, out.data ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
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
    stand_in_catch_signals();
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
                         (uint16_t)atoi(argv[1]), NULL, NULL, on_request, NULL,
                         MHD_OPTION_NOTIFY_COMPLETED, stand_in_free_body, NULL, MHD_OPTION_END);
    int status = stand_in_run(d, "pruned_node", argv[1]);
    curl_global_cleanup();
    return status;
}
