#!/usr/bin/env bash
# New blocks through ZMQ: the stack's nodes publish json-minimal-chain_main (--zmq-pub).
# A gateway subscribed to them ([nodes] zmq) with a 10 s probe interval shows a block mined
# on node A in get_block_count within 3 s, block after block — before the next probe
# could — and its GET /nodes counts the publication rounds whose probes confirmed the
# blocks. With ZMQ off, and with ZMQ configured but silent (nothing listens at the
# addresses), blocks still show up through the probes at a 2 s interval.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

check "the nodes table holds A, B and C (primary)" nodes_table "a:primary b:primary c:primary"
check_here "a tenant is granted" grant_tenant --bare sovereign 1

block_count() { gw_rpc get_block_count 2>/dev/null | jq -er '.count'; }
mine_on_a() {
	rpc "$NODE_A_URL" generateblocks \
		"{\"amount_of_blocks\":1,\"wallet_address\":\"$MINER_ADDRESS\"}" | jq -er '.height'
}
# shows_within MS WANT: polls get_block_count through the gateway until it is WANT;
# prints the milliseconds it took; false after MS.
shows_within() {
	local limit=$1 want=$2 t0 now
	t0=$(now_ms)
	while :; do
		now=$(now_ms)
		if [[ $(block_count) == "$want" ]]; then
			echo $((now - t0))
			return 0
		fi
		((now - t0 > limit)) && return 1
		sleep 0.02
	done
}
all_agree_with_gateway() {
	local want
	want=$(rpc "$NODE_A_URL" get_info | jq -er '.height') || return 1
	[[ $(block_count) == "$want" ]]
}

# --- ZMQ on, probes every 10 s ----------------------------------------------------------
check_here "a gateway with [nodes] zmq starts and is ready" gateway_start zmq --base nodes \
	nodes.probe_interval=10s nodes.zmq="a=$NODE_A_ZMQ, b=$NODE_B_ZMQ, c=$NODE_C_ZMQ"
subscribed() { (($(grep -c '"zmq_subscribed"' "$GW_LOG") >= 3)); }
check "it subscribes to the three nodes' publications" wait_until 15 subscribed
check "the gateway's chain length is the nodes' (after one probe round)" \
	wait_until 30 all_agree_with_gateway
sleep 1 # a SUB socket receives only once its subscription has reached the node

for i in 1 2 3 4 5; do
	before=$(block_count)
	top=$(mine_on_a)
	check "block $i mined on A (height $top)" test -n "$top"
	if ms=$(shows_within 3000 $((before + 1))); then
		echo "# block $i: get_block_count through the gateway showed it after $ms ms"
		check "block $i shows in get_block_count through the gateway within 3 s" true
	else
		check "block $i shows in get_block_count through the gateway within 3 s" false
	fi
	sleep 0.$((RANDOM % 5 + 2))
done
status=$(gw_status)
echo "# publications: $(jq -c '.publications' <<<"$status")"
assert_json "publication rounds ran, and their probes confirmed the blocks" "$status" \
	'.publications.rounds >= 5 and .publications.confirmed >= 5'
assert_json "the quorum tip is the nodes' chain" "$status" \
	".quorum.height == $(rpc "$NODE_A_URL" get_info | jq -er '.height')"
gateway_stop zmq

# --- ZMQ off: probes every 2 s ----------------------------------------------------------
# probes_show NAME: a block mined on A shows up through the probes alone.
probes_show() {
	local name=$1 before top ms
	before=$(block_count)
	top=$(mine_on_a)
	check "$name: a block mined on A (height $top)" test -n "$top"
	if ms=$(shows_within 10000 $((before + 1))); then
		echo "# $name: get_block_count through the gateway showed it after $ms ms"
		check "$name: the block shows in get_block_count through the probes (within 10 s)" true
	else
		check "$name: the block shows in get_block_count through the probes (within 10 s)" false
	fi
	assert_json "$name: no publication round ran" "$(gw_status)" '.publications.rounds == 0'
}

check_here "a gateway without [nodes] zmq starts and is ready" gateway_start nozmq --base nodes
check "no ZMQ subscription" bash -c "! grep -q '\"zmq_subscribed\"' '$GW_LOG'"
probes_show "ZMQ off"
gateway_stop nozmq

# --- ZMQ configured but silent (nothing listens there) ----------------------------------
silent=tcp://127.0.0.1:$((XG_PORT_BASE + 14))
check_here "a gateway whose ZMQ addresses are silent starts and is ready" \
	gateway_start silent --base nodes nodes.zmq="a=$silent,b=$silent,c=$silent"
probes_show "ZMQ silent"
gateway_stop silent

# A bad setting is refused at start, naming the key.
refusal=$(gateway_exit zmq-refused --base nodes nodes.zmq="a=http://x:1")
echo "# $refusal" | head -n 3
refused_naming_key() { [[ $refusal == *'[nodes] zmq'* ]]; }
check "a malformed [nodes] zmq is refused at start, naming the key" refused_naming_key
