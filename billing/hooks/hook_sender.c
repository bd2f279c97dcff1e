/* hook_sender — see hook_sender.h. */
#include "hooks/hook_sender.h"

#include "hooks/hook_ssrf.h"
#include "xg_clock.h"
#include "xg_log.h"
#include "xg_pg.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define LEASE_MARGIN_MS 15000
#define FAIL_PAUSE_MS   2000
#define USER_AGENT      "xmrgate-billing webhooks"

static const char *const sender_queries[] = {"bl_hook_claim", "bl_hook_result", NULL};

struct hook_sender {
    struct hook_sender_options opt;
    struct xg_proxy_trust allow;
    char *conninfo;
    struct xg_pg *pg;
    CURL *curl;
    pthread_t thread;
    bool started;
    pthread_mutex_t lock; /* guards stopping */
    pthread_cond_t wake;
    bool stopping;
    _Atomic uint64_t failures[HOOK_FAILURE_COUNT]; /* failed attempts by reason */
};

/* One claimed event. */
struct claimed {
    char id[24], event_id[96], invoice_id[40];
    const char *url, *body; /* in the claim's PGresult */
    int64_t attempts, age_ms, now;
};

/* One attempt's outcome. */
struct attempt {
    const struct xg_proxy_trust *allow;
    size_t read, max_response;
    bool refused;         /* the SSRF guard refused every address tried */
    char refused_why[96]; /* the last one's class and address            */
    long status;          /* 0: no answer                                */
    bool too_large;       /* the answer passed max_response              */
    int curl_code;        /* libcurl's CURLcode (-1: not sent)           */
    char error[256];
};

/* ---- one HTTP attempt --------------------------------------------------------------- */

static curl_socket_t on_open_socket(void *ctx, curlsocktype purpose, struct curl_sockaddr *addr)
{
    struct attempt *a = ctx;
    struct xg_proxy_ip ip;
    const char *why = "not IP";
    (void)purpose;
    if (!xg_proxy_ip_from_sockaddr(&addr->addr, &ip) || !hook_ssrf_allowed(a->allow, &ip, &why)) {
        char text[XG_PROXY_ADDR_TEXT];
        xg_proxy_ip_format(&ip, text, sizeof text);
        a->refused = true;
        snprintf(a->refused_why, sizeof a->refused_why, "%s address %s", why, text);
        return CURL_SOCKET_BAD;
    }
    return socket(addr->family, addr->socktype, addr->protocol);
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
    struct attempt *a = ctx;
    (void)data;
    a->read += size * n;
    return a->read > a->max_response ? 0 : size * n;
}

static void post(struct hook_sender *s, const struct claimed *c, struct attempt *a)
{
    char secret[HOOK_SIGN_SECRET_SIZE], sig[HOOK_SIGN_HEADER_SIZE];
    char sig_h[32 + HOOK_SIGN_HEADER_SIZE], id_h[32 + sizeof c->event_id];
    size_t len = strlen(c->body);
    if (!hook_sign_secret(s->opt.key, c->invoice_id, secret) ||
        !hook_sign_header(secret, c->now, c->body, len, sig)) {
        a->curl_code = -1;
        snprintf(a->error, sizeof a->error, "cannot sign");
        return;
    }
    snprintf(sig_h, sizeof sig_h, "Xmrgate-Signature: %s", sig);
    snprintf(id_h, sizeof id_h, "Xmrgate-Event-Id: %s", c->event_id);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    h = curl_slist_append(h, sig_h);
    h = curl_slist_append(h, id_h);
    h = curl_slist_append(h, "Expect:");
    CURL *e = s->curl;
    curl_easy_reset(e);
    curl_easy_setopt(e, CURLOPT_URL, c->url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_PROXY, "");
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)s->opt.timeout_ms);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)s->opt.timeout_ms);
    curl_easy_setopt(e, CURLOPT_USERAGENT, USER_AGENT);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, c->body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, a);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, a);
    CURLcode rc = curl_easy_perform(e);
    a->curl_code = (int)rc;
    if (rc == CURLE_OK) {
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &a->status);
    } else if (a->refused) {
        snprintf(a->error, sizeof a->error, "refused by the SSRF guard: %s", a->refused_why);
    } else if (rc == CURLE_WRITE_ERROR && a->read > a->max_response) {
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &a->status);
        snprintf(a->error, sizeof a->error, "answer longer than %zu bytes", a->max_response);
        a->status = 0;
        a->too_large = true;
    } else {
        snprintf(a->error, sizeof a->error, "%s", curl_easy_strerror(rc));
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(h);
    OPENSSL_cleanse(secret, sizeof secret);
}

/* ---- the outbox --------------------------------------------------------------------- */

/* Claims one due event into c (res kept for its strings). 1 claimed, 0 none, -1 error. */
static int claim(struct hook_sender *s, struct claimed *c, PGresult **res)
{
    char lease[24];
    snprintf(lease, sizeof lease, "%lld", (long long)(s->opt.timeout_ms + LEASE_MARGIN_MS));
    const char *params[] = {"1", lease};
    *res = xg_pg_exec(s->pg, "bl_hook_claim", 2, params);
    if (!*res)
        return -1;
    if (PQntuples(*res) != 1)
        return 0;
    snprintf(c->id, sizeof c->id, "%s", PQgetvalue(*res, 0, 0));
    snprintf(c->event_id, sizeof c->event_id, "%s", PQgetvalue(*res, 0, 1));
    snprintf(c->invoice_id, sizeof c->invoice_id, "%s", PQgetvalue(*res, 0, 2));
    c->url = PQgetvalue(*res, 0, 3);
    c->body = PQgetvalue(*res, 0, 4);
    c->attempts = xg_pg_int64(*res, 0, 5);
    c->age_ms = xg_pg_int64(*res, 0, 6);
    c->now = xg_pg_int64(*res, 0, 7);
    return 1;
}

static bool record(struct hook_sender *s, const struct claimed *c, const struct attempt *a)
{
    bool delivered = hook_retry_delivered(a->status);
    int64_t tries = c->attempts + 1;
    bool give_up = !delivered && !hook_retry_again(&s->opt.retry, tries, c->age_ms);
    char status[24], delay[24];
    snprintf(status, sizeof status, "%ld", a->status);
    snprintf(delay, sizeof delay, "%lld", (long long)hook_retry_delay_ms(&s->opt.retry, tries));
    char error[300];
    if (!delivered && !a->error[0])
        snprintf(error, sizeof error, "answered %ld", a->status);
    else
        snprintf(error, sizeof error, "%s", a->error);
    const char *params[] = {
        c->id, a->status ? status : NULL, error[0] ? error : NULL, delivered ? "true" : "false",
        delay, give_up ? "true" : "false"};
    PGresult *res = xg_pg_exec(s->pg, "bl_hook_result", 6, params);
    PQclear(res);
    if (!delivered)
        atomic_fetch_add_explicit(&s->failures[hook_failure_of(!c->url[0], a->refused, a->too_large,
                                                               a->curl_code, a->status)],
                                  1, memory_order_relaxed);
    if (delivered)
        xg_log(XG_LOG_INFO, "webhook_delivered", "%s (attempt %lld)", c->event_id,
               (long long)tries);
    else
        xg_log(give_up ? XG_LOG_ERROR : XG_LOG_WARN, give_up ? "webhook_failed" : "webhook_retry",
               "%s attempt %lld: %s", c->event_id, (long long)tries, error);
    return res != NULL;
}

/* One event: 1 sent (delivered or not), 0 nothing due, -1 database trouble. */
static int deliver_one(struct hook_sender *s)
{
    if (!xg_pg_connect(s->pg))
        return -1;
    struct claimed c = {0};
    PGresult *res = NULL;
    int r = claim(s, &c, &res);
    if (r == 1) {
        struct attempt a = {.allow = &s->allow, .max_response = (size_t)s->opt.max_response};
        if (!c.url[0])
            snprintf(a.error, sizeof a.error, "the invoice has no webhook_url");
        else
            post(s, &c, &a);
        if (!record(s, &c, &a))
            r = -1;
    }
    if (r < 0)
        xg_log(XG_LOG_WARN, "webhook_db_failed", "%s", xg_pg_last_error(s->pg));
    PQclear(res);
    return r;
}

/* ---- the thread --------------------------------------------------------------------- */

static bool pause_ms(struct hook_sender *s, int64_t ms)
{
    struct timespec until = xg_monotonic_deadline(ms);
    pthread_mutex_lock(&s->lock);
    while (!s->stopping && pthread_cond_timedwait(&s->wake, &s->lock, &until) == 0)
        ;
    bool go_on = !s->stopping;
    pthread_mutex_unlock(&s->lock);
    return go_on;
}

static bool still_running(struct hook_sender *s)
{
    pthread_mutex_lock(&s->lock);
    bool go_on = !s->stopping;
    pthread_mutex_unlock(&s->lock);
    return go_on;
}

static void *sender_main(void *arg)
{
    struct hook_sender *s = arg;
    for (;;) {
        int r = deliver_one(s);
        if (r == 1 ? !still_running(s) : !pause_ms(s, r == 0 ? s->opt.interval_ms : FAIL_PAUSE_MS))
            break;
    }
    return NULL;
}

struct hook_sender *hook_sender_new(const struct hook_sender_options *opt)
{
    struct hook_sender *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->opt = *opt;
    if (opt->allow)
        s->allow = *opt->allow;
    s->opt.allow = &s->allow;
    s->conninfo = strdup(opt->conninfo);
    s->opt.conninfo = s->conninfo;
    s->pg = s->conninfo ? xg_pg_new(s->conninfo, sender_queries) : NULL;
    s->curl = curl_easy_init();
    if (!s->pg || !s->curl) {
        xg_pg_free(s->pg);
        if (s->curl)
            curl_easy_cleanup(s->curl);
        free(s->conninfo);
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &attr);
    pthread_condattr_destroy(&attr);
    return s;
}

bool hook_sender_start(struct hook_sender *s)
{
    s->started = pthread_create(&s->thread, NULL, sender_main, s) == 0;
    return s->started;
}

void hook_sender_free(struct hook_sender *s)
{
    if (!s)
        return;
    if (s->started) {
        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->thread, NULL);
    }
    xg_pg_free(s->pg);
    curl_easy_cleanup(s->curl);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
    memset(s->opt.key, 0, sizeof s->opt.key);
    free(s->conninfo);
    free(s);
}

void hook_sender_failures(struct hook_sender *s, uint64_t out[HOOK_FAILURE_COUNT])
{
    for (unsigned i = 0; i < HOOK_FAILURE_COUNT; i++)
        out[i] = atomic_load_explicit(&s->failures[i], memory_order_relaxed);
}
