#!/usr/bin/env bash
# A reorg: headers and blocks cached by height (deep enough to cache; JSON-RPC headers and
# get_blocks_by_height.bin) are orphaned when every node pops 12 blocks and one mines 13 to
# another address. Once the gateway's quorum tip has moved to the new chain, the gateway
# never serves a cached orphaned header or block: every height from the fork up answers
# with the winning chain's, while a height below the fork stays cached (the epoch bump is a
# purge above the fork point only).
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

check "the nodes table holds A, B and C" nodes_table "a:primary b:primary c:primary"
check_here "a tenant is granted" grant_tenant --bare sovereign 1
check_here "a gateway starts and is ready" gateway_start reorg --base nodes

header_call() {
	jq -cn --argjson h "$1" \
		'{jsonrpc: "2.0", id: "r", method: "get_block_header_by_height", params: {height: $h}}'
}
gw_hash_at() { gw_call /json_rpc "$(header_call "$1")" | jq -r '.result.block_header.hash'; }
gw_cache_at() {
	gw_headers /json_rpc "$(header_call "$1")" | sed -n 's/^X-Xmrgate-Cache: //Ip'
}
node_hash_at() {
	rpc "$1" get_block_header_by_height "{\"height\":$2}" | jq -r '.block_header.hash'
}
# block_at URL HEIGHT OUT: get_blocks_by_height.bin's answer into OUT; prints the cache header.
block_at() {
	epee_heights_body "$2" >"$XG_VAR/reorg-req"
	bin_post "$1" /get_blocks_by_height.bin "$XG_VAR/reorg-req" "$3" | sed -n 's/^X-Xmrgate-Cache: //Ip'
}

mine 15 >/dev/null # room above the heights cached below
top=$(rpc "$NODE_A_URL" get_block_count | jq -r '.count - 1')
wait_until 20 bash -c "curl -s '$GW_ADMIN/readyz' | jq -e '.status == \"ready\"' >/dev/null"
sleep 3 # the gateway's quorum tip catches up with the last block
orphaned=($((top - 11)) $((top - 10)))
kept=$((top - 15))
declare -A old
for h in "${orphaned[@]}" "$kept"; do
	old[$h]=$(gw_hash_at "$h")
	assert_eq "height $h: the gateway answers A's hash" "$(node_hash_at "$NODE_A_URL" "$h")" \
		"${old[$h]}"
	assert_eq "height $h (deep below the tip) is then served from the cache" hit "$(gw_cache_at "$h")"
	block_at "$GW_URL/v1/$TOKEN" "$h" "$XG_VAR/reorg-old-$h" >/dev/null
	assert_eq "block $h (.bin) is then served from the cache" hit \
		"$(block_at "$GW_URL/v1/$TOKEN" "$h" "$XG_VAR/reorg-gw")"
done

# Every node pops 12 blocks (in parallel, so none re-syncs from another still holding
# them), then A mines 13 to another address: a new chain from height top-11 up.
pops=()
for url in $NODE_A_URL $NODE_B_URL $NODE_C_URL; do
	curl -s --max-time 30 -H 'Content-Type: application/json' -d '{"nblocks":12}' \
		"$url/pop_blocks" >/dev/null &
	pops+=($!)
done
wait "${pops[@]}"
new_top=$(mine 13 "$MERCHANT_ADDRESS") || new_top=''
check "the nodes agree on a new chain of 13 blocks" test "${new_top:-0}" -eq $((top + 1))
for h in "${orphaned[@]}"; do
	check "height $h changed on the nodes" \
		test "$(node_hash_at "$NODE_A_URL" "$h")" != "${old[$h]}"
done

# The quorum moves when the gateway's tip is the new top block.
new_hash=$(node_hash_at "$NODE_A_URL" "$new_top")
# (While the nodes disagree the gateway runs degraded — serving from the highest node and
# bypassing the immutable cache — so the tip alone does not say the quorum has moved.)
gw_tip() {
	gw_rpc get_last_block_header | jq -e --arg h "$new_hash" '.block_header.hash == $h' >/dev/null &&
		curl -s "$GW_ADMIN/readyz" | jq -e '.checks.quorum == "ok"' >/dev/null
}
check "the gateway's quorum tip moves to the new chain" wait_until 15 gw_tip
check "the gateway logged the reorg" grep -q '"event":"reorg"' "$GW_LOG"

for h in "${orphaned[@]}"; do
	for attempt in 1 2; do
		assert_eq "height $h (attempt $attempt): the winning chain's hash, never the orphaned one" \
			"$(node_hash_at "$NODE_B_URL" "$h")" "$(gw_hash_at "$h")"
	done
done
for h in "${orphaned[@]}"; do
	block_at "$GW_URL/v1/$TOKEN" "$h" "$XG_VAR/reorg-gw" >/dev/null
	block_at "$NODE_B_URL" "$h" "$XG_VAR/reorg-node" >/dev/null
	check "block $h (.bin): the winning chain's block, byte for byte" \
		cmp -s "$XG_VAR/reorg-node" "$XG_VAR/reorg-gw"
	check "… not the orphaned one" bash -c "! cmp -s '$XG_VAR/reorg-old-$h' '$XG_VAR/reorg-gw'"
done
for ((h = top - 11; h <= new_top; h++)); do
	[[ $(gw_hash_at "$h") == "$(node_hash_at "$NODE_A_URL" "$h")" ]] || break
done
assert_eq "every height from the fork to the new top matches the winning chain" \
	$((new_top + 1)) "$h"
assert_eq "height $kept, below the fork, is unchanged" "${old[$kept]}" "$(gw_hash_at "$kept")"
assert_eq "height $kept, below the fork, is still served from the cache" hit "$(gw_cache_at "$kept")"
assert_eq "block $kept (.bin), below the fork, is still served from the cache" hit \
	"$(block_at "$GW_URL/v1/$TOKEN" "$kept" "$XG_VAR/reorg-gw")"
check "… and unchanged" cmp -s "$XG_VAR/reorg-old-$kept" "$XG_VAR/reorg-gw"
