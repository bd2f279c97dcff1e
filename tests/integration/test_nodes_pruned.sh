#!/usr/bin/env bash
# A pruned node never makes an old transaction look incomplete through the gateway.
#
# Node C is the real pruned node, but a regtest chain is far shorter than the 5500
# blocks a pruned monerod keeps whole, so C still answers completely here. In front of
# C sits tests/tools/pruned_node, which answers get_transactions the way a pruned node
# does for an old transaction (status OK, as_hex empty, prunable_hash set), everything
# else as C. Two cases:
#   1. declared pruned in the nodes table: the gateway sends get_transactions (no prune
#      flag) to a full node and never to it;
#   2. misdeclared as full, primary, so rank 1: the gateway gets the pruned answer,
#      recognises it, and asks a full node — the client sees the complete transaction.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

TOOL=$XG_REPO/build/release/tests/tools/pruned_node
[[ -x $TOOL ]] || make -C "$XG_REPO" -s "build/release/tests/tools/pruned_node" >/dev/null
port=$((XG_PORT_BASE + 99))
count=$(mktemp)
defer rm -f "$count"
"$TOOL" "$port" "$NODE_C_URL" "$count" >/dev/null 2>&1 &
defer kill $!
PRUNED_URL=http://127.0.0.1:$port
check "the pruned stand-in answers get_info as C" \
	wait_until 10 bash -c "curl -sf -d '{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"get_info\"}' $PRUNED_URL/json_rpc >/dev/null"

# An old transaction (not coinbase): the first block below the tip that holds one.
top=$(rpc "$NODE_A_URL" get_block_count | jq -r '.count - 1')
txid=''
h=1
while [[ -z $txid ]] && ((h < top - 10)); do
	txid=$(rpc "$NODE_A_URL" get_block "{\"height\":$h}" | jq -r '.tx_hashes[0] // empty')
	h=$((h + 1))
done
if [[ -z $txid ]]; then # a fresh stack: make one, bury it
	read -r txid hex < <(payer_tx_hex)
	curl -s -H 'Content-Type: application/json' -d "$(jq -cn --arg h "$hex" '{tx_as_hex: $h}')" \
		"$NODE_A_URL/send_raw_transaction" >/dev/null
	mine 12 >/dev/null
fi
check "an old transaction exists" test -n "$txid"
q=$(jq -cn --arg t "$txid" '{txs_hashes: [$t]}')
assert_json "the stand-in answers it pruned: OK, as_hex empty, prunable_hash set" \
	"$(curl -s -d "$q" "$PRUNED_URL/get_transactions")" \
	'.status == "OK" and .txs[0].as_hex == "" and (.txs[0].prunable_hash | test("^0+$") | not)'

complete_through_gateway() {
	local i bad=0
	for i in $(seq 1 "$1"); do
		gw_call /get_transactions "$q" |
			jq -e --arg t "$txid" '.status == "OK" and .txs[0].tx_hash == $t
				and (.txs[0].as_hex | length > 0)' >/dev/null || bad=$((bad + 1))
	done
	echo "$bad"
}

set_nodes() {
	psql_q "BEGIN; DELETE FROM nodes;
		INSERT INTO nodes (name, url, priority, pruned) VALUES
			('p', '$PRUNED_URL', 'primary', $1), ('a', '$NODE_A_URL', 'standby', false);
		COMMIT;" >/dev/null
}
nodes_migrate || true
check_here "a tenant is granted" grant_tenant --bare sovereign 1

# 1. Declared pruned.
set_nodes true
check_here "a gateway starts and is ready" gateway_start pruned-declared --base nodes
both_up() { gw_status | jq -e '[.nodes[] | select(.up)] | length == 2' >/dev/null; }
check "both nodes are up" wait_until 20 both_up
: >"$count"
assert_eq "declared pruned: 20 lookups, every answer complete" 0 "$(complete_through_gateway 20)"
assert_eq "declared pruned: get_transactions never went to the pruned node" 0 "$(wc -l <"$count")"
gateway_stop pruned-declared

# 2. Misdeclared as a full primary: rank 1, its pruned answers must be caught.
set_nodes false
check_here "a second gateway starts and is ready" gateway_start pruned-misdeclared --base nodes
check "both nodes are up" wait_until 20 both_up
: >"$count"
assert_eq "misdeclared: 20 lookups, every answer complete" 0 "$(complete_through_gateway 20)"
asked=$(wc -l <"$count")
echo "# the pruned stand-in was asked $asked times and never had the last word"
check "misdeclared: the pruned node was asked first (rank 1)" test "$asked" -ge 1
