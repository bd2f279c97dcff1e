/* xmr402_flow — see xmr402_flow.h. Over 700 lines: the event stream (its second half) is
 * the same conversation with billing as the first answer, on the same per-request state
 * and the same calls; split off, it would need that state in a header of its own. */
#include "serve/xmr402_flow.h"

#include "serve/context.h"
#include "serve/answer.h"
#include "http/sse.h"
#include "core/hold.h"
#include "token.h"
#include "nodes/upstream.h"
#include "xg_hex.h"
#include "xg_log.h"
#include "xg_str.h"
#include "xg_xmr402.h"
#include "xmr402/xmr402.h"
#include "xmr402/xmr402_streams.h"
#include "xg_clock.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_HEADERS     8
#define CLIENT_SIZE     64
#define BILLING_TIMEOUT 15000 /* ms; billing may refresh the wallet once */
#define HOW_TO_PROVE                                                                               \
    "Pay `amount` piconero to `address` (the `uri` has it in a monero: URI), call your "           \
    "wallet's get_tx_proof {txid, address, message} with this address and message, then "          \
    "repeat this request with  Authorization: XMR402 txid=\"<txid>\", proof=\"<signature>\", "     \
    "invoice=\"<invoice>\". The request is served at once from a bounded pending allowance "       \
    "(X-XMR402-Pending says how many are left) until the payment has the tier's "                  \
    "confirmations; then X-XMR402-Token carries your token. With X-XMR402-Mode: confirmations "    \
    "the answer is 202 with Retry-After until then instead."

struct xmr402_work {
    struct gw_request *req;
    struct xmr402_auth auth;
    bool has_proof;
    bool extended; /* X-XMR402-Mode: confirmations */
    bool pending;  /* served from the pending allowance: no quota charge, no credentials */
    char tier[XMR402_TIER_MAX + 1];
    char client[CLIENT_SIZE];
    json_t *carry; /* an error to report with a fresh challenge (an expired invoice) */
    struct {
        const char *name; /* static */
        char *value;      /* owned */
    } headers[MAX_HEADERS];
    size_t nheaders;
    atomic_bool serve; /* provisioned: server.c serves as `tenant` */
    struct tenant_row tenant;
    /* The v2.1 event stream (xmr402_flow_stream_open); engine thread only. */
    bool wants_stream;   /* Accept: text/event-stream where streams are served */
    bool stream_counted; /* holds one of [xmr402] streams' places until freed */
    bool stream_ready;   /* billing accepted: the next resume opens the stream */
    bool stream_over;    /* ended (or to end once the poll in flight is back) */
    bool polling;        /* a verify is out to billing */
    char *first_event;   /* the frame the stream opens with (owned) */
    size_t first_len;
    bool first_is_final; /* provisioned at once: the stream ends after it */
    char invoice[64];
    int64_t retry_after_s;
    int64_t until_us, next_poll_us; /* monotonic; until_us is 0 until the stream opens */
    struct hold_entry tick;
};

/* ---- small helpers ----------------------------------------------------------------- */

/* A header of the XMR402 answer, kept in w (xmr402_flow_each_header hands it over). */
static void work_header(struct xmr402_work *w, const char *name, const char *value)
{
    if (!value || w->nheaders >= MAX_HEADERS)
        return;
    char *copy = strdup(value);
    if (!copy)
        return;
    w->headers[w->nheaders].name = name;
    w->headers[w->nheaders].value = copy;
    w->nheaders++;
}

static char *status_url(const struct gw_context *ctx, const char *path)
{
    const char *base =
        ctx->cfg->xmr402_public_url[0] ? ctx->cfg->xmr402_public_url : ctx->cfg->xmr402_billing_url;
    char *url = NULL;
    if (asprintf(&url, "%s%s", base, path ? path : "") < 0)
        return NULL;
    return url;
}

/* Event streams are served here: the front end can stream and [xmr402] streams allows. */
static bool stream_offered(const struct gw_request *req)
{
    return req->ctx->cfg->xmr402_streams > 0 && req->client.ops->stream_begin;
}

/* Turns billing's challenge object into our 402 body and WWW-Authenticate header. */
static bool adopt_challenge(struct xmr402_work *w, json_t *body, const json_t *challenge)
{
    char header[XMR402_CHALLENGE_SIZE];
    const char *address = json_string_value(json_object_get(challenge, "address"));
    const char *amount = json_string_value(json_object_get(challenge, "amount"));
    const char *message = json_string_value(json_object_get(challenge, "message"));
    json_int_t ts = json_integer_value(json_object_get(challenge, "timestamp"));
    if (!xmr402_challenge_header(header, sizeof header, address, amount, message, ts) ||
        (stream_offered(w->req) && !xmr402_challenge_add_sse(header, sizeof header)))
        return false;
    work_header(w, "WWW-Authenticate", header);
    json_object_update_missing(body, (json_t *)challenge);
    char *url =
        status_url(w->req->ctx, json_string_value(json_object_get(challenge, "status_path")));
    json_object_set_new(body, "status_url", url ? json_string(url) : json_null());
    free(url);
    json_object_del(body, "status_path");
    json_object_del(body, "challenge");
    json_object_set_new(body, "how_to_prove", json_string(HOW_TO_PROVE));
    return true;
}

/* ---- talking to billing --------------------------------------------------------------- */

static bool submit(struct xmr402_work *w, const char *path, json_t *payload,
                   void (*on_done)(const struct up_result *, void *))
{
    struct gw_request *req = w->req;
    const struct gw_config *cfg = req->ctx->cfg;
    char url[1024], sig[XG_XMR402_SIG_HEX_SIZE] = "";
    uint8_t key[XG_XMR402_KEY_LEN];
    char *body = json_dumps(payload, JSON_COMPACT);
    json_decref(payload);
    if (!body)
        return false;
    if (xg_hex_decode(cfg->ha1_key, key, sizeof key) && !xg_xmr402_client_sig(key, w->client, sig))
        sig[0] = '\0';
    struct up_header headers[] = {{"Content-Type", "application/json"},
                                  {XG_XMR402_CLIENT_HDR, w->client},
                                  {XG_XMR402_SIG_HDR, sig}};
    /* an open stream has outlived its request's deadline: each poll gets the full time */
    int64_t left_ms = w->until_us ? BILLING_TIMEOUT : (req->deadline_us - xg_monotonic_us()) / 1000;
    struct up_job job;
    bool ok = up_job_init(&job, url, sizeof url, cfg->xmr402_billing_url, path,
                          up_timeout_within(left_ms, BILLING_TIMEOUT), on_done, w);
    if (!ok) /* a URL cut short is never sent */
        xg_log(XG_LOG_ERROR, "xmr402_billing_url_too_long", "%s%s", cfg->xmr402_billing_url, path);
    up_job_post(&job, body, strlen(body));
    up_job_headers(&job, headers, 3);
    ok = ok && up_submit(req->ctx->up, &job);
    free(body);
    return ok;
}

/* Billing did not give a usable answer: the agent may retry later. */
static void answer_unavailable(struct xmr402_work *w, const char *why)
{
    xg_log(XG_LOG_WARN, "xmr402_billing_failed", "%s", why);
    work_header(w, "Retry-After", "10");
    answer_xmr402_error(w->req, ERR_BILLING_UNAVAILABLE, NULL);
}

static void answer_billing_down(struct xmr402_work *w, const struct up_result *res)
{
    char why[256];
    snprintf(why, sizeof why, "%s (HTTP %ld)",
             res->outcome == UP_OK ? "unexpected answer" : res->error, res->http_status);
    answer_unavailable(w, why);
}

static json_t *billing_json(const struct up_result *res)
{
    if (res->outcome != UP_OK || !res->body)
        return NULL;
    json_t *doc = json_loadb(res->body, res->body_len, 0, NULL);
    if (doc && !json_is_object(doc)) {
        json_decref(doc);
        doc = NULL;
    }
    return doc;
}

static void on_challenge(const struct up_result *res, void *arg)
{
    struct xmr402_work *w = arg;
    struct gw_request *req = w->req;
    json_t *doc = billing_json(res);
    if (doc && res->http_status == 201) {
        json_t *body = answer_xmr402_body(ERR_PAYMENT_REQUIRED, NULL);
        json_object_set_new(body, "new_purchase", json_boolean(w->carry != NULL));
        if (w->carry)
            json_object_set(body, "error", w->carry);
        if (adopt_challenge(w, body, doc)) {
            answer_json(req, XMR402_STATUS_CHALLENGE, body);
        } else {
            json_decref(body);
            answer_unavailable(w, "billing's challenge cannot be sent as a header");
        }
    } else if (doc && (res->http_status == 429 || res->http_status == 400)) {
        json_t *retry = json_object_get(doc, "retry_after");
        char seconds[24];
        snprintf(seconds, sizeof seconds, "%lld", (long long)json_integer_value(retry));
        if (retry)
            work_header(w, "Retry-After", seconds);
        json_object_set_new(doc, "protocol", json_string("XMR402"));
        answer_json(req, (unsigned)res->http_status, json_incref(doc));
    } else {
        answer_billing_down(w, res);
    }
    json_decref(doc);
    gw_request_resume(req);
}

static bool request_challenge(struct xmr402_work *w)
{
    return submit(w, "/api/xmr402/challenge", json_pack("{s:s}", "tier", w->tier), on_challenge);
}

/* billing's tenant object → the row limits and the nodes' path need. */
static bool tenant_from(const json_t *doc, struct tenant_row *t)
{
    const json_t *tn = json_object_get(doc, "tenant");
    const char *token = json_string_value(json_object_get(doc, "token"));
    const char *handle = json_string_value(json_object_get(tn, "handle"));
    const char *tier = json_string_value(json_object_get(tn, "tier"));
    memset(t, 0, sizeof *t);
    /* no token past billing's credentials window: served as the tenant all the same */
    if (!handle || !tier || strlen(handle) > TENANT_HANDLE_MAX || strlen(tier) > TENANT_TIER_MAX ||
        (token && !token_hash(token, strlen(token), t->token_hash)))
        return false;
    t->id = json_integer_value(json_object_get(tn, "id"));
    snprintf(t->handle, sizeof t->handle, "%s", handle);
    snprintf(t->tier_id, sizeof t->tier_id, "%s", tier);
    t->burst_rps = (int32_t)json_integer_value(json_object_get(tn, "burst_rps"));
    t->burst_size = (int32_t)json_integer_value(json_object_get(tn, "burst_size"));
    t->daily_quota = json_integer_value(json_object_get(tn, "daily_quota"));
    t->valid_until = json_integer_value(json_object_get(tn, "valid_until_unix"));
    t->suspended = json_is_true(json_object_get(tn, "suspended"));
    return t->id > 0 && t->burst_rps > 0 && t->burst_size > 0;
}

static void on_provisioned(struct xmr402_work *w, const json_t *doc)
{
    if (!tenant_from(doc, &w->tenant)) {
        answer_xmr402_error(w->req, ERR_BILLING_ANSWER, NULL);
        return;
    }
    work_header(w, "X-XMR402-Token", json_string_value(json_object_get(doc, "token")));
    work_header(w, "X-XMR402-Login", json_string_value(json_object_get(doc, "login")));
    work_header(w, "X-XMR402-RPC-URL", json_string_value(json_object_get(doc, "rpc_url")));
    work_header(w, "X-XMR402-Invoice", json_string_value(json_object_get(doc, "invoice")));
    work_header(w, "X-XMR402-Receipt", json_string_value(json_object_get(doc, "receipt")));
    work_header(w, "X-XMR402-Valid-Until",
                json_string_value(json_object_get(json_object_get(doc, "tenant"), "valid_until")));
    atomic_store(&w->serve, true);
}

static void on_waiting(struct xmr402_work *w, json_t *doc)
{
    char seconds[24], path[96];
    snprintf(seconds, sizeof seconds, "%lld",
             (long long)json_integer_value(json_object_get(doc, "retry_after")));
    work_header(w, "Retry-After", seconds);
    snprintf(path, sizeof path, "/api/invoices/%s",
             json_is_string(json_object_get(doc, "invoice"))
                 ? json_string_value(json_object_get(doc, "invoice"))
                 : "");
    char *url = status_url(w->req->ctx, path);
    json_object_set_new(doc, "status_url", url ? json_string(url) : json_null());
    free(url);
    json_object_set_new(doc, "protocol", json_string("XMR402"));
    answer_json(w->req, XMR402_STATUS_WAITING, json_incref(doc));
}

static void on_refused(struct xmr402_work *w, json_t *doc)
{
    json_t *challenge = json_object_get(doc, "challenge");
    json_object_set_new(doc, "protocol", json_string("XMR402"));
    if (json_is_object(challenge)) {
        json_incref(challenge);
        if (!adopt_challenge(w, doc, challenge))
            json_object_del(doc, "challenge");
        json_decref(challenge);
    }
    answer_json(w->req, XMR402_STATUS_CHALLENGE, json_incref(doc));
}

/* A proven payment short of its confirmations: served from the pending allowance as a
 * tenant that exists only for this request (the tier's rate, no quota row). */
static void on_pending(struct xmr402_work *w, const json_t *doc)
{
    const char *invoice = json_string_value(json_object_get(doc, "invoice"));
    const json_t *tier = json_object_get(doc, "tier");
    const char *tier_id = json_string_value(json_object_get(tier, "tier"));
    struct tenant_row *t = &w->tenant;
    char left[24], conf[48];
    memset(t, 0, sizeof *t);
    t->id = xmr402_pending_tenant_id(invoice);
    snprintf(t->handle, sizeof t->handle, "pending");
    snprintf(t->tier_id, sizeof t->tier_id, "%s", tier_id ? tier_id : "");
    t->burst_rps = (int32_t)json_integer_value(json_object_get(tier, "burst_rps"));
    t->burst_size = (int32_t)json_integer_value(json_object_get(tier, "burst_size"));
    t->daily_quota = json_integer_value(json_object_get(tier, "daily_quota"));
    t->valid_until = json_integer_value(json_object_get(doc, "pending_until_unix"));
    if (!invoice || t->burst_rps <= 0 || t->burst_size <= 0) {
        answer_xmr402_error(w->req, ERR_BILLING_ANSWER, NULL);
        return;
    }
    snprintf(left, sizeof left, "%lld",
             (long long)json_integer_value(json_object_get(doc, "pending_left")));
    snprintf(conf, sizeof conf, "%lld/%lld",
             (long long)json_integer_value(json_object_get(doc, "confirmations")),
             (long long)json_integer_value(json_object_get(doc, "confirmations_required")));
    work_header(w, "X-XMR402-Pending", left);
    work_header(w, "X-XMR402-Confirmations", conf);
    work_header(w, "X-XMR402-Invoice", invoice);
    w->pending = true;
    atomic_store(&w->serve, true);
}

/* Not a purchase: the agent retries after Retry-After (a transaction not visible yet, the
 * pending allowance spent, too many proofs). Never a 402: it has paid. */
static void on_retry(struct xmr402_work *w, json_t *doc, long status)
{
    char seconds[24];
    json_int_t retry = json_integer_value(json_object_get(doc, "retry_after"));
    snprintf(seconds, sizeof seconds, "%lld", (long long)(retry > 0 ? retry : 5));
    work_header(w, "Retry-After", seconds);
    json_object_del(doc, "challenge");
    json_object_set_new(doc, "protocol", json_string("XMR402"));
    answer_json(w->req, status == 429 ? 429 : 503, json_incref(doc));
}

/* The proof shows nothing (or not enough) for the invoice: the draft's 403, no challenge. */
static void on_forbidden(struct xmr402_work *w, json_t *doc)
{
    json_object_del(doc, "challenge");
    json_object_set_new(doc, "protocol", json_string("XMR402"));
    json_object_set_new(doc, "code", json_string(XMR402_DRAFT_REFUSED));
    answer_json(w->req, XMR402_STATUS_REFUSED, json_incref(doc));
}

/* Expired with nothing proven: say so, with a new challenge to pay instead. True when
 * on_challenge will finish the request. */
static bool on_expired(struct xmr402_work *w, json_t *doc)
{
    w->carry = json_incref(json_object_get(doc, "error"));
    if (request_challenge(w))
        return true;
    answer_xmr402_error(w->req, ERR_INVOICE_EXPIRED, NULL);
    return false;
}

/* billing's refusal, as the agent's mode reads it (xmr402_refusal_of). True when the
 * request goes on (a new challenge is asked for). */
static bool on_refusal(struct xmr402_work *w, json_t *doc, long status)
{
    const char *code = json_string_value(json_object_get(json_object_get(doc, "error"), "code"));
    switch (xmr402_refusal_of(code, w->extended)) {
    case XMR402_REFUSE_EXPIRED:
        return on_expired(w, doc);
    case XMR402_REFUSE_PAY_REST:
        on_refused(w, doc);
        return false;
    case XMR402_REFUSE_RETRY:
        on_retry(w, doc, status);
        return false;
    case XMR402_REFUSE_FORBIDDEN:
        break;
    }
    on_forbidden(w, doc);
    return false;
}

/* ---- the v2.1 event stream ---------------------------------------------------------------
 *
 * A proof sent with Accept: text/event-stream, accepted by billing, is answered with a
 * stream instead of the resource: "event: accepted" at once (the pending allowance and
 * the token the payment buys, which billing names for the stream), a ": keep-alive"
 * comment every [xmr402] stream_keepalive, billing asked again every retry_after in the
 * confirmations mode (which spends no allowance), then "event: confirmed" with the
 * provisioned credentials, and the end. A refusal on the way (a double spend) or
 * [xmr402] stream_max_duration ends it with "event: error". A client that leaves ends it
 * at the next tick (or when the poll in flight is back): nothing is charged for it. */

/* The JSON of an event, framed (sse.h); NULL when memory runs out. doc is taken. */
static char *frame(const char *event, json_t *doc, size_t *len)
{
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    char *out = text ? sse_event(event, text, len) : NULL;
    free(text);
    return out;
}

/* billing's provisioned answer as the draft's confirmed event. */
static json_t *confirmed_doc(const json_t *doc)
{
    const json_t *tn = json_object_get(doc, "tenant");
    json_t *ev = json_pack(
        "{s:s, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}", "status", "confirmed",
        "access_token", json_object_get(doc, "token"), "login", json_object_get(doc, "login"),
        "rpc_url", json_object_get(doc, "rpc_url"), "gateway_url",
        json_object_get(doc, "gateway_url"), "invoice", json_object_get(doc, "invoice"), "receipt",
        json_object_get(doc, "receipt"), "handle", json_object_get(tn, "handle"), "tier",
        json_object_get(tn, "tier"), "valid_until", json_object_get(tn, "valid_until"));
    if (ev && json_object_get(doc, "credentials")) /* withheld past the credentials window */
        json_object_set(ev, "credentials", json_object_get(doc, "credentials"));
    return ev;
}

/* billing accepted the proof (pending, or provisioned already): the stream opens at the
 * next resume (xmr402_flow_stream_open) with the first event built here. */
static void on_stream_accepted(struct xmr402_work *w, const json_t *doc, bool provisioned)
{
    const char *invoice = json_string_value(json_object_get(doc, "invoice"));
    json_t *ev;
    if (provisioned) {
        ev = confirmed_doc(doc);
    } else {
        json_int_t conf = json_integer_value(json_object_get(doc, "confirmations"));
        ev = json_pack("{s:s, s:O?, s:O?, s:O?, s:O?, s:O?, s:I, s:O?, s:O?, s:O?}", "status",
                       conf > 0 ? "confirming" : "mempool", "access_token",
                       json_object_get(doc, "token"), "rpc_url", json_object_get(doc, "rpc_url"),
                       "gateway_url", json_object_get(doc, "gateway_url"), "invoice",
                       json_object_get(doc, "invoice"), "txid", json_object_get(doc, "txid"),
                       "confirmations", conf, "confirmations_required",
                       json_object_get(doc, "confirmations_required"), "pending_left",
                       json_object_get(doc, "pending_left"), "pending_until_unix",
                       json_object_get(doc, "pending_until_unix"));
    }
    w->first_event = frame(provisioned ? "confirmed" : "accepted", ev, &w->first_len);
    if (!w->first_event || !invoice || strlen(invoice) >= sizeof w->invoice) {
        answer_xmr402_error(w->req, ERR_BILLING_ANSWER, NULL);
        return;
    }
    xg_str_copy(w->invoice, sizeof w->invoice, invoice);
    w->retry_after_s = json_integer_value(json_object_get(doc, "retry_after"));
    w->first_is_final = provisioned;
    w->stream_ready = true;
}

static void stream_write(struct xmr402_work *w, const char *data, size_t len)
{
    const struct front_client *c = &w->req->client;
    if (!c->ops->stream_write(c->conn, data, len))
        w->stream_over = true; /* the client left */
}

static void stream_event(struct xmr402_work *w, const char *event, json_t *doc)
{
    size_t len = 0;
    char *f = frame(event, doc, &len);
    if (f)
        stream_write(w, f, len);
    free(f);
}

/* Ends the stream now, or once the poll in flight is back (its callback holds w). */
static void stream_close(struct xmr402_work *w)
{
    w->stream_over = true;
    if (hold_queued(&w->tick))
        hold_cancel(w->req->ctx->timers, &w->tick);
    if (!w->polling)
        w->req->client.ops->stream_end(w->req->client.conn);
}

static void on_stream_tick(struct hold_entry *e);

static void stream_schedule(struct xmr402_work *w)
{
    const struct gw_config *cfg = w->req->ctx->cfg;
    int64_t due = xg_monotonic_us() + cfg->xmr402_stream_keepalive_ms * 1000;
    if (!w->polling && w->next_poll_us < due)
        due = w->next_poll_us;
    if (w->until_us < due)
        due = w->until_us;
    if (!hold_add(w->req->ctx->timers, &w->tick, due, on_stream_tick))
        stream_close(w); /* out of memory */
}

static void on_stream_poll(const struct up_result *res, void *arg)
{
    struct xmr402_work *w = arg;
    json_t *doc = billing_json(res);
    long status = doc ? res->http_status : 0;
    const char *state = json_string_value(json_object_get(doc, "state"));
    json_int_t retry = json_integer_value(json_object_get(doc, "retry_after"));
    w->polling = false;
    if (w->stream_over) {
        stream_close(w);
    } else if (status == 200 && state && strcmp(state, "provisioned") == 0) {
        stream_event(w, "confirmed", confirmed_doc(doc));
        stream_close(w);
    } else if (status == 202 || status == 200 || status == 429) {
        w->next_poll_us = xg_monotonic_us() + (retry > 0 ? retry : 5) * 1000000;
    } else if (status >= 400 && status < 500) { /* refused: a double spend, an expiry */
        json_t *err = json_object_get(doc, "error");
        stream_event(
            w, "error",
            json_pack("{s:s, s:O}", "status", "refused", "error", json_is_object(err) ? err : doc));
        stream_close(w);
    } else { /* billing is away: ask again later, within the stream's time */
        xg_log(XG_LOG_WARN, "xmr402_stream_poll_failed", "invoice %s: %s (HTTP %ld)", w->invoice,
               res->outcome == UP_OK ? "unexpected answer" : res->error, res->http_status);
        w->next_poll_us = xg_monotonic_us() + (int64_t)10 * 1000000;
    }
    json_decref(doc);
}

static void stream_poll(struct xmr402_work *w)
{
    json_t *payload = json_pack("{s:s, s:s, s:s, s:s}", "txid", w->auth.txid, "proof",
                                w->auth.proof, "invoice", w->invoice, "mode", XMR402_MODE_EXTENDED);
    w->polling = payload != NULL;
    if (w->polling && !submit(w, "/api/xmr402/verify", payload, on_stream_poll)) {
        w->polling = false; /* the engine is stopping */
        stream_close(w);
    }
}

static void on_stream_tick(struct hold_entry *e)
{
    struct xmr402_work *w =
        (struct xmr402_work *)(void *)((char *)e - offsetof(struct xmr402_work, tick));
    int64_t now = xg_monotonic_us();
    if (w->stream_over || gw_request_client_left(w->req)) {
        stream_close(w);
        return;
    }
    if (now >= w->until_us) {
        stream_event(w, "error",
                     json_pack("{s:s, s:{s:s, s:s}}", "status", "timeout", "error", "code",
                               "stream_timeout", "message",
                               "still short of the tier's confirmations; the proof keeps "
                               "working and the invoice's status URL tells when it is done"));
        stream_close(w);
        return;
    }
    if (!w->polling && now >= w->next_poll_us) {
        stream_poll(w);
    } else {
        size_t len = 0;
        char *c = sse_comment("keep-alive", &len);
        if (c)
            stream_write(w, c, len);
        free(c);
    }
    if (w->stream_over)
        stream_close(w);
    else
        stream_schedule(w);
}

bool xmr402_flow_stream_open(struct gw_request *req, enum front_result *rc)
{
    struct xmr402_work *w = req->xmr402;
    if (!w || !w->stream_ready)
        return false;
    w->stream_ready = false;
    const struct gw_config *cfg = req->ctx->cfg;
    struct front_header h[MAX_HEADERS + 3];
    size_t n = 0;
    char id[GW_REQUEST_ID_SIZE];
    gw_request_id_text(req->id, id);
    h[n++] = (struct front_header){"Content-Type", SSE_CONTENT_TYPE};
    h[n++] = (struct front_header){"X-Accel-Buffering", "no"}; /* a proxy in front: pass on */
    h[n++] = (struct front_header){"X-Request-Id", id};
    for (size_t i = 0; i < w->nheaders; i++)
        h[n++] = (struct front_header){w->headers[i].name, w->headers[i].value};
    req->status = 200;
    if (!req->client.ops->stream_begin(req->client.conn, 200, h, n)) {
        *rc = FRONT_CLOSE;
        return true;
    }
    int64_t now = xg_monotonic_us();
    w->until_us = now + cfg->xmr402_stream_max_ms * 1000;
    w->next_poll_us = now + (w->retry_after_s > 0 ? w->retry_after_s : 5) * 1000000;
    stream_write(w, w->first_event, w->first_len);
    if (w->first_is_final || w->stream_over)
        stream_close(w);
    else
        stream_schedule(w);
    *rc = FRONT_DONE;
    return true;
}

static void on_verify(const struct up_result *res, void *arg)
{
    struct xmr402_work *w = arg;
    struct gw_request *req = w->req;
    json_t *doc = billing_json(res);
    long status = doc ? res->http_status : 0;
    const char *state = json_string_value(json_object_get(doc, "state"));
    if (w->wants_stream && status == 200 && state &&
        (strcmp(state, "pending") == 0 || strcmp(state, "provisioned") == 0)) {
        on_stream_accepted(w, doc, strcmp(state, "provisioned") == 0);
    } else if (status == 200 && state && strcmp(state, "pending") == 0) {
        on_pending(w, doc);
    } else if (status == 200 && state && strcmp(state, "provisioned") == 0) {
        on_provisioned(w, doc);
    } else if (status == 202) {
        on_waiting(w, doc);
    } else if (status == 402 || status == 409 || status == 410 || status == 429) {
        if (on_refusal(w, doc, status)) {
            json_decref(doc);
            return; /* on_challenge finishes */
        }
    } else if (status == 400) {
        json_object_set_new(doc, "protocol", json_string("XMR402"));
        json_object_set_new(doc, "code", json_string(XMR402_DRAFT_MALFORMED));
        answer_json(req, XMR402_STATUS_MALFORMED, json_incref(doc));
    } else {
        answer_billing_down(w, res);
    }
    json_decref(doc);
    gw_request_resume(req);
}

/* ---- the entry points ----------------------------------------------------------------- */

const char *xmr402_flow_applies(const struct gw_request *req, const struct auth_credential *cred)
{
    if (!req->ctx->cfg->xmr402_enabled)
        return NULL;
    if (cred->kind != AUTH_NONE &&
        !(cred->kind == AUTH_OTHER_SCHEME && xmr402_scheme_is(cred->scheme)))
        return NULL;
    return xmr402_agent_path(req->path);
}

/* ?tier=, else X-XMR402-Tier, else the default. buf holds any argument a request head
 * can carry, so a tier sent is never silently replaced by the default. */
static const char *requested_tier(const struct gw_request *req, char *buf, size_t buflen)
{
    if (gw_request_query_arg(req, "tier", buf, buflen))
        return buf;
    const char *h = gw_request_header(req, "X-XMR402-Tier");
    return h ? h : req->ctx->cfg->xmr402_default_tier;
}

/* One of [xmr402] streams' places, and one of the payment's (xmr402_streams.h); both or
 * neither. */
static bool stream_place_take(struct xmr402_work *w)
{
    struct gw_context *ctx = w->req->ctx;
    if (!gw_metrics_xmr402_stream_open(ctx->metrics, ctx->cfg->xmr402_streams))
        return false;
    if (xmr402_streams_take(ctx->xmr402_streams, w->auth.txid))
        return true;
    gw_metrics_xmr402_stream_closed(ctx->metrics);
    return false;
}

bool xmr402_flow_begin(struct gw_request *req, const struct auth_credential *cred)
{
    struct xmr402_work *w = calloc(1, sizeof *w);
    const char *detail = NULL;
    if (!w) {
        answer_xmr402_error(req, ERR_OUT_OF_MEMORY, NULL);
        return false;
    }
    req->xmr402 = w;
    w->req = req;
    gw_request_client_address(req, w->client, sizeof w->client);
    if (!w->client[0])
        snprintf(w->client, sizeof w->client, "unknown");
    char tier_arg[GW_REQUEST_MAX_HEAD]; /* xmr402_tier_ok refuses a long one below */
    const char *tier = requested_tier(req, tier_arg, sizeof tier_arg);
    if (!xmr402_tier_ok(tier)) {
        answer_xmr402_error(req, ERR_MALFORMED_TIER, NULL);
        return false;
    }
    xg_str_copy(w->tier, sizeof w->tier, tier); /* fits: xmr402_tier_ok checked its length */
    if (cred->kind == AUTH_NONE) {
        if (request_challenge(w))
            return true;
        answer_unavailable(w, "the upstream engine is stopping");
        return false;
    }
    if (!xmr402_parse_params(cred->scheme_params, (size_t)req->ctx->cfg->xmr402_max_proof, &w->auth,
                             &detail)) {
        json_t *body = answer_xmr402_body(ERR_MALFORMED_XMR402, detail);
        json_object_set_new(body, "code", json_string(XMR402_DRAFT_MALFORMED));
        answer_json(req, XMR402_STATUS_MALFORMED, body);
        return false;
    }
    w->has_proof = true;
    w->extended = xmr402_mode_extended(gw_request_header(req, XMR402_MODE_HEADER));
    /* a stream waits through the confirmations itself: the 202 mode has no stream */
    w->wants_stream = !w->extended && stream_offered(req) &&
                      xmr402_accepts_stream(gw_request_header(req, "Accept"));
    if (w->wants_stream && !stream_place_take(w)) {
        work_header(w, "Retry-After", "30");
        answer_xmr402_error(req, ERR_STREAMS_FULL, NULL);
        return false; /* before billing: the allowance is not touched */
    }
    w->stream_counted = w->wants_stream;
    json_t *payload = json_pack("{s:s, s:s}", "txid", w->auth.txid, "proof", w->auth.proof);
    if (payload && w->auth.invoice[0])
        json_object_set_new(payload, "invoice", json_string(w->auth.invoice));
    if (payload && w->extended)
        json_object_set_new(payload, "mode", json_string(XMR402_MODE_EXTENDED));
    if (payload && w->wants_stream)
        json_object_set_new(payload, "reveal", json_true());
    if (submit(w, "/api/xmr402/verify", payload, on_verify))
        return true;
    answer_unavailable(w, "the upstream engine is stopping");
    return false;
}

bool xmr402_flow_pending(const struct gw_request *req)
{
    const struct xmr402_work *w = req->xmr402;
    return w && w->pending;
}

bool xmr402_flow_take_tenant(struct gw_request *req, struct tenant_row *tenant)
{
    struct xmr402_work *w = req->xmr402;
    if (!w || !atomic_exchange(&w->serve, false))
        return false;
    *tenant = w->tenant;
    return true;
}

void xmr402_flow_each_header(const struct gw_request *req,
                             void (*add)(void *ctx, const char *name, const char *value), void *ctx)
{
    const struct xmr402_work *w = req->xmr402;
    for (size_t i = 0; w && i < w->nheaders; i++)
        add(ctx, w->headers[i].name, w->headers[i].value);
}

void xmr402_flow_request_free(struct gw_request *req)
{
    struct xmr402_work *w = req->xmr402;
    if (!w)
        return;
    for (size_t i = 0; i < w->nheaders; i++)
        free(w->headers[i].value);
    if (hold_queued(&w->tick))
        hold_cancel(req->ctx->timers, &w->tick);
    if (w->stream_counted) {
        gw_metrics_xmr402_stream_closed(req->ctx->metrics);
        xmr402_streams_give(req->ctx->xmr402_streams, w->auth.txid);
    }
    free(w->first_event);
    json_decref(w->carry);
    memset(&w->auth, 0, sizeof w->auth);
    free(w);
    req->xmr402 = NULL;
}
