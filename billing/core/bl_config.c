/* bl_config — billing's configuration keys, declared once. */
#include "core/bl_config.h"

#include "core/bl_keys.h"
#include "xg_hex.h"
#include "xg_proxy_admit.h"
#include "xg_log.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* reload: true when SIGHUP applies the key without a restart; the reload takes it from
 * this table (xg_config_take_reloadable) and billing/main.c's apply_reloadable hands it to what
 * uses it, so a key marked reloadable here must be applied there. */
#define KEY(sec, nm, type, field, def, lo, hi, reload, help)                                       \
    {                                                                                              \
        sec, nm, type, offsetof(struct bl_config, field), sizeof(((struct bl_config *)0)->field),  \
            def, lo, hi, reload, help                                                              \
    }

const struct xg_cfg_key bl_config_keys[] = {
    KEY("server", "bind", XG_CFG_STRING, bind, "127.0.0.1", 0, 0, false,
        "IPv4 or IPv6 address of the public API and web pages (an IPv6 one, :: too, takes IPv6 "
        "alone)"),
    KEY("server", "port", XG_CFG_INT, port, "18085", 1, 65535, false, "public API port"),
    KEY("server", "threads", XG_CFG_INT, threads, "4", 1, 64, false, "API worker threads"),
    KEY("server", "max_body", XG_CFG_SIZE, max_body, "16k", 256, 1 << 20, false,
        "largest API request body (413 beyond)"),
    KEY("server", "trusted_proxies", XG_CFG_STRING, trusted_proxies, "", 0, 0, false,
        "load balancers whose PROXY header and X-Forwarded-For name the client (free-tier "
        "grants and the invoice and XMR402 limits are per client): CIDRs or addresses, "
        "comma-separated (\"\" = none)"),
    KEY("server", "proxy_protocol", XG_CFG_BOOL, proxy_protocol, "false", 0, 0, false,
        "each API connection starts with a PROXY header (v1 or v2); one from outside "
        "trusted_proxies without a valid header is refused"),
    KEY("server", "header_timeout", XG_CFG_DURATION, header_timeout_ms, "10s", 1000, 600000, false,
        "a request head must be complete this long after the connection opened, whatever "
        "trickles in"),
    KEY("server", "body_min_rate", XG_CFG_SIZE, body_min_rate, "1k", 0, 1 << 30, false,
        "bytes per second a request body must average once body_grace is over (0 = any rate)"),
    KEY("server", "body_grace", XG_CFG_DURATION, body_grace_ms, "5s", 0, 600000, false,
        "time a request body may take before body_min_rate applies"),
    KEY("server", "proxy_header_timeout", XG_CFG_DURATION, proxy_header_timeout_ms, "2s", 100,
        60000, false,
        "with proxy_protocol: the PROXY header must be complete this long after accept (a "
        "balancer sends it at connect)"),
    KEY("server", "proxy_max_pending", XG_CFG_INT, proxy_max_pending, "1024", 1, 1000000, false,
        "with proxy_protocol: connections reading their PROXY header at once"),
    KEY("server", "proxy_reserve", XG_CFG_INT, proxy_reserve, "128", 0, 1000000, false,
        "with proxy_protocol: of proxy_max_pending, places only trusted_proxies peers may "
        "take (less than proxy_max_pending)"),
    KEY("server", "max_connections_per_address", XG_CFG_INT, max_connections_per_address, "64", 0,
        1000000, false,
        "connections one client address may hold open; more are refused at accept (0 = no "
        "cap); a trusted_proxies peer counts as the client its PROXY header names, and is "
        "exempt without proxy_protocol"),
    KEY("server", "web_dir", XG_CFG_STRING, web_dir, "web", 0, 0, false,
        "directory of the buy and invoice pages"),
    KEY("admin", "bind", XG_CFG_STRING, admin_bind, "127.0.0.1", 0, 0, false,
        "address of the admin listener (health, readiness, metrics)"),
    KEY("admin", "port", XG_CFG_INT, admin_port, "18086", 1, 65535, false, "admin port"),
    KEY("admin", "token", XG_CFG_STRING, admin_token, "", 0, 0, true,
        "bearer credential for the admin API (\"\" = admin API disabled)"),
    KEY("database", "url", XG_CFG_STRING, database_url, NULL, 0, 0, false,
        "PostgreSQL connection string (required)"),
    KEY("database", "migrations_dir", XG_CFG_STRING, migrations_dir, "migrations", 0, 0, false,
        "directory of the numbered migrations applied by `xmrgate-billing migrate`"),
    KEY("wallet", "url", XG_CFG_STRING, wallet_url, "http://127.0.0.1:18083", 0, 0, false,
        "the view-only monero-wallet-rpc (its base URL)"),
    KEY("wallet", "poll_interval", XG_CFG_DURATION, poll_interval_ms, "10s", 200, 600000, true,
        "time between two get_transfers polls"),
    KEY("wallet", "timeout", XG_CFG_DURATION, wallet_timeout_ms, "30s", 100, 600000, true,
        "deadline for one wallet-rpc call"),
    KEY("wallet", "safety_margin", XG_CFG_INT, safety_margin, "10", 0, 10000, false,
        "blocks re-read below the poll cursor on every poll"),
    KEY("wallet", "max_backoff", XG_CFG_DURATION, max_backoff_ms, "15s", 1000, 600000, false,
        "longest pause between two polls after wallet-rpc or database failures"),
    KEY("wallet", "daemon_url", XG_CFG_STRING, daemon_url, "", 0, 0, false,
        "a monerod to compare the wallet's height with for readiness, and that XMR402 asks "
        "whether a proof's transaction exists before any wallet call (\"\" = neither)"),
    KEY("wallet", "max_lag", XG_CFG_INT, max_lag, "10", 0, 100000, false,
        "readiness fails when the wallet is more blocks than this behind daemon_url"),
    KEY("pricing", "rate_url", XG_CFG_STRING, rate_url, "", 0, 0, false,
        "HTTP JSON exchange-rate source (\"\" = fiat-priced tiers cannot be bought)"),
    KEY("pricing", "rate_path", XG_CFG_STRING, rate_path, "monero.usd", 0, 0, false,
        "dotted path of the rate in the source's JSON (\"\" = the body is the number)"),
    KEY("pricing", "currency", XG_CFG_STRING, rate_currency, "USD", 0, 0, false,
        "the fiat currency the source quotes (ISO 4217)"),
    KEY("pricing", "refresh", XG_CFG_DURATION, rate_refresh_ms, "60s", 1000, 86400000, false,
        "time between two fetches of the rate"),
    KEY("pricing", "max_age", XG_CFG_DURATION, rate_max_age_ms, "10m", 1000, 86400000, false,
        "a rate older than this is no rate: new fiat invoices get 503"),
    KEY("pricing", "timeout", XG_CFG_DURATION, rate_timeout_ms, "5s", 100, 60000, false,
        "deadline for one fetch of the rate"),
    KEY("invoices", "ttl", XG_CFG_DURATION, invoice_ttl_ms, "30m", 1000, 86400000, false,
        "how long a quote is locked: an invoice's expiry"),
    KEY("invoices", "late_grace", XG_CFG_DURATION, late_grace_ms, "24h", 0, 2592000000LL, false,
        "payments this long after expiry that cover the invoice are honoured"),
    KEY("invoices", "create_per_hour", XG_CFG_INT, create_per_hour, "60", 1, 1000000, false,
        "paid invoices a client ([clients] ipv4_prefix, ipv6_prefix) may create per hour on "
        "this instance (token bucket refill; its network gets network_factor times as many)"),
    KEY("invoices", "create_burst", XG_CFG_INT, create_burst, "10", 1, 100000, false,
        "paid invoices a client may create at once"),
    KEY("invoices", "free_per_hour", XG_CFG_INT, free_per_hour, "2", 1, 1000000, false,
        "free-tier tenants a client may create per hour on this instance (besides the shared "
        "free_network_* and free_global_per_hour bounds)"),
    KEY("invoices", "free_burst", XG_CFG_INT, free_burst, "2", 1, 100000, false,
        "free-tier tenants a client may create at once"),
    KEY("invoices", "free_network_per_hour", XG_CFG_INT, free_network_per_hour, "10", 1, 1000000,
        false,
        "free-tier tenants one network ([clients] ipv4_network_prefix, ipv6_network_prefix) "
        "may be granted in any hour, counted in the database over every billing instance"),
    KEY("invoices", "free_network_per_day", XG_CFG_INT, free_network_per_day, "40", 1, 10000000,
        false, "free-tier tenants one network may be granted in any 24 hours, likewise"),
    KEY("invoices", "free_global_per_hour", XG_CFG_INT, free_global_per_hour, "200", 1, 10000000,
        false, "free-tier tenants granted in any hour over all clients and billing instances"),
    KEY("invoices", "free_retention", XG_CFG_DURATION, free_retention_ms, "7d", 60000,
        INT64_C(31536000000), false,
        "a free-tier tenant is deleted this long after its valid_until (by the leader, in "
        "batches; the gateways drop it); paid tenants are never deleted"),
    KEY("usage", "retention", XG_CFG_DURATION, usage_retention_ms, "400d", 0,
        INT64_C(3153600000000), false,
        "usage_daily and usage_regional rows older than this many days (whole days, rounded "
        "up) are deleted by the leader, in batches; 0 keeps them for ever"),
    KEY("clients", "ipv4_prefix", XG_CFG_INT, clients_ipv4_prefix, "32", 1, 32, false,
        "the IPv4 prefix length one client is counted by in every per-client limit (32: each "
        "address; an IPv4-mapped IPv6 address counts as IPv4)"),
    KEY("clients", "ipv6_prefix", XG_CFG_INT, clients_ipv6_prefix, "64", 1, 128, false,
        "the IPv6 prefix length one client is counted by (64: a customer's link)"),
    KEY("clients", "ipv4_network_prefix", XG_CFG_INT, clients_ipv4_network_prefix, "24", 1, 32,
        false,
        "the IPv4 prefix a client's network is counted by, no longer than ipv4_prefix: the "
        "per-network limits ([invoices] free_network_per_hour, network_factor)"),
    KEY("clients", "ipv6_network_prefix", XG_CFG_INT, clients_ipv6_network_prefix, "48", 1, 128,
        false, "the IPv6 prefix a client's network is counted by, no longer than ipv6_prefix"),
    KEY("clients", "network_factor", XG_CFG_INT, clients_network_factor, "8", 1, 1000000, false,
        "a network's in-memory allowance, as a multiple of one client's, in every per-client "
        "limit of an instance (invoices, free grants, token rotations, XMR402)"),
    KEY("gateway", "url", XG_CFG_STRING, gateway_url, "http://127.0.0.1:18089", 0, 0, false,
        "the gateway URL given to buyers"),
    KEY("gateway", "realm", XG_CFG_STRING, realm, "xmrgate", 0, 0, false,
        "the gateway's Digest realm (HA1 covers it: must equal [server] realm there)"),
    KEY("gateway", "ha1_key", XG_CFG_STRING, ha1_key, NULL, 0, 0, false,
        "64 hex digits; wraps each tenant's Digest HA1 and signs the client address of an "
        "XMR402 proof (same as the gateway's [auth] ha1_key)"),
    KEY("gateway", "ha1_key_previous", XG_CFG_STRING, ha1_key_previous, "", 0, 0, false,
        "64 hex digits, only during a key rotation: the ha1_key before; rewrap-ha1 rewrites "
        "the HA1 values wrapped under it, and an XMR402 client address signed with it is "
        "accepted (\"\" = none; docs/OPERATIONS.md)"),
    KEY("billing", "token_key", XG_CFG_STRING, token_key, "", 0, 0, false,
        "64 hex digits, billing's alone (never in a gateway's configuration), not equal to "
        "[gateway] ha1_key; derives the tokens of idempotent and XMR402 purchases (required "
        "to serve; migrate and grant do without)"),
    KEY("xmr402", "receipt_key", XG_CFG_STRING, xmr402_receipt_key, "", 0, 0, false,
        "64 hex digits: the Ed25519 seed that signs XMR402 receipts (\"\" = derived from "
        "[billing] token_key); its public key is at GET /api/xmr402/receipt-key"),
    KEY("xmr402", "legacy_receipt_key", XG_CFG_BOOL, xmr402_legacy_receipt_key, "false", 0, 0,
        false,
        "also publish, as retired, the public key of the receipt seed derived from [gateway] "
        "ha1_key, which signed receipts before [billing] token_key existed (docs/DEPLOYMENT.md); "
        "needs legacy_receipt_until"),
    KEY("xmr402", "legacy_receipt_until", XG_CFG_STRING, xmr402_legacy_receipt_until, "", 0, 0,
        false,
        "YYYY-MM-DD (UTC), at most 366 days ahead: the last day legacy_receipt_key's retired "
        "key is listed; every gateway host can sign receipts with it, backdated too "
        "(docs/SECURITY.md)"),
    KEY("xmr402", "zero_conf_max", XG_CFG_INT, xmr402_zero_conf_max, "0", 0,
        INT64_C(1000000000000000), false,
        "XMR402 invoices up to this many piconero are provisioned at 0 confirmations (0 = off)"),
    KEY("xmr402", "retry_after", XG_CFG_DURATION, xmr402_retry_after_ms, "30s", 1000, 3600000,
        false, "the Retry-After an agent is given while its payment confirms"),
    KEY("xmr402", "pending_requests", XG_CFG_INT, xmr402_pending_requests, "20", 0, 100000, false,
        "requests a proven but unconfirmed XMR402 payment is served, at its tier's rate, until "
        "the tier's confirmations provision it (0 = the strict flow: 202 until then)"),
    KEY("xmr402", "max_open_challenges", XG_CFG_INT, xmr402_max_open_challenges, "2000", 1,
        10000000, false,
        "unpaid, unexpired XMR402 challenges open at once, over all clients (each is a "
        "subaddress and an invoice); beyond it a challenge is refused with 429"),
    KEY("xmr402", "verifies_per_second", XG_CFG_INT, xmr402_verifies_per_second, "10", 1, 10000,
        false,
        "XMR402 proofs checked per second over all clients (each costs wallet calls on the "
        "one wallet-rpc the poller also needs); beyond it 429"),
    KEY("xmr402", "challenge_share", XG_CFG_INT, xmr402_challenge_share, "5", 1, 100, false,
        "percent of max_open_challenges one network ([clients] ipv4_network_prefix, "
        "ipv6_network_prefix) may hold open, at least one; beyond it 429 rate_limited"),
    KEY("xmr402", "verify_share", XG_CFG_INT, xmr402_verify_share, "10", 1, 100, false,
        "percent of verifies_per_second one network ([clients] ipv4_network_prefix, "
        "ipv6_network_prefix) may use, at least one a second; beyond it 429 rate_limited"),
    KEY("xmr402", "credentials_window", XG_CFG_DURATION, xmr402_credentials_window_ms, "24h", 60000,
        INT64_C(2592000000), false,
        "how long after provisioning the same proof still returns the tenant's token (later it "
        "is still served as the tenant, but the token is not shown again)"),
    KEY("xmr402", "unseen_hold", XG_CFG_DURATION, xmr402_unseen_hold_ms, "8s", 0, 12000, false,
        "how long a proof waits for the view-only wallet to see its transaction before billing "
        "answers \"not visible yet, retry\" (never \"pay\"); under the gateway's 15 s wait"),
    KEY("xmr402", "max_held_proofs", XG_CFG_INT, xmr402_max_held, "64", 1, 100000, false,
        "XMR402 proofs waiting at once, over all clients, for a transaction not visible yet "
        "(unseen_hold; a waiting proof holds no thread and no database connection); beyond it "
        "503 verify_busy with Retry-After"),
    KEY("xmr402", "max_held_per_client", XG_CFG_INT, xmr402_max_held_per_client, "4", 1, 100000,
        false,
        "XMR402 proofs one client address may have waiting at once (unseen_hold); beyond it 429 "
        "rate_limited with Retry-After"),
    KEY("webhooks", "allow", XG_CFG_STRING, hook_allow, "", 0, 0, false,
        "webhook targets allowed although they are loopback, private, link-local or otherwise "
        "not public: CIDRs or addresses, comma-separated (\"\" = public addresses only)"),
    KEY("webhooks", "secret_key", XG_CFG_STRING, hook_secret_key, "", 0, 0, false,
        "64 hex digits: the key each invoice's webhook secret is derived from (\"\" = derived "
        "from [billing] token_key); changing it changes every secret"),
    KEY("webhooks", "retry_base", XG_CFG_DURATION, hook_retry_base_ms, "10s", 100, 3600000, false,
        "pause after a webhook's first failed attempt; it doubles at each further failure"),
    KEY("webhooks", "retry_cap", XG_CFG_DURATION, hook_retry_cap_ms, "1h", 100, 86400000, false,
        "longest pause between two attempts of a webhook"),
    KEY("webhooks", "retry_for", XG_CFG_DURATION, hook_retry_for_ms, "24h", 1000,
        INT64_C(604800000), false,
        "a webhook event not delivered this long after it happened "
        "is given up (failed)"),
    KEY("webhooks", "timeout", XG_CFG_DURATION, hook_timeout_ms, "10s", 500, 60000, false,
        "deadline for one delivery, connecting included"),
    KEY("webhooks", "max_response", XG_CFG_SIZE, hook_max_response, "64k", 1024, 1 << 20, false,
        "largest receiver answer read; a longer one fails the attempt"),
    KEY("webhooks", "poll_interval", XG_CFG_DURATION, hook_poll_interval_ms, "1s", 100, 60000,
        false, "how often the sender looks for due webhook events"),
    KEY("webhooks", "senders", XG_CFG_INT, hook_senders, "4", 1, 64, false,
        "sender threads per instance, each with a database connection: a dead receiver holds "
        "at most per_destination of them"),
    KEY("webhooks", "per_destination", XG_CFG_INT, hook_per_destination, "1", 1, 64, false,
        "attempts to one destination (host and port) under way at once on an instance"),
    KEY("webhooks", "breaker_threshold", XG_CFG_INT, hook_breaker_threshold, "5", 1, 1000, false,
        "failed attempts in a row (timeout, no connection, TLS, 5xx) after which a "
        "destination's events wait breaker_cooldown unsent"),
    KEY("webhooks", "breaker_cooldown", XG_CFG_DURATION, hook_breaker_cooldown_ms, "30s", 100,
        3600000, false,
        "how long an opened breaker holds a destination's events; a failed probe doubles it"),
    KEY("webhooks", "breaker_cooldown_max", XG_CFG_DURATION, hook_breaker_cooldown_max_ms, "30m",
        100, 86400000, false, "the longest a breaker's cooldown grows to"),
    KEY("xmr402", "challenge_retention", XG_CFG_DURATION, xmr402_challenge_retention_ms, "7d",
        60000, INT64_C(31536000000), false,
        "an XMR402 challenge that expired with nothing paid is deleted this long after its "
        "expiry, and never before [invoices] late_grace has passed (its subaddress stays in the "
        "wallet)"),
    KEY("log", "level", XG_CFG_STRING, log_level, "info", 0, 0, true, "debug, info, warn or error"),
};
const size_t bl_config_key_count = sizeof bl_config_keys / sizeof bl_config_keys[0];

/* [webhooks] secret_key, or the key derived from [billing] token_key (checked before),
 * which the gateways never hold. Without either (migrate, grant: billing refuses to serve
 * without token_key) the key stays zero and no webhook is signed. */
/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = y / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

bool bl_config_day_end(const char *text, int64_t *end_unix)
{
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, m, d, n = 0;
    if (!text || strlen(text) != 10 || sscanf(text, "%4d-%2d-%2d%n", &y, &m, &d, &n) != 3 ||
        n != 10 || text[4] != '-' || text[7] != '-' || y < 2000 || y > 9999 || m < 1 || m > 12 ||
        d < 1 || d > mdays[m - 1])
        return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (m == 2 && d == 29 && !leap)
        return false;
    *end_unix = (days_from_civil(y, m, d) + 1) * 86400;
    return true;
}

/* legacy_receipt_key lists a key every gateway host can derive: only with a cut-off date,
 * no more than BL_CONFIG_LEGACY_RECEIPT_MAX_DAYS ahead. A date past already is accepted
 * (a restart after it must not fail): the key is then no longer listed. */
static bool legacy_receipt_ok(struct bl_config *cfg, char *err, size_t errlen)
{
    cfg->xmr402_legacy_until_unix = 0;
    const char *until = cfg->xmr402_legacy_receipt_until;
    if (!cfg->xmr402_legacy_receipt_key) {
        if (!until[0])
            return true;
        snprintf(err, errlen, "[xmr402] legacy_receipt_until: set without legacy_receipt_key");
        return false;
    }
    if (!until[0]) {
        snprintf(err, errlen,
                 "[xmr402] legacy_receipt_key: needs legacy_receipt_until (YYYY-MM-DD), the last "
                 "day the retired key is listed: every gateway host can sign receipts with it, "
                 "backdated too (docs/SECURITY.md)");
        return false;
    }
    if (!bl_config_day_end(until, &cfg->xmr402_legacy_until_unix)) {
        snprintf(err, errlen, "[xmr402] legacy_receipt_until: expected a date YYYY-MM-DD");
        return false;
    }
    if (cfg->xmr402_legacy_until_unix >
        (int64_t)time(NULL) + BL_CONFIG_LEGACY_RECEIPT_MAX_DAYS * 86400) {
        snprintf(err, errlen, "[xmr402] legacy_receipt_until: at most %d days ahead",
                 BL_CONFIG_LEGACY_RECEIPT_MAX_DAYS);
        return false;
    }
    return true;
}

static bool hook_key(struct bl_config *cfg)
{
    if (cfg->hook_secret_key[0])
        return xg_hex_decode(cfg->hook_secret_key, cfg->hook_key, sizeof cfg->hook_key);
    if (!cfg->token_key[0])
        return true;
    uint8_t token[32];
    bool ok = xg_hex_decode(cfg->token_key, token, sizeof token) &&
              bl_keys_hook_key_derive(token, cfg->hook_key);
    memset(token, 0, sizeof token);
    return ok;
}

bool bl_config_load(struct bl_config *cfg, const char *path, char *err, size_t errlen)
{
    if (!xg_config_load(bl_config_keys, bl_config_key_count, cfg, path, NULL, err, errlen))
        return false;
    enum xg_log_level level;
    if (!xg_log_level_parse(cfg->log_level, &level)) {
        snprintf(err, errlen, "[log] level: expected debug, info, warn or error, got \"%s\"",
                 cfg->log_level);
        goto bad;
    }
    if (strlen(cfg->rate_currency) != 3 || strcmp(cfg->rate_currency, "XMR") == 0) {
        snprintf(err, errlen, "[pricing] currency: expected a fiat ISO 4217 code such as USD");
        goto bad;
    }
    if (!xg_hex_ok(cfg->ha1_key, 32)) {
        snprintf(err, errlen, "[gateway] ha1_key: expected 64 hex digits");
        goto bad;
    }
    if (cfg->ha1_key_previous[0] && !xg_hex_ok(cfg->ha1_key_previous, 32)) {
        snprintf(err, errlen, "[gateway] ha1_key_previous: expected 64 hex digits");
        goto bad;
    }
    if (strcasecmp(cfg->ha1_key_previous, cfg->ha1_key) == 0) {
        snprintf(err, errlen, "[gateway] ha1_key_previous: must differ from [gateway] ha1_key");
        goto bad;
    }
    if (cfg->token_key[0] && strcasecmp(cfg->token_key, cfg->ha1_key_previous) == 0) {
        snprintf(err, errlen,
                 "[billing] token_key: must differ from [gateway] ha1_key_previous, which the "
                 "gateways hold");
        goto bad;
    }
    if (cfg->token_key[0] && !xg_hex_ok(cfg->token_key, 32)) {
        snprintf(err, errlen, "[billing] token_key: expected 64 hex digits");
        goto bad;
    }
    if (strcasecmp(cfg->token_key, cfg->ha1_key) == 0) {
        snprintf(err, errlen,
                 "[billing] token_key: must differ from [gateway] ha1_key, which the gateways "
                 "hold");
        goto bad;
    }
    if (cfg->xmr402_receipt_key[0] && !xg_hex_ok(cfg->xmr402_receipt_key, 32)) {
        snprintf(err, errlen, "[xmr402] receipt_key: expected 64 hex digits");
        goto bad;
    }
    if (!legacy_receipt_ok(cfg, err, errlen))
        goto bad;
    if (!xg_proxy_settings_check(cfg->trusted_proxies, cfg->proxy_reserve, cfg->proxy_max_pending,
                                 cfg->proxy_protocol, &cfg->trust, err, errlen))
        goto bad;
    char why[160];
    if (!xg_proxy_trust_parse(cfg->hook_allow, &cfg->hook_allow_list, why, sizeof why)) {
        snprintf(err, errlen, "[webhooks] allow: %s", why);
        goto bad;
    }
    if (cfg->hook_retry_cap_ms < cfg->hook_retry_base_ms) {
        snprintf(err, errlen, "[webhooks] retry_cap: must not be below retry_base");
        goto bad;
    }
    if (cfg->clients_ipv4_network_prefix > cfg->clients_ipv4_prefix ||
        cfg->clients_ipv6_network_prefix > cfg->clients_ipv6_prefix) {
        snprintf(err, errlen,
                 "[clients] ipv4_network_prefix, ipv6_network_prefix: a network prefix must not "
                 "be longer than its client prefix (ipv4_prefix, ipv6_prefix)");
        goto bad;
    }
    if (!hook_key(cfg)) {
        snprintf(err, errlen, "[webhooks] secret_key: expected 64 hex digits");
        goto bad;
    }
    return true;
bad:
    bl_config_free(cfg);
    return false;
}

void bl_config_free(struct bl_config *cfg)
{
    xg_config_free(bl_config_keys, bl_config_key_count, cfg);
}
