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
#include <stdio.h>

#include "stand_in.h"

static FILE *out_file;

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
    json_dumpf(line, out_file, JSON_COMPACT);
    fputc('\n', out_file);
    fflush(out_file);
    json_decref(line);
    static const char answer[] = STAND_IN_SYNCED_ANSWER;
    return stand_in_answer_json(conn, MHD_HTTP_OK, answer, sizeof answer - 1,
                                MHD_RESPMEM_PERSISTENT);
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
    stand_in_catch_signals();
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, (uint16_t)atoi(argv[1]), NULL, NULL,
        on_request, NULL, MHD_OPTION_NOTIFY_COMPLETED, stand_in_free_body, NULL, MHD_OPTION_END);
    int status = stand_in_run(d, "capture_server", argv[1]);
    fclose(out_file);
    return status;
}
