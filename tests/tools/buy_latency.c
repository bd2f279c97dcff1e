/* buy_latency — how long after billing answers a purchase every gateway accepts the new
 * token: the path a customer takes, billing's commit, the NOTIFY (or a region's logical
 * replication and its NOTIFY), each gateway's reload.
 *
 *   buy_latency BILLING_URL TIER COUNT BOUND_MS GATEWAY_URL...
 *
 * For each of COUNT rounds: POST BILLING_URL/api/invoices {"tier": TIER} (a free tier,
 * provisioned at once: 201 with a working token), then polls every gateway in turn with
 * the token as path prefix until each accepts it (an unknown path answers 404 once
 * authenticated, 401 before: the node is never asked). The time is from billing's answer to
 * each gateway's first acceptance. Prints n, p50, p99 and max over every (round, gateway)
 * and the slowest gateway; exits 1 when a purchase failed, a gateway never accepted within
 * 5 s, or (BOUND_MS > 0) the p99 is over BOUND_MS. */
#include <curl/curl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GIVE_UP_MS   5000.0
#define MAX_GATEWAYS 64

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct buf {
    char data[8192];
    size_t len;
};

static size_t keep(char *p, size_t s, size_t n, void *u)
{
    struct buf *b = u;
    size_t take = s * n;
    if (take > sizeof b->data - 1 - b->len)
        take = sizeof b->data - 1 - b->len;
    memcpy(b->data + b->len, p, take);
    b->len += take;
    b->data[b->len] = '\0';
    return s * n;
}

static size_t discard(char *p, size_t s, size_t n, void *u)
{
    (void)p;
    (void)u;
    return s * n;
}

/* Buys a free plan; copies its token into token. */
static bool buy(CURL *curl, const char *billing, const char *tier, char *token, size_t len)
{
    char url[512], body[256];
    struct buf answer = {.len = 0};
    long status = 0;
    snprintf(url, sizeof url, "%s/api/invoices", billing);
    snprintf(body, sizeof body, "{\"tier\":\"%s\"}", tier);
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
    bool ok = curl_easy_perform(curl) == CURLE_OK;
    curl_slist_free_all(headers);
    if (ok)
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    json_t *doc = ok && status == 201 ? json_loads(answer.data, 0, NULL) : NULL;
    const char *t = json_string_value(json_object_get(doc, "token"));
    ok = t && strlen(t) < len;
    if (ok)
        snprintf(token, len, "%s", t);
    else
        fprintf(stderr, "buy_latency: purchase answered %ld: %.300s\n", status, answer.data);
    json_decref(doc);
    return ok;
}

static long probe(CURL *curl, const char *url)
{
    long status = 0;
    curl_easy_setopt(curl, CURLOPT_URL, url);
    if (curl_easy_perform(curl) == CURLE_OK)
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: buy_latency BILLING_URL TIER COUNT BOUND_MS GATEWAY_URL...\n");
        return 2;
    }
    int count = atoi(argv[3]), ngw = argc - 5;
    double bound = atof(argv[4]);
    if (count < 1 || ngw > MAX_GATEWAYS) {
        fprintf(stderr, "buy_latency: COUNT >= 1 and at most %d gateways\n", MAX_GATEWAYS);
        return 2;
    }
    int status = 0, n = 0;
    double *v = calloc((size_t)count * (size_t)ngw, sizeof *v);
    double slowest[MAX_GATEWAYS] = {0};
    CURL *billing = curl_easy_init();
    CURL *gw[MAX_GATEWAYS];
    for (int g = 0; g < ngw; g++) {
        gw[g] = curl_easy_init();
        if (gw[g]) {
            curl_easy_setopt(gw[g], CURLOPT_WRITEFUNCTION, discard);
            curl_easy_setopt(gw[g], CURLOPT_TIMEOUT_MS, 2000L);
        }
    }
    if (!v || !billing) {
        fprintf(stderr, "buy_latency: out of memory\n");
        status = 1;
    }
    for (int i = 0; i < count && status == 0; i++) {
        char token[128], url[MAX_GATEWAYS][512];
        bool accepted[MAX_GATEWAYS] = {false};
        if (!buy(billing, argv[1], argv[2], token, sizeof token)) {
            status = 1;
            break;
        }
        double start = now_ms();
        for (int g = 0; g < ngw; g++)
            snprintf(url[g], sizeof url[g], "%s/v1/%s/buy_latency_probe", argv[5 + g], token);
        int left = ngw;
        while (left > 0 && now_ms() - start <= GIVE_UP_MS) {
            for (int g = 0; g < ngw; g++) {
                if (accepted[g] || !gw[g] || probe(gw[g], url[g]) != 404)
                    continue;
                double ms = now_ms() - start;
                accepted[g] = true;
                left--;
                v[n++] = ms;
                if (ms > slowest[g])
                    slowest[g] = ms;
            }
        }
        if (left > 0) {
            fprintf(stderr, "buy_latency: round %d: %d gateways never accepted the token\n", i,
                    left);
            status = 1;
        }
    }
    if (n > 0 && v) {
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        double p99 = v[(int)((n - 1) * 0.99)];
        int worst = 0;
        for (int g = 1; g < ngw; g++)
            worst = slowest[g] > slowest[worst] ? g : worst;
        printf("purchase answered -> accepted at %d gateways: n=%d p50=%.1f ms p99=%.1f ms "
               "max=%.1f ms (slowest gateway %s)\n",
               ngw, n, v[n / 2], p99, v[n - 1], argv[5 + worst]);
        if (bound > 0 && p99 > bound) {
            fprintf(stderr, "buy_latency: p99 %.1f ms is over the bound of %.0f ms\n", p99, bound);
            status = 1;
        }
    }
    for (int g = 0; g < ngw; g++)
        curl_easy_cleanup(gw[g]);
    curl_easy_cleanup(billing);
    free(v);
    return status;
}
