/* POST /api/xmr402/verify  {"txid", "proof", "invoice"?}  → the invoice is found from the
 * txid (the view-only wallet's get_transfer_by_txid names the subaddress, even in the pool)
 * or taken from "invoice"; check_tx_proof against the invoice's own subaddress and nonce
 * must show money received; the payment is then upserted in the poller's table under the
 * poller's key (txid, subaddress index) and the invoice settled by the same state machine,
 * in one transaction. Answers:
 *   200 provisioned: token, handle, tier limits, receipt (the same every time)
 *   200 pending: proven, short of the tier's confirmations, and one request of the pending
 *       allowance ([xmr402] pending_requests) taken: the tier's limits and what is left
 *       (the gateway serves the request; no credentials yet, but with "reveal":true the
 *       token the payment buys: reveal_token)
 *   202 seen / confirming / late (honoured): confirmations, required, retry_after, for a
 *       client that sent "mode":"confirmations" or with no pending allowance
 *   429 pending_spent: the allowance is used up; Retry-After
 *   402 proof_invalid, underpaid (remaining), late (remaining), not_counted, txid_unknown,
 *       unknown_invoice, not_xmr402
 *   409 txid_used (the txid already counts for another invoice)
 *   410 invoice_expired: past its deadline with nothing proven (the gateway then offers a
 *       new challenge); money proven after the deadline is never dropped: it follows the
 *       late policy (invoice.h)
 * A proof without "invoice" whose transaction the view-only wallet has not seen yet waits
 * up to [xmr402] unseen_hold before txid_unknown, which the gateway answers "retry", never
 * "pay". Before any wallet call the node is asked whether the transaction exists at all
 * ([wallet] daemon_url, txnode.h): a made-up txid costs one daemon call and no verify
 * token. The flow: api_xmr402.h. */
#include "api/api_xmr402_verify.h"

#include "api/api_shared.h"
#include "api/api_xmr402.h"
#include "api/verify_hold.h"
#include "invoice/invoice.h"
#include "payments/settle.h"
#include "wallet/txnode.h"
#include "xg_clock.h"
#include "xg_hex.h"
#include "xg_log.h"
#include "xg_reply.h"
#include "xg_str.h"
#include "xmr402/bl_xmr402.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROOF_MAX        4096 /* the gateway's [xmr402] max_proof is at most this */
#define MAX_TRANSFERS    16
#define UNSEEN_POLL_MS   750 /* between wallet looks while a proof waits for its transaction */
#define DOUBLE_SPENT_MSG "this transaction is double-spent: it buys nothing"

struct seen {
    int64_t minor, amount, height, unlock_time;
    bool pool, double_spend;
};

struct verify {
    char txid[WALLET_TXID_SIZE];
    char proof[PROOF_MAX + 1];
    char invoice[API_INVOICE_ID_SIZE];
    struct seen seen[MAX_TRANSFERS];
    size_t nseen;
    int64_t wallet_height;
    struct invoice_row inv;
    /* the payment row */
    int64_t amount, height, confirmations, unlock_time;
    const char *pay_state;
    struct settle_result settled;
    int64_t late_grace_s;
    bool wants_202; /* "mode":"confirmations": the client waits through 202 itself */
    bool reveal;    /* "reveal":true (the gateway's event stream): pending names the token */
    /* what billing recorded of the txid before ("" when nothing): bl_xmr402_payment_of_txid */
    char stored_invoice[API_INVOICE_ID_SIZE];
    char stored_state[16];
    /* across a hold (verify_hold.h): where the request resumes, and what the checks found */
    enum { VERIFY_FRESH, VERIFY_NODE_HELD, VERIFY_WALLET_HELD } phase;
    struct api *api;
    int64_t until_ms; /* the end of the unseen hold, from the proof's arrival */
    enum txnode_verdict verdict;
    bool wallet_ok;
    char wallet_err[512];
    struct verify_hold_entry hold;
};

static bool base58_text(const char *s)
{
    static const char alphabet[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    for (; *s; s++)
        if (!strchr(alphabet, *s))
            return false;
    return true;
}

static bool parse_verify_body(const char *body, struct verify *v, char *msg, size_t len)
{
    json_t *doc = json_loads(body ? body : "", JSON_REJECT_DUPLICATES, NULL);
    json_t *txid = json_object_get(doc, "txid"), *proof = json_object_get(doc, "proof");
    json_t *inv = json_object_get(doc, "invoice");
    bool ok = false;
    if (!json_is_object(doc)) {
        snprintf(msg, len, "the body must be a JSON object");
        goto out;
    }
    const char *t = json_string_value(txid);
    if (!t || strlen(t) != 64 || !xg_hex_ok(t, 32)) {
        snprintf(msg, len, "\"txid\" must be 64 hex digits");
        goto out;
    }
    for (int i = 0; i < 64; i++)
        v->txid[i] = (char)tolower((unsigned char)t[i]);
    const char *p = json_string_value(proof);
    if (!p || strlen(p) > PROOF_MAX || strncmp(p, "OutProofV", 9) != 0 || !base58_text(p + 9)) {
        snprintf(msg, len, "\"proof\" must be an OutProofV… text from get_tx_proof");
        goto out;
    }
    snprintf(v->proof, sizeof v->proof, "%s", p);
    if (inv && (!json_is_string(inv) || !xg_str_is_uuid(json_string_value(inv)))) {
        snprintf(msg, len, "\"invoice\" must be an invoice id");
        goto out;
    }
    if (inv)
        snprintf(v->invoice, sizeof v->invoice, "%s", json_string_value(inv));
    const char *mode = json_string_value(json_object_get(doc, "mode"));
    v->wants_202 = mode && strcmp(mode, BL_XMR402_MODE_CONFIRMATIONS) == 0;
    v->reveal = json_is_true(json_object_get(doc, "reveal"));
    ok = true;
out:
    json_decref(doc);
    return ok;
}

static void add_seen(struct verify *v, const json_t *t)
{
    const json_t *idx = json_object_get(t, "subaddr_index");
    const char *type = json_string_value(json_object_get(t, "type"));
    if (v->nseen >= MAX_TRANSFERS || !type || json_integer_value(json_object_get(idx, "major")))
        return;
    bool pool = strcmp(type, "pool") == 0;
    if (!pool && strcmp(type, "in") != 0)
        return;
    struct seen *s = &v->seen[v->nseen];
    s->minor = json_integer_value(json_object_get(idx, "minor"));
    s->amount = json_integer_value(json_object_get(t, "amount"));
    s->height = pool ? 0 : json_integer_value(json_object_get(t, "height"));
    s->unlock_time = json_integer_value(json_object_get(t, "unlock_time"));
    s->pool = pool;
    s->double_spend = json_is_true(json_object_get(t, "double_spend_seen"));
    if (s->minor > 0 && s->amount > 0 && (pool || s->height > 0))
        v->nseen++;
}

/* What the view-only wallet knows of the txid (nothing is not an error: a proof may come
 * before the wallet's next refresh). False only when the wallet is unreachable. */
static bool wallet_facts(struct api *api, struct verify *v, char *err, size_t errlen)
{
    /* a refresh first: the agent retries right after a block, the wallet's own refresh
     * may be seconds away (a synced wallet refreshes in milliseconds) */
    if (!wallet_refresh(api->wallet, err, errlen))
        return false;
    json_t *res = wallet_get_transfer_by_txid(api->wallet, v->txid, err, errlen);
    if (res) {
        const json_t *list = json_object_get(res, "transfers"), *t;
        size_t i;
        if (json_is_array(list)) {
            json_array_foreach(list, i, t)
            {
                add_seen(v, t);
            }
        } else {
            add_seen(v, json_object_get(res, "transfer"));
        }
        json_decref(res);
    } else if (!strstr(err, "RPC error")) {
        return false; /* unreachable; an RPC error is "Transaction not found" */
    }
    return wallet_get_height(api->wallet, &v->wallet_height, err, errlen);
}

/* The invoice: named, or found from the subaddresses the transaction paid. */
static enum api_load locate_invoice(struct xg_pg *pg, struct verify *v)
{
    if (v->invoice[0])
        return api_xmr402_load_invoice(pg, v->invoice, &v->inv);
    for (size_t i = 0; i < v->nseen; i++) {
        char sub[24];
        snprintf(sub, sizeof sub, "%lld", (long long)v->seen[i].minor);
        const char *params[] = {sub};
        PGresult *res = xg_pg_exec(pg, "bl_xmr402_invoice_on_subaddress", 1, params);
        if (!res)
            return API_LOAD_DB_ERROR;
        bool found = PQntuples(res) == 1;
        if (found)
            snprintf(v->invoice, sizeof v->invoice, "%s", PQgetvalue(res, 0, 0));
        PQclear(res);
        if (found)
            return api_xmr402_load_invoice(pg, v->invoice, &v->inv);
    }
    if (v->stored_invoice[0]) { /* the wallet no longer shows it: billing recorded it */
        snprintf(v->invoice, sizeof v->invoice, "%s", v->stored_invoice);
        return api_xmr402_load_invoice(pg, v->invoice, &v->inv);
    }
    return API_LOAD_NOT_FOUND;
}

/* Fills stored_invoice and stored_state from the payments table. */
static bool load_stored(struct xg_pg *pg, struct verify *v)
{
    const char *params[] = {v->txid};
    PGresult *res = xg_pg_exec(pg, "bl_xmr402_payment_of_txid", 1, params);
    if (!res)
        return false;
    if (PQntuples(res) == 1) {
        snprintf(v->stored_invoice, sizeof v->stored_invoice, "%s", PQgetvalue(res, 0, 0));
        snprintf(v->stored_state, sizeof v->stored_state, "%s", PQgetvalue(res, 0, 1));
    }
    PQclear(res);
    return true;
}

/* A transaction billing recorded as gone from the pool, which the wallet does not show
 * again, or as double-spent, which the wallet does not show mined: it buys nothing (and its
 * pending allowance is over). A double spend seen once stays seen while the transaction is
 * in the pool (invoice_pay_state_after), whatever the wallet's mark says now. A provisioned
 * invoice stays provisioned (settle.h): its proof goes on as before. */
static bool stored_lost(const struct verify *v)
{
    bool double_spend = strcmp(v->stored_state, "double_spend") == 0;
    if (v->inv.state == INVOICE_PROVISIONED || strcmp(v->stored_invoice, v->inv.id) != 0 ||
        (!double_spend && strcmp(v->stored_state, "gone") != 0))
        return false;
    for (size_t i = 0; i < v->nseen; i++)
        if (v->seen[i].minor == v->inv.subaddress_index && !v->seen[i].double_spend &&
            !(double_spend && v->seen[i].pool))
            return false;
    return true;
}

static enum api_load txid_elsewhere(struct xg_pg *pg, const struct verify *v, char *other,
                                    size_t len)
{
    const char *params[] = {v->txid, v->inv.id};
    PGresult *res = xg_pg_exec(pg, "bl_xmr402_txid_elsewhere", 2, params);
    if (!res)
        return API_LOAD_DB_ERROR;
    enum api_load r = PQntuples(res) == 1 ? API_LOAD_OK : API_LOAD_NOT_FOUND;
    if (r == API_LOAD_OK)
        snprintf(other, len, "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
    return r;
}

enum proof_verdict { PROOF_GOOD, PROOF_BAD, PROOF_WALLET_DOWN };

/* check_tx_proof against the invoice's own subaddress and nonce; a proof for another
 * address or message shows nothing received. Fills the payment from the wallet's view
 * of the transfer, or from the proof when the wallet has not scanned it yet. */
static enum proof_verdict check_proof(struct api *api, struct verify *v, char *why, size_t len)
{
    char err[512];
    json_t *res = wallet_check_tx_proof(api->wallet, v->txid, v->inv.subaddress, v->inv.nonce,
                                        v->proof, err, sizeof err);
    if (!res) {
        /* the wallet answered with an error (a malformed or foreign proof) or not at all */
        snprintf(why, len, "the wallet refused the proof: %.300s", err);
        return strstr(err, "RPC error") ? PROOF_BAD : PROOF_WALLET_DOWN;
    }
    bool good = json_is_true(json_object_get(res, "good"));
    int64_t received = json_integer_value(json_object_get(res, "received"));
    bool in_pool = json_is_true(json_object_get(res, "in_pool"));
    int64_t conf = json_integer_value(json_object_get(res, "confirmations"));
    json_decref(res);
    if (!good || received <= 0) {
        snprintf(why, len, "the proof shows no payment to invoice %s's address for its message",
                 v->inv.id);
        return PROOF_BAD;
    }
    v->amount = received;
    v->unlock_time = 0;
    v->pay_state = in_pool ? "pool" : "confirmed";
    v->height = in_pool ? 0 : v->wallet_height - conf;
    for (size_t i = 0; i < v->nseen; i++) {
        const struct seen *s = &v->seen[i];
        if (s->minor != v->inv.subaddress_index)
            continue;
        v->amount = s->amount;
        v->unlock_time = s->unlock_time;
        v->height = s->height;
        v->pay_state = s->double_spend ? "double_spend" : s->pool ? "pool" : "confirmed";
    }
    if (strcmp(v->pay_state, "confirmed") == 0 && v->height <= 0)
        v->pay_state = "pool"; /* the wallet is behind the daemon: count it as unconfirmed */
    enum invoice_pay_state stored, seen;
    if (strcmp(v->stored_invoice, v->inv.id) == 0 &&
        invoice_pay_state_parse(v->stored_state, &stored) &&
        invoice_pay_state_parse(v->pay_state, &seen))
        v->pay_state = invoice_pay_state_name(invoice_pay_state_after(stored, seen));
    v->confirmations = strcmp(v->pay_state, "confirmed") == 0 ? v->wallet_height - v->height : 0;
    if (v->confirmations < 0)
        v->confirmations = 0;
    return PROOF_GOOD;
}

static enum xg_tx_result on_verify_tx(struct xg_pg *pg, void *ctx)
{
    struct verify *v = ctx;
    char sub[24], amount[24], height[24], conf[24], unlock[24];
    snprintf(sub, sizeof sub, "%lld", (long long)v->inv.subaddress_index);
    snprintf(amount, sizeof amount, "%lld", (long long)v->amount);
    snprintf(height, sizeof height, "%lld", (long long)v->height);
    snprintf(conf, sizeof conf, "%lld", (long long)v->confirmations);
    snprintf(unlock, sizeof unlock, "%lld", (long long)v->unlock_time);
    bool confirmed = strcmp(v->pay_state, "confirmed") == 0;
    const char *params[] = {v->txid, sub,          v->inv.id, amount, confirmed ? height : NULL,
                            conf,    v->pay_state, unlock};
    PGresult *res = xg_pg_exec(pg, "bl_xmr402_payment_upsert", 8, params);
    if (!res)
        return xg_pg_tx_classify(pg);
    PQclear(res);
    struct settle_policy policy = {.late_grace_s = v->late_grace_s,
                                   .chain_height = v->wallet_height};
    return settle_invoice(pg, v->inv.id, &policy, &v->settled);
}

/* 402/409/410 with the reason (message NULL: the registry's); the challenge to pay again
 * when there is one. */
static enum xg_httpd_result refuse(const struct xg_httpd_request *req, enum bl_error e,
                                   const char *message, const struct invoice_row *inv)
{
    struct api *api = api_of(req);
    json_t *extra = NULL;
    if (inv && inv->id[0]) {
        extra = json_object();
        json_object_set_new(extra, "invoice", json_string(inv->id));
        json_object_set_new(extra, "state", json_string(invoice_state_name(inv->state)));
        json_object_set_new(extra, "remaining", api_json_piconero(api_xmr402_remaining(inv)));
        if (invoice_state_open(inv->state) && inv->xmr402)
            json_object_set_new(extra, "challenge", api_xmr402_challenge_json(api, inv));
    }
    return api_error_reply(req, e, message, extra, -1);
}

/* bl_keys_seed_fn over an invoice's challenge nonce. */
static bool nonce_seed_of(const uint8_t key[BL_KEYS_LEN], const void *nonce,
                          uint8_t seed[TOKEN_RAW_LEN])
{
    return bl_xmr402_token_seed(key, nonce, seed);
}

static enum xg_httpd_result reply_provisioned(const struct xg_httpd_request *req, struct xg_pg *pg,
                                              const struct verify *v)
{
    struct api *api = api_of(req);
    char tenant[24];
    snprintf(tenant, sizeof tenant, "%lld", (long long)v->inv.tenant_id);
    const char *params[] = {tenant};
    PGresult *res = xg_pg_exec(pg, "bl_xmr402_tenant", 1, params);
    if (!res)
        return api_db_error(req, pg);
    enum xg_httpd_result mr;
    char token[TOKEN_TEXT_SIZE] = "", login[96] = "", url[512] = "";
    char *receipt = NULL;
    if (PQntuples(res) != 1) {
        mr = api_errorf(req, BL_ERROR_INTERNAL_ERROR, "the provisioned tenant cannot be read");
        goto out;
    }
    /* a tenant that rotated its token is no longer this proof's: the proof, which anyone
     * who saw the agent's request holds, must not outlive the token it stood for */
    if (strcmp(v->inv.token_hash, PQgetvalue(res, 0, 7)) != 0) {
        mr = refuse(req, BL_ERROR_CREDENTIALS_ROTATED, NULL, NULL);
        goto out;
    }
    /* Derived again under the key that derived it (bl_keys.h). Under neither key (token_key
     * was replaced since): served as the tenant all the same, the token withheld. */
    bool derived = bl_keys_rederive(&api->keys, nonce_seed_of, v->inv.nonce, v->inv.token_hash,
                                    token) != BL_KEYS_NONE;
    if (!derived)
        xg_log(XG_LOG_WARN, "xmr402_token_not_derivable", "invoice %s: token withheld", v->inv.id);
    const char *handle = PQgetvalue(res, 0, 1), *tier = PQgetvalue(res, 0, 2);
    struct bl_xmr402_receipt r = {.invoice = v->inv.id,
                                  .txid = v->txid,
                                  .handle = handle,
                                  .tier = tier,
                                  .amount = v->inv.paid,
                                  .issued_at = v->inv.provisioned_at};
    receipt = bl_xmr402_receipt_sign(api->receipt_key, &r);
    snprintf(login, sizeof login, "%s:%s", handle, token);
    snprintf(url, sizeof url, "%s/v1/%s", api->gateway_url, token);
    /* Replay: anyone who saw the txid and proof could read the token forever. It is shown
     * again only within [xmr402] credentials_window of provisioning; later the proof still
     * serves requests as the tenant (until valid_until), without the token. */
    bool deliver =
        derived && v->inv.now - v->inv.provisioned_at <= api->xmr402_credentials_window_s;
    json_t *body = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:{s:I, s:s, s:s, s:I, s:I, s:I, s:s, s:I, s:b}, s:o, s:s}",
        "state", "provisioned", "invoice", v->inv.id, "token", token, "login", login, "rpc_url",
        url, "gateway_url", api->gateway_url, "tenant", "id", (json_int_t)xg_pg_int64(res, 0, 0),
        "handle", handle, "tier", tier, "burst_rps", (json_int_t)xg_pg_int64(res, 0, 3),
        "burst_size", (json_int_t)xg_pg_int64(res, 0, 9), "daily_quota",
        (json_int_t)xg_pg_int64(res, 0, 4), "valid_until", PQgetvalue(res, 0, 5),
        "valid_until_unix", (json_int_t)xg_pg_int64(res, 0, 6), "suspended",
        strcmp(PQgetvalue(res, 0, 8), "active") != 0, "receipt",
        receipt ? json_string(receipt) : json_null(), "receipt_key", api->receipt_public_hex);
    if (body && !deliver) {
        json_object_del(body, "token");
        json_object_del(body, "login");
        json_object_del(body, "rpc_url");
        json_object_set_new(body, "credentials", json_string("withheld"));
    }
    mr = xg_reply_json(req->conn, 200, body);
out:
    PQclear(res);
    free(receipt);
    OPENSSL_cleanse(token, sizeof token);
    OPENSSL_cleanse(login, sizeof login);
    OPENSSL_cleanse(url, sizeof url);
    return mr;
}

static enum xg_httpd_result reply_waiting(const struct xg_httpd_request *req,
                                          const struct verify *v)
{
    struct api *api = api_of(req);
    char seconds[24];
    snprintf(seconds, sizeof seconds, "%lld", (long long)api->xmr402_retry_after_s);
    json_t *body = json_pack(
        "{s:s, s:s, s:I, s:I, s:o, s:o, s:I, s:s}", "state", invoice_state_name(v->inv.state),
        "invoice", v->inv.id, "confirmations", (json_int_t)v->inv.confirmations,
        "confirmations_required", (json_int_t)v->inv.confirmations_required, "paid",
        api_json_piconero(v->inv.paid), "amount", api_json_piconero(v->inv.amount), "retry_after",
        (json_int_t)api->xmr402_retry_after_s, "txid", v->txid);
    const char *headers[] = {"Retry-After", seconds, NULL};
    return xg_reply_json_with(req->conn, 202, body, headers);
}

/* The token this payment buys, named at acceptance for the gateway's event stream
 * (xmr402_flow.h): it is derived from the nonce under [billing] token_key, as provisioning
 * derives a new tenant's (bl_keys.h), and authenticates
 * nothing until the tenant exists (the tier's confirmations), so a double spend that
 * ends the allowance leaves it worthless. Who holds the proof may read it, as after
 * provisioning within the credentials window. */
static void reveal_token(const struct api *api, const struct verify *v, json_t *body)
{
    uint8_t seed[TOKEN_RAW_LEN];
    char token[TOKEN_TEXT_SIZE], url[512];
    if (bl_xmr402_token_seed(api->keys.token, v->inv.nonce, seed)) { /* as a new tenant gets */
        token_format(seed, token);
        snprintf(url, sizeof url, "%s/v1/%s", api->gateway_url, token);
        json_object_set_new(body, "token", json_string(token));
        json_object_set_new(body, "rpc_url", json_string(url));
        json_object_set_new(body, "gateway_url", json_string(api->gateway_url));
    }
    json_object_set_new(body, "retry_after", json_integer(api->xmr402_retry_after_s));
    OPENSSL_cleanse(seed, sizeof seed);
    OPENSSL_cleanse(token, sizeof token);
    OPENSSL_cleanse(url, sizeof url);
}

/* A proven payment short of its confirmations: one request of the pending allowance
 * (bl_xmr402_pending_take), served by the gateway at the tier's rate. Spent, expired or
 * double-spent: refused with the reason (the gateway never turns it into a new purchase). */
static enum xg_httpd_result reply_pending(const struct xg_httpd_request *req, struct xg_pg *pg,
                                          const struct verify *v)
{
    struct api *api = api_of(req);
    char max[24];
    snprintf(max, sizeof max, "%lld", (long long)api->xmr402_pending_requests);
    const char *params[] = {v->inv.id, max};
    PGresult *res = xg_pg_exec(pg, "bl_xmr402_pending_take", 2, params);
    if (!res)
        return api_db_error(req, pg);
    if (PQntuples(res) != 1) {
        PQclear(res);
        return api_error_reply(req, BL_ERROR_PENDING_SPENT, NULL,
                               json_pack("{s:s, s:I, s:I, s:I}", "invoice", v->inv.id,
                                         "confirmations", (json_int_t)v->inv.confirmations,
                                         "confirmations_required",
                                         (json_int_t)v->inv.confirmations_required, "retry_after",
                                         (json_int_t)api->xmr402_retry_after_s),
                               api->xmr402_retry_after_s);
    }
    json_t *body = json_pack(
        "{s:s, s:s, s:s, s:I, s:I, s:I, s:{s:s, s:I, s:I, s:I}, s:I}", "state", "pending",
        "invoice", v->inv.id, "txid", v->txid, "pending_left", (json_int_t)xg_pg_int64(res, 0, 0),
        "confirmations", (json_int_t)v->inv.confirmations, "confirmations_required",
        (json_int_t)v->inv.confirmations_required, "tier", "tier", v->inv.tier, "burst_rps",
        (json_int_t)xg_pg_int64(res, 0, 1), "burst_size", (json_int_t)xg_pg_int64(res, 0, 2),
        "daily_quota", (json_int_t)xg_pg_int64(res, 0, 3), "pending_until_unix",
        (json_int_t)xg_pg_int64(res, 0, 4));
    PQclear(res);
    if (body && v->reveal)
        reveal_token(api, v, body);
    return xg_reply_json(req->conn, 200, body);
}

/* The answer for the invoice's state after settling. */
static enum xg_httpd_result reply_state(const struct xg_httpd_request *req, struct xg_pg *pg,
                                        const struct verify *v)
{
    char msg[256];
    bool pending = !v->wants_202 && api_of(req)->xmr402_pending_requests > 0;
    switch (v->inv.state) {
    case INVOICE_PROVISIONED:
        return reply_provisioned(req, pg, v);
    case INVOICE_SEEN:
    case INVOICE_CONFIRMING:
    case INVOICE_PAID:
        if (strcmp(v->pay_state, "double_spend") == 0) /* in either mode: it may never confirm */
            return refuse(req, BL_ERROR_NOT_COUNTED, DOUBLE_SPENT_MSG, &v->inv);
        return pending ? reply_pending(req, pg, v) : reply_waiting(req, v);
    case INVOICE_LATE:
        if (api_xmr402_remaining(&v->inv) == 0)
            return reply_waiting(req, v);
        snprintf(msg, sizeof msg, "paid after the quote expired; %lld piconero still missing",
                 (long long)api_xmr402_remaining(&v->inv));
        return refuse(req, BL_ERROR_LATE, msg, &v->inv);
    case INVOICE_UNDERPAID:
        snprintf(msg, sizeof msg, "underpaid: %lld piconero still to pay to the same address",
                 (long long)api_xmr402_remaining(&v->inv));
        return refuse(req, BL_ERROR_UNDERPAID, msg, &v->inv);
    case INVOICE_EXPIRED:
        return refuse(req, BL_ERROR_INVOICE_EXPIRED, NULL, &v->inv);
    case INVOICE_REVERTED:
    case INVOICE_PENDING:
        return refuse(req, BL_ERROR_NOT_COUNTED, NULL, &v->inv);
    }
    return api_errorf(req, BL_ERROR_INTERNAL_ERROR, "unknown invoice state");
}

/* Nothing proven for an invoice past its deadline: the agent is offered a new one. */
static bool expired_unpaid(const struct invoice_row *inv)
{
    return inv->paid == 0 && (inv->state == INVOICE_EXPIRED || inv->now > inv->expires);
}

static enum xg_httpd_result refuse_expired(const struct xg_httpd_request *req,
                                           const struct verify *v)
{
    return refuse(req, BL_ERROR_INVOICE_EXPIRED,
                  "this invoice expired unpaid; pay the new challenge instead", &v->inv);
}

/* The proof, once the wallet's facts are in (wallet_facts). */
static enum xg_httpd_result verify_run(const struct xg_httpd_request *req, struct xg_pg *pg,
                                       struct verify *v)
{
    struct api *api = api_of(req);
    char why[512], other[API_INVOICE_ID_SIZE];
    enum api_load l = locate_invoice(pg, v);
    if (l == API_LOAD_DB_ERROR)
        return api_db_error(req, pg);
    if (l == API_LOAD_NOT_FOUND)
        return refuse(req, v->invoice[0] ? BL_ERROR_UNKNOWN_INVOICE : BL_ERROR_TXID_UNKNOWN, NULL,
                      NULL);
    if (!v->inv.xmr402)
        return refuse(req, BL_ERROR_NOT_XMR402, NULL, NULL);
    l = txid_elsewhere(pg, v, other, sizeof other);
    if (l == API_LOAD_DB_ERROR)
        return api_db_error(req, pg);
    if (l == API_LOAD_OK)
        return expired_unpaid(&v->inv) ? refuse_expired(req, v)
                                       : refuse(req, BL_ERROR_TXID_USED, NULL, &v->inv);
    if (stored_lost(v))
        return refuse(req, BL_ERROR_NOT_COUNTED,
                      strcmp(v->stored_state, "gone") == 0
                          ? "this transaction left the pool unconfirmed: it buys nothing"
                          : DOUBLE_SPENT_MSG,
                      &v->inv);
    switch (check_proof(api, v, why, sizeof why)) {
    case PROOF_WALLET_DOWN:
        xg_log(XG_LOG_WARN, "wallet_unavailable", "check_tx_proof: %s", why);
        return api_error(req, BL_ERROR_WALLET_UNAVAILABLE);
    case PROOF_BAD:
        return expired_unpaid(&v->inv) ? refuse_expired(req, v)
                                       : refuse(req, BL_ERROR_PROOF_INVALID, why, &v->inv);
    case PROOF_GOOD:
        break;
    }
    v->late_grace_s = api->late_grace_s;
    if (xg_pg_transaction(pg, NULL, on_verify_tx, v) != XG_TX_COMMIT)
        return api_db_error(req, pg);
    if (v->settled.provisioned)
        xg_log_fields(XG_LOG_INFO, "invoice_provisioned",
                      json_pack("{s:s, s:I, s:s}", "invoice", v->inv.id, "tenant",
                                (json_int_t)v->settled.tenant_id, "via", "xmr402"),
                      NULL);
    if (api_xmr402_load_invoice(pg, v->inv.id, &v->inv) != API_LOAD_OK)
        return api_db_error(req, pg);
    return reply_state(req, pg, v);
}

/* What the node saw is kept: monerod may forget its double_spend_seen mark (invoice.h), and
 * the next proof, or an event stream's next look, must still be refused. A failure to
 * write is logged; the refusal stands either way. */
static void mark_double_spend(struct xg_pg *pg, const char *txid)
{
    const char *params[] = {txid};
    PGresult *res = xg_pg_exec(pg, "bl_xmr402_payment_double_spend", 1, params);
    if (!res)
        xg_log(XG_LOG_WARN, "xmr402_double_spend_not_recorded", "%s: %s", txid,
               xg_pg_last_error(pg));
    PQclear(res);
}

/* ---- the unseen hold ---------------------------------------------------------------------
 *
 * A proof whose transaction the node (or, with no invoice named, the view-only wallet) does
 * not show yet waits, up to [xmr402] unseen_hold from its arrival, as a suspended connection
 * in api->verify_hold: the set's thread looks again every UNSEEN_POLL_MS (check_node,
 * check_wallet; no database connection is held meanwhile) and resumes the request, which
 * goes on from v->phase. A full hold answers at once: 429 rate_limited for a client over
 * [xmr402] max_held_per_client, 503 verify_busy over [xmr402] max_held_proofs, both with
 * Retry-After (the gateway's "retry", never "pay"). */

static bool check_node(struct verify_hold_entry *e)
{
    struct verify *v = e->ctx;
    v->verdict = txnode_lookup(v->api->txnode, v->txid);
    return v->verdict != TXNODE_MISSING;
}

static bool check_wallet(struct verify_hold_entry *e)
{
    struct verify *v = e->ctx;
    v->nseen = 0;
    v->wallet_ok = wallet_facts(v->api, v, v->wallet_err, sizeof v->wallet_err);
    return !v->wallet_ok || v->nseen > 0;
}

/* Seconds until the hold could take another proof: the hold's own length, at least 1. */
static int64_t hold_retry_after_s(const struct api *api)
{
    int64_t s = (api->xmr402_unseen_hold_ms + 999) / 1000;
    return s > 0 ? s : 1;
}

enum hold_outcome {
    HOLD_SUSPENDED, /* return XG_HTTPD_DONE: the request resumes at its phase */
    HOLD_REFUSED,   /* the hold is full: *mr is queued */
    HOLD_TIME_UP,   /* the unseen hold is over: answer from what is known */
};

static enum hold_outcome hold(const struct xg_httpd_request *req, struct verify *v,
                              bool (*check)(struct verify_hold_entry *), int phase,
                              enum xg_httpd_result *mr)
{
    struct api *api = api_of(req);
    if (xg_monotonic_ms() >= v->until_ms)
        return HOLD_TIME_UP;
    memset(&v->hold, 0, sizeof v->hold);
    api_xmr402_client_key(req, v->hold.client, sizeof v->hold.client);
    v->hold.until_ms = v->until_ms;
    v->hold.poll_ms = UNSEEN_POLL_MS;
    v->hold.check = check;
    v->hold.ctx = v;
    v->phase = phase;
    int64_t retry = hold_retry_after_s(api);
    json_t *extra = json_pack("{s:I}", "retry_after", (json_int_t)retry);
    switch (verify_hold_add(api->verify_hold, req->conn, &v->hold)) {
    case VERIFY_HOLD_ADMIT:
        json_decref(extra);
        *mr = XG_HTTPD_DONE;
        return HOLD_SUSPENDED;
    case VERIFY_HOLD_CLIENT_FULL:
        *mr = api_error_reply(req, BL_ERROR_RATE_LIMITED,
                              "too many XMR402 proofs from this address are waiting for their "
                              "transaction; send this one again later",
                              extra, retry);
        return HOLD_REFUSED;
    case VERIFY_HOLD_FULL:
        *mr = api_error_reply(req, BL_ERROR_VERIFY_BUSY, NULL, extra, retry);
        return HOLD_REFUSED;
    case VERIFY_HOLD_STOPPING:
        break;
    }
    *mr = api_error_reply(req, BL_ERROR_VERIFY_BUSY,
                          "billing is shutting down; send the proof again after Retry-After", extra,
                          retry);
    return HOLD_REFUSED;
}

/* What the view-only wallet showed is in v: wait on for a transaction it does not show yet
 * (no invoice named: check_tx_proof asks the daemon, not the wallet's scan, so a named one
 * needs no wait), then check the proof, the database from here on. */
static enum xg_httpd_result after_wallet(const struct xg_httpd_request *req, struct verify *v)
{
    struct api *api = api_of(req);
    enum xg_httpd_result mr;
    if (v->wallet_ok && !v->invoice[0] && v->nseen == 0 &&
        hold(req, v, check_wallet, VERIFY_WALLET_HELD, &mr) != HOLD_TIME_UP)
        return mr;
    if (!v->wallet_ok) {
        xg_log(XG_LOG_WARN, "wallet_unavailable", "xmr402 verify: %s", v->wallet_err);
        return api_error(req, BL_ERROR_WALLET_UNAVAILABLE);
    }
    struct xg_pg *pg = pgpool_get(api->pool);
    mr = verify_run(req, pg, v);
    pgpool_put(api->pool, pg);
    return mr;
}

/* The node's verdict is in v (txnode.h). One it does not have and billing never recorded
 * waits (a proof may beat the relay to this node), then is answered txid_unknown (the
 * gateway's "retry", never "pay"); one the node saw double-spent is not_counted, which ends
 * its pending allowance. Neither costs a wallet call. Otherwise the wallet is asked. */
static enum xg_httpd_result after_node(const struct xg_httpd_request *req, struct verify *v)
{
    struct api *api = api_of(req);
    enum xg_httpd_result mr;
    /* one billing recorded needs no wait: its answer (double-spent, dropped) is billing's */
    bool recorded = v->stored_invoice[0] != '\0';
    switch (v->verdict) {
    case TXNODE_FOUND:
    case TXNODE_UNKNOWN:
        break;
    case TXNODE_DOUBLE_SPENT: {
        xg_log(XG_LOG_INFO, "xmr402_double_spend", "%s", v->txid);
        struct xg_pg *pg = pgpool_get(api->pool);
        mark_double_spend(pg, v->txid);
        pgpool_put(api->pool, pg);
        return refuse(req, BL_ERROR_NOT_COUNTED, DOUBLE_SPENT_MSG, NULL);
    }
    case TXNODE_MISSING:
        if (recorded)
            break;
        if (hold(req, v, check_node, VERIFY_NODE_HELD, &mr) != HOLD_TIME_UP)
            return mr;
        xg_log(XG_LOG_DEBUG, "xmr402_txid_not_on_node", "%s", v->txid);
        return refuse(req, BL_ERROR_TXID_UNKNOWN,
                      "the node has no transaction with this txid (nothing was asked of the "
                      "wallet)",
                      NULL);
    }
    v->nseen = 0;
    v->wallet_ok = wallet_facts(api, v, v->wallet_err, sizeof v->wallet_err);
    return after_wallet(req, v);
}

/* A network's share of the verify rate ([xmr402] verify_share, fair_share.h); false with
 * the 429 queued. */
static bool take_verify_share(const struct xg_httpd_request *req, enum xg_httpd_result *mr)
{
    char network[CLIENT_PREFIX_KEY_SIZE];
    int64_t retry = 0;
    api_xmr402_network_key(req, network);
    if (client_limit_table_take(api_of(req)->verify_share, network, xg_monotonic_ms(), &retry))
        return true;
    *mr = api_error_reply(req, BL_ERROR_RATE_LIMITED,
                          "this network uses its share of the XMR402 proofs checked per second; "
                          "try again later",
                          json_pack("{s:I}", "retry_after", (json_int_t)retry), retry);
    return false;
}

/* A new proof: its shape, the client's limit, its network's share of the global rate, then
 * the one bucket of all clients (before any hold, so that a flood of waiting proofs is
 * bounded by it too), what billing recorded of the txid, and the node's first look. */
static enum xg_httpd_result verify_start(const struct xg_httpd_request *req, struct verify *v)
{
    struct api *api = api_of(req);
    char msg[256];
    enum xg_httpd_result mr;
    if (!parse_verify_body(req->body, v, msg, sizeof msg))
        return api_errorf(req, BL_ERROR_MALFORMED_PROOF, "%s", msg);
    if (!api_xmr402_take_limit(req, api->verify_limit, "proofs", false, &mr) ||
        !take_verify_share(req, &mr) ||
        !api_xmr402_take_limit(req, api->verify_global, "proofs", true, &mr))
        return mr;
    v->until_ms = xg_monotonic_ms() + api->xmr402_unseen_hold_ms;
    struct xg_pg *pg = pgpool_get(api->pool);
    bool loaded = load_stored(pg, v);
    if (!loaded)
        mr = api_db_error(req, pg);
    pgpool_put(api->pool, pg);
    if (!loaded)
        return mr;
    v->verdict = txnode_lookup(api->txnode, v->txid);
    return after_node(req, v);
}

static void verify_release(void *state)
{
    struct verify *v = state;
    if (v)
        OPENSSL_cleanse(v->proof, sizeof v->proof);
    free(v);
}

enum xg_httpd_result api_handle_xmr402_verify(const struct xg_httpd_request *req)
{
    struct verify *v = xg_httpd_state(req);
    if (!v) {
        v = calloc(1, sizeof *v);
        if (!v)
            return api_errorf(req, BL_ERROR_INTERNAL_ERROR, "out of memory");
        v->api = api_of(req);
        xg_httpd_set_state(req, v, verify_release);
        return verify_start(req, v);
    }
    switch (v->phase) { /* resumed from the hold */
    case VERIFY_NODE_HELD:
        return after_node(req, v);
    case VERIFY_WALLET_HELD:
        return after_wallet(req, v);
    case VERIFY_FRESH:
        break;
    }
    return api_errorf(req, BL_ERROR_INTERNAL_ERROR, "a proof resumed twice");
}
