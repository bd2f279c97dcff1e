/* api — the server and its route table; see api.h. The endpoints are one file each
 * (api_<endpoint>.c); what they share is api_shared.c. */
#include "api/api.h"

#include "api/api_invoice_create.h"
#include "api/api_invoice_get.h"
#include "api/api_invoice_qr.h"
#include "api/api_shared.h"
#include "api/api_tenant.h"
#include "api/api_tenant_rotate.h"
#include "api/api_tiers.h"
#include "api/api_web.h"
#include "api/api_xmr402_challenge.h"
#include "api/api_xmr402_receipt_key.h"
#include "api/api_xmr402_verify.h"
#include "api/fair_share.h"
#include "api/web.h"
#include "wallet/txnode.h"
#include "xg_hex.h"
#include "xg_log.h"

#include <openssl/crypto.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RATE_TABLE_SIZE 4096
/* XMR402 proofs a client address may present: an agent retries every Retry-After while
 * its payment confirms; a flood of bogus proofs must not keep the wallet busy. */
#define XMR402_VERIFY_PER_HOUR 1800
#define XMR402_VERIFY_BURST    60
#define TXNODE_TIMEOUT_MS      2000 /* one get_transactions of one hash */
/* Token rotations a client address may ask for: a tenant needs one when its token leaked;
 * each is a write that every gateway replica reloads. */
#define ROTATE_PER_HOUR 20
#define ROTATE_BURST    5

/* (the bl_xmr402_* and settle.h's queries serve XMR402 proofs: api_xmr402_verify.c) */
static const char *const api_queries[] = {"bl_tiers_public",
                                          "bl_tier_get",
                                          "bl_tenant_by_token_hash",
                                          "bl_tenant_set_subaddress",
                                          "bl_invoice_by_idempotency_key",
                                          "bl_invoice_open_on_subaddress",
                                          "bl_invoice_supersede",
                                          "bl_invoice_insert",
                                          "bl_free_grant_lock",
                                          "bl_free_grant_take",
                                          "bl_invoice_set_tenant",
                                          "bl_tenant_from_invoice",
                                          "bl_invoice_get",
                                          "bl_invoice_payments_list",
                                          "bl_tenant_status",
                                          "bl_tenant_rotate",
                                          "bl_xmr402_invoice_insert",
                                          "bl_xmr402_invoice_on_subaddress",
                                          "bl_xmr402_txid_elsewhere",
                                          "bl_xmr402_payment_of_txid",
                                          "bl_xmr402_payment_double_spend",
                                          "bl_xmr402_payment_upsert",
                                          "bl_xmr402_tenant",
                                          "bl_xmr402_pending_take",
                                          "bl_xmr402_open_challenges",
                                          "bl_invoice_lock",
                                          "bl_invoice_payment_sums",
                                          "bl_invoice_set_state",
                                          "bl_invoice_set_provisioned",
                                          "bl_tenant_renewal_facts",
                                          "bl_tenant_extend",
                                          "bl_hook_event_insert",
                                          "bl_hook_events_list",
                                          NULL};

/* GET /api/invoices/<id> and /api/invoices/<id>/qr.svg share the route's pattern. */
static enum xg_httpd_result api_handle_invoice(const struct xg_httpd_request *req)
{
    const char *rest = req->path + strlen("/api/invoices/");
    return api_invoice_qr_path(rest) ? api_handle_invoice_qr(req) : api_handle_invoice_get(req);
}

static const struct xg_httpd_route api_routes[] = {
    {"GET", "/api/tiers", api_handle_tiers},
    {"POST", "/api/invoices", api_handle_invoice_create},
    {"GET", "/api/invoices/*", api_handle_invoice},
    {"GET", "/api/tenant", api_handle_tenant},
    {"POST", "/api/tenant/rotate", api_handle_tenant_rotate},
    {"POST", "/api/xmr402/challenge", api_handle_xmr402_challenge},
    {"POST", "/api/xmr402/verify", api_handle_xmr402_verify},
    {"GET", "/api/xmr402/receipt-key", api_handle_xmr402_receipt_key},
    {"GET", "/", api_handle_web_page},
    {"GET", "/renew", api_handle_web_page},
    {"GET", "/invoice/*", api_handle_web_page},
    {"GET", "/assets/*", api_handle_web_asset},
    {NULL, NULL, NULL},
};

const char *const api_route_paths[] = {
    "/api/tiers",
    "/api/invoices",
    "/api/invoices/*",
    "/api/tenant",
    "/api/tenant/rotate",
    "/api/xmr402/challenge",
    "/api/xmr402/verify",
    "/api/xmr402/receipt-key",
    "/",
    "/renew",
    "/invoice/*",
    "/assets/*",
    NULL,
};

static void on_answered(void *closure, size_t route, unsigned status, int64_t elapsed_us, int tag)
{
    struct api *api = closure;
    if (atomic_load_explicit(&api->observing, memory_order_acquire))
        api->observer.answered(api->observer.ctx, route, status, (double)elapsed_us / 1e6, tag);
}

void api_observe(struct api *api, const struct api_observer *obs)
{
    if (!obs || !obs->answered || atomic_load(&api->observing))
        return;
    api->observer = *obs;
    atomic_store_explicit(&api->observing, true, memory_order_release);
}

/* The public key of the receipt seed derived from the HA1 key, which signed receipts before
 * [billing] token_key existed: published as retired when asked, so that those receipts
 * still verify. */
static bool retired_receipt_setup(struct api *api, const struct bl_config *cfg)
{
    api->receipt_retired_hex[0] = '\0';
    api->receipt_retired_until = cfg->xmr402_legacy_until_unix;
    if (!cfg->xmr402_legacy_receipt_key)
        return true;
    if ((int64_t)time(NULL) >= api->receipt_retired_until)
        xg_log(XG_LOG_WARN, "legacy_receipt_past",
               "[xmr402] legacy_receipt_until %s has passed: the retired receipt key is no longer "
               "listed; remove legacy_receipt_key",
               cfg->xmr402_legacy_receipt_until);
    uint8_t seed[BL_XMR402_ED25519_LEN];
    struct bl_xmr402_receipt_key *k =
        bl_xmr402_receipt_seed_derive(api->keys.ha1, seed) ? bl_xmr402_receipt_key_new(seed) : NULL;
    OPENSSL_cleanse(seed, sizeof seed);
    bool ok = k && bl_xmr402_receipt_public_hex(k, api->receipt_retired_hex);
    bl_xmr402_receipt_key_free(k);
    return ok;
}

/* The receipt key (configured, else derived from the token key) and the XMR402 policy. */
static bool xmr402_setup(struct api *api, const struct bl_config *cfg)
{
    uint8_t seed[BL_XMR402_ED25519_LEN];
    bool ok = cfg->xmr402_receipt_key[0] ? xg_hex_decode(cfg->xmr402_receipt_key, seed, sizeof seed)
                                         : bl_xmr402_receipt_seed_derive(api->keys.token, seed);
    api->receipt_key = ok ? bl_xmr402_receipt_key_new(seed) : NULL;
    OPENSSL_cleanse(seed, sizeof seed);
    if (!retired_receipt_setup(api, cfg))
        return false;
    api->verify_limit =
        client_limit_table_new(RATE_TABLE_SIZE, XMR402_VERIFY_PER_HOUR, XMR402_VERIFY_BURST,
                               &api->clients, api->network_factor);
    api->xmr402_zero_conf_max = cfg->xmr402_zero_conf_max;
    api->xmr402_retry_after_s = cfg->xmr402_retry_after_ms / 1000;
    api->xmr402_pending_requests = cfg->xmr402_pending_requests;
    api->xmr402_unseen_hold_ms = cfg->xmr402_unseen_hold_ms;
    api->xmr402_max_open_challenges = cfg->xmr402_max_open_challenges;
    api->xmr402_credentials_window_s = cfg->xmr402_credentials_window_ms / 1000;
    api->verify_global = client_limit_table_new(1, cfg->xmr402_verifies_per_second * 3600,
                                                cfg->xmr402_verifies_per_second, NULL, 1);
    api->xmr402_challenge_share = cfg->xmr402_challenge_share;
    /* keyed by network key: a network refills its share of the global rate */
    api->verify_share = client_limit_table_new(
        RATE_TABLE_SIZE,
        fair_share_of(cfg->xmr402_verifies_per_second * 3600, cfg->xmr402_verify_share),
        fair_share_of(cfg->xmr402_verifies_per_second, cfg->xmr402_verify_share), NULL, 1);
    api->txnode = txnode_new(cfg->daemon_url, TXNODE_TIMEOUT_MS);
    api->verify_hold =
        verify_hold_new((size_t)cfg->xmr402_max_held, (size_t)cfg->xmr402_max_held_per_client);
    return api->receipt_key && api->verify_limit && api->verify_global && api->verify_share &&
           api->txnode && api->verify_hold &&
           bl_xmr402_receipt_public_hex(api->receipt_key, api->receipt_public_hex);
}

static void api_free(struct api *api)
{
    pgpool_free(api->pool);
    client_limit_table_free(api->create_limit);
    client_limit_table_free(api->free_limit);
    free(api->realm);
    free(api->gateway_url);
    web_free(api->web);
    bl_xmr402_receipt_key_free(api->receipt_key);
    client_limit_table_free(api->verify_limit);
    client_limit_table_free(api->verify_global);
    client_limit_table_free(api->verify_share);
    txnode_free(api->txnode);
    verify_hold_free(api->verify_hold);
    OPENSSL_cleanse(api->hook_key, sizeof api->hook_key);
    client_limit_table_free(api->rotate_limit);
    bl_keys_wipe(&api->keys);
    free(api);
}

struct api *api_start(const struct api_options *opt, char *err, size_t errlen)
{
    _Static_assert(sizeof api_routes / sizeof api_routes[0] ==
                       sizeof api_route_paths / sizeof api_route_paths[0],
                   "api_route_paths names every route");
    const struct bl_config *cfg = opt->cfg;
    if (!cfg->token_key[0]) {
        snprintf(err, errlen,
                 "[billing] token_key: required to serve (64 hex digits, billing's alone; "
                 "docs/DEPLOYMENT.md, \"Separate keys\")");
        return NULL;
    }
    struct api *api = calloc(1, sizeof *api);
    if (!api) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    api->wallet = opt->wallet;
    api->prices = opt->prices;
    api->invoice_ttl_s = cfg->invoice_ttl_ms / 1000;
    api->late_grace_s = cfg->late_grace_ms / 1000;
    api->hook_allow = cfg->hook_allow_list;
    memcpy(api->hook_key, cfg->hook_key, sizeof api->hook_key);
    api->realm = strdup(cfg->realm);
    api->gateway_url = strdup(cfg->gateway_url);
    api->web = web_new(cfg->web_dir);
    api->pool = pgpool_new(cfg->database_url, api_queries, (size_t)cfg->threads);
    api->clients = (struct client_prefix_policy){
        (int)cfg->clients_ipv4_prefix, (int)cfg->clients_ipv6_prefix,
        (int)cfg->clients_ipv4_network_prefix, (int)cfg->clients_ipv6_network_prefix};
    api->network_factor = cfg->clients_network_factor;
    api->free_bounds = (struct free_grant_bounds){
        cfg->free_network_per_hour, cfg->free_network_per_day, cfg->free_global_per_hour};
    api->create_limit =
        client_limit_table_new(RATE_TABLE_SIZE, cfg->create_per_hour, cfg->create_burst,
                               &api->clients, api->network_factor);
    api->free_limit = client_limit_table_new(RATE_TABLE_SIZE, cfg->free_per_hour, cfg->free_burst,
                                             &api->clients, api->network_factor);
    api->rotate_limit = client_limit_table_new(RATE_TABLE_SIZE, ROTATE_PER_HOUR, ROTATE_BURST,
                                               &api->clients, api->network_factor);
    if (!api->realm || !api->gateway_url || !api->web || !api->pool || !api->create_limit ||
        !api->free_limit || !api->rotate_limit ||
        !bl_keys_parse(&api->keys, cfg->ha1_key, cfg->token_key) ||
        !bl_keys_parse_previous(&api->keys, cfg->ha1_key_previous)) {
        snprintf(err, errlen, "out of memory");
        api_free(api);
        return NULL;
    }
    if (!xmr402_setup(api, cfg)) {
        snprintf(err, errlen, "[xmr402] cannot set up the receipt key");
        api_free(api);
        return NULL;
    }
    struct xg_httpd_options hopt = {
        .bind_addr = cfg->bind,
        .port = (uint16_t)cfg->port,
        .threads = (unsigned)cfg->threads,
        .max_body = (size_t)cfg->max_body,
        .timeout_s = 30,
        .routes = api_routes,
        .trusted_proxies = &cfg->trust,
        .proxy_protocol = cfg->proxy_protocol,
        .guard = {.header_timeout_ms = cfg->header_timeout_ms,
                  .body_grace_ms = cfg->body_grace_ms,
                  .body_min_rate = (uint64_t)cfg->body_min_rate},
        .max_per_address = (size_t)cfg->max_connections_per_address,
        .proxy = {.max_pending = (size_t)cfg->proxy_max_pending,
                  .reserve = (size_t)cfg->proxy_reserve,
                  .per_network = (size_t)cfg->max_connections_per_address,
                  .header_timeout_ms = cfg->proxy_header_timeout_ms,
                  .ipv4_bits = (int)cfg->clients_ipv4_prefix,
                  .ipv6_bits = (int)cfg->clients_ipv6_prefix},
        .closure = api,
        .answered = on_answered,
    };
    api->httpd = xg_httpd_start(&hopt, err, errlen);
    if (!api->httpd) {
        api_free(api);
        return NULL;
    }
    return api;
}

void api_stop(struct api *api)
{
    if (!api)
        return;
    verify_hold_stop(api->verify_hold); /* libmicrohttpd must not stop with suspended ones */
    xg_httpd_stop(api->httpd);
    api_free(api);
}

const struct xg_guard_counts *api_client_counts(const struct api *api)
{
    return xg_httpd_counts(api->httpd);
}

size_t api_held_proofs(const struct api *api)
{
    return api ? verify_hold_count(api->verify_hold) : 0;
}

unsigned api_port(const struct api *api)
{
    return xg_httpd_port(api->httpd);
}
