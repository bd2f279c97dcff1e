#!/usr/bin/env bash
# A 0.18.4 wallet's pool view through the gateway (its getblocks.bin asks for the pool
# with requested_info and pool_info_since; the gateway's pool rule, gateway/rpc/plan.c
# plan_pool_rule): a payment to the wallet shows in get_transfers' pool within two
# refreshes while its node is healthy, and also when its node is frozen (kill -STOP)
# between those refreshes and the gateway moves the wallet to another node.
#
# Its own gateway (tests/integration/nodes_lib.sh: probes every 2 s) over two 0.18.4
# nodes: B (the stack's) primary, and D, started here from Debian 13's root
# (scripts/monero-trixie.sh) on the stack's chain, standby; a wallet moved to a 0.18.0
# node would fall back to the full pool hashes and prove nothing. Debian 13's
# monero-wallet-rpc logs in with Digest.
#
# The frozen case is made as hard for a moved wallet as it can be: payment 2 is in D's
# pool only (submitted there with do_not_relay) before refresh 1, which B answers
# without it; B is frozen; refresh 2 goes to D, and D took payment 2 before the
# daemon_time of B's answer, the wallet's pool_info_since (the gateway drops that field,
# so D is asked for its whole pool). The wallet must see payment 2 on that refresh. The
# wire shows the rule too: asked directly for what it added since now, D answers
# incrementally without payment 2; the same request through the gateway gets D's whole
# pool, with it.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

TRIXIE_SH=$XG_REPO/scripts/monero-trixie.sh
work=$(mktemp -d "$XG_VAR/pool-freeze-test.XXXXXX")
defer rm -rf "$work"
W_PORT=$((XG_PORT_BASE + 99))
D_P2P=$((XG_PORT_BASE + 16)) D_RPC=$((XG_PORT_BASE + 17))
NODE_D_URL=http://127.0.0.1:$D_RPC

d_synced() {
	[[ $(curl -sf "$NODE_D_URL/get_info" | jq -r '"\(.height) \(.top_block_hash)"') == \
		"$(curl -sf "$NODE_A_URL/get_info" | jq -r '"\(.height) \(.top_block_hash)"')" ]]
}
nodes_b_d() {
	nodes_migrate || true
	psql_q "BEGIN; DELETE FROM nodes;
		INSERT INTO nodes (name, url, priority, pruned) VALUES ('b', '$NODE_B_URL', 'primary', false),
			('d', '$NODE_D_URL', 'standby', false); COMMIT;" >/dev/null
}
refresh_once() { XG_RPC_TIMEOUT=90 rpc "$W" refresh '{}'; }
# refreshes_until_seen TXID MAX: refreshes (at most MAX times) until the wallet's pool view
# has TXID; prints how many it took.
refreshes_until_seen() {
	local n
	for ((n = 1; n <= $2; n++)); do
		XG_RPC_TIMEOUT=90 rpc "$W" refresh '{}' >/dev/null || echo "# refresh $n failed" >&2
		if in_wallet_pool "$W" "$1"; then
			echo "$n"
			return 0
		fi
	done
	return 1
}
# pool_query URL SINCE: a getblocks.bin asking for the pool only (requested_info 2) with
# pool_info_since SINCE, as a 0.18.4 wallet polls, POSTed to URL; prints the answer in hex.
pool_query() {
	local genesis body=$work/pool-query.bin
	genesis=$(rpc "$NODE_A_URL" get_block_header_by_height '{"height":0}' | jq -r .block_header.hash)
	printf '%b' "$EPEE_HEADER\\x14\\x0erequested_info\\x08\\x02\\x0fpool_info_since\\x05$(epee_u64 "$2")" >"$body"
	# shellcheck disable=SC2001 # two hex digits a byte
	printf '%b' "\\x09block_ids\\x0a\\x81\\x00$(sed 's/../\\x&/g' <<<"$genesis")" >>"$body"
	printf '%b' "\\x0cstart_height\\x05$(epee_u64 0)\\x05prune\\x0b\\x01" >>"$body"
	curl -sf --max-time 30 --data-binary @"$body" "$1/getblocks.bin" | od -An -v -tx1 | tr -d ' \n'
}
# pool_extent HEX: the answer's pool_info_extent (1 incremental, 2 the whole pool).
pool_extent() { sed -n "s/.*$(printf pool_info_extent | od -An -v -tx1 | tr -d ' \n')080\([0-9]\).*/\1/p" <<<"$1"; }
node_requests() { metric_sum "$GW_ADMIN" xmrgate_gateway_node_requests_total "node=\"$1\""; }
node_up() { gw_node_status "$1" | jq -e '.up' >/dev/null; }
node_down() { ! node_up "$1"; }
both_up() { node_up b && node_up d; }

check "the Debian 13 root with monero 0.18.4 is there (built when missing)" "$TRIXIE_SH" root
check_here "node D (0.18.4) starts" node_start pool-freeze-d "$D_P2P" "$D_RPC" --trixie || exit 1
check "… and syncs the stack's chain" wait_until 120 d_synced
assert_json "… it runs 0.18.4 or newer (RPC 3.14)" "$(rpc "$NODE_D_URL" get_version)" '.version >= 196622'
check_here "nodes: B primary, D standby (both 0.18.4)" nodes_b_d
check_here "a tenant for the test gateway" grant_tenant --bare sovereign 1
check_here "the test gateway is ready" gateway_start pool-freeze --base nodes
check "it has B and D up" wait_until 30 both_up
check_here "a 0.18.4 wallet-rpc through the gateway (Digest) starts" \
	wallet_rpc_start --trixie pool "$W_PORT" "127.0.0.1:$(gw_port pool-freeze)" "$LOGIN" || exit 1
W=$WALLET_URL
check "create a wallet" rpc "$W" create_wallet '{"filename":"pool","language":"English"}'
ADDRESS=$(rpc "$W" get_address '{"account_index":0}' | jq -r .address)
v=$(wallet_rpc_version pool)
check "it runs 0.18.4 or newer ($v)" version_at_least "$v" 0.18.4
check "refresh 0: it syncs through the gateway" refresh_once

# 1. B healthy: the payment reaches B's pool; the wallet sees it within two refreshes,
# answered by B.
b_before=$(node_requests b)
txid=$(payer_pays "$ADDRESS" 300000000000)
check "payment 1 is made" test -n "$txid"
check "… it reaches B's pool" wait_until 30 in_pool_hashes "$NODE_B_URL" "$txid"
# D's pool keeps what it added and removed from its first transaction on: once payment 1
# came and went, D can answer incrementally.
check "… and D's" wait_until 30 in_pool_hashes "$NODE_D_URL" "$txid"
took=$(refreshes_until_seen "$txid" 2)
check "B healthy: the wallet's pool view has payment 1 within two refreshes (took ${took:-more})" test -n "$took"
check "… its refreshes were answered by B" test "$(node_requests b)" -gt "$b_before"
check "mine 1 block (the pool empties)" mine 1

# 2. Payment 2 in D's pool only, refresh 1 on B (without it), B frozen, refresh 2 on D.
signed=$(rpc "$PAYER_WALLET_URL" transfer "$(jq -cn --arg a "$ADDRESS" \
	'{destinations:[{amount:400000000000,address:$a}], do_not_relay:true, get_tx_hex:true}')")
txid=$(jq -r '.tx_hash // empty' <<<"$signed")
check "payment 2 is signed (not relayed)" test -n "$txid"
sent=$(curl -sf "$NODE_D_URL/send_raw_transaction" \
	-d "$(jq -c '{tx_as_hex: .tx_blob, do_not_relay: true}' <<<"$signed")")
assert_json "… submitted to D only (do_not_relay)" "$sent" '.status == "OK"'
check "… it is in D's pool" wait_until 10 in_pool_hashes "$NODE_D_URL" "$txid"
check "… and not in B's" not_in_pool_hashes "$NODE_B_URL" "$txid"
sleep 1 # B's daemon_time in refresh 1 is after D took payment 2
b_before=$(node_requests b)
check "refresh 1, on B" refresh_once
check "… answered by B" test "$(node_requests b)" -gt "$b_before"
check "… payment 2 is not in the wallet's pool view (B never had it)" not_in_wallet_pool "$W" "$txid"
freeze b
check "B frozen: the gateway marks it down" wait_until 30 node_down b
d_before=$(node_requests d)
took=$(refreshes_until_seen "$txid" 1)
check "refresh 2, B frozen: payment 2 is in the wallet's pool view" test -n "$took"
check "… refresh 2 was answered by D" test "$(node_requests d)" -gt "$d_before"
assert_json "… with its amount" "$(rpc "$W" get_transfers '{"pool":true}')" \
	"[.pool[]? | select(.txid == \"$txid\")] | length == 1 and .[0].amount == 400000000000"
# The rule itself, as the wire shows it: asked for what was added since now, D alone answers
# incrementally, without payment 2; through the gateway (B frozen, so D answers) the
# field is dropped and the answer is D's whole pool, with it.
direct=$(pool_query "$NODE_D_URL" "$(date +%s)")
assert_eq "D asked directly for its pool since now: an incremental answer" 1 "$(pool_extent "$direct")"
check "… without payment 2" test "${direct/$txid/}" = "$direct"
via=$(pool_query "$GW_URL/v1/$TOKEN" "$(date +%s)")
assert_eq "the same request through the gateway: D's whole pool" 2 "$(pool_extent "$via")"
check "… with payment 2" test "${via/$txid/}" != "$via"
thaw b
check "B thawed: the gateway has it up again" wait_until 60 node_up b
# Payment 2 goes to every node, and a block takes it out of the pools.
assert_json "payment 2 is relayed through A" "$(curl -sf "$NODE_A_URL/send_raw_transaction" \
	-d "$(jq -c '{tx_as_hex: .tx_blob}' <<<"$signed")")" '.status == "OK"'
check "mine 1 block (the pools empty for the tests after this one)" mine 1
# The payer signed payment 2 without relaying it, so its wallet does not count those outputs
# as spent until it sees the block: it refreshes now, for the tests after this one.
payer_refreshed() {
	XG_RPC_TIMEOUT=120 rpc "$PAYER_WALLET_URL" refresh '{}' | jq -e 'has("blocks_fetched")' >/dev/null
}
check "the payer's wallet has the block" payer_refreshed
