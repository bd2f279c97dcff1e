/* bl_config — billing's configuration: its key table and the struct it fills.
 * Strings are owned by the struct (bl_config_free). See README "Configuration". */
#ifndef BL_CONFIG_H
#define BL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xg_config.h"
#include "xg_proxy_addr.h"

struct bl_config {
    /* [server]: the public API and web pages */
    char *bind;
    int64_t port;
    int64_t threads;
    int64_t max_body;
    int64_t header_timeout_ms, body_grace_ms, body_min_rate; /* slow clients (xg_guard.h) */
    int64_t max_connections_per_address;
    char *web_dir;
    char *trusted_proxies; /* as configured; parsed into trust */
    bool proxy_protocol;   /* a PROXY header starts each API connection */
    int64_t proxy_header_timeout_ms, proxy_max_pending, proxy_reserve; /* xg_proxy_admit.h */
    /* [admin] */
    char *admin_bind;
    int64_t admin_port;
    char *admin_token;
    /* [database] */
    char *database_url;
    char *migrations_dir;
    /* [wallet]: the view-only monero-wallet-rpc */
    char *wallet_url;
    int64_t poll_interval_ms;
    int64_t wallet_timeout_ms;
    int64_t safety_margin;
    int64_t max_backoff_ms;
    char *daemon_url;
    int64_t max_lag;
    /* [pricing]: the exchange-rate source for fiat-priced tiers (pricing.h) */
    char *rate_url;
    char *rate_path;
    char *rate_currency;
    int64_t rate_refresh_ms;
    int64_t rate_max_age_ms;
    int64_t rate_timeout_ms;
    /* [invoices] */
    int64_t invoice_ttl_ms;
    int64_t late_grace_ms;
    int64_t create_per_hour;
    int64_t create_burst;
    int64_t free_per_hour;
    int64_t free_burst;
    int64_t free_network_per_hour; /* free tenants per network key, all replicas (free_grant.h) */
    int64_t free_network_per_day;
    int64_t free_global_per_hour;
    int64_t free_retention_ms;  /* a lapsed free tenant is deleted this long past valid_until */
    int64_t usage_retention_ms; /* usage_daily / usage_regional rows kept; 0: for ever */
    /* [clients]: what one client is, for every per-client rule (billing/api/client_prefix.h) */
    int64_t clients_ipv4_prefix, clients_ipv6_prefix;
    int64_t clients_ipv4_network_prefix, clients_ipv6_network_prefix;
    int64_t clients_network_factor;
    /* [gateway]: what buyers are told to connect to, and the credential keys it shares */
    char *gateway_url;
    char *realm;
    char *ha1_key;
    char *ha1_key_previous; /* "" or 64 hex: the ha1_key before, during a rotation */
    /* [billing]: billing's own secrets, never in a gateway's configuration (bl_keys.h) */
    char *token_key;
    /* [xmr402]: agents buying through HTTP 402 (billing/api/api_xmr402.h) */
    char *xmr402_receipt_key;
    bool xmr402_legacy_receipt_key;
    char *xmr402_legacy_receipt_until; /* "YYYY-MM-DD": the retired key's last day listed */
    int64_t xmr402_legacy_until_unix;  /* the day after it, 00:00 UTC (0: none) */
    int64_t xmr402_zero_conf_max;
    int64_t xmr402_retry_after_ms;
    int64_t xmr402_pending_requests;
    int64_t xmr402_unseen_hold_ms;
    int64_t xmr402_max_open_challenges;
    int64_t xmr402_verifies_per_second;
    int64_t xmr402_credentials_window_ms;
    int64_t xmr402_max_held, xmr402_max_held_per_client; /* proofs waiting (verify_hold.h) */
    int64_t xmr402_challenge_share, xmr402_verify_share; /* one network's % (fair_share.h) */
    /* [webhooks]: events for programs that buy through the API (billing/hook_*.h) */
    char *hook_allow; /* as configured; parsed into hook_allow_list */
    char *hook_secret_key;
    int64_t hook_retry_base_ms;
    int64_t hook_retry_cap_ms;
    int64_t hook_retry_for_ms;
    int64_t hook_timeout_ms;
    int64_t hook_max_response;
    int64_t hook_poll_interval_ms;
    int64_t hook_senders, hook_per_destination; /* hook_sender.h */
    int64_t hook_breaker_threshold, hook_breaker_cooldown_ms, hook_breaker_cooldown_max_ms;
    int64_t xmr402_challenge_retention_ms;
    /* [log] */
    char *log_level;

    struct xg_proxy_trust trust;           /* trusted_proxies, parsed by bl_config_load */
    struct xg_proxy_trust hook_allow_list; /* [webhooks] allow, parsed by bl_config_load */
    uint8_t
        hook_key[32]; /* [webhooks] secret_key, or derived from [billing] token_key (hook_sign.h) */
};

extern const struct xg_cfg_key bl_config_keys[];
extern const size_t bl_config_key_count;

__attribute__((warn_unused_result)) bool bl_config_load(struct bl_config *cfg, const char *path,
                                                        char *err, size_t errlen);
void bl_config_free(struct bl_config *cfg);

/* Pure: a "YYYY-MM-DD" day (UTC, a real date of 2000..9999) into *end_unix, the unix time
 * the day ends (the next day's 00:00 UTC). False when text is no such date. */
__attribute__((warn_unused_result)) bool bl_config_day_end(const char *text, int64_t *end_unix);

/* The longest a retired receipt key may stay listed after billing starts. */
#define BL_CONFIG_LEGACY_RECEIPT_MAX_DAYS 366

#endif
