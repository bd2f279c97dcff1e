/* POST /api/xmr402/challenge  {"tier": "<id>"}  → 201, a new XMR402 invoice: its own
 * subaddress, a random challenge nonce (the message the payer's tx proof signs) and the
 * agent's credentials, derived from the nonce (bl_xmr402.h). Rate-limited per client
 * address with the invoice-creation limiter; the gateway names the agent's address in
 * X-Xmrgate-Client, signed (xg_xmr402.h). The flow: api_xmr402.h. */
#include "api/api_xmr402_challenge.h"

#include "api/api_shared.h"
#include "api/api_xmr402.h"
#include "api/fair_share.h"
#include "core/credentials.h"
#include "xg_log.h"
#include "xg_reply.h"
#include "xmr402/bl_xmr402.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>

#define SQLSTATE_UNIQUE  "23505"
#define SUBADDR_ATTEMPTS 3
#define OPEN_CAP_RETRY_S 60

struct challenge {
    char tier[40], currency[8];
    int64_t price_minor, confirmations, amount, rate_e8, sub_index;
    char address[WALLET_ADDRESS_SIZE];
    char nonce[BL_XMR402_NONCE_SIZE];
    struct cred cred;
    char invoice_id[API_INVOICE_ID_SIZE];
    char network[CLIENT_PREFIX_KEY_SIZE]; /* the client's network key: its fair share */
    const struct api *api;
};

static bool parse_challenge_body(const char *body, struct challenge *c, char *msg, size_t len)
{
    json_error_t jerr;
    json_t *doc = json_loads(body && *body ? body : "{}", JSON_REJECT_DUPLICATES, &jerr);
    json_t *tier = doc ? json_object_get(doc, "tier") : NULL;
    bool ok = false;
    if (!json_is_object(doc))
        snprintf(msg, len, "the body must be a JSON object");
    else if (!json_is_string(tier) || json_string_length(tier) == 0 ||
             json_string_length(tier) >= sizeof c->tier)
        snprintf(msg, len, "\"tier\" must be a tier id (a string)");
    else {
        snprintf(c->tier, sizeof c->tier, "%s", json_string_value(tier));
        ok = true;
    }
    json_decref(doc);
    return ok;
}

/* Tier and quote; false with the answer queued. */
static bool quote_tier(const struct xg_httpd_request *req, struct xg_pg *pg, struct challenge *c,
                       enum xg_httpd_result *mr)
{
    struct api *api = api_of(req);
    struct api_tier t;
    enum api_load l = api_tier_load(pg, c->tier, &t);
    if (l == API_LOAD_DB_ERROR) {
        *mr = api_db_error(req, pg);
        return false;
    }
    snprintf(c->currency, sizeof c->currency, "%s", t.currency);
    c->price_minor = t.price_minor;
    c->confirmations = t.confirmations;
    if (l == API_LOAD_NOT_FOUND) {
        *mr = api_errorf(req, BL_ERROR_UNKNOWN_TIER, "no tier \"%s\"", c->tier);
        return false;
    }
    if (c->price_minor == 0) {
        *mr = api_errorf(req, BL_ERROR_TIER_NOT_FOR_SALE,
                         "tier %s is free: create it with POST /api/invoices, not XMR402", c->tier);
        return false;
    }
    if (strcmp(c->currency, "XMR") != 0 &&
        !price_source_rate(api->prices, c->currency, &c->rate_e8)) {
        *mr = api_errorf(req, BL_ERROR_RATE_UNAVAILABLE,
                         "no current %s/XMR exchange rate; try again later", c->currency);
        return false;
    }
    if (!price_quote(c->currency, c->price_minor, 1, c->rate_e8, &c->amount) || c->amount <= 0) {
        *mr = api_errorf(req, BL_ERROR_UNKNOWN_TIER, "tier %s cannot be quoted", c->tier);
        return false;
    }
    return true;
}

static enum xg_tx_result on_challenge_tx(struct xg_pg *pg, void *ctx)
{
    struct challenge *c = ctx;
    char amount[24], sub[24], conf[24], minor[24], ttl[24], rate[PRICE_RATE_TEXT_SIZE];
    snprintf(amount, sizeof amount, "%lld", (long long)c->amount);
    snprintf(sub, sizeof sub, "%lld", (long long)c->sub_index);
    bool zero_conf = c->api->xmr402_zero_conf_max > 0 && c->amount <= c->api->xmr402_zero_conf_max;
    snprintf(conf, sizeof conf, "%lld", (long long)(zero_conf ? 0 : c->confirmations));
    snprintf(minor, sizeof minor, "%lld", (long long)c->price_minor);
    snprintf(ttl, sizeof ttl, "%lld", (long long)c->api->invoice_ttl_s);
    price_format_rate(c->rate_e8, rate);
    const char *params[] = {c->tier,
                            c->cred.token_hash_hex,
                            c->cred.ha1_wrapped_hex,
                            c->cred.handle,
                            amount,
                            sub,
                            c->address,
                            conf,
                            c->currency,
                            minor,
                            c->rate_e8 > 0 ? rate : NULL,
                            ttl,
                            c->nonce,
                            c->network};
    PGresult *res = xg_pg_exec(pg, "bl_xmr402_invoice_insert", 14, params);
    if (!res)
        return xg_pg_tx_classify(pg);
    snprintf(c->invoice_id, sizeof c->invoice_id, "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
    return XG_TX_COMMIT;
}

static bool make_challenge_credentials(struct api *api, struct challenge *c)
{
    uint8_t seed[TOKEN_RAW_LEN];
    bool ok = bl_xmr402_nonce_generate(c->nonce) &&
              bl_xmr402_token_seed(api->keys.token, c->nonce, seed) &&
              cred_new_seeded(&c->cred, api->keys.ha1, api->realm, seed);
    OPENSSL_cleanse(seed, sizeof seed);
    return ok;
}

static enum xg_httpd_result insert_challenge(const struct xg_httpd_request *req, struct xg_pg *pg,
                                             struct challenge *c)
{
    struct api *api = api_of(req);
    char err[512];
    for (int attempt = 0; attempt < SUBADDR_ATTEMPTS; attempt++) {
        if (!make_challenge_credentials(api, c))
            return api_errorf(req, BL_ERROR_INTERNAL_ERROR, "cannot draw credentials");
        if (!wallet_create_address(api->wallet, "xmrgate xmr402", &c->sub_index, c->address,
                                   sizeof c->address, err, sizeof err)) {
            xg_log(XG_LOG_WARN, "wallet_unavailable", "create_address: %s", err);
            return api_error(req, BL_ERROR_WALLET_UNAVAILABLE);
        }
        enum xg_tx_result r = xg_pg_transaction(pg, NULL, on_challenge_tx, c);
        if (r == XG_TX_COMMIT) {
            struct invoice_row inv;
            if (api_xmr402_load_invoice(pg, c->invoice_id, &inv) != API_LOAD_OK)
                return api_db_error(req, pg);
            return xg_reply_json(req->conn, 201, api_xmr402_challenge_json(api, &inv));
        }
        /* a reused subaddress (restored wallet file) or, rarer, a colliding handle */
        if (strcmp(xg_pg_last_sqlstate(pg), SQLSTATE_UNIQUE) != 0)
            return api_db_error(req, pg);
        xg_log(XG_LOG_ERROR, "xmr402_insert_conflict", "%s", xg_pg_last_error(pg));
        cred_wipe(&c->cred);
    }
    return api_errorf(req, BL_ERROR_WALLET_UNAVAILABLE, "the wallet keeps reusing subaddresses");
}

/* The global cap on open challenges, and the client's network's share of it
 * (fair_share.h); false with the answer queued. Each challenge is a subaddress and an
 * invoice: the per-address limiter alone lets many addresses open many, and the cap alone
 * lets a few networks hold every one. */
static bool open_challenges_allow(const struct xg_httpd_request *req, struct xg_pg *pg,
                                  const struct challenge *c, enum xg_httpd_result *mr)
{
    struct api *api = api_of(req);
    const char *params[] = {c->network};
    PGresult *res = xg_pg_exec(pg, "bl_xmr402_open_challenges", 1, params);
    if (!res) {
        *mr = api_db_error(req, pg);
        return false;
    }
    int64_t open = xg_pg_int64(res, 0, 0), mine = xg_pg_int64(res, 0, 1);
    PQclear(res);
    enum fair_share_admission a =
        fair_share_admit(open, mine, api->xmr402_max_open_challenges, api->xmr402_challenge_share);
    if (a == FAIR_SHARE_ADMIT)
        return true;
    const char *message = "too many XMR402 challenges are open; try again later";
    if (a == FAIR_SHARE_NETWORK_FULL) {
        xg_log(XG_LOG_WARN, "xmr402_open_share", "%lld open challenges of one network",
               (long long)mine);
        message = "this network holds its share of the open XMR402 challenges; pay one, let one "
                  "expire or try again later";
    } else {
        xg_log(XG_LOG_WARN, "xmr402_open_cap", "%lld open challenges", (long long)open);
    }
    *mr = api_error_reply(req, BL_ERROR_RATE_LIMITED, message,
                          json_pack("{s:i}", "retry_after", OPEN_CAP_RETRY_S), OPEN_CAP_RETRY_S);
    return false;
}

enum xg_httpd_result api_handle_xmr402_challenge(const struct xg_httpd_request *req)
{
    struct api *api = api_of(req);
    struct challenge c = {.api = api};
    char msg[256];
    enum xg_httpd_result mr;
    if (!parse_challenge_body(req->body, &c, msg, sizeof msg))
        return api_errorf(req, BL_ERROR_MALFORMED_JSON, "%s", msg);
    api_xmr402_network_key(req, c.network);
    struct xg_pg *pg = pgpool_get(api->pool);
    if (quote_tier(req, pg, &c, &mr) &&
        api_xmr402_take_limit(req, api->create_limit, "challenges", false, &mr) &&
        open_challenges_allow(req, pg, &c, &mr))
        mr = insert_challenge(req, pg, &c);
    pgpool_put(api->pool, pg);
    cred_wipe(&c.cred);
    return mr;
}
