/* slow_node — a stand-in for a monerod node that takes its time: it answers the gateway's
 * health probes (get_info, get_last_block_header, get_version, get_block_headers_range) at
 * once, as a synchronized node at height 100, and every other request after DELAY_MS. Used by the
 * drain test to have client requests in flight when SIGTERM arrives.
 *
 *   slow_node PORT DELAY_MS
 *
 * One thread per connection, so slow answers do not hold up the probes. Stops on SIGTERM. */
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stand_in.h"

static long delay_ms;

static int is_probe(const char *url, const char *body)
{
    return strcmp(url, "/json_rpc") == 0 && body &&
           (strstr(body, "\"get_info\"") || strstr(body, "\"get_last_block_header\"") ||
            strstr(body, "\"get_version\"") || strstr(body, "\"get_block_headers_range\""));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **state)
{
    (void)cls;
    (void)method;
    (void)version;
    enum MHD_Result rc;
    struct stand_in_body *p = stand_in_collect(state, data, size, &rc);
    if (!p)
        return rc;
    if (!is_probe(url, p->data)) {
        struct timespec t = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
        nanosleep(&t, NULL);
    }
    static const char answer[] = STAND_IN_SYNCED_ANSWER;
    return stand_in_answer_json(conn, MHD_HTTP_OK, answer, sizeof answer - 1,
                                MHD_RESPMEM_PERSISTENT);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: slow_node PORT DELAY_MS\n");
        return 2;
    }
    delay_ms = atol(argv[2]);
    stand_in_catch_signals();
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
                         (uint16_t)atoi(argv[1]), NULL, NULL, on_request, NULL,
                         MHD_OPTION_NOTIFY_COMPLETED, stand_in_free_body, NULL, MHD_OPTION_END);
    return stand_in_run(d, "slow_node", argv[1]);
}
