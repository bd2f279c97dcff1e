/* notify_latency — how long after a tenant change commits in PostgreSQL the gateway
 * acts on it.
 *
 *   notify_latency DATABASE_URL GATEWAY_URL COUNT [BOUND_MS [MAX_MS]]
 *
 * For each of COUNT rounds: inserts a tenant (autocommit), then polls the gateway with
 * its path token until it is accepted; deletes it, then polls until it is refused. A
 * probe of an unknown path answers 404 once authenticated and 401 before, so the node is
 * never asked. Prints p50, p99 and max for both, in milliseconds. With BOUND_MS, exits 1
 * when either median is over it, when any one change took longer than MAX_MS (default ten
 * times BOUND_MS: a loaded machine's scheduling, not the path, makes a single slow round),
 * or when a change never took effect within 5 s. */
#include "token.h"
#include "xg_hex.h"

#include <curl/curl.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GIVE_UP_MS 5000.0

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static size_t discard(char *p, size_t s, size_t n, void *u)
{
    (void)p;
    (void)u;
    return s * n;
}

static long probe(CURL *curl, const char *url)
{
    long status = 0;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    if (curl_easy_perform(curl) == CURLE_OK)
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

/* Polls until the gateway answers `want`; returns the elapsed ms, or -1. */
static double wait_for(CURL *curl, const char *url, long want, double start)
{
    for (;;) {
        if (probe(curl, url) == want)
            return now_ms() - start;
        if (now_ms() - start > GIVE_UP_MS)
            return -1;
    }
}

static bool exec_ok(PGconn *pg, const char *sql, const char *const *params, int n)
{
    PGresult *res = PQexecParams(pg, sql, n, NULL, params, NULL, NULL, 0);
    bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    if (!ok)
        fprintf(stderr, "notify_latency: %s", PQerrorMessage(pg));
    PQclear(res);
    return ok;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v and prints its figures; returns its median. */
static double report(const char *what, double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    printf("%s: n=%d p50=%.2f ms p99=%.2f ms max=%.2f ms\n", what, n, v[n / 2],
           v[(int)((n - 1) * 0.99)], v[n - 1]);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: notify_latency DATABASE_URL GATEWAY_URL COUNT [BOUND_MS [MAX_MS]]\n");
        return 2;
    }
    int count = atoi(argv[3]);
    if (count < 1) {
        fprintf(stderr, "notify_latency: COUNT must be at least 1\n");
        return 2;
    }
    double bound = argc > 4 ? atof(argv[4]) : 0;
    double max_ms = argc > 5 ? atof(argv[5]) : bound * 10;
    int status = 1;
    CURL *curl = NULL;
    double *added = NULL, *removed = NULL;
    PGconn *pg = PQconnectdb(argv[1]);
    if (PQstatus(pg) != CONNECTION_OK) {
        fprintf(stderr, "notify_latency: %s", PQerrorMessage(pg));
        goto out;
    }
    curl = curl_easy_init();
    added = calloc((size_t)count, sizeof *added);
    removed = calloc((size_t)count, sizeof *removed);
    if (!curl || !added || !removed) {
        fprintf(stderr, "notify_latency: out of memory\n");
        goto out;
    }
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 2000L);
    /* The probes run back to back as the tenant: a tier no limit can reach, so that what
     * is timed is the NOTIFY path, never a request the burst limiter holds. */
    if (!exec_ok(pg,
                 "INSERT INTO tiers (id, name, burst_rps, burst_size, daily_quota, price_currency, "
                 "price_minor, confirmations) VALUES ('notify_probe', 'NOTIFY probe', 1000000, "
                 "1000000, 1000000000000, 'XMR', 1, 1) ON CONFLICT (id) DO NOTHING",
                 NULL, 0))
        goto out;
    status = 0;
    for (int i = 0; i < count; i++) {
        char token[TOKEN_TEXT_SIZE], handle[TOKEN_HANDLE_SIZE], hex[TOKEN_HASH_HEX_SIZE];
        uint8_t hash[TOKEN_HASH_LEN];
        if (!token_generate(token) || !token_handle_generate(handle) ||
            !token_hash(token, strlen(token), hash)) {
            status = 1;
            goto out;
        }
        token_hash_hex(hash, hex);
        char url[512];
        snprintf(url, sizeof url, "%s/v1/%s/notify_latency_probe", argv[2], token);
        const char *params[] = {handle, hex};
        if (!exec_ok(
                pg,
                "INSERT INTO tenants (handle, token_hash, digest_ha1, tier_id, valid_until) "
                "VALUES ($1, decode($2, 'hex'), decode(repeat('00', 45), 'hex'), 'notify_probe', "
                "now() + interval '1 hour')",
                params, 2)) {
            status = 1;
            goto out;
        }
        added[i] = wait_for(curl, url, 404, now_ms());
        if (!exec_ok(pg, "DELETE FROM tenants WHERE handle = $1", params, 1)) {
            status = 1;
            goto out;
        }
        removed[i] = wait_for(curl, url, 401, now_ms());
        if (added[i] < 0 || removed[i] < 0 ||
            (bound > 0 && (added[i] > max_ms || removed[i] > max_ms))) {
            fprintf(stderr, "round %d: accepted after %.2f ms, refused after %.2f ms\n", i,
                    added[i], removed[i]);
            status = 1;
            if (added[i] < 0 || removed[i] < 0) {
                count = i + 1; /* report the rounds run, the failed one last */
                break;
            }
        }
    }
    double added_p50 = report("tenant inserted -> accepted", added, count);
    double removed_p50 = report("tenant deleted  -> refused ", removed, count);
    if (bound > 0 && (added_p50 > bound || removed_p50 > bound)) {
        fprintf(stderr, "median over %.0f ms\n", bound);
        status = 1;
    }
out:
    free(added);
    free(removed);
    curl_easy_cleanup(curl);
    PQfinish(pg);
    return status;
}
