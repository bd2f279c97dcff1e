/* gw_config — the gateway's configuration keys, declared once. */
#include "xg_config.h"

#include "serve/gw_config.h"
#include "nodes/blockpub.h"
#include "nodes/fit.h"
#include "xg_hex.h"
#include "xg_proxy_admit.h"
#include "xg_log.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* reload: true when SIGHUP applies the key without a restart; the reload takes it from
 * this table (xg_config_take_reloadable) and gateway/main.c's apply_reloadable hands it to what
 * uses it, so a key marked reloadable here must be applied there. */
#define KEY(sec, nm, type, field, def, lo, hi, reload, help)                                       \
    {                                                                                              \
        sec, nm, type, offsetof(struct gw_config, field), sizeof(((struct gw_config *)0)->field),  \
            def, lo, hi, reload, help                                                              \
    }

const struct xg_cfg_key gw_config_keys[] = {
    KEY("server", "bind", XG_CFG_STRING, bind, "127.0.0.1", 0, 0, false,
        "IPv4 or IPv6 address the tenant-facing listener binds to (an IPv6 one, :: too, takes "
        "IPv6 alone)"),
    KEY("server", "port", XG_CFG_INT, port, "18089", 1, 65535, false, "tenant-facing port"),
    KEY("server", "tls_cert", XG_CFG_STRING, tls_cert, "", 0, 0, false,
        "PEM certificate; with tls_key serves HTTPS instead of HTTP (SIGHUP reads the file again)"),
    KEY("server", "tls_key", XG_CFG_STRING, tls_key, "", 0, 0, false, "PEM private key"),
    KEY("server", "loops", XG_CFG_INT, loops, "2", 1, 16, false,
        "event loops, one thread each, serving clients and nodes on the shared port"),
    KEY("server", "front_end", XG_CFG_STRING, front_end, "native", 0, 0, false,
        "plain HTTP served by the gateway's own HTTP/1.1 front end (native) or by "
        "libmicrohttpd; HTTPS is always libmicrohttpd"),
    KEY("server", "trusted_proxies", XG_CFG_STRING, trusted_proxies, "", 0, 0, false,
        "load balancers whose PROXY header and X-Forwarded-For name the client: CIDRs or "
        "addresses, IPv4 or IPv6, comma-separated (\"\" = none)"),
    KEY("server", "proxy_protocol", XG_CFG_BOOL, proxy_protocol, "false", 0, 0, false,
        "each connection starts with a PROXY header (v1 or v2; before TLS on HTTPS); one "
        "from outside trusted_proxies without a valid header is refused"),
    KEY("server", "max_body", XG_CFG_SIZE, max_body, "1m", 1024, 64 << 20, false,
        "largest request body accepted (413 beyond)"),
    KEY("server", "connection_timeout", XG_CFG_DURATION, connection_timeout_ms, "30s", 1000,
        3600000, false,
        "a client connection without a byte in either direction for this long is "
        "closed (between requests too)"),
    KEY("server", "header_timeout", XG_CFG_DURATION, header_timeout_ms, "10s", 1000, 600000, false,
        "a request head (and a PROXY header) must be complete this long after its first byte, "
        "whatever trickles in (408)"),
    KEY("server", "body_min_rate", XG_CFG_SIZE, body_min_rate, "1k", 0, 1 << 30, false,
        "bytes per second a request body must keep up over the last body_window once "
        "body_grace is over (408; 0 = any rate)"),
    KEY("server", "body_grace", XG_CFG_DURATION, body_grace_ms, "5s", 0, 600000, false,
        "time a request body (or an answer) may take before body_min_rate (send_min_rate) "
        "applies"),
    KEY("server", "body_window", XG_CFG_DURATION, body_window_ms, "10s", 1000, 600000, false,
        "the sliding window body_min_rate and send_min_rate are judged over: bytes buy time "
        "at the rate, never more than this far ahead"),
    KEY("server", "body_timeout", XG_CFG_DURATION, body_timeout_ms, "60s", 0, 3600000, false,
        "a request body must be complete this long after the head, whatever its rate (408; "
        "0 = no deadline)"),
    KEY("server", "send_min_rate", XG_CFG_SIZE, send_min_rate, "1k", 0, 1 << 30, false,
        "bytes per second a client must take an answer at over the last body_window once "
        "body_grace is over, or it is closed (own front end; libmicrohttpd closes on "
        "connection_timeout; 0 = any rate)"),
    KEY("server", "send_buffer", XG_CFG_SIZE, send_buffer, "0", 0, 64 << 20, false,
        "kernel send buffer of each client connection on the own front end (SO_SNDBUF; 0 = "
        "the kernel's autotuning, which may take megabytes of an answer a slow reader never "
        "reads, beyond send_min_rate)"),
    KEY("server", "proxy_header_timeout", XG_CFG_DURATION, proxy_header_timeout_ms, "2s", 100,
        60000, false,
        "with proxy_protocol on the libmicrohttpd front ends (HTTPS, front_end = "
        "libmicrohttpd): the PROXY header must be complete this long after accept (a "
        "balancer sends it at connect; the own front end reads it under header_timeout)"),
    KEY("server", "proxy_max_pending", XG_CFG_INT, proxy_max_pending, "1024", 1, 1000000, false,
        "with proxy_protocol on the libmicrohttpd front ends: connections reading their PROXY "
        "header at once, per loop"),
    KEY("server", "proxy_reserve", XG_CFG_INT, proxy_reserve, "128", 0, 1000000, false,
        "with proxy_protocol: of proxy_max_pending, places only trusted_proxies peers may "
        "take (less than proxy_max_pending)"),
    KEY("server", "max_connections_per_address", XG_CFG_INT, max_connections_per_address, "64", 0,
        1000000, false,
        "connections one client address may hold open; more are refused at accept (0 = no "
        "cap); a trusted_proxies peer counts as the client its PROXY header names, and is "
        "exempt without one"),
    KEY("server", "request_timeout", XG_CFG_DURATION, request_timeout_ms, "20s", 100, 600000, false,
        "deadline for answering one request, retries included"),
    KEY("server", "realm", XG_CFG_STRING, realm, "xmrgate", 0, 0, false,
        "realm of the Digest and Basic challenges"),
    KEY("server", "renew_url", XG_CFG_STRING, renew_url, "", 0, 0, false,
        "the billing page where an expired tenant renews, named in the refusal"),
    KEY("auth", "ha1_key", XG_CFG_STRING, ha1_key, NULL, 0, 0, false,
        "64 hex digits; the key billing wraps each tenant's Digest HA1 with, and signs an "
        "XMR402 agent's address for billing with (required)"),
    KEY("auth", "ha1_key_previous", XG_CFG_STRING, ha1_key_previous, "", 0, 0, false,
        "64 hex digits, only during a key rotation: the ha1_key before; a stored Digest HA1 "
        "that does not unwrap under ha1_key is unwrapped under it (\"\" = none; "
        "docs/OPERATIONS.md)"),
    KEY("auth", "nonce_secret", XG_CFG_STRING, nonce_secret, "", 0, 0, false,
        "hex secret for Digest nonces; set the same on every replica (\"\" = random per process)"),
    KEY("auth", "nonce_lifetime", XG_CFG_DURATION, nonce_lifetime_ms, "5m", 1000, 86400000, false,
        "age after which a Digest nonce is stale"),
    KEY("admin", "bind", XG_CFG_STRING, admin_bind, "127.0.0.1", 0, 0, false,
        "address of the admin listener (health, readiness, metrics, admin API)"),
    KEY("admin", "port", XG_CFG_INT, admin_port, "18090", 1, 65535, false, "admin port"),
    KEY("admin", "token", XG_CFG_STRING, admin_token, "", 0, 0, true,
        "bearer credential for the admin API (\"\" = admin API disabled); /healthz, /readyz "
        "and /metrics need none"),
    KEY("database", "url", XG_CFG_STRING, database_url, NULL, 0, 0, false,
        "PostgreSQL connection string (required)"),
    KEY("nodes", "max_connections_per_node", XG_CFG_INT, max_connections_per_node, "16", 1, 256,
        false, "keep-alive pool size per node; monerod resets connections over its per-IP cap"),
    KEY("nodes", "timeout", XG_CFG_DURATION, node_timeout_ms, "10s", 100, 600000, false,
        "deadline for one node answer"),
    KEY("nodes", "connect_timeout", XG_CFG_DURATION, node_connect_timeout_ms, "1s", 50, 60000,
        false, "deadline for connecting to a node"),
    KEY("nodes", "ca_file", XG_CFG_STRING, node_ca_file, "", 0, 0, false,
        "PEM certificates that https:// nodes are verified against (\"\" = the system's "
        "store); e.g. a node's own self-signed certificate"),
    KEY("nodes", "tls_fingerprints", XG_CFG_STRING, node_tls_fingerprints, "", 0, 0, false,
        "SHA-256 fingerprints of node certificates accepted without a CA and host name check "
        "(what wallets call --daemon-ssl-allowed-fingerprints: the whole certificate's, as "
        "openssl x509 -fingerprint -sha256 prints it), separated by commas"),
    KEY("nodes", "zmq", XG_CFG_STRING, node_zmq, "", 0, 0, false,
        "ZMQ publishers of the nodes, as name=tcp://host:port pairs by node name separated by "
        "commas (monerod --zmq-pub): a node's new block is probed at once instead of at the "
        "next probe interval (\"\" = probes only)"),
    KEY("nodes", "probe_interval", XG_CFG_DURATION, probe_interval_ms, "2s", 100, 60000, false,
        "how often every node is probed (get_info, get_last_block_header); also how long a "
        "tip answer is served from the cache"),
    KEY("nodes", "probe_timeout", XG_CFG_DURATION, probe_timeout_ms, "1500ms", 50, 60000, false,
        "hard deadline of one probe call; no answer in time counts as a failed probe"),
    KEY("nodes", "network", XG_CFG_STRING, node_network, "any", 0, 0, false,
        "the network every node must be on (get_info nettype): mainnet, stagenet, testnet or "
        "regtest; a node on another is never healthy (any = no check)"),
    KEY("nodes", "min_rpc_version", XG_CFG_STRING, node_min_rpc_version, "", 0, 0, false,
        "lowest RPC version (get_version, MAJOR.MINOR: 0.18.0 is 3.10, 0.18.4 is 3.14) a node "
        "must have to be healthy (\"\" = any)"),
    KEY("nodes", "require_restricted", XG_CFG_BOOL, node_require_restricted, "false", 0, 0, false,
        "only nodes in restricted RPC mode (monerod --restricted-rpc) may be healthy"),
    KEY("nodes", "historical_lag", XG_CFG_INT, historical_lag, "5", 0, 1000, false,
        "blocks a node may lag behind the quorum tip and still serve historical reads"),
    KEY("nodes", "cooldown", XG_CFG_DURATION, cooldown_base_ms, "1m", 1000, 86400000, false,
        "a node down this long is probed less often: after this, then twice as long each time"),
    KEY("nodes", "cooldown_ceiling", XG_CFG_DURATION, cooldown_ceiling_ms, "17h", 1000,
        INT64_C(30) * 86400000, false,
        "a node failing this long leaves rotation until an operator re-enables it (any "
        "UPDATE of its row in the nodes table)"),
    KEY("nodes", "breaker_failures", XG_CFG_INT, breaker_failures, "3", 1, 1000, false,
        "client requests failing in a row on a node that pause it (circuit breaker)"),
    KEY("nodes", "breaker_open", XG_CFG_DURATION, breaker_open_ms, "5s", 100, 3600000, false,
        "how long a paused node gets no client request before one trial request"),
    KEY("nodes", "hedge_floor", XG_CFG_DURATION, hedge_floor_ms, "50ms", 1, 600000, false,
        "a read is asked of the next node when its node has not answered within that node's "
        "p95 latency, but never sooner than this"),
    KEY("nodes", "hedge_cap", XG_CFG_DURATION, hedge_cap_ms, "500ms", 1, 600000, false,
        "a hedged read goes out at the latest this long after its first node was asked (also "
        "the delay for a node with no latency history)"),
    KEY("nodes", "hedge_budget", XG_CFG_INT, hedge_budget_pct, "5", 0, 100, false,
        "hedged reads per 100 reads at most, a burst of 50 saved up; 0 = never hedge"),
    KEY("nodes", "mismatch_limit", XG_CFG_INT, mismatch_limit, "3", 1, 16, false,
        "answers to get_outs, the output distribution or the fee estimate that differ from "
        "two other own nodes' agreeing answers within an hour (each counted once the quorum "
        "tip it was seen at has held for probe_interval + probe_timeout + 5 s) that take a "
        "node out of service (for cooldown, doubling each time it happens again, up to "
        "cooldown_ceiling)"),
    KEY("nodes", "serve_unverified", XG_CFG_BOOL, serve_unverified, "true", 0, 0, false,
        "when only one own node can answer get_outs, the output distribution or the fee "
        "estimate: true = serve its answer marked X-Xmrgate-Unverified (never cached), false = "
        "answer 503 unverified_answer"),
    KEY("nodes", "tip_wait", XG_CFG_DURATION, tip_wait_ms, "1s", 0, 60000, false,
        "how long a read waits for a node to reach the chain tip this gateway already served "
        "its tenant before it is answered 503 behind_served_tip (never with an older tip)"),
    KEY("nodes", "read_your_writes", XG_CFG_DURATION, read_your_writes_ms, "10m", 0, 86400000,
        false,
        "after a tenant's accepted send_raw_transaction, its pool and transaction queries go "
        "to the nodes that accepted it for this long; 0 = off"),
    KEY("nodes", "cache_size", XG_CFG_SIZE, cache_size, "256m", 0, INT64_C(64) << 30, false,
        "memory bound of the answer cache (least recently used answers are evicted); 0 = off"),
    KEY("nodes", "cache_min_depth", XG_CFG_INT, cache_min_depth, "10", 1, 100000, false,
        "blocks below the quorum tip before an answer about a block, transaction or output is "
        "cached"),
    KEY("limits", "enabled", XG_CFG_BOOL, limits_enabled, "true", 0, 0, false,
        "enforce each tier's burst rate and daily quota and count usage (false: neither)"),
    KEY("limits", "max_delay", XG_CFG_DURATION, limits_max_delay_ms, "2s", 0, 60000, false,
        "a request over its tier's burst bucket is held until its token is due, up to this "
        "long (and never past its request_timeout); beyond it, 429 (0 = refuse at once)"),
    KEY("limits", "share_burst", XG_CFG_BOOL, limits_share_burst, "true", 0, 0, false,
        "each replica gives a tenant 1/N of its tier's burst rate and size, N the replicas "
        "beating in the same database (for a balancer that spreads a tenant's requests); "
        "false: every replica gives the whole burst (a balancer that keeps a tenant on one)"),
    KEY("xmr402", "enabled", XG_CFG_BOOL, xmr402_enabled, "false", 0, 0, false,
        "answer agent endpoints (/v1/<monerod path>) without a credential with 402 and an "
        "XMR402 challenge, and accept Authorization: XMR402 proofs there"),
    KEY("xmr402", "billing_url", XG_CFG_STRING, xmr402_billing_url, "http://127.0.0.1:18085", 0, 0,
        false, "billing's API base URL, where challenges are created and proofs verified"),
    KEY("xmr402", "public_url", XG_CFG_STRING, xmr402_public_url, "", 0, 0, false,
        "billing as agents reach it, for the status URL in a challenge (\"\" = billing_url)"),
    KEY("xmr402", "default_tier", XG_CFG_STRING, xmr402_default_tier, "wallet", 0, 0, false,
        "the tier a 402 sells unless the agent asks for another (?tier= or X-XMR402-Tier)"),
    KEY("xmr402", "max_proof", XG_CFG_SIZE, xmr402_max_proof, "2k", 64, 4096, false,
        "longest transaction proof accepted in Authorization: XMR402 (400 beyond)"),
    KEY("xmr402", "streams", XG_CFG_INT, xmr402_streams, "256", 0, 100000, false,
        "event streams (v2.1 SSE: accepted, then confirmed) open at once, served by the own "
        "front end (front_end = native); beyond, 503 streams_full (0 = none: challenges carry "
        "no features=\"sse\")"),
    KEY("xmr402", "streams_per_payment", XG_CFG_INT, xmr402_streams_per_payment, "2", 1, 1000,
        false,
        "event streams one payment (its txid) may hold open at once, of streams; beyond, 503 "
        "streams_full before billing is asked"),
    KEY("xmr402", "stream_max_duration", XG_CFG_DURATION, xmr402_stream_max_ms, "1h", 1000,
        86400000, false,
        "an event stream still short of the tier's confirmations after this long ends with "
        "event: error (stream_timeout); the proof keeps working"),
    KEY("xmr402", "stream_keepalive", XG_CFG_DURATION, xmr402_stream_keepalive_ms, "5s", 100,
        600000, false, "a ': keep-alive' comment goes down an idle event stream this often"),
    KEY("log", "level", XG_CFG_STRING, log_level, "info", 0, 0, true, "debug, info, warn or error"),
    KEY("log", "slow_request", XG_CFG_DURATION, slow_request_ms, "1s", 0, 600000, true,
        "requests at least this slow are counted per method and summed up in one log line a "
        "minute (0 = off); never logged one by one"),
};
const size_t gw_config_key_count = sizeof gw_config_keys / sizeof gw_config_keys[0];

bool gw_config_load(struct gw_config *cfg, const char *path, char *err, size_t errlen)
{
    if (!xg_config_load(gw_config_keys, gw_config_key_count, cfg, path, NULL, err, errlen))
        return false;
    enum xg_log_level level;
    if (!xg_log_level_parse(cfg->log_level, &level)) {
        snprintf(err, errlen, "[log] level: expected debug, info, warn or error, got \"%s\"",
                 cfg->log_level);
        goto bad;
    }
    if (!xg_hex_ok(cfg->ha1_key, 32)) {
        snprintf(err, errlen, "[auth] ha1_key: expected 64 hex digits");
        goto bad;
    }
    if (cfg->ha1_key_previous[0] && !xg_hex_ok(cfg->ha1_key_previous, 32)) {
        snprintf(err, errlen, "[auth] ha1_key_previous: expected 64 hex digits");
        goto bad;
    }
    if (strcasecmp(cfg->ha1_key_previous, cfg->ha1_key) == 0) {
        snprintf(err, errlen, "[auth] ha1_key_previous: must differ from [auth] ha1_key");
        goto bad;
    }
    if (cfg->nonce_secret[0] && !xg_hex_ok(cfg->nonce_secret, 0)) {
        snprintf(err, errlen, "[auth] nonce_secret: expected hex digits (at least 32)");
        goto bad;
    }
    if (cfg->node_ca_file[0] && access(cfg->node_ca_file, R_OK) != 0) {
        snprintf(err, errlen, "[nodes] ca_file: cannot read %s", cfg->node_ca_file);
        goto bad;
    }
    char pin_err[128];
    if (!tls_pin_parse(cfg->node_tls_fingerprints, &cfg->node_tls_pins, pin_err, sizeof pin_err)) {
        snprintf(err, errlen, "[nodes] tls_fingerprints: %s", pin_err);
        goto bad;
    }
    if (!blockpub_map_check(cfg->node_zmq, err, errlen))
        goto bad;
    if (!fit_network_parse(cfg->node_network, &cfg->node_fit.network)) {
        snprintf(err, errlen,
                 "[nodes] network: expected mainnet, stagenet, testnet, regtest or any, got \"%s\"",
                 cfg->node_network);
        goto bad;
    }
    if (!fit_rpc_version_parse(cfg->node_min_rpc_version, &cfg->node_fit.min_rpc_version)) {
        snprintf(err, errlen,
                 "[nodes] min_rpc_version: expected MAJOR.MINOR as get_version tells it (e.g. "
                 "3.14), got \"%s\"",
                 cfg->node_min_rpc_version);
        goto bad;
    }
    cfg->node_fit.require_restricted = cfg->node_require_restricted;
    if (strcmp(cfg->front_end, "native") != 0 && strcmp(cfg->front_end, "libmicrohttpd") != 0) {
        snprintf(err, errlen, "[server] front_end: expected native or libmicrohttpd, got \"%s\"",
                 cfg->front_end);
        goto bad;
    }
    if ((cfg->tls_cert[0] == '\0') != (cfg->tls_key[0] == '\0')) {
        snprintf(err, errlen, "[server] tls_cert and tls_key must be set together");
        goto bad;
    }
    if (!xg_proxy_settings_check(cfg->trusted_proxies, cfg->proxy_reserve, cfg->proxy_max_pending,
                                 cfg->proxy_protocol, &cfg->trust, err, errlen))
        goto bad;
    return true;
bad:
    gw_config_free(cfg);
    return false;
}

void gw_config_free(struct gw_config *cfg)
{
    xg_config_free(gw_config_keys, gw_config_key_count, cfg);
}
