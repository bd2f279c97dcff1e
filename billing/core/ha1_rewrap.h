/* ha1_rewrap — what `xmrgate-billing rewrap-ha1` does with one stored Digest HA1 during a
 * rotation of [gateway] ha1_key (docs/OPERATIONS.md, "Rotating the HA1 key").
 *
 * A row wrapped under the previous key is re-wrapped under the current one; a row the
 * current key already unwraps is left as it is (so a second run changes nothing); a row
 * neither key unwraps (a third key, a value copied from another handle, a damaged one) is
 * left alone and counted, because no key billing holds can recover its HA1: only a token
 * rotation gives that tenant Digest again.
 *
 * Pure but for the unwrappers' scratch state (token.h); nothing allocates. */
#ifndef HA1_REWRAP_H
#define HA1_REWRAP_H

#include "token.h"

#include <stddef.h>
#include <stdint.h>

enum ha1_rewrap_action {
    HA1_REWRAP_WRAP,        /* under the previous key: re-wrap under the current one */
    HA1_REWRAP_CURRENT,     /* already under the current key: nothing to do */
    HA1_REWRAP_UNWRAPPABLE, /* neither key unwraps it: left alone, counted */
};

/* Decides for the stored value wrapped[0..len) of handle. On HA1_REWRAP_WRAP, ha1 holds
 * the unwrapped HA1 to wrap again (the caller cleanses it); otherwise it is zeroed. A value
 * of the wrong length is unwrappable. keys->previous may be NULL (no rotation configured:
 * nothing is re-wrapped, the rows are only counted). */
enum ha1_rewrap_action ha1_rewrap_plan(const struct token_ha1_keys *keys, const char *handle,
                                       const uint8_t *wrapped, size_t len,
                                       uint8_t ha1[TOKEN_HA1_LEN]);

/* The name of an action, for logs ("rewrap", "current", "unwrappable"). */
const char *ha1_rewrap_action_name(enum ha1_rewrap_action a);

#endif
