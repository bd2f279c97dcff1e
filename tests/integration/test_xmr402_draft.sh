#!/usr/bin/env bash
# XMR402 as the public draft's clients speak it, on regtest: a client written from the
# draft (xmr402_draft_client.py, not bin/xmr402-agent) buys the stack's agent tier with
# request → 402 → pay → proof at once → 200 with the RPC answer, before any block is
# mined; its later requests spend the pending allowance; at the tier's confirmations the
# tenant is provisioned; past the credentials window a replayed proof no longer shows the
# token. A bad proof is 403 with no challenge, a malformed header 400, an
# underpayment 403 (funds missing), an expired challenge a 402 for a new purchase.
# v2.1 SSE: the challenge says features="sse"; a proof sent with Accept:
# text/event-stream gets event: accepted (the token the payment buys; the pending
# allowance serves meanwhile), then event: confirmed at the tier's confirmations, on one
# stream that then ends; a client that leaves mid-stream costs nothing; a gateway whose
# [xmr402] streams are taken answers 503 streams_full before asking billing.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/xmr402_lib.sh
. "$(dirname "$0")/xmr402_lib.sh"

DRAFT_TIER=agent
DRAFT_CONFIRMATIONS=2
CAP=100000000000 # 0.1 XMR, the reference gateway's MAX_XMR_PER_REQUEST

check_here "the stack seeds the agent tier (confirms after $DRAFT_CONFIRMATIONS blocks here)" \
	x4_setup "$DRAFT_TIER" "$DRAFT_CONFIRMATIONS" || exit 1
assert_json "the agent tier is priced under the reference cap of 0.1 XMR" \
	"$(curl -s "$BILLING_URL/api/tiers")" \
	".tiers[] | select(.id == \"$DRAFT_TIER\") | .price_per_month.currency == \"XMR\" and
	 (.price_per_month.amount | tonumber) * 1e12 < $CAP"

# ---- the draft client's whole loop, nothing mined ------------------------------------
x4_from_fresh
height_before=$(rpc "$NODE_A_URL" get_block_count | jq -r .count)
tenants_before=$(psql_q "SELECT count(*) FROM tenants")
OUT=$(python3 "$(dirname "$0")/xmr402_draft_client.py" --source "$X4_FROM" \
	--max-piconero "$CAP" "$GATEWAY_URL/v1/json_rpc?tier=$DRAFT_TIER" "$PAYER_WALLET_URL")
assert_eq "the draft client pays and is served in one go" 0 "$?" || echo "# $OUT"
assert_json "its first answer was 402 with an XMR402 challenge in unix ms (a live one)" "$OUT" \
	'.first_status == 402 and (.challenge.timestamp | length) == 13 and
	 .challenge_age_ms >= -60000 and .challenge_age_ms < 300000'
assert_json "the challenge is under the cap" "$OUT" "(.challenge.amount | tonumber) <= $CAP"
assert_json "its proof, sent at once, got 200 with the served RPC answer" "$OUT" \
	'.status == 200 and .answer.result.status == "OK" and .answer.result.nettype == "fakechain"'
assert_json "within 15 s of paying" "$OUT" '.answered_at - .paid_at < 15'
assert_json "served from the pending allowance, saying what is left and the confirmations" "$OUT" \
	".headers[\"x-xmr402-pending\"] != null and
	 .headers[\"x-xmr402-confirmations\"] == \"0/$DRAFT_CONFIRMATIONS\""
assert_eq "no block was mined for it" "$height_before" \
	"$(rpc "$NODE_A_URL" get_block_count | jq -r .count)"
INV=$(jq -r '.headers["x-xmr402-invoice"]' <<<"$OUT")
TXID=$(jq -r .txid <<<"$OUT") AUTH=$(jq -r .authorization <<<"$OUT") PROOF=$(jq -r .proof <<<"$OUT")
LEFT=$(jq -r '.headers["x-xmr402-pending"]' <<<"$OUT")
assert_eq "the invoice is paid but not provisioned yet (the tier's confirmations rule)" "seen" \
	"$(psql_q "SELECT state FROM invoices WHERE id = '$INV'")"
assert_eq "no tenant yet" "$tenants_before" "$(psql_q "SELECT count(*) FROM tenants")"

x4_call "$AUTH" "/v1/json_rpc?tier=$DRAFT_TIER" get_block_count
assert_eq "the same credential again: 200 from the allowance" 200 "$X4_STATUS"
assert_json "with the RPC answer" "$X4_BODY" '.result.count > 0'
assert_eq "one request fewer left" "$((LEFT - 1))" "$(x4_header X-XMR402-Pending)"
assert_eq "billing counted both" 2 \
	"$(psql_q "SELECT xmr402_pending_used FROM invoices WHERE id = '$INV'")"

# ---- the tier's confirmations provision the tenant ----------------------------------
mine "$DRAFT_CONFIRMATIONS" >/dev/null
provisioned() {
	x4_call "$AUTH" "/v1/json_rpc?tier=$DRAFT_TIER" get_info &&
		[[ $X4_STATUS == 200 && -n $(x4_header X-XMR402-Token) ]] && return 0
	mine 1 >/dev/null # the transaction may have reached the miner one block late
	sleep 1
	return 1
}
check_here "at the tier's confirmations the same credential is served with its token" \
	wait_until 60 provisioned
assert_json "with the RPC answer" "$X4_BODY" '.result.status == "OK"'
TOKEN=$(x4_header X-XMR402-Token)
assert_eq "the invoice is provisioned" provisioned \
	"$(psql_q "SELECT state FROM invoices WHERE id = '$INV'")"
assert_eq "one tenant of the agent tier" "$DRAFT_TIER" \
	"$(psql_q "SELECT t.tier_id FROM tenants t JOIN invoices i ON i.tenant_id = t.id WHERE i.id = '$INV'")"
reply=$(rpc "$GATEWAY_URL/v1/$TOKEN" get_block_count 2>&1)
check "the token works on its own" xg_json_holds '.count > 0' "$reply"

# replay: past [xmr402] credentials_window (24 h) the same proof no longer shows the token
psql_q "UPDATE invoices SET provisioned_at = provisioned_at - interval '2 days' WHERE id = '$INV'" >/dev/null
x4_call "$AUTH" "/v1/json_rpc?tier=$DRAFT_TIER" get_block_count
assert_eq "a proof replayed past the credentials window is still served" 200 "$X4_STATUS"
assert_json "with the RPC answer" "$X4_BODY" '.result.count > 0'
check "but without the token" test -z "$(x4_header X-XMR402-Token)$(x4_header X-XMR402-Login)"

# ---- refusals in the draft's words ---------------------------------------------------
x4_call "XMR402 txid=\"$TXID\", proof=\"OutProofV2abcdefghijkmnopqrstuvwxyz123456789\"" \
	"/v1/json_rpc?tier=$DRAFT_TIER"
assert_eq "a bad proof: 403" 403 "$X4_STATUS"
assert_json "INVALID_PROOF_OR_FUNDS_MISSING with the reason" "$X4_BODY" \
	'.code == "INVALID_PROOF_OR_FUNDS_MISSING" and .error.code == "proof_invalid" and
	 (.error.message | length) > 0'
check "and no challenge" test -z "$(x4_header WWW-Authenticate)"
x4_call 'XMR402 txid="abc", proof="OutProofV2abc"'
assert_eq "a malformed header: 400" 400 "$X4_STATUS"
assert_json "INVALID_XMR402_FORMAT" "$X4_BODY" '.code == "INVALID_XMR402_FORMAT"'
x4_call "XMR402 txid=$TXID"
assert_eq "a header without its proof: 400" 400 "$X4_STATUS"

x4_from_fresh
x4_call "" "/v1/json_rpc?tier=$DRAFT_TIER"
assert_json "the 402 body carries the draft's names beside ours" "$X4_BODY" \
	'.protocol == "XMR402" and .version != null and .amount_atomic == .amount and
	 .nonce == .message and (.timestamp | tostring | length) == 13 and
	 .expires_in_seconds > 0 and .error != null and .new_purchase == false'
U_ADDR=$(x4_param address) U_AMOUNT=$(x4_param amount) U_MSG=$(x4_param message)
U_TX=$(payer_pays "$U_ADDR" "$((U_AMOUNT / 2))")
x4_call "$(x4_auth "$U_TX" "$(x4_proof "$U_TX" "$U_ADDR" "$U_MSG")")" "/v1/json_rpc?tier=$DRAFT_TIER"
assert_eq "half the amount: 403 (funds missing), never a 402 to pay again" 403 "$X4_STATUS"
assert_json "saying what is missing" "$X4_BODY" \
	".code == \"INVALID_PROOF_OR_FUNDS_MISSING\" and .error.code == \"underpaid\" and
	 .remaining == \"$((U_AMOUNT - U_AMOUNT / 2))\""
check "and no challenge" test -z "$(x4_header WWW-Authenticate)"

x4_call "" "/v1/json_rpc?tier=$DRAFT_TIER"
E_INV=$(jq -r '.invoice' <<<"$X4_BODY")
psql_q "UPDATE invoices SET expires_at = now() - interval '1 minute' WHERE id = '$E_INV'" >/dev/null
x4_call "$(x4_auth "$TXID" "$PROOF" "$E_INV")" \
	"/v1/json_rpc?tier=$DRAFT_TIER"
assert_eq "a proof for an expired, unpaid challenge: 402" 402 "$X4_STATUS"
assert_json "with a fresh challenge, marked as a new purchase" "$X4_BODY" \
	".new_purchase == true and .invoice != \"$E_INV\" and .error.code == \"invoice_expired\""
check "in WWW-Authenticate" test -n "$(x4_param address)"

# ---- v2.1: one event stream from acceptance to confirmation --------------------------
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"
STREAMS=xmrgate_gateway_xmr402_streams_open
SSE_DIR=$(mktemp -d)
defer rm -rf "$SSE_DIR"
# sse_run NAME GATEWAY [CLIENT ARGS…]: the draft client in SSE mode, in the background,
# its lines in $SSE_DIR/NAME; SSE_PID
sse_run() {
	local name=$1 gw=$2
	shift 2
	: >"$SSE_DIR/$name"
	python3 "$(dirname "$0")/xmr402_draft_client.py" --sse --source "$X4_FROM" \
		--max-piconero "$CAP" "$@" "$gw/v1/json_rpc?tier=$DRAFT_TIER" "$PAYER_WALLET_URL" \
		>"$SSE_DIR/$name" 2>&1 &
	SSE_PID=$!
	defer stop_pid "$SSE_PID"
}
sse_line() { grep -m 1 "$2" "$SSE_DIR/$1"; }
sse_has() { grep -q "$2" "$SSE_DIR/$1"; }
sse_done() { ! kill -0 "$1" 2>/dev/null; }

x4_from_fresh
sse_run full "$GATEWAY_URL"
FULL_PID=$SSE_PID
check_here "the stream opens with event: accepted" wait_until 90 sse_has full '"event": "accepted"' ||
	sed 's/^/# /' "$SSE_DIR/full"
ACC=$(sse_line full '"event": "accepted"')
assert_json "accepted carries status mempool and the token the payment buys" "$ACC" \
	'.data.status == "mempool" and (.data.access_token | startswith("xg_")) and
	 .data.pending_left > 0 and .data.confirmations == 0 and
	 .data.confirmations_required == '"$DRAFT_CONFIRMATIONS"
S_TOKEN=$(jq -r .data.access_token <<<"$ACC") S_INV=$(jq -r .data.invoice <<<"$ACC")
S_AUTH=$(jq -r .authorization <<<"$(sse_line full '"authorization"')")
assert_eq "one stream is open" 1 "$(metric "$GATEWAY_ADMIN_URL" "$STREAMS")"
x4_call "$S_AUTH" "/v1/json_rpc?tier=$DRAFT_TIER" get_block_count
assert_eq "while it is open, the accepted payment serves an RPC call (the pending allowance)" \
	200 "$X4_STATUS"
assert_json "with the RPC answer" "$X4_BODY" '.result.count > 0'
reply=$(rpc "$GATEWAY_URL/v1/$S_TOKEN" get_block_count 2>&1)
not_served() { ! xg_json_holds '.count > 0' "$1"; }
check "the token authenticates nothing before the tier's confirmations" not_served "$reply"
sleep 3
assert_eq "billing's polls spend no allowance (only the acceptance and the call above)" 2 \
	"$(psql_q "SELECT xmr402_pending_used FROM invoices WHERE id = '$S_INV'")"
x4_mine_while "$FULL_PID" 120
wait "$FULL_PID"
assert_eq "the client read accepted, then confirmed, then the end of the stream" 0 "$?" ||
	sed 's/^/# /' "$SSE_DIR/full"
CONF=$(sse_line full '"event": "confirmed"')
assert_json "confirmed carries the provisioned credentials: the same token" "$CONF" \
	".data.status == \"confirmed\" and .data.access_token == \"$S_TOKEN\" and
	 (.data.login | endswith(\":$S_TOKEN\")) and .data.tier == \"$DRAFT_TIER\" and
	 .data.receipt != null"
assert_json "on the same stream, which then ended" "$(tail -n 1 "$SSE_DIR/full")" \
	'.status == 200 and .events == ["accepted", "confirmed"] and
	 (.headers["content-type"] | startswith("text/event-stream"))'
assert_eq "the invoice is provisioned" provisioned \
	"$(psql_q "SELECT state FROM invoices WHERE id = '$S_INV'")"
reply=$(rpc "$GATEWAY_URL/v1/$S_TOKEN" get_block_count 2>&1)
check "the token from event: accepted works for an RPC call" xg_json_holds '.count > 0' "$reply"
check_here "no stream is open any more" wait_until 15 metric_is "$GATEWAY_ADMIN_URL" "$STREAMS" 0

# a client that leaves mid-stream costs nothing
x4_from_fresh
sse_run leave "$GATEWAY_URL" --leave-after-accepted
LEAVE_PID=$SSE_PID
check_here "a client that leaves after accepted exits" wait_until 90 sse_done "$LEAVE_PID"
wait "$LEAVE_PID"
assert_eq "having read accepted" 0 "$?" || sed 's/^/# /' "$SSE_DIR/leave"
L_INV=$(jq -r .data.invoice <<<"$(sse_line leave '"event": "accepted"')")
check_here "the gateway ends its stream: no stream open" \
	wait_until 20 metric_is "$GATEWAY_ADMIN_URL" "$STREAMS" 0
assert_eq "the allowance paid for the acceptance only" 1 \
	"$(psql_q "SELECT xmr402_pending_used FROM invoices WHERE id = '$L_INV'")"
reply=$(rpc "$GATEWAY_URL/v1/$S_TOKEN" get_block_count 2>&1)
check "the gateway keeps serving" xg_json_holds '.count > 0' "$reply"

# the stream cap: a gateway with room for one stream refuses the second, clearly
check_here "a gateway with [xmr402] streams = 1 starts" gateway_start sse-cap xmr402.streams=1 ||
	exit 1
CAP_GW=$GW_URL
x4_from_fresh
sse_run cap "$CAP_GW"
CAP_PID=$SSE_PID
check_here "its one stream opens" wait_until 90 sse_has cap '"event": "accepted"' ||
	sed 's/^/# /' "$SSE_DIR/cap"
C_AUTH=$(jq -r .authorization <<<"$(sse_line cap '"authorization"')")
C_INV=$(jq -r .data.invoice <<<"$(sse_line cap '"event": "accepted"')")
used=$(psql_q "SELECT xmr402_pending_used FROM invoices WHERE id = '$C_INV'")
out=$(curl -sS --max-time 30 -D - --interface "$X4_FROM" -H 'Content-Type: application/json' \
	-H 'Accept: text/event-stream' -H "Authorization: $C_AUTH" \
	--data-binary '{"jsonrpc":"2.0","id":"t","method":"get_info"}' \
	"$CAP_GW/v1/json_rpc?tier=$DRAFT_TIER" | tr -d '\r')
check "a second stream: 503" grep -q '^HTTP/1.1 503' <<<"$out"
assert_json "streams_full, saying so" "$(sed '1,/^$/d' <<<"$out")" \
	'.protocol == "XMR402" and .error.code == "streams_full" and (.error.message | length) > 0'
check "with Retry-After" grep -qi '^Retry-After: [0-9]' <<<"$out"
assert_eq "refused before billing: no allowance spent" "$used" \
	"$(psql_q "SELECT xmr402_pending_used FROM invoices WHERE id = '$C_INV'")"
stop_pid "$CAP_PID"
check_here "the stream's place is free again once its client left" \
	wait_until 20 metric_is "$(gw_admin sse-cap)" "$STREAMS" 0
