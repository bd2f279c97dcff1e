/* rate_server — a stand-in exchange-rate source for the billing tests.
 *
 *   rate_server PORT FILE
 *
 * Answers every GET with FILE's current content (application/json), re-read on each
 * request so a test changes the rate by rewriting the file; with 503 when FILE does not
 * exist (the source is "down"). Stops on SIGTERM or SIGINT. */
#include "xg_httpd.h"
#include "xg_reply.h"
#include "xg_signal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum xg_httpd_result on_get(const struct xg_httpd_request *req)
{
    const char *path = req->closure;
    FILE *f = fopen(path, "rb");
    if (!f)
        return xg_reply_bytes(req->conn, 503, "text/plain", "down\n", 5);
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return xg_reply_bytes(req->conn, 200, "application/json", buf, n);
}

int main(int argc, char **argv)
{
    static const struct xg_httpd_route routes[] = {{"GET", "/*", on_get}, {NULL, NULL, NULL}};
    if (argc != 3) {
        fprintf(stderr, "usage: rate_server PORT FILE\n");
        return 2;
    }
    char err[256];
    struct xg_httpd_options opt = {.bind_addr = "127.0.0.1",
                                   .port = (uint16_t)atoi(argv[1]),
                                   .threads = 1,
                                   .max_body = 1024,
                                   .timeout_s = 10,
                                   .routes = routes,
                                   .closure = argv[2]};
    xg_signals_install();
    struct xg_httpd *srv = xg_httpd_start(&opt, err, sizeof err);
    if (!srv) {
        fprintf(stderr, "rate_server: %s\n", err);
        return 1;
    }
    xg_run_until_stopped(NULL, NULL);
    xg_httpd_stop(srv);
    return 0;
}
