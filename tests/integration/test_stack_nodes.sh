#!/usr/bin/env bash
# shellcheck disable=SC2153 # NODE_*_URL come from stack.env
# The regtest stack's three monerod nodes share one chain: blocks mined on A reach
# B and C (same height, same top block hash), and C runs pruned while A and B don't.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

export XG_RPC_TIMEOUT=10 # a node that does not answer in 10 s has failed

IFS=, read -ra urls <<<"$NODE_URLS"
assert_eq "NODE_URLS lists three nodes" 3 "${#urls[@]}"
assert_eq "NODE_URLS is A,B,C" "$NODE_A_URL,$NODE_B_URL,$NODE_C_URL" "$NODE_URLS"

for url in "${urls[@]}"; do
	assert_json "$url answers get_info on the regtest chain" "$(rpc "$url" get_info)" \
		'.status == "OK" and .nettype == "fakechain" and .synchronized and .height > 1'
	assert_json "$url is linked to the other two nodes" "$(rpc "$url" get_info)" \
		'.outgoing_connections_count + .incoming_connections_count >= 2'
done

before=$(rpc "$NODE_A_URL" get_info | jq -r '.height')
top=$(mine 5)
assert_eq "mining 5 blocks on A moves the top to height+4" $((before + 4)) "$top"
check "A, B and C agree on height $((top + 1)) and the top hash within 30 s" \
	wait_until 30 nodes_agree $((top + 1))

a_header=$(rpc "$NODE_A_URL" get_block_header_by_height "{\"height\":$top}" | jq -c '.block_header')
for url in "$NODE_B_URL" "$NODE_C_URL"; do
	assert_eq "$url has A's block at height $top" "$a_header" \
		"$(rpc "$url" get_block_header_by_height "{\"height\":$top}" | jq -c '.block_header')"
done

# A block mined on C (not only on A) travels too.
top=$(XG_RPC_TIMEOUT=60 rpc "$NODE_C_URL" generateblocks \
	"{\"amount_of_blocks\":1,\"wallet_address\":\"$MINER_ADDRESS\"}" | jq -r '.height')
check "a block mined on C reaches A and B" wait_until 30 nodes_agree $((top + 1))

# prune_blockchain with check=true only reports (it never prunes).
prune_c=$(rpc "$NODE_C_URL" prune_blockchain '{"check":true}')
assert_json "node C is pruned, with a pruning seed" "$prune_c" '.pruned == true and .pruning_seed != 0'
for url in "$NODE_A_URL" "$NODE_B_URL"; do
	assert_json "$url is a full node" "$(rpc "$url" prune_blockchain '{"check":true}')" \
		'.pruned == false and .pruning_seed == 0'
done
assert_json "A sees C's pruning seed on its peer link" "$(rpc "$NODE_A_URL" get_connections)" \
	"[.connections[] | select(.pruning_seed == $(jq '.pruning_seed' <<<"$prune_c"))] | length >= 1"
