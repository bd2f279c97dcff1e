#!/usr/bin/env bash
# shellcheck disable=SC2153 # NODE_*_URL come from stack.env
# Wallets that restore through the gateway share their sync. On a chain longer than one
# get_blocks.bin batch (1000 blocks) and the settled depth:
#   - a get_blocks.bin batch from the genesis block that more blocks follow is stored as
#     settled: the second ask is a hit, and so is an ask after a new block, byte for byte
#     what the node that served the miss (A or B: the nodes' versions differ, and so do
#     their bytes) answers then (its current_height is the new chain height);
#   - stock wallet-rpcs (this machine's, 0.18.0) restoring a view-only wallet at once
#     through the gateway reach the same height and balance as one restoring on node A
#     directly, and the gateway served the batch they share from its settled cache (its
#     metrics: xmrgate_gateway_cache_settled_hits_total).
# The chain is mined up to SYNC_CACHE_BLOCKS (1040) once; later runs find it long enough.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"

work=$(mktemp -d "$XG_VAR/sync-cache.XXXXXX")
defer rm -rf "$work"
W_DIRECT=$((XG_PORT_BASE + 70)) W_GW=$((XG_PORT_BASE + 71)) WALLETS=3

check "the nodes table holds A and B" nodes_table "a:primary b:primary"
check_here "a tenant is granted" grant_tenant --bare sovereign 1
# A 1000-block batch takes the node a while on a busy machine: node and request timeouts
# far above it, so that no retry or hedge muddles the counts.
# No hedges either: one node's answer is the one compared.
check_here "a gateway starts and is ready" gateway_start synccache --base nodes \
	nodes.timeout=60s server.request_timeout=120s nodes.hedge_budget=0

want=${SYNC_CACHE_BLOCKS:-1040}
have=$(rpc "$NODE_A_URL" get_block_count | jq -r '.count')
if ((have < want)); then
	echo "# mining $((want - have)) blocks (once: later runs find the chain long enough)"
	mine $((want - have)) >/dev/null
fi
mine 1 >/dev/null
height=$(rpc "$NODE_A_URL" get_block_count | jq -r '.count')
check "the gateway's quorum reaches the chain height ($height)" wait_until 30 gw_quorum_at "$height"

# --- a settled batch, byte for byte ------------------------------------------------------
req=$work/req through=$work/through
genesis=$(rpc "$NODE_A_URL" get_block_header_by_height '{"height":0}' | jq -r '.block_header.hash')
epee_blocks_body "$genesis" >"$req"
ask() { # the gateway's cache header for the body in $req, nodes A's and B's answers before
	bin_ask_nodes /get_blocks.bin "$req" "$work/direct"
	bin_post "$GW_URL/v1/$TOKEN" /get_blocks.bin "$req" "$through" | cache_header
}
served_by=
same_as_a_node() { # the answer is A's or B's, byte for byte, and the same node's each time
	local n
	n=$(bin_whose "$work/direct" "$through") || return 1
	[[ -z $served_by || $served_by == "$n" ]] || return 1
	served_by=$n
}
first=$(ask)
same_as_a_node && served_first=1
check "the first batch from genesis is a node's answer, byte for byte" test -n "${served_first:-}"
second=$(ask)
same_as_a_node && served_second=1
check "the second ask is the same node's answer, byte for byte" test -n "${served_second:-}"
assert_eq "the batch from genesis: a miss, then a hit" "miss hit" "${first:--} ${second:--}"
settled0=$(metric "$GW_ADMIN" xmrgate_gateway_cache_settled_hits_total)
mine 1 >/dev/null
check "the quorum moves to the new block" wait_until 30 gw_quorum_at $((height + 1))
third=$(ask)
assert_eq "after a new block the settled batch is still a hit" "hit" "${third:--}"
same_as_a_node && served_third=1
check "and is that node's answer now, byte for byte (current_height moved with the tip)" \
	test -n "${served_third:-}"
settled1=$(metric "$GW_ADMIN" xmrgate_gateway_cache_settled_hits_total)
check "the settled-hit counter counts it" test "$settled1" -gt "$settled0"

# --- stock wallets -------------------------------------------------------------------------
view_key=$(rpc "$PAYER_WALLET_URL" query_key '{"key_type":"view_key"}' | jq -r '.key')
restore=$(jq -cn --arg a "$PAYER_ADDRESS" --arg v "$view_key" \
	'{filename: "w", password: "", address: $a, viewkey: $v, restore_height: 0, autosave_current: false}')
restored() { # PORT: restore from height 0 and refresh; prints "height balance"
	local url=http://127.0.0.1:$1
	XG_RPC_TIMEOUT=600 rpc "$url" generate_from_keys "$restore" >/dev/null &&
		XG_RPC_TIMEOUT=600 rpc "$url" refresh '{"start_height":0}' >/dev/null &&
		echo "$(rpc "$url" get_height | jq -r '.height') $(rpc "$url" get_balance '{}' | jq -r '.balance')"
}
check_here "a wallet-rpc on node A starts" \
	wallet_rpc_start --trusted --log-level 0 direct "$W_DIRECT" "${NODE_A_URL#http://}"
restored "$W_DIRECT" >"$work/direct-result"
read -r d_height d_balance <"$work/direct-result" || true
check "the direct wallet restored to the chain height" test "${d_height:-0}" -ge $((height + 1))
check "and sees the payer's coins" test "${d_balance:-0}" -gt 0
for i in $(seq 0 $((WALLETS - 1))); do
	check_here "wallet-rpc $i on the gateway starts" wallet_rpc_start --trusted --log-level 0 \
		"gw-$i" $((W_GW + i)) "127.0.0.1:$(gw_port synccache)" "$LOGIN"
done
settled0=$(metric "$GW_ADMIN" xmrgate_gateway_cache_settled_hits_total)
coalesced0=$(metric "$GW_ADMIN" xmrgate_gateway_cache_coalesced_total)
pids=()
for i in $(seq 0 $((WALLETS - 1))); do
	restored $((W_GW + i)) >"$work/gw-result-$i" &
	pids+=($!)
done
wait "${pids[@]}" || true
for i in $(seq 0 $((WALLETS - 1))); do
	assert_eq "wallet $i through the gateway: the direct wallet's height and balance" \
		"$d_height $d_balance" "$(cat "$work/gw-result-$i")"
done
settled=$(($(metric "$GW_ADMIN" xmrgate_gateway_cache_settled_hits_total) - settled0))
coalesced=$(($(metric "$GW_ADMIN" xmrgate_gateway_cache_coalesced_total) - coalesced0))
echo "# during the restores: $settled settled hits, $coalesced answered after waiting for one in flight"
check "the wallets' shared first batch came from the settled cache (>= $((WALLETS - 1)) hits)" \
	test "$settled" -ge $((WALLETS - 1))
