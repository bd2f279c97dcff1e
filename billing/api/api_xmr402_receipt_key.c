/* GET /api/xmr402/receipt-key  → the Ed25519 public key receipts are signed with, and the
 * retired one that still verifies older receipts ([xmr402] legacy_receipt_key), listed with
 * its cut-off (retired_until) and only until then: every gateway host can derive its seed,
 * so receipts it verifies are trusted no longer than the operator said. */
#include "api/api_xmr402_receipt_key.h"

#include "api/api_shared.h"
#include "xg_reply.h"

#include <time.h>

enum xg_httpd_result api_handle_xmr402_receipt_key(const struct xg_httpd_request *req)
{
    struct api *api = api_of(req);
    json_t *retired = json_array();
    bool listed = api->receipt_retired_hex[0] && (int64_t)time(NULL) < api->receipt_retired_until;
    if (retired && listed)
        json_array_append_new(retired, json_string(api->receipt_retired_hex));
    json_t *until = listed ? json_integer((json_int_t)api->receipt_retired_until) : NULL;
    return xg_reply_json(
        req->conn, 200,
        json_pack("{s:s, s:s, s:o*, s:o*, s:s}", "alg", "Ed25519", "public_key",
                  api->receipt_public_hex, "retired_public_keys", retired, "retired_until_unix",
                  until, "format",
                  "base64url(payload) \".\" base64url(Ed25519 signature over the payload "
                  "bytes); payload: compact JSON with sorted keys amount, handle, invoice, "
                  "issued_at, tier, txid, v"));
}
