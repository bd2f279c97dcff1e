/* up_curl — jobs through curl's multi handle; see up_curl.h.
 *
 * curl 7.88 does not time out a transfer while it waits for a connection slot under
 * CURLMOPT_MAX_HOST_CONNECTIONS (its timer only runs once it holds a connection), so the
 * engine keeps each job's deadline itself (upstream.c); CURLOPT_TIMEOUT_MS covers the
 * running ones. */
#include "nodes/up_curl.h"

#include "nodes/node_url.h"
#include "nodes/tls_pin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/epoll.h>

#include "core/http_text.h"
#include "xg_clock.h"

#define UP_CURL_NS_PER_MS       1000000ULL
#define UP_CURL_TCP_KEEPIDLE_S  30L
#define UP_CURL_TCP_KEEPINTVL_S 10L

/* Request headers curl adds on its own unless a "Name:" entry removes them. */
static const char *const up_curl_default_headers[] = {"Accept", "Expect", "User-Agent",
                                                      "Content-Type"};
#define UP_CURL_N_DEFAULT_HEADERS                                                                  \
    (sizeof up_curl_default_headers / sizeof up_curl_default_headers[0])

/* One of curl's sockets in the loop. Freed only after the batch of events in which curl
 * let go of it: an event for it may still be waiting in that batch. */
struct up_curl_sock {
    struct loop_watch watch;
    struct up_curl *curl;
    curl_socket_t s;
    bool removed;
    struct up_curl_sock *next;
};

struct up_curl {
    struct loop *loop;
    const struct up_engine_options *opt;
    CURLM *multi;
    uint64_t due_ns; /* curl's timer, UINT64_MAX when unset */
    struct up_curl_sock *socks;
    size_t nremoved;
};

static bool up_curl_has_header(const struct up_job *job, const char *name)
{
    for (size_t i = 0; i < job->nheaders; i++)
        if (strcasecmp(job->headers[i].name, name) == 0)
            return true;
    return false;
}

/* curl drops "Name: " (nothing after the colon) instead of sending it; "Name;" is its
 * spelling for an empty value. */
static bool up_curl_value_blank(const char *v)
{
    return v[strspn(v, " \t")] == '\0';
}

static char *up_curl_put_line(char *p, const char *name, const char *value)
{
    size_t n = strlen(name);
    memcpy(p, name, n);
    p += n;
    if (!value) { /* removes one of curl's own headers */
        *p++ = ':';
    } else if (up_curl_value_blank(value)) {
        *p++ = ';';
    } else {
        size_t v = strlen(value);
        *p++ = ':';
        *p++ = ' ';
        memcpy(p, value, v);
        p += v;
    }
    *p++ = '\0';
    return p;
}

/* Copies the job's URL, body and header lines into x->req and links x->hdrs over them.
 * The list is never empty: each of curl's default headers is either the caller's or
 * removed. */
static bool up_curl_copy_job(struct up_xfer *x, const struct up_job *job)
{
    bool suppress[UP_CURL_N_DEFAULT_HEADERS];
    size_t url_len = strlen(job->url);
    size_t need = url_len + 1 + job->body_len + 1;
    size_t nlines = job->nheaders;

    for (size_t i = 0; i < job->nheaders; i++)
        need += strlen(job->headers[i].name) + 2 + strlen(job->headers[i].value) + 1;
    for (size_t i = 0; i < UP_CURL_N_DEFAULT_HEADERS; i++) {
        suppress[i] = !up_curl_has_header(job, up_curl_default_headers[i]);
        if (suppress[i]) {
            need += strlen(up_curl_default_headers[i]) + 2;
            nlines++;
        }
    }
    if (!up_xfer_reserve(&x->req, &x->req_cap, need))
        return false;
    if (x->hdrs_cap < nlines) {
        struct curl_slist *h = malloc(nlines * sizeof *h);
        if (!h)
            return false;
        free(x->hdrs);
        x->hdrs = h;
        x->hdrs_cap = nlines;
    }

    char *p = x->req;
    memcpy(p, job->url, url_len + 1);
    p += url_len + 1;
    if (job->body_len > 0)
        memcpy(p, job->body, job->body_len);
    p[job->body_len] = '\0';
    p += job->body_len + 1;

    size_t k = 0;
    for (size_t i = 0; i < job->nheaders; i++) {
        x->hdrs[k++].data = p;
        p = up_curl_put_line(p, job->headers[i].name, job->headers[i].value);
    }
    for (size_t i = 0; i < UP_CURL_N_DEFAULT_HEADERS; i++) {
        if (suppress[i]) {
            x->hdrs[k++].data = p;
            p = up_curl_put_line(p, up_curl_default_headers[i], NULL);
        }
    }
    for (size_t i = 0; i < k; i++)
        x->hdrs[i].next = i + 1 < k ? &x->hdrs[i + 1] : NULL;
    return true;
}

static size_t up_curl_on_write(char *data, size_t size, size_t nmemb, void *userp)
{
    size_t n = size * nmemb;
    return up_xfer_append(userp, data, n) ? n : 0;
}

/* ---- pinned node certificates (tls_pin.h) ------------------------------------------------ */

/* Replaces OpenSSL's chain verification for one handshake: a leaf certificate whose SHA-256
 * is pinned is accepted as it is; any other must verify as usual (the CA store or ca_file,
 * and the host name set on the context by up_curl_on_ssl_ctx). arg: the engine's pins. */
static int up_curl_verify_cert(X509_STORE_CTX *store, void *arg)
{
    const struct tls_pins *pins = arg;
    X509 *leaf = X509_STORE_CTX_get0_cert(store);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (leaf && X509_digest(leaf, EVP_sha256(), md, &len) == 1 && len == TLS_PIN_LEN &&
        tls_pin_match(pins, md)) {
        X509_STORE_CTX_set_error(store, X509_V_OK);
        return 1;
    }
    return X509_verify_cert(store);
}

/* The node's host from the transfer's URL into the verification parameters: curl's own host
 * name check is off when pins are set (a pinned certificate names no host), so the CA path
 * checks it here. */
static bool up_curl_expect_host(X509_VERIFY_PARAM *param, const char *url)
{
    CURLU *u = curl_url();
    char *host = NULL;
    bool ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK;
    if (ok) {
        size_t n = strlen(host);
        if (n > 2 && host[0] == '[' && host[n - 1] == ']') {
            host[n - 1] = '\0';
            ok = X509_VERIFY_PARAM_set1_ip_asc(param, host + 1) == 1;
        } else if (X509_VERIFY_PARAM_set1_ip_asc(param, host) != 1) {
            ok = X509_VERIFY_PARAM_set1_host(param, host, n) == 1;
        }
    }
    curl_free(host);
    curl_url_cleanup(u);
    return ok;
}

/* CURLOPT_SSL_CTX_FUNCTION: runs on the transfer that opens the connection, before its
 * handshake. userptr: the transfer. With pins, the handshake's verification is all ours:
 * curl's is off (it refuses a certificate with an empty issuer name, which is what monerod
 * generates, before looking at anything else), so the CAs are loaded here and a failed
 * verification aborts the handshake (SSL_VERIFY_PEER). */
static CURLcode up_curl_on_ssl_ctx(CURL *easy, void *ssl_ctx, void *userptr)
{
    (void)easy;
    struct up_xfer *x = userptr;
    SSL_CTX *ctx = ssl_ctx;
    const char *ca_file = x->opt->ca_file;
    bool cas = ca_file && ca_file[0] ? SSL_CTX_load_verify_locations(ctx, ca_file, NULL) == 1
                                     : SSL_CTX_set_default_verify_paths(ctx) == 1;
    if (!cas || !up_curl_expect_host(SSL_CTX_get0_param(ctx), x->req))
        return CURLE_SSL_CERTPROBLEM;
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_cert_verify_callback(ctx, up_curl_verify_cert, (void *)&x->opt->tls_pins);
    return CURLE_OK;
}

#define UP_SET(opt, val) ok &= curl_easy_setopt(easy, opt, val) == CURLE_OK

static bool up_curl_setup_easy(struct up_xfer *x, const struct up_job *job,
                               const struct up_engine_options *opt)
{
    if (!x->easy && !(x->easy = curl_easy_init()))
        return false;
    CURL *easy = x->easy;
    const char *body = x->req + strlen(x->req) + 1;
    bool ok = true;

    curl_easy_reset(easy);
    UP_SET(CURLOPT_URL, x->req);
    UP_SET(CURLOPT_PRIVATE, x);
    UP_SET(CURLOPT_NOSIGNAL, 1L);
    UP_SET(CURLOPT_PROXY, "");
    UP_SET(CURLOPT_PROTOCOLS_STR, "http,https");
    UP_SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    UP_SET(CURLOPT_TCP_KEEPALIVE, 1L);
    UP_SET(CURLOPT_TCP_KEEPIDLE, UP_CURL_TCP_KEEPIDLE_S);
    UP_SET(CURLOPT_TCP_KEEPINTVL, UP_CURL_TCP_KEEPINTVL_S);
    UP_SET(CURLOPT_CONNECTTIMEOUT_MS, opt->connect_timeout_ms);
    UP_SET(CURLOPT_TIMEOUT_MS, job->timeout_ms);
    UP_SET(CURLOPT_HTTPHEADER, x->hdrs);
    UP_SET(CURLOPT_WRITEFUNCTION, up_curl_on_write);
    UP_SET(CURLOPT_WRITEDATA, x);
    UP_SET(CURLOPT_ERRORBUFFER, x->errbuf);
    UP_SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)opt->max_response_bytes);
    if (opt->ca_file && opt->ca_file[0])
        UP_SET(CURLOPT_CAINFO, opt->ca_file);
    /* A node started with --rpc-login answers 401 with a Digest challenge; the login comes
     * from the URL's userinfo. Digest only: curl would otherwise send it as Basic, in clear
     * on a plain http:// link. */
    if (node_url_has_login(x->req))
        UP_SET(CURLOPT_HTTPAUTH, (long)CURLAUTH_DIGEST);
    /* With pins, up_curl_on_ssl_ctx verifies (the pin, else the CAs and the host name). */
    bool pinned = job->verify_tls && opt->tls_pins.count > 0 && strncmp(x->req, "https:", 6) == 0;
    UP_SET(CURLOPT_SSL_VERIFYPEER, job->verify_tls && !pinned ? 1L : 0L);
    UP_SET(CURLOPT_SSL_VERIFYHOST, job->verify_tls && !pinned ? 2L : 0L);
    if (pinned) {
        UP_SET(CURLOPT_SSL_CTX_FUNCTION, up_curl_on_ssl_ctx);
        UP_SET(CURLOPT_SSL_CTX_DATA, x);
    }
    if (strcmp(job->method, "POST") == 0) {
        UP_SET(CURLOPT_POST, 1L);
        UP_SET(CURLOPT_POSTFIELDS, body);
        UP_SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)job->body_len);
    } else {
        UP_SET(CURLOPT_HTTPGET, 1L);
    }
    return ok;
}

#undef UP_SET

bool up_curl_prepare(struct up_xfer *x, const struct up_job *job,
                     const struct up_engine_options *opt)
{
    return up_curl_copy_job(x, job) && up_curl_setup_easy(x, job, opt);
}

static enum up_outcome up_curl_outcome_of(CURLcode code, const struct up_xfer *x)
{
    switch (code) {
    case CURLE_OK:
        return UP_OK;
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
        return UP_CONNECT_ERROR;
    case CURLE_OPERATION_TIMEDOUT:
        return UP_TIMEOUT;
    case CURLE_FILESIZE_EXCEEDED:
        return UP_TOO_LARGE;
    case CURLE_OUT_OF_MEMORY:
        return UP_INTERNAL_ERROR;
    case CURLE_WRITE_ERROR:
        if (x->too_large)
            return UP_TOO_LARGE;
        if (x->out_of_memory)
            return UP_INTERNAL_ERROR;
        return UP_PROTOCOL_ERROR;
    default:
        return UP_PROTOCOL_ERROR;
    }
}

static void up_curl_finish(struct up_xfer *x, CURLcode code)
{
    struct up_result *r = &x->result;
    memset(r, 0, sizeof *r);
    r->outcome = up_curl_outcome_of(code, x);
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &r->http_status);
    char *ct = NULL;
    if (r->outcome == UP_OK)
        curl_easy_getinfo(x->easy, CURLINFO_CONTENT_TYPE, &ct);
    if (ct && !http_field_value_ok(ct, strlen(ct))) { /* as http1.c: the answer is refused */
        r->outcome = UP_PROTOCOL_ERROR;
        r->error = "malformed Content-Type";
    } else if (r->outcome == UP_OK) {
        r->body = x->resp ? x->resp : "";
        r->body_len = x->resp_len;
        r->content_type = ct;
    } else if (r->outcome == UP_TOO_LARGE) {
        r->error = up_xfer_too_large_why(x);
    } else {
        r->error = x->errbuf[0] ? x->errbuf : curl_easy_strerror(code);
    }
    x->finish(x);
}

static void up_curl_collect_finished(struct up_curl *c)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(c->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        char *priv = NULL;
        CURLcode code = msg->data.result;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
        up_curl_finish((struct up_xfer *)priv, code);
    }
}

static void up_curl_action(struct up_curl *c, curl_socket_t s, int flags)
{
    int running;
    curl_multi_socket_action(c->multi, s, flags, &running);
    up_curl_collect_finished(c);
}

static void up_curl_on_sock_event(struct loop_watch *w, uint32_t events)
{
    struct up_curl_sock *k = (struct up_curl_sock *)w;
    int flags = ((events & EPOLLIN) ? CURL_CSELECT_IN : 0) |
                ((events & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                ((events & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
    up_curl_action(k->curl, k->s, flags);
}

/* curl asks to watch (or forget) one of its sockets. */
static int up_curl_on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    (void)easy;
    struct up_curl *c = userp;
    struct up_curl_sock *k = socketp;
    if (what == CURL_POLL_REMOVE) {
        loop_watch_remove(c->loop, s);
        if (k && !k->removed) {
            k->removed = true;
            c->nremoved++;
        }
        return 0;
    }
    if (!k) {
        if (!(k = calloc(1, sizeof *k)))
            return -1;
        *k = (struct up_curl_sock){{up_curl_on_sock_event}, c, s, false, c->socks};
        c->socks = k;
        curl_multi_assign(c->multi, s, k);
    }
    uint32_t events =
        ((what & CURL_POLL_IN) ? EPOLLIN : 0U) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0U);
    if (!loop_watch_add(c->loop, s, events, &k->watch) && errno == EEXIST)
        loop_watch_change(c->loop, s, events, &k->watch);
    return 0;
}

static int up_curl_on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    struct up_curl *c = userp;
    c->due_ns = timeout_ms < 0
                    ? UINT64_MAX
                    : (uint64_t)xg_monotonic_ns() + (uint64_t)timeout_ms * UP_CURL_NS_PER_MS;
    return 0;
}

void up_curl_release_removed(struct up_curl *c)
{
    if (c->nremoved == 0)
        return;
    struct up_curl_sock **at = &c->socks;
    while (*at) {
        struct up_curl_sock *k = *at;
        if (k->removed) {
            *at = k->next;
            free(k);
        } else {
            at = &k->next;
        }
    }
    c->nremoved = 0;
}

void up_curl_run_timer(struct up_curl *c, uint64_t now)
{
    if (now < c->due_ns)
        return;
    c->due_ns = UINT64_MAX;
    up_curl_action(c, CURL_SOCKET_TIMEOUT, 0);
}

uint64_t up_curl_due_ns(const struct up_curl *c)
{
    return c->due_ns;
}

bool up_curl_start(struct up_curl *c, struct up_xfer *x)
{
    x->in_multi = curl_multi_add_handle(c->multi, x->easy) == CURLM_OK;
    return x->in_multi;
}

void up_curl_detach(struct up_curl *c, struct up_xfer *x)
{
    if (!x->in_multi)
        return;
    curl_multi_remove_handle(c->multi, x->easy);
    x->in_multi = false;
}

void up_curl_xfer_free(struct up_xfer *x)
{
    if (x->easy)
        curl_easy_cleanup(x->easy);
    x->easy = NULL;
}

static bool up_curl_configure(struct up_curl *c)
{
    CURLM *m = c->multi;
    const struct up_engine_options *o = c->opt;
    bool ok = true;
    ok &= curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, (long)o->max_connections_per_node) ==
          CURLM_OK;
    ok &= curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)o->max_total_connections) ==
          CURLM_OK;
    /* The cache keeps idle keep-alive connections up to the cap instead of curl's
     * default of four per added handle, which closes them in quiet moments. */
    ok &= curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)o->max_total_connections) == CURLM_OK;
    ok &= curl_multi_setopt(m, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING) == CURLM_OK;
    ok &= curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, up_curl_on_socket) == CURLM_OK;
    ok &= curl_multi_setopt(m, CURLMOPT_SOCKETDATA, c) == CURLM_OK;
    ok &= curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, up_curl_on_timer) == CURLM_OK;
    ok &= curl_multi_setopt(m, CURLMOPT_TIMERDATA, c) == CURLM_OK;
    return ok;
}

struct up_curl *up_curl_new(struct loop *l, const struct up_engine_options *opt, char *err,
                            size_t errlen)
{
    struct up_curl *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->loop = l;
    c->opt = opt;
    c->due_ns = UINT64_MAX;
    /* Reference-counted, and thread-safe in curl >= 7.84. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, errlen, "curl_global_init failed");
        free(c);
        return NULL;
    }
    c->multi = curl_multi_init();
    if (!c->multi || !up_curl_configure(c)) {
        snprintf(err, errlen, "cannot set up a curl multi handle");
        up_curl_free(c);
        return NULL;
    }
    return c;
}

void up_curl_free(struct up_curl *c)
{
    if (!c)
        return;
    if (c->multi)
        curl_multi_cleanup(c->multi);
    while (c->socks) {
        struct up_curl_sock *k = c->socks;
        c->socks = k->next;
        free(k);
    }
    free(c);
    curl_global_cleanup();
}
