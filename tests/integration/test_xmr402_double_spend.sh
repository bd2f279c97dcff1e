#!/usr/bin/env bash
# A double spend ends XMR402's pending allowance. The payer builds two transactions that
# spend the same output (sweep_single of one key image, both with do_not_relay): tx1 pays
# the challenge, tx2 pays the payer itself. tx1 is relayed and proven: the agent is served
# from the pending allowance. tx2 then reaches the node as a double spend (monerod refuses
# it and marks tx1 double_spend_seen, which billing reads from the node: the view-only
# wallet never learns it of a transaction it already holds); the same credential is then
# 403 not_counted, never a 402 to pay again, and billing keeps the double spend it saw
# (monerod forgets its mark on a relay upgrade); tx2 then replaces tx1 in the chain after a
# pool flush, billing records tx1 gone, and the answer stays 403 not_counted. An event
# stream (v2.1 SSE) opened on tx1 before the double spend gets event: error (not_counted)
# and ends, instead of waiting for a confirmation that never comes.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/xmr402_lib.sh
. "$(dirname "$0")/xmr402_lib.sh"

check_here "the test tier confirms after $X4_CONFIRMATIONS blocks" x4_setup || exit 1
x4_from_fresh
x4_call ""
assert_eq "a challenge" 402 "$X4_STATUS" || exit 1
ADDR=$(x4_param address) MSG=$(x4_param message) INV=$(jq -r .invoice <<<"$X4_BODY")

SELF=$(rpc "$PAYER_WALLET_URL" get_address '{"account_index":0}' | jq -r .address)
KI=$(rpc "$PAYER_WALLET_URL" incoming_transfers '{"transfer_type":"available"}' |
	jq -r '[.transfers[] | select(.unlocked and .frozen != true)] | last | .key_image')
check "the payer has an unlocked output ($KI)" test -n "$KI" -a "$KI" != null || exit 1
sweep() {
	rpc "$PAYER_WALLET_URL" sweep_single "$(jq -cn --arg a "$1" --arg k "$KI" \
		'{address: $a, key_image: $k, do_not_relay: true, get_tx_hex: true,
		  get_tx_metadata: true}')"
}
TX1=$(sweep "$ADDR") TX2=$(sweep "$SELF")
TX1_ID=$(jq -r .tx_hash <<<"$TX1") TX2_ID=$(jq -r .tx_hash <<<"$TX2")
check "two transactions spending the same output ($TX1_ID, $TX2_ID)" \
	test -n "$TX1_ID" -a -n "$TX2_ID" -a "$TX1_ID" != "$TX2_ID" || exit 1
relayed=$(rpc "$PAYER_WALLET_URL" relay_tx "$(jq -c '{hex: .tx_metadata}' <<<"$TX1")" | jq -r .tx_hash)
assert_eq "the wallet relays tx1 (and keeps its key for the proof)" "$TX1_ID" "$relayed"
check_here "tx1 is in node A's pool" wait_until 30 in_pool_lookup "$NODE_A_URL" "$TX1_ID"
AUTH=$(x4_auth "$TX1_ID" "$(x4_proof "$TX1_ID" "$ADDR" "$MSG")")
x4_call "$AUTH"
assert_eq "tx1 proven: served from the pending allowance" 200 "$X4_STATUS"
check "saying so" test -n "$(x4_header X-XMR402-Pending)"
STREAM=$(mktemp)
defer rm -f "$STREAM"
curl -sN --max-time 120 --interface "$X4_FROM" -H 'Content-Type: application/json' \
	-H 'Accept: text/event-stream' -H "Authorization: $AUTH" \
	--data-binary '{"jsonrpc":"2.0","id":"t","method":"get_info"}' \
	"$GATEWAY_URL/v1/json_rpc" >"$STREAM" 2>&1 &
STREAM_PID=$!
defer stop_pid "$STREAM_PID"
streamed() { grep -q "^event: $1\$" "$STREAM"; }
check_here "an event stream on tx1 opens with event: accepted" wait_until 30 streamed accepted

# ---- the double spend reaches the node -------------------------------------------------
send_tx2() {
	curl -s "$NODE_A_URL/send_raw_transaction" \
		-d "$(jq -c '{tx_as_hex: .tx_blob, do_not_relay: false}' <<<"$TX2")"
}
sent=$(send_tx2)
assert_json "monerod refuses tx2 as a double spend" "$sent" \
	'.status != "OK" and .double_spend == true'
# monerod clears double_spend_seen whenever it adds tx1 again on a relay upgrade (Dandelion++
# stem to fluff, tx_pool.cpp's add_tx); each refusal of tx2 marks it again.
seen_ds() {
	send_tx2 >/dev/null
	curl -s "$NODE_A_URL/get_transactions" -d "{\"txs_hashes\":[\"$TX1_ID\"]}" |
		jq -e '.txs[0].double_spend_seen == true' >/dev/null
}
check_here "and marks tx1 double_spend_seen" wait_until 30 seen_ds
x4_call "$AUTH"
assert_eq "the same credential: the allowance has ended (403)" 403 "$X4_STATUS"
assert_json "not_counted, saying it is double-spent" "$X4_BODY" \
	'.code == "INVALID_PROOF_OR_FUNDS_MISSING" and .error.code == "not_counted" and
	 (.error.message | test("double"))'
check "and no challenge to pay again" test -z "$(x4_header WWW-Authenticate)"
# kept, since monerod may forget it (invoice_pay_state_after): the stream's next look and
# every later proof are refused from this
assert_eq "billing keeps what the node saw" double_spend \
	"$(psql_q "SELECT state FROM payments WHERE txid = '$TX1_ID'")"
stream_over() { ! kill -0 "$STREAM_PID" 2>/dev/null; }
# The stream asks billing again every retry_after (2 s here), at its next keep-alive tick.
check_here "the stream ends" wait_until 45 stream_over
check "with event: error, never event: confirmed" bash -c \
	'grep -q "^event: error$" "$1" && ! grep -q "^event: confirmed" "$1"' _ "$STREAM"
assert_json "saying not_counted" "$(grep -A1 '^event: error$' "$STREAM" | sed -n 's/^data: //p')" \
	'.status == "refused" and .error.code == "not_counted"'
used=$(psql_q "SELECT xmr402_pending_used FROM invoices WHERE id = '$INV'")

# ---- tx2 replaces tx1 in the chain -------------------------------------------------------
IFS=, read -ra node_urls <<<"$NODE_URLS"
# a node may relay tx1 back to a flushed one before tx2 arrives: flush and send again
take_tx2() {
	local url
	for url in "${node_urls[@]}"; do
		rpc "$url" flush_txpool '{}' >/dev/null
	done
	sent=$(send_tx2)
	jq -e '.status == "OK"' <<<"$sent" >/dev/null && return 0
	sleep 1
	return 1
}
check_here "once the pools are flushed, the node takes tx2" wait_until 60 take_tx2
mine 1 >/dev/null
check_here "tx2 is mined" wait_until 60 in_chain_lookup "$NODE_A_URL" "$TX2_ID"
mine "$X4_CONFIRMATIONS" >/dev/null
gone() { [[ $(psql_q "SELECT state FROM payments WHERE txid = '$TX1_ID'") == gone ]]; }
check_here "billing records tx1 as gone from the pool" wait_until 60 gone
x4_call "$AUTH"
assert_eq "tx1's credential after tx2 confirmed: still 403" 403 "$X4_STATUS"
assert_json "not_counted: it left the pool" "$X4_BODY" \
	'.error.code == "not_counted" and (.error.message | test("left the pool"))'
check "and no challenge" test -z "$(x4_header WWW-Authenticate)"
assert_eq "nothing more of the allowance was spent" "$used" \
	"$(psql_q "SELECT xmr402_pending_used FROM invoices WHERE id = '$INV'")"
assert_eq "no tenant for the invoice" "" \
	"$(psql_q "SELECT tenant_id FROM invoices WHERE id = '$INV'")"
