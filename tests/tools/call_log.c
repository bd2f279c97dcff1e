/* call_log — a logging relay between a client (a stock monero-wallet-rpc) and its daemon
 * (the gateway or a node), to measure what an operation costs in calls and how they
 * bunch up in time.
 *
 *   call_log PORT UPSTREAM_BASE_URL OUTFILE
 *
 * Relays every request as it came (path, body, Content-Type, Authorization) to
 * UPSTREAM_BASE_URL + path and the answer back (status, body, Content-Type and every
 * WWW-Authenticate), so Digest logins go through untouched. Appends one JSON line per
 * request to OUTFILE once it is answered:
 *   {"t_ms":<arrival, ms since the relay started>,"ms":<relay time>,"path":"/json_rpc",
 *    "rpc":"<JSON-RPC method or null>","status":200,"bytes":<answer body>}
 * One thread per client connection (the client's own calls stay in order). Stops on
 * SIGTERM. A test tool, not product code: tests/bench and docs/LIMITS.md use it. */
#include <curl/curl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "stand_in.h"

#define CALL_LOG_MAX_AUTH_HEADERS 4

static FILE *out_file;
static const char *upstream;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t started_ms;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct answer {
    long status;
    struct stand_in_body body;
    char content_type[128];
    char auth[CALL_LOG_MAX_AUTH_HEADERS][512]; /* WWW-Authenticate values */
    size_t nauth;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    struct answer *a = arg;
    return stand_in_append(&a->body, data, size * nmemb) ? size * nmemb : 0;
}

/* Keeps the value of header `name` (case-insensitive) from a raw header line. */
static bool header_value(const char *line, size_t len, const char *name, char *out, size_t outlen)
{
    size_t n = strlen(name);
    if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
        return false;
    const char *v = line + n + 1;
    const char *end = line + len;
    while (v < end && *v == ' ')
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n'))
        end--;
    size_t vlen = (size_t)(end - v) < outlen - 1 ? (size_t)(end - v) : outlen - 1;
    memcpy(out, v, vlen);
    out[vlen] = '\0';
    return true;
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *arg)
{
    struct answer *a = arg;
    size_t len = size * nmemb;
    if (a->nauth < CALL_LOG_MAX_AUTH_HEADERS &&
        header_value(line, len, "WWW-Authenticate", a->auth[a->nauth], sizeof a->auth[0]))
        a->nauth++;
    else
        (void)header_value(line, len, "Content-Type", a->content_type, sizeof a->content_type);
    return len;
}

/* Sends the request upstream; false when no answer came. */
static bool relay(struct MHD_Connection *conn, const char *url, bool post,
                  const struct stand_in_body *body, struct answer *a)
{
    char target[2048];
    snprintf(target, sizeof target, "%s%s", upstream, url);
    struct curl_slist *headers = curl_slist_append(NULL, "Expect:");
    headers = curl_slist_append(headers, "Accept:");
    char line[1024];
    const char *type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    snprintf(line, sizeof line, "Content-Type:%s%s", type ? " " : "", type ? type : "");
    headers = curl_slist_append(headers, line);
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    if (auth) {
        snprintf(line, sizeof line, "Authorization: %s", auth);
        headers = curl_slist_append(headers, line);
    }
    CURL *easy = curl_easy_init();
    bool ok = false;
    if (easy) {
        curl_easy_setopt(easy, CURLOPT_URL, target);
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, a);
        curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(easy, CURLOPT_HEADERDATA, a);
        curl_easy_setopt(easy, CURLOPT_TIMEOUT, 120L);
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
        if (post) {
            curl_easy_setopt(easy, CURLOPT_POST, 1L);
            curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body->data ? body->data : "");
            curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, (long)body->len);
        }
        ok = curl_easy_perform(easy) == CURLE_OK;
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &a->status);
        curl_easy_cleanup(easy);
    }
    curl_slist_free_all(headers);
    return ok;
}

static void log_call(int64_t t0, const char *url, const struct stand_in_body *body,
                     const struct answer *a)
{
    const char *rpc = NULL;
    json_t *root = body->data ? json_loadb(body->data, body->len, 0, NULL) : NULL;
    if (json_is_object(root))
        rpc = json_string_value(json_object_get(root, "method"));
    json_t *line = json_pack("{s:I,s:I,s:s,s:s?,s:i,s:I}", "t_ms", (json_int_t)(t0 - started_ms),
                             "ms", (json_int_t)(now_ms() - t0), "path", url, "rpc", rpc, "status",
                             (int)a->status, "bytes", (json_int_t)a->body.len);
    pthread_mutex_lock(&out_lock);
    json_dumpf(line, out_file, JSON_COMPACT);
    fputc('\n', out_file);
    fflush(out_file);
    pthread_mutex_unlock(&out_lock);
    json_decref(line);
    json_decref(root);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **state)
{
    (void)cls;
    (void)version;
    enum MHD_Result rc;
    struct stand_in_body *body = stand_in_collect(state, data, size, &rc);
    if (!body)
        return rc;
    int64_t t0 = now_ms();
    struct answer a = {0};
    if (!relay(conn, url, strcmp(method, "POST") == 0, body, &a)) {
        free(a.body.data);
        return MHD_NO; /* the client sees the connection drop, as from a dead daemon */
    }
    log_call(t0, url, body, &a);
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        a.body.len, a.body.data ? a.body.data : "", MHD_RESPMEM_MUST_COPY);
    free(a.body.data);
    if (!resp)
        return MHD_NO;
    if (a.content_type[0])
        MHD_add_response_header(resp, "Content-Type", a.content_type);
    for (size_t i = 0; i < a.nauth; i++)
        MHD_add_response_header(resp, "WWW-Authenticate", a.auth[i]);
    rc = MHD_queue_response(conn, (unsigned)a.status, resp);
    MHD_destroy_response(resp);
    return rc;
}

/* Without TCP_NODELAY the answer's head and body leave in two segments, the second held
 * until the client's delayed ACK: 40 ms between calls that the client never waits for. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    (void)cls;
    (void)socket_context;
    if (code != MHD_CONNECTION_NOTIFY_STARTED)
        return;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    int one = 1;
    if (ci)
        setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: call_log PORT UPSTREAM_BASE_URL OUTFILE\n");
        return 2;
    }
    upstream = argv[2];
    out_file = fopen(argv[3], "a");
    if (!out_file) {
        perror(argv[3]);
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    started_ms = now_ms();
    stand_in_catch_signals();
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, (uint16_t)atoi(argv[1]),
        NULL, NULL, on_request, NULL, MHD_OPTION_NOTIFY_COMPLETED, stand_in_free_body, NULL,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL, MHD_OPTION_END);
    int status = stand_in_run(d, "call_log", argv[1]);
    fclose(out_file);
    curl_global_cleanup();
    return status;
}
