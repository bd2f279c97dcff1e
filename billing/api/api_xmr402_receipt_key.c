/* GET /api/xmr402/receipt-key  → the Ed25519 public key receipts are signed with, and the
 * retired one that still verifies older receipts ([xmr402] legacy_receipt_key). */
#include "api/api_xmr402_receipt_key.h"

#include "api/api_shared.h"
#include "xg_reply.h"

enum xg_httpd_result api_handle_xmr402_receipt_key(const struct xg_httpd_request *req)
{
    struct api *api = api_of(req);
    json_t *retired = json_array();
    if (retired && api->receipt_retired_hex[0])
        json_array_append_new(retired, json_string(api->receipt_retired_hex));
    return xg_reply_json(
        req->conn, 200,
        json_pack("{s:s, s:s, s:o*, s:s}", "alg", "Ed25519", "public_key", api->receipt_public_hex,
                  "retired_public_keys", retired, "format",
                  "base64url(payload) \".\" base64url(Ed25519 signature over the payload "
                  "bytes); payload: compact JSON with sorted keys amount, handle, invoice, "
                  "issued_at, tier, txid, v"));
}
