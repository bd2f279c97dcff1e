/* bl_config — billing's configuration keys, declared once. */
#include "bl_config.h"

#include "xg_hex.h"
#include "xg_log.h"

#include <stdio.h>

#define KEY(sec, nm, type, field, def, lo, hi, reload, help)                                      \
    {sec, nm, type, offsetof(struct bl_config, field), def, lo, hi, reload, help}

const struct xg_cfg_key bl_config_keys[] = {
    KEY("server", "bind", XG_CFG_STRING, bind, "127.0.0.1", 0, 0, false,
        "address of the public API and web pages"),
    KEY("server", "port", XG_CFG_INT, port, "18085", 1, 65535, false, "public API port"),
    KEY("server", "threads", XG_CFG_INT, threads, "4", 1, 64, false, "API worker threads"),
    KEY("server", "max_body", XG_CFG_SIZE, max_body, "16k", 256, 1 << 20, true,
        "largest API request body (413 beyond)"),
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
    KEY("gateway", "url", XG_CFG_STRING, gateway_url, "http://127.0.0.1:18089", 0, 0, true,
        "the gateway URL given to buyers"),
    KEY("gateway", "realm", XG_CFG_STRING, realm, "xmrgate", 0, 0, false,
        "the gateway's Digest realm (HA1 covers it: must equal [server] realm there)"),
    KEY("gateway", "ha1_key", XG_CFG_STRING, ha1_key, NULL, 0, 0, false,
        "64 hex digits; wraps each tenant's Digest HA1 (same as the gateway's [auth] ha1_key)"),
    KEY("log", "level", XG_CFG_STRING, log_level, "info", 0, 0, true,
        "debug, info, warn or error"),
};
const size_t bl_config_key_count = sizeof bl_config_keys / sizeof bl_config_keys[0];

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
    if (!xg_hex_ok(cfg->ha1_key, 32)) {
        snprintf(err, errlen, "[gateway] ha1_key: expected 64 hex digits");
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
