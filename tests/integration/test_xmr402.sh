#!/usr/bin/env bash
# XMR402 on regtest, against the stack's gateway and billing: the reference agent buys
# access in one HTTP conversation; the same flow by its raw headers; 401 stays 401 on the
# root paths; malformed headers; a proof for another message or address; replay of a used
# proof on a new invoice; the same proof twice; underpayment; an expired invoice; two
# agents at once; the proof refused once its tenant replaced the token.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/xmr402_lib.sh
. "$(dirname "$0")/xmr402_lib.sh"

check_here "the test tier confirms after $X4_CONFIRMATIONS blocks" x4_setup || exit 1
# The raw calls below speak the extended flow (202 while confirming, 402 for the rest of an
# underpaid invoice), as the reference agent does; the draft's own flow (200 from the
# pending allowance, 403 for funds missing) is test_xmr402_draft.sh.
X4_MODE=confirmations

# ---- the reference agent ---------------------------------------------------------------
AGENT_OUT=$(mktemp)
defer rm -f "$AGENT_OUT" "$AGENT_OUT.err"
x4_from_fresh
"$XG_REPO/bin/xmr402-agent" --max-wait 120 --curl-opt --interface --curl-opt "$X4_FROM" \
	"$GATEWAY_URL" "$PAYER_WALLET_URL" >"$AGENT_OUT" 2>"$AGENT_OUT.err" &
agent=$!
x4_mine_while "$agent" 120
wait "$agent"
assert_eq "the reference agent completes the whole loop" 0 "$?" ||
	sed 's/^/# /' "$AGENT_OUT.err"
# shellcheck disable=SC1090
. "$AGENT_OUT"
XMR402_ANSWER=${XMR402_ANSWER:-null}
check "it waited through 202 while confirming" grep -q 'confirmations; retrying' "$AGENT_OUT.err"
check "its request was served with a real RPC answer" \
	xg_json_holds '.result.status == "OK" and .result.nettype == "fakechain"' "$XMR402_ANSWER"
check "the token it got is well-formed" grep -Eq '^xg_[A-Za-z0-9_-]{43}$' <<<"${XMR402_TOKEN:-}"
assert_eq "its receipt verifies with the published Ed25519 key" yes "${XMR402_RECEIPT_OK:-}"
reply=$(rpc "$XMR402_RPC_URL" get_block_count 2>&1)
check "a later call with the new token (path URL) succeeds" \
	xg_json_holds '.count > 0' "$reply"
reply=$(curl -sS --digest -u "$XMR402_LOGIN" -H 'Content-Type: application/json' \
	--data '{"jsonrpc":"2.0","id":1,"method":"get_block_count"}' "$GATEWAY_URL/json_rpc")
check "a later call with Digest handle:token (what a stock wallet sends) succeeds" \
	xg_json_holds '.result.count > 0' "$reply"
assert_eq "one payment row for the agent's txid" 1 \
	"$(psql_q "SELECT count(*) FROM payments WHERE txid = '$XMR402_TXID'")"
assert_eq "the invoice is an xmr402 one, provisioned" "xmr402 provisioned" \
	"$(psql_q "SELECT channel || ' ' || state FROM invoices WHERE id = '$XMR402_INVOICE'")"

# ---- the root paths keep 401 -----------------------------------------------------------
n_before=$(psql_q "SELECT count(*) FROM invoices WHERE channel = 'xmr402'")
x4_call "" /json_rpc
assert_eq "root /json_rpc without credentials: 401" 401 "$X4_STATUS"
assert_eq "with monerod's two Digest challenges, MD5 then MD5-sess, and no other scheme" \
	$'Digest qop="auth",algorithm=MD5\nDigest qop="auth",algorithm=MD5-sess' \
	"$(grep -i '^www-authenticate:' <<<"$X4_HEADERS" | cut -d: -f2- | cut -d, -f1-2 | sed 's/^ //')"
x4_call "" /get_height
assert_eq "root /get_height without credentials: 401" 401 "$X4_STATUS"
assert_eq "root paths create no invoice" "$n_before" \
	"$(psql_q "SELECT count(*) FROM invoices WHERE channel = 'xmr402'")"

# ---- the raw flow ----------------------------------------------------------------------
x4_from_fresh
x4_call "" /v1/get_height
assert_eq "an agent endpoint without credentials: 402" 402 "$X4_STATUS"
A_ADDR=$(x4_param address) A_AMOUNT=$(x4_param amount) A_MSG=$(x4_param message)
A_INV=$(jq -r '.invoice' <<<"$X4_BODY")
check "WWW-Authenticate: XMR402 address, amount, message, timestamp, features=\"sse\" (v2.1)" \
	grep -Eq '^WWW-Authenticate: XMR402 address="[0-9A-Za-z]{95}", amount="[0-9]+", message="[0-9a-f]{32}", timestamp="[0-9]+", features="sse"$' \
	<<<"$X4_HEADERS"
assert_json "the body: invoice, tier, amount, address, URI, expiry, status URL, how to prove" \
	"$X4_BODY" "(.invoice | test(\"^[0-9a-f-]{36}\$\")) and .tier == \"$X4_TIER\" and
	.amount == \"$A_AMOUNT\" and .address == \"$A_ADDR\" and .message == \"$A_MSG\" and
	(.uri | startswith(\"monero:$A_ADDR?tx_amount=\")) and (.expires_at | test(\"Z\$\")) and
	(. as \$b | .status_url | endswith(\"/api/invoices/\" + \$b.invoice)) and
	(.how_to_prove | length > 0) and
	.confirmations_required == $X4_CONFIRMATIONS"
status=$(curl -s "$(jq -r .status_url <<<"$X4_BODY")" | jq -r .status)
assert_eq "the status URL answers" pending "$status"
x4_call "" "/v1/get_height?tier=merchant"
assert_eq "?tier= asks for another tier" merchant "$(jq -r .tier <<<"$X4_BODY")"
check "each challenge has its own subaddress" test "$(x4_param address)" != "$A_ADDR"
x4_call "" "/v1/get_height?tier=nope"
assert_eq "an unknown tier: 400" 400 "$X4_STATUS"

x4_call 'XMR402 txid="abc", proof="OutProofV2abc"'
assert_eq "a malformed XMR402 header: 400" 400 "$X4_STATUS"
assert_json "with the reason" "$X4_BODY" '.error.code == "malformed_xmr402"'
x4_call "XMR402 txid=\"$(printf 'a%.0s' {1..64})\", proof=\"OutProofV2abc"
assert_eq "a truncated XMR402 header: 400" 400 "$X4_STATUS"
x4_call "XMR402 txid=\"$(printf 'a%.0s' {1..64})\", proof=\"OutProofV2$(printf 'b%.0s' {1..3000})\""
assert_eq "an oversized proof: 400" 400 "$X4_STATUS"
x4_call "XMR402 txid=\"$(printf 'a%.0s' {1..64})\", proof=\"OutProofV2$(printf 'b%.0s' {1..5000})\""
assert_eq "an oversized Authorization header: 400" 400 "$X4_STATUS"

A_TXID=$(payer_pays "$A_ADDR" "$A_AMOUNT")
check "the payer paid the challenge" test -n "$A_TXID"
x4_call "$(x4_auth "$A_TXID" "OutProofV2abcdefghijkmnopqrstuvwxyz123456789" "$A_INV")"
assert_eq "a well-formed but forged proof: 403 (the draft's INVALID_PROOF_OR_FUNDS_MISSING)" 403 "$X4_STATUS"
check "with no challenge to pay again" test -z "$(x4_header WWW-Authenticate)"
assert_json "with the reason" "$X4_BODY" '.error.code == "proof_invalid"'
WRONG_MSG=$(x4_proof "$A_TXID" "$A_ADDR" "not-the-challenge")
x4_call "$(x4_auth "$A_TXID" "$WRONG_MSG" "$A_INV")"
assert_eq "a proof over another message: 403" 403 "$X4_STATUS"
assert_json "with the reason" "$X4_BODY" '.error.code == "proof_invalid"'
# a real payment to another address, proven over A's message and sent for A
B_TXID=$(payer_pays "$MINER_ADDRESS" 1000000)
WRONG_ADDR=$(x4_proof "$B_TXID" "$MINER_ADDRESS" "$A_MSG")
x4_call "$(x4_auth "$B_TXID" "$WRONG_ADDR" "$A_INV")"
assert_eq "a proof for another address: 403" 403 "$X4_STATUS"
assert_json "with the reason" "$X4_BODY" '.error.code == "proof_invalid"'
assert_eq "refused proofs record nothing" 0 \
	"$(psql_q "SELECT count(*) FROM payments WHERE invoice_id = '$A_INV'
	           AND txid <> '$A_TXID' OR txid = '$A_TXID' AND invoice_id <> '$A_INV'")"

A_PROOF=$(x4_proof "$A_TXID" "$A_ADDR" "$A_MSG")
x4_call "$(x4_auth "$A_TXID" "$A_PROOF")"
assert_eq "the right proof, without invoice=, while in the pool: 202" 202 "$X4_STATUS"
assert_json "confirmations and the required count" "$X4_BODY" \
	".invoice == \"$A_INV\" and .confirmations == 0 and .confirmations_required == $X4_CONFIRMATIONS and .state == \"seen\""
check "with Retry-After" grep -Eq '^Retry-After: [0-9]+$' <<<"$X4_HEADERS"
mine "$X4_CONFIRMATIONS" >/dev/null
x4_until_served "$(x4_auth "$A_TXID" "$A_PROOF")" /v1/get_height
assert_eq "at the threshold the original request is served: 200" 200 "$X4_STATUS"
assert_json "with the RPC answer" "$X4_BODY" '.status == "OK" and .height > 0'
A_TOKEN=$(x4_header X-XMR402-Token) A_RECEIPT=$(x4_header X-XMR402-Receipt)
check "the credentials in X-XMR402-Token / -Login / -RPC-URL" \
	bash -c "[[ '$A_TOKEN' == xg_* && '$(x4_header X-XMR402-Login)' == t_*:$A_TOKEN && '$(x4_header X-XMR402-RPC-URL)' == *'/v1/$A_TOKEN' ]]"
tenants=$(psql_q "SELECT count(*) FROM tenants")
x4_call "$(x4_auth "$A_TXID" "$A_PROOF")"
assert_eq "the same proof again: served" 200 "$X4_STATUS"
assert_eq "with the same token" "$A_TOKEN" "$(x4_header X-XMR402-Token)"
assert_eq "and the same receipt" "$A_RECEIPT" "$(x4_header X-XMR402-Receipt)"
assert_eq "and no second tenant" "$tenants" "$(psql_q "SELECT count(*) FROM tenants")"

x4_call ""
C_INV=$(jq -r '.invoice' <<<"$X4_BODY")
x4_call "$(x4_auth "$A_TXID" "$A_PROOF" "$C_INV")"
assert_eq "a used proof replayed on a new invoice: refused (403)" 403 "$X4_STATUS"
assert_json "with the reason" "$X4_BODY" '.error.code == "txid_used" or .error.code == "proof_invalid"'
assert_eq "the new invoice got no payment" "pending 0" \
	"$(psql_q "SELECT state || ' ' || paid FROM invoices WHERE id = '$C_INV'")"

# ---- underpayment ----------------------------------------------------------------------
x4_from_fresh
x4_call ""
D_ADDR=$(x4_param address) D_AMOUNT=$(x4_param amount) D_MSG=$(x4_param message)
D_INV=$(jq -r '.invoice' <<<"$X4_BODY")
D_PART=$((D_AMOUNT * 90 / 100))
D_TX1=$(payer_pays "$D_ADDR" "$D_PART")
x4_call "$(x4_auth "$D_TX1" "$(x4_proof "$D_TX1" "$D_ADDR" "$D_MSG")")"
assert_eq "an underpayment: 402" 402 "$X4_STATUS"
assert_json "answered with the remaining amount" "$X4_BODY" \
	".error.code == \"underpaid\" and .remaining == \"$((D_AMOUNT - D_PART))\""
assert_eq "the new challenge asks for the rest, same address and message" \
	"$D_ADDR $((D_AMOUNT - D_PART)) $D_MSG" "$(x4_param address) $(x4_param amount) $(x4_param message)"
D_TX2=$(payer_pays "$D_ADDR" "$((D_AMOUNT - D_PART))")
D_PROOF2=$(x4_proof "$D_TX2" "$D_ADDR" "$D_MSG")
x4_call "$(x4_auth "$D_TX2" "$D_PROOF2" "$D_INV")"
assert_eq "the rest paid: 202" 202 "$X4_STATUS"
mine "$X4_CONFIRMATIONS" >/dev/null
x4_until_served "$(x4_auth "$D_TX2" "$D_PROOF2" "$D_INV")"
assert_eq "both payments together provision it: 200" 200 "$X4_STATUS"
assert_eq "two payment rows, one per transaction" 2 \
	"$(psql_q "SELECT count(*) FROM payments WHERE invoice_id = '$D_INV'")"

# ---- an expired invoice ------------------------------------------------------------------
x4_call ""
E_INV=$(jq -r '.invoice' <<<"$X4_BODY")
psql_q "UPDATE invoices SET expires_at = now() - interval '1 minute' WHERE id = '$E_INV'" >/dev/null
x4_call "$(x4_auth "$A_TXID" "$A_PROOF" "$E_INV")"
assert_eq "a proof for an expired invoice: 402" 402 "$X4_STATUS"
assert_json "says it expired and offers a new challenge" "$X4_BODY" \
	".error.code == \"invoice_expired\" and .invoice != \"$E_INV\" and (.address | length) == 95 and
	.new_purchase == true"
check "with a new WWW-Authenticate challenge" test -n "$(x4_param address)"

# ---- two agents at once ------------------------------------------------------------------
OUT1=$(mktemp) OUT2=$(mktemp)
defer rm -f "$OUT1" "$OUT1.err" "$OUT2" "$OUT2.err"
x4_from_fresh
"$XG_REPO/bin/xmr402-agent" --max-wait 120 --curl-opt --interface --curl-opt "$X4_FROM" \
	"$GATEWAY_URL" "$PAYER_WALLET_URL" >"$OUT1" 2>"$OUT1.err" &
a1=$!
x4_from_fresh
"$XG_REPO/bin/xmr402-agent" --max-wait 120 --curl-opt --interface --curl-opt "$X4_FROM" \
	"$GATEWAY_URL" "$PAYER_WALLET_URL" >"$OUT2" 2>"$OUT2.err" &
a2=$!
while kill -0 "$a1" 2>/dev/null || kill -0 "$a2" 2>/dev/null; do
	mine 1 >/dev/null
	sleep 1.5
	((SECONDS < 600)) || break
done
wait "$a1"
rc1=$?
wait "$a2"
rc2=$?
assert_eq "two agents at once both complete" "0 0" "$rc1 $rc2" || sed 's/^/# /' "$OUT1.err" "$OUT2.err"
inv1=$(sed -n 's/^XMR402_INVOICE=//p' "$OUT1") inv2=$(sed -n 's/^XMR402_INVOICE=//p' "$OUT2")
assert_eq "with two different subaddresses" 2 \
	"$(psql_q "SELECT count(DISTINCT subaddress) FROM invoices WHERE id IN ('$inv1', '$inv2')")"
check "and two different tokens" test "$(sed -n 's/^XMR402_TOKEN=//p' "$OUT1")" != \
	"$(sed -n 's/^XMR402_TOKEN=//p' "$OUT2")"

# ---- challenges are rate-limited per client address -----------------------------------------
x4_from_fresh
statuses=()
for ((i = 0; i < 12; i++)); do
	x4_call ""
	statuses+=("$X4_STATUS")
	[[ $X4_STATUS == 429 ]] && break
done
assert_eq "one address gets its burst of challenges, then 429" 429 "${statuses[-1]}" ||
	echo "# statuses: ${statuses[*]}"
check "with Retry-After" grep -Eq '^Retry-After: [0-9]+$' <<<"$X4_HEADERS"
x4_from_fresh
x4_call ""
assert_eq "another address still gets its challenge" 402 "$X4_STATUS"

# ---- a rotated token: the purchase's proof no longer stands for the tenant ----------------
out=$(curl -s -w '\n%{http_code}' -X POST -H "Authorization: Bearer $A_TOKEN" \
	"$BILLING_URL/api/tenant/rotate")
assert_eq "the agent's tenant replaces its token" 200 "${out##*$'\n'}"
R_TOKEN=$(jq -r .token <<<"${out%$'\n'*}")
x4_from_fresh
x4_call "$(x4_auth "$A_TXID" "$A_PROOF")"
assert_eq "the purchase's proof is then refused: 403" 403 "$X4_STATUS"
assert_json "with the reason credentials_rotated" "$X4_BODY" '.error.code == "credentials_rotated"'
assert_eq "and no token in the answer" "" "$(x4_header X-XMR402-Token)"
rotated_served() { xg_json_holds '.count > 0' "$(rpc "$GATEWAY_URL/v1/$R_TOKEN" get_block_count 2>&1)"; }
check "the new token is served" wait_until 10 rotated_served
