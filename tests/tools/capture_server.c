/* capture_server — a stand-in for a monerod node that records what reaches it.
 *
 *   capture_server PORT OUTFILE [UPSTREAM]
 *
 * Appends one JSON line per request to OUTFILE: {"method","url","headers":{…},"body"}.
 * Without UPSTREAM it answers 200 with one monerod-shaped JSON body that satisfies the
 * gateway's health probes (a synchronized node at height 100) and any simple read: the
 * privacy test proves with it which headers and fields the gateway forwards. With UPSTREAM
 * (a real node's base URL, http://127.0.0.1:18081) it passes each request's body on to the
 * same path there and answers with the node's status and body: a recording node on the
 * real chain, as the public-node test needs. Stops on SIGTERM. */
#include <curl/curl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>

#include "stand_in.h"

static FILE *out_file;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER; /* one line at a time */
static const char *upstream; /* NULL: answer the synced body ourselves */

static size_t collect_answer(char *data, size_t size, size_t n, void *arg)
{
    return stand_in_append(arg, data, size * n) ? size * n : 0;
}

/* Forwards the request to upstream and queues its answer; 502 when it gives none. */
static enum MHD_Result forward(struct MHD_Connection *conn, const char *url, const char *method,
                               const struct stand_in_body *body)
{
    char target[1024];
    snprintf(target, sizeof target, "%s%s", upstream, url);
    struct stand_in_body answer = {0};
    long status = 0;
    CURL *c = curl_easy_init();
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    if (c && headers) {
        curl_easy_setopt(c, CURLOPT_URL, target);
        if (strcmp(method, "POST") == 0) {
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->data ? body->data : "");
            curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)body->len);
        }
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 20000L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect_answer);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
        if (curl_easy_perform(c) == CURLE_OK)
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    }
    curl_slist_free_all(headers);
    if (c)
        curl_easy_cleanup(c);
    enum MHD_Result rc;
    if (status > 0)
        rc = stand_in_answer_json(conn, (unsigned)status, answer.data ? answer.data : "",
                                  answer.len, MHD_RESPMEM_MUST_COPY);
    else
        rc = stand_in_answer_json(conn, MHD_HTTP_BAD_GATEWAY, "", 0, MHD_RESPMEM_PERSISTENT);
    free(answer.data);
    return rc;
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
    enum MHD_Result rc;
    struct stand_in_body *cap = stand_in_collect(state, data, size, &rc);
    if (!cap)
        return rc;
    json_t *headers = json_object();
    MHD_get_connection_values(conn, MHD_HEADER_KIND, add_header, headers);
    json_t *line = json_pack("{s:s,s:s,s:o,s:s%}", "method", method, "url", url, "headers", headers,
                             "body", cap->data ? cap->data : "", cap->len);
    pthread_mutex_lock(&out_lock);
    json_dumpf(line, out_file, JSON_COMPACT);
    fputc('\n', out_file);
    fflush(out_file);
    pthread_mutex_unlock(&out_lock);
    json_decref(line);
    if (upstream)
        return forward(conn, url, method, cap);
    static const char answer[] = STAND_IN_SYNCED_ANSWER;
    return stand_in_answer_json(conn, MHD_HTTP_OK, answer, sizeof answer - 1,
                                MHD_RESPMEM_PERSISTENT);
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: capture_server PORT OUTFILE [UPSTREAM]\n");
        return 2;
    }
    upstream = argc == 4 ? argv[3] : NULL;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    out_file = fopen(argv[2], "a");
    if (!out_file) {
        perror(argv[2]);
        return 1;
    }
    stand_in_catch_signals();
    struct MHD_Daemon *d = MHD_start_daemon(
        /* A thread per connection: a forwarded call blocks only its own connection. */
        upstream ? MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD
                 : MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL,
        (uint16_t)atoi(argv[1]), NULL, NULL, on_request, NULL, MHD_OPTION_NOTIFY_COMPLETED,
        stand_in_free_body, NULL, MHD_OPTION_END);
    int status = stand_in_run(d, "capture_server", argv[1]);
    fclose(out_file);
    return status;
}
