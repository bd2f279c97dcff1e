#!/usr/bin/env bash
# A lagging node: C (the only primary, so rank 1 while it is on the tip) is cut from its
# peers (out_peers/in_peers 0) while A mines: it keeps answering, synchronized, but
# blocks behind. The gateway takes it off the tip (GET /nodes: tip_distance > 0), readiness
# stays green on A and B, and a transaction mined on the others — which C itself reports
# missing — is never reported missing through the gateway; a key image it spent is never
# reported unspent. Reconnected, C catches up and is back on the tip.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

check "the nodes table holds C (primary), A and B (standby)" \
	nodes_table "c:primary a:standby b:standby"
check_here "a tenant is granted" grant_tenant --bare sovereign 1
check_here "a gateway starts and is ready" gateway_start lagging --base nodes

c_distance_is() { gw_node_status c | jq -e --argjson d "$1" '.tip_distance == $d' >/dev/null; }
c_lags() { gw_node_status c | jq -e '.tip_distance != 0' >/dev/null; }
check "C is on the tip at first" wait_until 15 c_distance_is 0

node_peers_cut c
check "C has no peers" wait_until 15 node_isolated c

# A transaction relayed on A (and B), then mined there.
read -r txhash txhex < <(payer_tx_hex)
check "the payer signs a transaction" test -n "${txhex:-}"
sent=$(curl -s -H 'Content-Type: application/json' \
	-d "$(jq -cn --arg h "$txhex" '{tx_as_hex: $h}')" "$NODE_A_URL/send_raw_transaction")
assert_json "A accepts and relays it" "$sent" '.status == "OK"'
c_height=$(rpc "$NODE_C_URL" get_info | jq -r '.height')
a_blocks() {
	rpc "$NODE_A_URL" generateblocks "{\"amount_of_blocks\":3,\"wallet_address\":\"$MINER_ADDRESS\"}" >/dev/null
}
check "A mines 3 blocks" a_blocks
check "B follows A" wait_until 30 same_top a b
assert_eq "C stays at its height: it lags" "$c_height" "$(rpc "$NODE_C_URL" get_info | jq -r '.height')"

txq=$(jq -cn --arg h "$txhash" '{txs_hashes: [$h]}')
direct=$(curl -s -H 'Content-Type: application/json' -d "$txq" "$NODE_C_URL/get_transactions")
assert_json "asked directly, C reports the mined transaction missing" "$direct" \
	"(.missed_tx // []) | index(\"$txhash\") != null"

check "the gateway sees C lagging (tip_distance > 0)" wait_until 10 c_lags
echo "# C as the gateway sees it: $(gw_node_status c)"
assert_json "readiness stays green on A and B" "$(curl -s "$GW_ADMIN/readyz")" '.status == "ready"'

# Through the gateway, many times over: never missing.
key_image=$(curl -s -H 'Content-Type: application/json' \
	-d "$(jq -cn --arg h "$txhash" '{txs_hashes: [$h], decode_as_json: true}')" \
	"$NODE_A_URL/get_transactions" | jq -r '.txs[0].as_json | fromjson | .vin[0].key.k_image')
check "the transaction spends a key image" test -n "$key_image" -a "$key_image" != null
kiq=$(jq -cn --arg k "$key_image" '{key_images: [$k]}')
missing=0 unspent=0
for i in $(seq 1 20); do
	tx=$(gw_call /get_transactions "$txq")
	jq -e --arg h "$txhash" '.status == "OK" and ((.missed_tx // []) | length == 0)
		and (.txs[0].tx_hash == $h) and (.txs[0].in_pool == false)' <<<"$tx" >/dev/null ||
		missing=$((missing + 1))
	ki=$(gw_call /is_key_image_spent "$kiq")
	jq -e '.status == "OK" and .spent_status[0] == 1' <<<"$ki" >/dev/null || unspent=$((unspent + 1))
	sleep 0.2
done
assert_eq "20 lookups through the gateway: the transaction is never reported missing" 0 "$missing"
assert_eq "20 checks through the gateway: its key image is never reported unspent" 0 "$unspent"
direct_ki=$(curl -s -H 'Content-Type: application/json' -d "$kiq" "$NODE_C_URL/is_key_image_spent")
assert_json "while C, asked directly, still says unspent" "$direct_ki" '.spent_status[0] == 0'

node_peers_restore c
check "reconnected, C catches up" wait_until 60 same_top c a
check "and the gateway has it back on the tip" wait_until 15 c_distance_is 0

# The confirmation itself: a pool transaction only B holds (sent with do_not_relay, so
# A never hears of it). A and B rank as equals and take turns as rank 1; A's "missing"
# must never reach the client: it is confirmed on B, which has it.
read -r pooled pooled_hex < <(payer_tx_hex)
check "the payer signs a second transaction" test -n "${pooled_hex:-}"
sent=$(curl -s -H 'Content-Type: application/json' \
	-d "$(jq -cn --arg h "$pooled_hex" '{tx_as_hex: $h, do_not_relay: true}')" \
	"$NODE_B_URL/send_raw_transaction")
assert_json "B alone holds it" "$sent" '.status == "OK"'
pq=$(jq -cn --arg h "$pooled" '{txs_hashes: [$h]}')
assert_json "A, asked directly, reports it missing" \
	"$(curl -s -H 'Content-Type: application/json' -d "$pq" "$NODE_A_URL/get_transactions")" \
	"(.missed_tx // []) | index(\"$pooled\") != null"
missing=0
for i in $(seq 1 20); do
	gw_call /get_transactions "$pq" | jq -e '(.missed_tx // []) | length == 0' >/dev/null ||
		missing=$((missing + 1))
done
assert_eq "20 lookups through the gateway: never missing, whichever node ranks first" 0 "$missing"
rpc "$NODE_B_URL" generateblocks "{\"amount_of_blocks\":1,\"wallet_address\":\"$MINER_ADDRESS\"}" >/dev/null
