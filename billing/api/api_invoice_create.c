/* POST /api/invoices — {"tier": "<id>", "months": N} buys a new tenant; with
 * "token": "<token>" it renews (or changes the tier of) that tenant instead.
 *
 *   - purchase of a paid tier: a fresh subaddress (create_address, stored with the
 *     invoice at once), the locked quote, and the credentials: the token is in this
 *     answer only (its hash and the wrapped HA1 wait on the invoice until it is paid);
 *   - renewal: the tenant's persistent subaddress (a granted tenant gets one now); an
 *     untouched pending invoice on it is superseded, any other open one is a 409;
 *   - free tier: provisioned at once with a working token, no payment, within the bounds
 *     every instance shares (free_grant.h: per network per hour and day, over all per
 *     hour), counted in the tenant's own transaction;
 *   - a tier change carries the time left at the price ratio (price_carry, applied when
 *     the renewal is settled); one that cannot be priced (the time left on a fiat-priced
 *     tier onto an XMR-priced one: no rate is locked to value it) is refused.
 *
 * With "webhook_url": "<http(s) URL>" the invoice's state changes are also sent there
 * (docs/BILLING.md "Webhooks"): the URL's shape is checked with the body, a host written
 * as an address against the SSRF guard after the rate limit and before anything is drawn
 * (hook_ssrf_url_admit: no resolver call on the API's thread; a name is judged by the
 * address each delivery connects to, on the sender's thread), and the answer carries the invoice's
 * webhook secret (hook_sign.h), shown there only, like the token (and again to a replay of
 * the same request under its Idempotency-Key).
 *
 * Order of checks: body, tier and months, the per-client rate limit, the webhook's
 * addresses, Idempotency-Key, the quote, then the wallet and the database (renewal token,
 * tier change). The limit comes before the key: a replay answers with the invoice and,
 * for a purchase, its token, so unlimited lookups would let anyone try weak keys for
 * tokens. A replay therefore counts
 * against the limit like the request it repeats (but not against the shared free-tier
 * bounds: a replay creates no tenant). The per-client limit counts the client by its
 * prefix and its network (client_limit.h, client_prefix.h). */
#include "api/api_invoice_create.h"

#include "api/api_invoice_view.h"
#include "api/api_shared.h"
#include "core/credentials.h"
#include "hooks/hook_outbox.h"
#include "payments/settle.h"
#include "hooks/hook_sender.h"
#include "hooks/hook_sign.h"
#include "hooks/hook_ssrf.h"
#include "invoice/invoice_row.h"
#include "xg_clock.h"
#include "xg_log.h"
#include "xg_reply.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* what is stored here is read back whole by invoice_row.h */
_Static_assert(INVOICE_ADDRESS_SIZE == WALLET_ADDRESS_SIZE, "a subaddress fits the invoice row");
_Static_assert(INVOICE_WEBHOOK_URL_SIZE == HOOK_SSRF_URL_MAX + 1, "a webhook_url fits it too");

#define IDEMPOTENCY_KEY_MAX 255
#define SUBADDRESS_ATTEMPTS 3
#define SQLSTATE_UNIQUE     "23505"

struct create_req {
    /* from the request */
    char tier[40];
    int64_t months;
    const char *channel;
    bool renewal;
    char token_hash[TOKEN_HASH_HEX_SIZE]; /* renewal: the presented token's hash */
    const char *idem_key;
    char fingerprint[2 * 32 + 1];
    char webhook_url[HOOK_SSRF_URL_MAX + 1]; /* "" = none */
    /* from the tier and the quote */
    char currency[8];
    int64_t price_minor, confirmations, max_months, amount, rate_e8;
    /* purchase */
    struct cred cred;
    /* the subaddress to pay */
    int64_t sub_index;
    char address[WALLET_ADDRESS_SIZE];
    /* results of the transaction */
    int64_t tenant_id;
    char invoice_id[API_INVOICE_ID_SIZE];
    int64_t created; /* the database's clock at the insert (unix seconds) */
    char open_invoice[API_INVOICE_ID_SIZE];
    char old_tier[40], old_currency[8]; /* renewal: the tenant's tier now */
    /* free tier: the client's keys the shared bounds count (client_prefix.h, free_grant.h) */
    char client_key[CLIENT_PREFIX_KEY_SIZE], network_key[CLIENT_PREFIX_KEY_SIZE];
    enum free_grant_verdict free_verdict;
    int64_t free_retry_s;
    enum {
        CR_OK,
        CR_NO_TENANT,
        CR_NEED_SUBADDRESS,
        CR_INVOICE_OPEN,
        CR_CARRY_UNPRICED,
        CR_FREE_BOUND
    } outcome;
};

static bool sha256_hex(const char *data, size_t len, char out[65])
{
    unsigned char md[32];
    unsigned int n = 0;
    if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32)
        return false;
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    return true;
}

/* ---- the request ------------------------------------------------------------------ */

/* Fills cr from the body; on failure writes the error code and message. */
static bool parse_body(const char *body, struct create_req *cr, enum bl_error *code, char *msg,
                       size_t msglen)
{
    json_error_t jerr;
    json_t *doc = json_loads(body, JSON_REJECT_DUPLICATES, &jerr);
    bool ok = false;
    *code = BL_ERROR_MALFORMED_JSON;
    if (!doc || !json_is_object(doc)) {
        snprintf(msg, msglen, "the body must be a JSON object: %s",
                 doc ? "not an object" : jerr.text);
        goto out;
    }
    json_t *tier = json_object_get(doc, "tier"), *months = json_object_get(doc, "months");
    json_t *token = json_object_get(doc, "token"), *channel = json_object_get(doc, "channel");
    json_t *hook = json_object_get(doc, "webhook_url");
    if (!json_is_string(tier) || json_string_length(tier) >= sizeof cr->tier) {
        snprintf(msg, msglen, "\"tier\" must be a tier id (a string)");
        goto out;
    }
    if (months && !json_is_integer(months)) {
        snprintf(msg, msglen, "\"months\" must be a whole number");
        goto out;
    }
    if ((token && !json_is_string(token)) || (channel && !json_is_string(channel))) {
        snprintf(msg, msglen, "\"%s\" must be a string",
                 token && !json_is_string(token) ? "token" : "channel");
        goto out;
    }
    if (hook) {
        char host[HOOK_SSRF_HOST_MAX];
        *code = BL_ERROR_INVALID_WEBHOOK_URL;
        if (!json_is_string(hook)) {
            snprintf(msg, msglen, "\"webhook_url\" must be a string");
            goto out;
        }
        if (strlen(json_string_value(hook)) != json_string_length(hook) ||
            !hook_ssrf_url_check(json_string_value(hook), host, sizeof host, msg, msglen))
            goto out;
        snprintf(cr->webhook_url, sizeof cr->webhook_url, "%s", json_string_value(hook));
        *code = BL_ERROR_MALFORMED_JSON;
    }
    snprintf(cr->tier, sizeof cr->tier, "%s", json_string_value(tier));
    cr->months = months ? (int64_t)json_integer_value(months) : 1;
    cr->channel = "api";
    if (channel && strcmp(json_string_value(channel), "web") == 0)
        cr->channel = "web";
    if (token) {
        cr->renewal = true;
        if (!cred_token_hash_hex(json_string_value(token), cr->token_hash)) {
            *code = BL_ERROR_UNKNOWN_TOKEN;
            snprintf(msg, msglen, "that token belongs to no tenant");
            goto out;
        }
    }
    /* the fingerprint of a request is its canonical JSON: key order and spacing aside */
    char *canon = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
    ok = canon && sha256_hex(canon, strlen(canon), cr->fingerprint);
    free(canon);
out:
    json_decref(doc);
    return ok;
}

static bool idempotency_key_ok(const char *key)
{
    size_t n = strlen(key);
    if (n == 0 || n > IDEMPOTENCY_KEY_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (key[i] < 0x21 || key[i] > 0x7e)
            return false;
    return true;
}

/* ---- answers ---------------------------------------------------------------------- */

/* An invoice with a webhook shows its secret in the answer that creates it. */
static bool add_webhook_secret(const struct api *api, const char *id, json_t *inv)
{
    if (!json_object_get(inv, "webhook"))
        return true;
    char secret[HOOK_SIGN_SECRET_SIZE];
    if (!hook_sign_secret(api->hook_key, id, secret))
        return false;
    json_object_set_new(inv, "webhook_secret", json_string(secret));
    json_object_set_new(inv, "webhook_secret_notice",
                        json_string("shown once: store it now; it verifies the "
                                    "Xmrgate-Signature of every webhook of this invoice"));
    OPENSSL_cleanse(secret, sizeof secret);
    return true;
}

/* 201 (or 200 for a replay) with the invoice and, for a purchase, its token. */
static enum xg_httpd_result reply_invoice(const struct xg_httpd_request *req, struct xg_pg *pg,
                                          const char *id, const char *token, unsigned status)
{
    struct api *api = api_of(req);
    json_t *inv = NULL;
    enum api_load r = api_invoice_view_load(api, pg, id, &inv);
    if (r != API_LOAD_OK)
        return api_db_error(req, pg);
    if (!add_webhook_secret(api, id, inv)) {
        json_decref(inv);
        return api_errorf(req, BL_ERROR_INTERNAL_ERROR, "cannot derive the webhook secret");
    }
    if (token) {
        json_object_set_new(inv, "token", json_string(token));
        json_object_set_new(inv, "token_notice",
                            json_string("shown once: store it now; it works once the invoice "
                                        "is provisioned"));
    }
    return xg_reply_json(req->conn, status, inv);
}

/* bl_keys_seed_fn over the request's Idempotency-Key and fingerprint. */
static bool idempotent_seed_of(const uint8_t key[BL_KEYS_LEN], const void *ctx,
                               uint8_t seed[TOKEN_RAW_LEN])
{
    const struct create_req *cr = ctx;
    return cred_idempotent_seed(key, cr->idem_key, cr->fingerprint, seed);
}

/* A replayed Idempotency-Key: the same request gets the same invoice (and the same
 * token, derived again under the key that derived it, bl_keys.h; no token once the tenant
 * rotated it); another request under the same key is a 409. Returns false when the key is
 * new. */
static bool replay(const struct xg_httpd_request *req, struct xg_pg *pg, struct create_req *cr,
                   enum xg_httpd_result *mr)
{
    struct api *api = api_of(req);
    const char *params[] = {cr->idem_key};
    PGresult *res = xg_pg_exec(pg, "bl_invoice_by_idempotency_key", 1, params);
    if (!res) {
        *mr = api_db_error(req, pg);
        return true;
    }
    if (PQntuples(res) != 1) {
        PQclear(res);
        return false;
    }
    char id[API_INVOICE_ID_SIZE], stored[TOKEN_HASH_HEX_SIZE];
    snprintf(id, sizeof id, "%s", PQgetvalue(res, 0, 0));
    snprintf(stored, sizeof stored, "%s", PQgetvalue(res, 0, 3));
    bool same = strcmp(PQgetvalue(res, 0, 1), cr->fingerprint) == 0;
    bool purchase = strcmp(PQgetvalue(res, 0, 2), "t") == 0;
    bool current = strcmp(PQgetvalue(res, 0, 4), "t") == 0; /* not rotated since */
    PQclear(res);
    if (!same) {
        *mr = api_error(req, BL_ERROR_IDEMPOTENCY_KEY_REUSED);
        return true;
    }
    char token[TOKEN_TEXT_SIZE] = "";
    enum bl_keys_which which = BL_KEYS_NONE;
    if (purchase && current)
        which = bl_keys_rederive(&api->keys, idempotent_seed_of, cr, stored, token);
    if (purchase && current && which == BL_KEYS_NONE)
        xg_log(XG_LOG_ERROR, "idempotent_token_mismatch", "invoice %s", id);
    *mr = reply_invoice(req, pg, id, which != BL_KEYS_NONE ? token : NULL, 201);
    OPENSSL_cleanse(token, sizeof token);
    return true;
}

/* ---- tier and quote --------------------------------------------------------------- */

/* The tier's price and policy into cr. */
static enum api_load load_tier(struct xg_pg *pg, struct create_req *cr)
{
    struct api_tier t;
    enum api_load r = api_tier_load(pg, cr->tier, &t);
    if (r == API_LOAD_OK) {
        snprintf(cr->currency, sizeof cr->currency, "%s", t.currency);
        cr->price_minor = t.price_minor;
        cr->confirmations = t.confirmations;
        cr->max_months = t.max_months;
    }
    return r;
}

/* ---- the transactions ------------------------------------------------------------- */

struct tx_ctx {
    struct api *api;
    struct create_req *cr;
};

static bool insert_invoice(struct xg_pg *pg, const struct api *api, struct create_req *cr,
                           bool free_tier)
{
    char months[24], tenant[24], amount[24], sub[24], conf[24], minor[24], ttl[24];
    char rate[PRICE_RATE_TEXT_SIZE];
    snprintf(months, sizeof months, "%lld", (long long)cr->months);
    snprintf(tenant, sizeof tenant, "%lld", (long long)cr->tenant_id);
    snprintf(amount, sizeof amount, "%lld", (long long)cr->amount);
    snprintf(sub, sizeof sub, "%lld", (long long)cr->sub_index);
    snprintf(conf, sizeof conf, "%lld", (long long)cr->confirmations);
    snprintf(minor, sizeof minor, "%lld", (long long)cr->price_minor);
    snprintf(ttl, sizeof ttl, "%lld", (long long)api->invoice_ttl_s);
    price_format_rate(cr->rate_e8, rate);
    bool purchase = !cr->renewal;
    const char *params[] = {
        purchase ? "purchase" : "renewal",
        cr->channel,
        cr->tier,
        months,
        cr->renewal ? tenant : NULL,
        purchase ? cr->cred.token_hash_hex : NULL,
        purchase ? cr->cred.ha1_wrapped_hex : NULL,
        purchase ? cr->cred.handle : NULL,
        amount,
        free_tier ? NULL : sub,
        free_tier ? NULL : cr->address,
        conf,
        cr->currency,
        minor,
        cr->rate_e8 > 0 ? rate : NULL,
        ttl,
        cr->idem_key,
        cr->idem_key ? cr->fingerprint : NULL,
        free_tier ? "provisioned" : "pending",
        cr->webhook_url[0] ? cr->webhook_url : NULL,
    };
    PGresult *res = xg_pg_exec(pg, "bl_invoice_insert", 20, params);
    if (!res)
        return false;
    snprintf(cr->invoice_id, sizeof cr->invoice_id, "%s", PQgetvalue(res, 0, 0));
    cr->created = xg_pg_int64(res, 0, 1);
    PQclear(res);
    return true;
}

static enum xg_tx_result on_free_tx(struct xg_pg *pg, void *ctx)
{
    struct tx_ctx *t = ctx;
    t->cr->free_verdict = free_grant_take(pg, &t->api->free_bounds, t->cr->network_key,
                                          t->cr->client_key, &t->cr->free_retry_s);
    if (t->cr->free_verdict == FREE_GRANT_DB_ERROR)
        return xg_pg_tx_classify(pg);
    if (t->cr->free_verdict != FREE_GRANT_OK) {
        t->cr->outcome = CR_FREE_BOUND;
        return XG_TX_ROLLBACK;
    }
    if (!insert_invoice(pg, t->api, t->cr, true))
        return xg_pg_tx_classify(pg);
    const char *p1[] = {t->cr->invoice_id};
    PGresult *res = xg_pg_exec(pg, "bl_tenant_from_invoice", 1, p1);
    if (!res)
        return xg_pg_tx_classify(pg);
    char tenant[24];
    snprintf(tenant, sizeof tenant, "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
    const char *p2[] = {t->cr->invoice_id, tenant};
    res = xg_pg_exec(pg, "bl_invoice_set_tenant", 2, p2);
    if (!res)
        return xg_pg_tx_classify(pg);
    PQclear(res);
    if (t->cr->webhook_url[0]) { /* provisioned at once: its one event */
        struct hook_event ev = {HOOK_EVENT_PROVISIONED, 0};
        struct hook_event_facts f = {.invoice_id = t->cr->invoice_id,
                                     .status = INVOICE_PROVISIONED,
                                     .created = t->cr->created};
        if (!hook_outbox_write(pg, &ev, 1, &f))
            return xg_pg_tx_classify(pg);
    }
    return XG_TX_COMMIT;
}

static enum xg_tx_result on_purchase_tx(struct xg_pg *pg, void *ctx)
{
    struct tx_ctx *t = ctx;
    return insert_invoice(pg, t->api, t->cr, false) ? XG_TX_COMMIT : xg_pg_tx_classify(pg);
}

/* The tenant's subaddress; CR_NEED_SUBADDRESS when it has none and none was drawn yet,
 * CR_CARRY_UNPRICED when its time left cannot be priced on the invoice's tier. */
static enum xg_tx_result renewal_subaddress(struct xg_pg *pg, struct create_req *cr)
{
    const char *params[] = {cr->token_hash};
    PGresult *res = xg_pg_exec(pg, "bl_tenant_by_token_hash", 1, params);
    if (!res)
        return xg_pg_tx_classify(pg);
    if (PQntuples(res) != 1) {
        PQclear(res);
        cr->outcome = CR_NO_TENANT;
        return XG_TX_ROLLBACK;
    }
    char tenant[24];
    snprintf(tenant, sizeof tenant, "%s", PQgetvalue(res, 0, 0));
    cr->tenant_id = strtoll(tenant, NULL, 10);
    bool has = !PQgetisnull(res, 0, 1);
    if (has) {
        cr->sub_index = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
        snprintf(cr->address, sizeof cr->address, "%s", PQgetvalue(res, 0, 2));
    }
    PQclear(res);
    /* settle applies the same rule to the same facts with the same locked quote: what is
     * priced here is priced there */
    struct settle_renewal_facts facts;
    enum xg_tx_result r = settle_renewal_facts_load(pg, tenant, &facts);
    if (r != XG_TX_COMMIT) {
        if (r == XG_TX_ROLLBACK)
            cr->outcome = CR_NO_TENANT;
        return r;
    }
    struct price_carry_input carry = {
        .remaining = facts.remaining_us,
        .old_tier = facts.tier,
        .old_currency = facts.currency,
        .old_minor = facts.price_minor,
        .new_tier = cr->tier,
        .new_currency = cr->currency,
        .new_minor = cr->price_minor,
        .rate_e8 = cr->rate_e8,
    };
    int64_t carried;
    bool priced = price_carry(&carry, &carried);
    snprintf(cr->old_tier, sizeof cr->old_tier, "%s", carry.old_tier);
    snprintf(cr->old_currency, sizeof cr->old_currency, "%s", carry.old_currency);
    if (!priced) {
        cr->outcome = CR_CARRY_UNPRICED;
        return XG_TX_ROLLBACK;
    }
    if (has)
        return XG_TX_COMMIT;
    if (cr->sub_index <= 0) {
        cr->outcome = CR_NEED_SUBADDRESS;
        return XG_TX_ROLLBACK;
    }
    char sub[24];
    snprintf(sub, sizeof sub, "%lld", (long long)cr->sub_index);
    const char *p2[] = {tenant, sub, cr->address};
    res = xg_pg_exec(pg, "bl_tenant_set_subaddress", 3, p2);
    PQclear(res);
    return res ? XG_TX_COMMIT : xg_pg_tx_classify(pg);
}

/* A superseded invoice with a webhook_url is expired: its event (bl_invoice_supersede's row). */
static bool superseded_event(struct xg_pg *pg, const char *id, const PGresult *up)
{
    if (PQntuples(up) != 1 || strcmp(PQgetvalue(up, 0, 0), "t") != 0)
        return true;
    struct hook_event ev = {HOOK_EVENT_EXPIRED, xg_pg_int64(up, 0, 3)};
    struct hook_event_facts f = {.invoice_id = id,
                                 .status = INVOICE_EXPIRED,
                                 .amount = xg_pg_int64(up, 0, 1),
                                 .paid = xg_pg_int64(up, 0, 2),
                                 .confirmations_required = xg_pg_int64(up, 0, 4),
                                 .created = xg_pg_int64(up, 0, 5)};
    return hook_outbox_write(pg, &ev, 1, &f);
}

/* An untouched pending invoice on the subaddress is superseded; anything else open wins. */
static enum xg_tx_result clear_open_invoice(struct xg_pg *pg, struct create_req *cr)
{
    char sub[24];
    snprintf(sub, sizeof sub, "%lld", (long long)cr->sub_index);
    const char *params[] = {sub};
    PGresult *res = xg_pg_exec(pg, "bl_invoice_open_on_subaddress", 1, params);
    if (!res)
        return xg_pg_tx_classify(pg);
    enum xg_tx_result r = XG_TX_COMMIT;
    if (PQntuples(res) == 1) {
        bool untouched = strcmp(PQgetvalue(res, 0, 1), "pending") == 0 &&
                         strcmp(PQgetvalue(res, 0, 2), "f") == 0;
        snprintf(cr->open_invoice, sizeof cr->open_invoice, "%s", PQgetvalue(res, 0, 0));
        if (!untouched) {
            cr->outcome = CR_INVOICE_OPEN;
            r = XG_TX_ROLLBACK;
        } else {
            const char *p2[] = {cr->open_invoice};
            PGresult *up = xg_pg_exec(pg, "bl_invoice_supersede", 1, p2);
            r = up && superseded_event(pg, cr->open_invoice, up) ? XG_TX_COMMIT
                                                                 : xg_pg_tx_classify(pg);
            PQclear(up);
        }
    }
    PQclear(res);
    return r;
}

static enum xg_tx_result on_renewal_tx(struct xg_pg *pg, void *ctx)
{
    struct tx_ctx *t = ctx;
    t->cr->outcome = CR_OK;
    enum xg_tx_result r = renewal_subaddress(pg, t->cr);
    if (r == XG_TX_COMMIT)
        r = clear_open_invoice(pg, t->cr);
    if (r == XG_TX_COMMIT && !insert_invoice(pg, t->api, t->cr, false))
        r = xg_pg_tx_classify(pg);
    return r;
}

/* ---- the flows -------------------------------------------------------------------- */

static bool draw_subaddress(struct api *api, struct create_req *cr, char *err, size_t errlen)
{
    return wallet_create_address(api->wallet, cr->renewal ? "xmrgate renewal" : "xmrgate invoice",
                                 &cr->sub_index, cr->address, sizeof cr->address, err, errlen);
}

static bool unique_violation(struct xg_pg *pg, const char *constraint)
{
    return strcmp(xg_pg_last_sqlstate(pg), SQLSTATE_UNIQUE) == 0 &&
           strstr(xg_pg_last_error(pg), constraint) != NULL;
}

static enum xg_httpd_result wallet_down(const struct xg_httpd_request *req, const char *err)
{
    xg_log(XG_LOG_WARN, "wallet_unavailable", "create_address: %s", err);
    return api_error(req, BL_ERROR_WALLET_UNAVAILABLE);
}

static bool make_credentials(struct api *api, struct create_req *cr)
{
    uint8_t seed[TOKEN_RAW_LEN];
    bool ok;
    if (cr->idem_key) {
        ok = cred_idempotent_seed(api->keys.token, cr->idem_key, cr->fingerprint, seed) &&
             cred_new_seeded(&cr->cred, api->keys.ha1, api->realm, seed);
        OPENSSL_cleanse(seed, sizeof seed);
    } else {
        ok = cred_new(&cr->cred, api->keys.ha1, api->realm);
    }
    return ok;
}

static enum xg_httpd_result after_tx(const struct xg_httpd_request *req, struct xg_pg *pg,
                                     struct create_req *cr, enum xg_tx_result r)
{
    if (r == XG_TX_COMMIT)
        return reply_invoice(req, pg, cr->invoice_id, cr->renewal ? NULL : cr->cred.token, 201);
    if (unique_violation(pg, "invoices_idempotency_key_key")) {
        enum xg_httpd_result mr; /* a concurrent twin won the race: answer as a replay */
        if (replay(req, pg, cr, &mr))
            return mr;
    }
    return api_db_error(req, pg);
}

static enum xg_httpd_result create_free(const struct xg_httpd_request *req, struct xg_pg *pg,
                                        struct create_req *cr)
{
    struct api *api = api_of(req);
    struct tx_ctx t = {api, cr};
    if (!make_credentials(api, cr))
        return api_errorf(req, BL_ERROR_INTERNAL_ERROR, "cannot draw credentials");
    char addr[64];
    xg_httpd_client_addr(req, addr, sizeof addr);
    (void)client_prefix_keys(addr, &api->clients, cr->client_key, cr->network_key);
    enum xg_tx_result r = xg_pg_transaction(pg, NULL, on_free_tx, &t);
    if (r == XG_TX_ROLLBACK && cr->outcome == CR_FREE_BOUND) {
        xg_log(XG_LOG_INFO, "free_grant_refused", "%s (client %s): retry in %lld s",
               cr->network_key, cr->client_key, (long long)cr->free_retry_s);
        return api_error_reply(
            req, BL_ERROR_FREE_TIER_EXHAUSTED, free_grant_message(cr->free_verdict),
            json_pack("{s:I}", "retry_after", (json_int_t)cr->free_retry_s), cr->free_retry_s);
    }
    return after_tx(req, pg, cr, r);
}

static enum xg_httpd_result create_purchase(const struct xg_httpd_request *req, struct xg_pg *pg,
                                            struct create_req *cr)
{
    struct api *api = api_of(req);
    struct tx_ctx t = {api, cr};
    char err[512];
    if (!make_credentials(api, cr))
        return api_errorf(req, BL_ERROR_INTERNAL_ERROR, "cannot draw credentials");
    for (int attempt = 0; attempt < SUBADDRESS_ATTEMPTS; attempt++) {
        if (!draw_subaddress(api, cr, err, sizeof err))
            return wallet_down(req, err);
        enum xg_tx_result r = xg_pg_transaction(pg, NULL, on_purchase_tx, &t);
        if (r == XG_TX_COMMIT || !unique_violation(pg, "invoices_purchase_subaddress"))
            return after_tx(req, pg, cr, r);
        xg_log(XG_LOG_ERROR, "subaddress_reused",
               "wallet-rpc handed out index %lld again (restored wallet file?)",
               (long long)cr->sub_index);
    }
    return api_errorf(req, BL_ERROR_WALLET_UNAVAILABLE, "the wallet keeps reusing subaddresses");
}

static enum xg_httpd_result create_renewal(const struct xg_httpd_request *req, struct xg_pg *pg,
                                           struct create_req *cr)
{
    struct api *api = api_of(req);
    struct tx_ctx t = {api, cr};
    char err[512];
    enum xg_tx_result r = xg_pg_transaction(pg, NULL, on_renewal_tx, &t);
    if (r == XG_TX_ROLLBACK && cr->outcome == CR_NEED_SUBADDRESS) {
        if (!draw_subaddress(api, cr, err, sizeof err))
            return wallet_down(req, err);
        r = xg_pg_transaction(pg, NULL, on_renewal_tx, &t);
    }
    if (r == XG_TX_ROLLBACK && cr->outcome == CR_NO_TENANT)
        return api_error(req, BL_ERROR_UNKNOWN_TOKEN);
    if (r == XG_TX_ROLLBACK && cr->outcome == CR_CARRY_UNPRICED)
        return api_errorf(req, BL_ERROR_TIER_CHANGE_UNPRICED,
                          "the time left on tier %s (priced in %s) cannot be carried onto tier %s "
                          "(priced in %s); renew %s, or change tiers once it has run out",
                          cr->old_tier, cr->old_currency, cr->tier, cr->currency, cr->old_tier);
    if (r == XG_TX_ROLLBACK && cr->outcome == CR_INVOICE_OPEN)
        return api_errorf(req, BL_ERROR_INVOICE_OPEN,
                          "invoice %s is still waiting for its payment on this tenant's "
                          "subaddress; pay it or let it expire",
                          cr->open_invoice);
    return after_tx(req, pg, cr, r);
}

/* Checks tier and months. Returns false with the answer queued in *mr. */
static bool check_tier(const struct xg_httpd_request *req, struct xg_pg *pg, struct create_req *cr,
                       enum xg_httpd_result *mr)
{
    enum api_load l = load_tier(pg, cr);
    if (l != API_LOAD_OK) {
        *mr = l == API_LOAD_DB_ERROR
                  ? api_db_error(req, pg)
                  : api_errorf(req, BL_ERROR_UNKNOWN_TIER, "no tier \"%s\"", cr->tier);
        return false;
    }
    if (cr->months < 1 || cr->months > cr->max_months) {
        *mr = api_errorf(req, BL_ERROR_MONTHS_OUT_OF_RANGE,
                         "months must be between 1 and %lld for tier %s", (long long)cr->max_months,
                         cr->tier);
        return false;
    }
    if (cr->price_minor == 0 && cr->renewal) {
        *mr = api_error(req, BL_ERROR_FREE_TIER_NOT_RENEWABLE);
        return false;
    }
    return true;
}

/* Locks the quote (the rate for a fiat price). Returns false with the answer queued in *mr. */
static bool check_quote(const struct xg_httpd_request *req, struct create_req *cr,
                        enum xg_httpd_result *mr)
{
    struct api *api = api_of(req);
    if (strcmp(cr->currency, "XMR") != 0 && cr->price_minor > 0 &&
        !price_source_rate(api->prices, cr->currency, &cr->rate_e8)) {
        *mr = api_errorf(req, BL_ERROR_RATE_UNAVAILABLE,
                         "no current %s/XMR exchange rate; fiat-priced plans cannot be quoted "
                         "right now",
                         cr->currency);
        return false;
    }
    if (!price_quote(cr->currency, cr->price_minor, cr->months, cr->rate_e8, &cr->amount)) {
        *mr = api_errorf(req, BL_ERROR_MONTHS_OUT_OF_RANGE, "that price does not fit an invoice");
        return false;
    }
    return true;
}

static bool check_rate_limit(const struct xg_httpd_request *req, const struct create_req *cr,
                             enum xg_httpd_result *mr)
{
    struct api *api = api_of(req);
    char client[64];
    int64_t retry = 0;
    xg_httpd_client_addr(req, client, sizeof client);
    struct client_limit_table *table = cr->price_minor == 0 ? api->free_limit : api->create_limit;
    if (client_limit_table_take(table, client, xg_monotonic_ms(), &retry))
        return true;
    *mr = api_error_reply(req, BL_ERROR_RATE_LIMITED, NULL, NULL, retry);
    return false;
}

enum xg_httpd_result api_handle_invoice_create(const struct xg_httpd_request *req)
{
    struct api *api = api_of(req);
    struct create_req cr = {0};
    enum bl_error code;
    char msg[256];
    enum xg_httpd_result mr;
    if (!parse_body(req->body, &cr, &code, msg, sizeof msg))
        return api_errorf(req, code, "%s", msg);
    cr.idem_key = xg_httpd_header(req, "Idempotency-Key");
    if (cr.idem_key && !idempotency_key_ok(cr.idem_key))
        return api_error(req, BL_ERROR_INVALID_IDEMPOTENCY_KEY);
    struct xg_pg *pg = pgpool_get(api->pool);
    if (!check_tier(req, pg, &cr, &mr) || !check_rate_limit(req, &cr, &mr))
        goto out;
    if (cr.webhook_url[0] &&
        !hook_ssrf_url_admit(&api->hook_allow, cr.webhook_url, msg, sizeof msg)) {
        mr = api_errorf(req, BL_ERROR_WEBHOOK_URL_REFUSED, "%s", msg);
        goto out;
    }
    if (cr.idem_key && replay(req, pg, &cr, &mr))
        goto out;
    if (!check_quote(req, &cr, &mr))
        goto out;
    if (cr.price_minor == 0)
        mr = create_free(req, pg, &cr);
    else if (cr.renewal)
        mr = create_renewal(req, pg, &cr);
    else
        mr = create_purchase(req, pg, &cr);
out:
    pgpool_put(api->pool, pg);
    cred_wipe(&cr.cred);
    return mr;
}
