/* hook_sender — see hook_sender.h. */
#include "hooks/hook_sender.h"

#include "hooks/hook_dest.h"
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
#define CLAIM_BATCH     16   /* events one claim takes: it sends one, puts the others back */
#define BUSY_DELAY_MS   1000 /* a busy destination's event is due again this soon */
#define DEST_BUCKETS    256

static const char *const sender_queries[] = {"bl_hook_claim", "bl_hook_release", "bl_hook_result",
                                             NULL};

/* A destination with an attempt under way or a breaker not at rest (hook_dest.h). */
struct dest {
    struct dest *next;
    char key[HOOK_DEST_KEY_SIZE];
    int in_flight;
    struct hook_breaker breaker;
};

struct hook_sender;

/* One sender thread: its own database connection and libcurl handle. */
struct sender_thread {
    struct hook_sender *s;
    struct xg_pg *pg;
    CURL *curl;
    pthread_t thread;
    bool started;
};

struct hook_sender {
    struct hook_sender_options opt;
    struct xg_proxy_trust allow;
    char *conninfo;
    struct sender_thread *threads; /* opt.senders of them */
    pthread_mutex_t lock;          /* guards stopping and the destinations */
    pthread_cond_t wake;
    bool stopping;
    struct dest *dests[DEST_BUCKETS];
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

static void post(struct hook_sender *s, CURL *e, const struct claimed *c, struct attempt *a)
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

/* ---- the destinations (under s->lock) ---------------------------------------------- */

static unsigned dest_hash(const char *key)
{
    unsigned h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h % DEST_BUCKETS;
}

/* The entry of key, made when missing (NULL when out of memory). */
static struct dest *dest_get(struct hook_sender *s, const char *key)
{
    struct dest **at = &s->dests[dest_hash(key)];
    while (*at && strcmp((*at)->key, key) != 0)
        at = &(*at)->next;
    if (!*at && (*at = calloc(1, sizeof **at)) != NULL)
        snprintf((*at)->key, sizeof(*at)->key, "%s", key);
    return *at;
}

/* Frees d's entry when it holds nothing: the table keeps only destinations in use or
 * with a breaker not at rest. */
static void dest_prune(struct hook_sender *s, struct dest *d)
{
    if (d->in_flight > 0 || !hook_breaker_idle(&d->breaker))
        return;
    struct dest **at = &s->dests[dest_hash(d->key)];
    while (*at != d)
        at = &(*at)->next;
    *at = d->next;
    free(d);
}

/* ---- the outbox --------------------------------------------------------------------- */

static void claimed_read(PGresult *res, int row, struct claimed *c)
{
    snprintf(c->id, sizeof c->id, "%s", PQgetvalue(res, row, 0));
    snprintf(c->event_id, sizeof c->event_id, "%s", PQgetvalue(res, row, 1));
    snprintf(c->invoice_id, sizeof c->invoice_id, "%s", PQgetvalue(res, row, 2));
    c->url = PQgetvalue(res, row, 3);
    c->body = PQgetvalue(res, row, 4);
    c->attempts = xg_pg_int64(res, row, 5);
    c->age_ms = xg_pg_int64(res, row, 6);
    c->now = xg_pg_int64(res, row, 7);
}

/* Claims up to CLAIM_BATCH due events (leased past an attempt's deadline). NULL on error. */
static PGresult *claim(struct sender_thread *t)
{
    char batch[16], lease[24];
    snprintf(batch, sizeof batch, "%d", CLAIM_BATCH);
    snprintf(lease, sizeof lease, "%lld", (long long)(t->s->opt.timeout_ms + LEASE_MARGIN_MS));
    const char *params[] = {batch, lease};
    return xg_pg_exec(t->pg, "bl_hook_claim", 2, params);
}

/* The events of a claim not sent now, due again after their delays (one statement). */
struct putback {
    int n;
    char ids[CLAIM_BATCH * 24 + 3], delays[CLAIM_BATCH * 24 + 3];
};

static void putback_add(struct putback *p, const char *id, int64_t delay_ms)
{
    size_t il = strlen(p->ids), dl = strlen(p->delays);
    snprintf(p->ids + il, sizeof p->ids - il, "%s%s", p->n ? "," : "{", id);
    snprintf(p->delays + dl, sizeof p->delays - dl, "%s%lld", p->n ? "," : "{",
             (long long)(delay_ms > 0 ? delay_ms : 0));
    p->n++;
}

static bool putback_send(struct sender_thread *t, struct putback *p)
{
    if (p->n == 0)
        return true;
    strcat(p->ids, "}");
    strcat(p->delays, "}");
    const char *params[] = {p->ids, p->delays};
    PGresult *res = xg_pg_exec(t->pg, "bl_hook_release", 2, params);
    PQclear(res);
    return res != NULL;
}

/* Picks the claim's first event its destination takes now (counted in flight, its entry
 * into *dest: NULL for an event without a destination), the others put back. -1: none. */
static int pick(struct hook_sender *s, PGresult *res, struct putback *back, struct dest **dest)
{
    int chosen = -1;
    int64_t now = xg_monotonic_coarse_ms();
    *dest = NULL;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < PQntuples(res); i++) {
        const char *id = PQgetvalue(res, i, 0);
        if (chosen >= 0) {
            putback_add(back, id, 0); /* due again now: another thread sends it */
            continue;
        }
        char key[HOOK_DEST_KEY_SIZE];
        if (!hook_dest_key(PQgetvalue(res, i, 3), key)) {
            chosen = i; /* no destination: the attempt fails at once and says why */
            continue;
        }
        struct dest *d = dest_get(s, key);
        int64_t retry_at = now;
        enum hook_dest_verdict v = d ? hook_dest_decide(&d->breaker, d->in_flight,
                                                        (int)s->opt.per_destination, now, &retry_at)
                                     : HOOK_DEST_BUSY;
        if (v == HOOK_DEST_SEND) {
            d->in_flight++;
            *dest = d;
            chosen = i;
        } else {
            putback_add(back, id, v == HOOK_DEST_BUSY ? BUSY_DELAY_MS : retry_at - now);
            if (d)
                dest_prune(s, d);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return chosen;
}

/* The attempt to d is over: its place back, its breaker told. */
static void dest_done(struct hook_sender *s, struct dest *d, const struct attempt *a)
{
    if (!d)
        return;
    bool delivered = hook_retry_delivered(a->status);
    enum hook_failure why =
        hook_failure_of(false, a->refused, a->too_large, a->curl_code, a->status);
    bool counts = !delivered &&
                  hook_dest_breaker_counts(why == HOOK_FAILURE_TIMEOUT, why == HOOK_FAILURE_CONNECT,
                                           why == HOOK_FAILURE_TLS, a->status);
    pthread_mutex_lock(&s->lock);
    d->in_flight--;
    enum hook_breaker_state before = hook_breaker_state(&d->breaker, xg_monotonic_coarse_ms());
    hook_breaker_result(&d->breaker, &s->opt.breaker, delivered, counts, xg_monotonic_coarse_ms());
    enum hook_breaker_state after = hook_breaker_state(&d->breaker, xg_monotonic_coarse_ms());
    if (before != after || (before == HOOK_BREAKER_HALF_OPEN && !delivered && counts))
        xg_log(after == HOOK_BREAKER_CLOSED ? XG_LOG_INFO : XG_LOG_WARN, "webhook_breaker",
               "%s: %s (cooldown %lld ms)", d->key, hook_breaker_state_names[after],
               (long long)d->breaker.cooldown_ms);
    dest_prune(s, d);
    pthread_mutex_unlock(&s->lock);
}

static bool record(struct sender_thread *t, const struct claimed *c, const struct attempt *a)
{
    struct hook_sender *s = t->s;
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
    PGresult *res = xg_pg_exec(t->pg, "bl_hook_result", 6, params);
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

/* One claim: 1 something was claimed (one event sent, the others put back), 0 nothing due,
 * -1 database trouble. */
static int deliver_one(struct sender_thread *t)
{
    struct hook_sender *s = t->s;
    if (!xg_pg_connect(t->pg))
        return -1;
    PGresult *res = claim(t);
    int r = !res ? -1 : PQntuples(res) > 0 ? 1 : 0;
    if (r == 1) {
        struct putback back = {0};
        struct dest *d = NULL;
        int i = pick(s, res, &back, &d);
        if (!putback_send(t, &back))
            r = -1;
        if (i >= 0) {
            struct claimed c = {0};
            claimed_read(res, i, &c);
            struct attempt a = {.allow = &s->allow, .max_response = (size_t)s->opt.max_response};
            if (!c.url[0])
                snprintf(a.error, sizeof a.error, "the invoice has no webhook_url");
            else
                post(s, t->curl, &c, &a);
            dest_done(s, d, &a);
            if (!record(t, &c, &a))
                r = -1;
        }
    }
    if (r < 0)
        xg_log(XG_LOG_WARN, "webhook_db_failed", "%s", xg_pg_last_error(t->pg));
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
    struct sender_thread *t = arg;
    struct hook_sender *s = t->s;
    for (;;) {
        int r = deliver_one(t);
        if (r == 1 ? !still_running(s) : !pause_ms(s, r == 0 ? s->opt.interval_ms : FAIL_PAUSE_MS))
            break;
    }
    return NULL;
}

static void threads_free(struct hook_sender *s)
{
    for (int64_t i = 0; s->threads && i < s->opt.senders; i++) {
        xg_pg_free(s->threads[i].pg);
        if (s->threads[i].curl)
            curl_easy_cleanup(s->threads[i].curl);
    }
    free(s->threads);
}

struct hook_sender *hook_sender_new(const struct hook_sender_options *opt)
{
    struct hook_sender *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->opt = *opt;
    if (s->opt.senders < 1)
        s->opt.senders = 1;
    if (s->opt.per_destination < 1)
        s->opt.per_destination = 1;
    if (s->opt.breaker.threshold < 1)
        s->opt.breaker = (struct hook_breaker_policy){5, 30000, 1800000};
    if (opt->allow)
        s->allow = *opt->allow;
    s->opt.allow = &s->allow;
    s->conninfo = strdup(opt->conninfo);
    s->opt.conninfo = s->conninfo;
    s->threads = calloc((size_t)s->opt.senders, sizeof *s->threads);
    bool ok = s->conninfo && s->threads;
    for (int64_t i = 0; ok && i < s->opt.senders; i++) {
        struct sender_thread *t = &s->threads[i];
        t->s = s;
        t->pg = xg_pg_new(s->conninfo, sender_queries);
        t->curl = curl_easy_init();
        ok = t->pg && t->curl;
    }
    if (!ok) {
        threads_free(s);
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
    for (int64_t i = 0; i < s->opt.senders; i++) {
        struct sender_thread *t = &s->threads[i];
        t->started = pthread_create(&t->thread, NULL, sender_main, t) == 0;
        if (!t->started)
            return false; /* hook_sender_free stops the ones started */
    }
    return true;
}

void hook_sender_free(struct hook_sender *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->lock);
    for (int64_t i = 0; i < s->opt.senders; i++)
        if (s->threads[i].started)
            pthread_join(s->threads[i].thread, NULL);
    threads_free(s);
    for (size_t b = 0; b < DEST_BUCKETS; b++)
        while (s->dests[b]) {
            struct dest *d = s->dests[b];
            s->dests[b] = d->next;
            free(d);
        }
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

void hook_sender_breakers(struct hook_sender *s, uint64_t out[HOOK_BREAKER_NSTATES])
{
    memset(out, 0, sizeof(uint64_t) * HOOK_BREAKER_NSTATES);
    int64_t now = xg_monotonic_coarse_ms();
    pthread_mutex_lock(&s->lock);
    for (size_t b = 0; b < DEST_BUCKETS; b++)
        for (const struct dest *d = s->dests[b]; d; d = d->next)
            out[hook_breaker_state(&d->breaker, now)]++;
    pthread_mutex_unlock(&s->lock);
}
