/* ha1_rewrap — see ha1_rewrap.h. */
#include "core/ha1_rewrap.h"

#include <openssl/crypto.h>

enum ha1_rewrap_action ha1_rewrap_plan(const struct token_ha1_keys *keys, const char *handle,
                                       const uint8_t *wrapped, size_t len,
                                       uint8_t ha1[TOKEN_HA1_LEN])
{
    enum token_ha1_key which = TOKEN_HA1_KEY_NONE;
    if (len == TOKEN_HA1_WRAPPED_LEN)
        which = token_ha1_unwrap_either(keys, handle, wrapped, ha1);
    switch (which) {
    case TOKEN_HA1_KEY_PREVIOUS:
        return HA1_REWRAP_WRAP;
    case TOKEN_HA1_KEY_CURRENT:
        OPENSSL_cleanse(ha1, TOKEN_HA1_LEN);
        return HA1_REWRAP_CURRENT;
    case TOKEN_HA1_KEY_NONE:
        break;
    }
    OPENSSL_cleanse(ha1, TOKEN_HA1_LEN);
    return HA1_REWRAP_UNWRAPPABLE;
}

const char *ha1_rewrap_action_name(enum ha1_rewrap_action a)
{
    switch (a) {
    case HA1_REWRAP_WRAP:
        return "rewrap";
    case HA1_REWRAP_CURRENT:
        return "current";
    case HA1_REWRAP_UNWRAPPABLE:
        break;
    }
    return "unwrappable";
}
