/* bl_config — billing's configuration: its key table and the struct it fills.
 * Strings are owned by the struct (bl_config_free). See README "Configuration". */
#ifndef BL_CONFIG_H
#define BL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xg_config.h"

struct bl_config {
    /* [server]: the public API and web pages */
    char *bind;
    int64_t port;
    int64_t threads;
    int64_t max_body;
    char *web_dir;
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
    /* [gateway]: what buyers are told to connect to, and the credential keys it shares */
    char *gateway_url;
    char *realm;
    char *ha1_key;
    /* [log] */
    char *log_level;
};

extern const struct xg_cfg_key bl_config_keys[];
extern const size_t bl_config_key_count;

__attribute__((warn_unused_result)) bool bl_config_load(struct bl_config *cfg, const char *path,
                                                        char *err, size_t errlen);
void bl_config_free(struct bl_config *cfg);

#endif
