#!/usr/bin/env bash
# The .bin endpoints' answers come from the cache, byte for byte what a node sends:
# get_blocks_by_height.bin for heights deep below the quorum tip, get_outs.bin for outputs
# that are deep and unlocked, get_output_distribution.bin and get_blocks.bin for the quorum
# tip. The JSON forms keep the same depth rule, whether asked for by height, hash or index.
# What is near the tip, or an output still locked, is asked of the node every time. The
# wallet's client field is stripped, so it does not split the cache; a body that is not
# portable storage reaches the node as it came.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

check "the nodes table holds A and B" nodes_table "a:primary b:primary"
check_here "a tenant is granted" grant_tenant --bare sovereign 1
check_here "a gateway starts and is ready" gateway_start bincache --base nodes
mine 2 >/dev/null
top=$(rpc "$NODE_A_URL" get_block_count | jq -r '.count - 1')

check "the gateway's quorum tip reaches the top block" wait_until 15 gw_quorum_at $((top + 1))

req=$XG_VAR/bin-req direct=$XG_VAR/bin-direct through=$XG_VAR/bin-through

# Either node may serve the gateway (it picks by load), and their monerod versions differ
# (A 0.18.0, B 0.18.4), and so may their bytes: an answer is compared with both (nodes_lib.sh
# bin_ask_nodes, bin_whose), and B's get_blocks.bin carries its clock (same_bin). A hit is
# the stored miss, byte for byte.

# asked_twice PATH WHAT EXPECTED_FIRST EXPECTED_SECOND: the gateway's cache header for two
# calls with the body in $req, each answer compared with the nodes'; a hit is the bytes of
# the miss it was stored from.
asked_twice() {
	local first second
	bin_ask_nodes "$1" "$req" "$direct"
	first=$(bin_post "$GW_URL/v1/$TOKEN" "$1" "$req" "$through-1" | cache_header)
	check "$2: the first answer is a node's" bin_whose "$direct" "$through-1"
	second=$(bin_post "$GW_URL/v1/$TOKEN" "$1" "$req" "$through" | cache_header)
	if [[ $4 == hit ]]; then
		check "$2: the second is the first, byte for byte" cmp -s "$through-1" "$through"
	else
		check "$2: the second answer is a node's" bin_whose "$direct" "$through"
	fi
	assert_eq "$2: the cache says '$3' then '$4'" "$3 $4" "${first:--} ${second:--}"
}

deep=$((top - 20))
epee_heights_body "$deep" >"$req"
asked_twice /get_blocks_by_height.bin "block $deep (deep)" miss hit
bin_post "$GW_URL/v1/$TOKEN" /get_blocks_by_height.bin "$req" "$through" |
	grep -qi '^Content-Type: application/octet-stream$'
check "a cached .bin answer is application/octet-stream" test $? -eq 0

epee_heights_body $((top - 2)) >"$req"
asked_twice /get_blocks_by_height.bin "block $((top - 2)) (near the tip)" - -

# The same request with the wallet's client field first: stripped, so the entry is the same.
printf '%b' "$EPEE_HEADER\\x08\\x06client\\x0a\\x20abcdefgh\\x07heights\\x85\\x04$(epee_u64 "$deep")" >"$req"
bin_post "$GW_URL/v1/$TOKEN" /get_blocks_by_height.bin "$req" "$through" | cache_header >"$XG_VAR/bin-cache"
assert_eq "block $deep asked with a client field: the same entry" hit "$(cat "$XG_VAR/bin-cache")"
epee_heights_body "$deep" >"$req"
bin_ask_nodes /get_blocks_by_height.bin "$req" "$direct"
check "… and the same bytes" bin_whose "$direct" "$through"

# Outputs: the first RingCT output (block 1's coinbase, long unlocked) and the newest one
# (the last coinbase, locked for 60 blocks).
outputs=$(curl -s "$NODE_A_URL/json_rpc" -d '{"jsonrpc":"2.0","id":0,"method":"get_output_distribution","params":{"amounts":[0],"cumulative":true,"binary":false}}' |
	jq -r '.result.distributions[0].distribution[-1]')
check "node A counts its RingCT outputs ($outputs)" test "${outputs:-0}" -gt 1
epee_outs_body 0 >"$req"
asked_twice /get_outs.bin "output 0 (deep, unlocked)" miss hit
epee_outs_body $((outputs - 1)) >"$req"
asked_twice /get_outs.bin "output $((outputs - 1)) (locked)" miss miss

# The JSON forms follow the same rule: /get_outs for the deep unlocked output and the
# locked one, and a block header asked for by hash, cached only once the block is deep.
json_twice() { # json_twice PATH BODY WHAT FIRST SECOND
	local first second
	first=$(gw_headers "$1" "$2" | cache_header)
	second=$(gw_headers "$1" "$2" | cache_header)
	assert_eq "$3: the cache says '$4' then '$5'" "$4 $5" "${first:--} ${second:--}"
}
json_twice /get_outs '{"outputs":[{"amount":0,"index":0}]}' "JSON /get_outs, output 0" miss hit
json_twice /get_outs "{\"outputs\":[{\"amount\":0,\"index\":$((outputs - 1))}]}" \
	"JSON /get_outs, output $((outputs - 1)) (locked)" miss miss
by_hash() {
	jq -cn --arg h "$(rpc "$NODE_A_URL" get_block_header_by_height "{\"height\":$1}" |
		jq -r '.block_header.hash')" \
		'{jsonrpc: "2.0", id: 1, method: "get_block_header_by_hash", params: {hash: $h}}'
}
json_twice /json_rpc "$(by_hash "$deep")" "block $deep's header by hash (deep)" miss hit
json_twice /json_rpc "$(by_hash "$top")" "block $top's header by hash (the tip)" miss miss

# get_output_distribution.bin, which a wallet asks before every transfer: cached for the
# quorum tip, asked again once a block moves it.
dist_body() {
	printf '%b' "$EPEE_HEADER\\x0c\\x07amounts\\x85\\x04$(epee_u64 0)\\x0acumulative\\x0b\\x01\\x06binary\\x0b\\x01"
}
dist_body >"$req"
asked_twice /get_output_distribution.bin "the output distribution" miss hit
new_top=$(mine 1)
check "the gateway's quorum tip moves to the new block" wait_until 15 gw_quorum_at $((new_top + 1))
asked_twice /get_output_distribution.bin "the output distribution after a block" miss hit

# get_blocks.bin as a synced wallet polls it: one answer per body and tip, shared.
genesis=$(rpc "$NODE_A_URL" get_block_header_by_height '{"height":0}' | jq -r '.block_header.hash')
epee_blocks_body "$genesis" >"$req"
asked_twice /get_blocks.bin "get_blocks.bin after the genesis block" miss hit

# A body that is not portable storage is refused by the gateway itself, never forwarded,
# with the status monerod gives it.
printf 'not epee' >"$req"
bin_post "$NODE_A_URL" /get_blocks_by_height.bin "$req" "$direct" | head -1 >"$XG_VAR/bin-status-direct"
bin_post "$GW_URL/v1/$TOKEN" /get_blocks_by_height.bin "$req" "$through" | head -1 >"$XG_VAR/bin-status-gw"
assert_eq "a body that is not epee gets the node's own status" \
	"$(cut -d' ' -f2 "$XG_VAR/bin-status-direct")" "$(cut -d' ' -f2 "$XG_VAR/bin-status-gw")"
check "the gateway is still ready" gw_ready
