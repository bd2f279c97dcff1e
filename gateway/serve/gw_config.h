/* gw_config — the gateway's configuration: its key table and the struct it fills.
 * Strings are owned by the struct (gw_config_free). See README "Configuration". */
#ifndef GW_CONFIG_H
#define GW_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodes/fit.h"
#include "nodes/tls_pin.h"
#include "xg_config.h"
#include "xg_proxy_addr.h"

struct gw_config {
    /* [server]: the tenant-facing listener */
    char *bind;
    int64_t port;
    char *tls_cert; /* "" = plain HTTP */
    char *tls_key;
    int64_t loops;         /* event loops (threads) serving clients and nodes */
    char *front_end;       /* "native" or "libmicrohttpd" (plain HTTP; HTTPS is libmicrohttpd) */
    char *trusted_proxies; /* as configured; parsed into trust */
    bool proxy_protocol;   /* a PROXY header starts each connection (every front end) */
    int64_t proxy_header_timeout_ms, proxy_max_pending, proxy_reserve; /* xg_proxy_admit.h */
    int64_t max_body;
    int64_t connection_timeout_ms;
    int64_t header_timeout_ms, body_grace_ms, body_min_rate; /* slow clients (xg_guard.h) */
    int64_t body_window_ms, body_timeout_ms, send_min_rate;
    int64_t send_buffer; /* SO_SNDBUF of the own front end's connections; 0: the kernel's */
    int64_t max_connections_per_address;
    int64_t request_timeout_ms;
    char *realm;
    char *renew_url;
    /* [auth] */
    char *ha1_key;          /* 64 hex: unwraps the stored Digest HA1, signs an XMR402 client
                               address (same key as billing; billing's token key is not here) */
    char *ha1_key_previous; /* "" or 64 hex: also unwraps HA1 during a key rotation */
    char *nonce_secret;     /* shared by replicas so a nonce from one validates on another */
    int64_t nonce_lifetime_ms;
    /* [admin] */
    char *admin_bind;
    int64_t admin_port;
    char *admin_token;
    /* [database] */
    char *database_url;
    /* [nodes] */
    int64_t max_connections_per_node;
    int64_t node_timeout_ms;
    int64_t node_connect_timeout_ms;
    char *node_ca_file;            /* "" = the system's CA store, for https:// nodes */
    char *node_tls_fingerprints;   /* as written; parsed into node_tls_pins by gw_config_load */
    char *node_zmq;                /* name=tcp://host:port pairs (nodes/blockpub.h); "" = off */
    struct tls_pins node_tls_pins; /* certificates https:// nodes may present without a CA */
    char *node_network;            /* as written; parsed into node_fit by gw_config_load */
    char *node_min_rpc_version;    /* likewise */
    bool node_require_restricted;
    struct fit_settings node_fit; /* what a node must be to be healthy (nodes/fit.h) */
    int64_t probe_interval_ms;
    int64_t probe_timeout_ms;
    int64_t historical_lag;
    int64_t cooldown_base_ms;
    int64_t cooldown_ceiling_ms;
    int64_t breaker_failures;
    int64_t breaker_open_ms;
    int64_t hedge_floor_ms;
    int64_t hedge_cap_ms;
    int64_t hedge_budget_pct;
    int64_t mismatch_limit;      /* checked answers at odds with the other nodes' (honesty.h) */
    bool serve_unverified;       /* a checked read only one own node could answer */
    int64_t tip_wait_ms;         /* a read waits this long for a node at the tenant's tip */
    int64_t read_your_writes_ms; /* after a tenant's broadcast; 0 = off */
    int64_t cache_size;
    int64_t cache_min_depth;
    /* [limits] */
    bool limits_enabled;         /* burst rate and daily quota; off only to measure their cost */
    int64_t limits_max_delay_ms; /* longest hold of a request over its burst bucket */
    bool limits_share_burst;     /* each replica takes 1/N of a burst (limits/fleet.h) */
    /* [xmr402]: agents buying access with HTTP 402 (gateway/serve/xmr402_flow.h) */
    bool xmr402_enabled;
    char *xmr402_billing_url;  /* billing's API base, for challenges and proofs */
    char *xmr402_public_url;   /* billing as agents reach it, for status URLs ("" = billing_url) */
    char *xmr402_default_tier; /* what a bare 402 sells */
    int64_t xmr402_max_proof;  /* longest proof accepted in Authorization: XMR402 */
    int64_t xmr402_streams;    /* event streams open at once (0: no features="sse") */
    int64_t xmr402_streams_per_payment; /* of them, one payment's (xmr402_streams.h) */
    int64_t xmr402_stream_max_ms;       /* longest event stream */
    int64_t xmr402_stream_keepalive_ms; /* between keep-alive comments */
    /* [log] */
    char *log_level;
    int64_t slow_request_ms; /* requests at least this slow are summed up per method */

    struct xg_proxy_trust trust; /* trusted_proxies, parsed by gw_config_load */
};

extern const struct xg_cfg_key gw_config_keys[];
extern const size_t gw_config_key_count;

/* Loads and validates; on failure false with the message in err. */
__attribute__((warn_unused_result)) bool gw_config_load(struct gw_config *cfg, const char *path,
                                                        char *err, size_t errlen);
void gw_config_free(struct gw_config *cfg);

#endif
