#!/usr/bin/env bash
# Nodes that don't fit the pool are refused (issue #31, part 2). The gateway pools only
# nodes with the same settings, read from each node's get_info (nettype, restricted) and
# get_version (the RPC version, (major << 16) | minor): gateway/nodes/fit.c, table-tested
# in tests/unit/gateway/nodes/test_fit.c.
#   - A stagenet monerod (this machine's 0.18.0, --offline, a fresh data dir: synchronized
#     at height 1, so every other health rule would pass it) configured as an own primary
#     beside the stack's regtest A and B, under [nodes] network = regtest: never up, its
#     reason in /v1/nodes, no vote in the quorum (A and B agree, not degraded), never
#     serves a read (every get_info through the gateway says fakechain), and the metrics
#     say what it is (xmrgate_gateway_node_info) and that it is refused.
#   - [nodes] min_rpc_version one minor above A's: A refused with the reason; B up when it
#     has that version (the stack's B is 0.18.4: 3.14 against A's 0.18.0, 3.10), refused
#     otherwise.
#   - [nodes] require_restricted: a node without --restricted-rpc refused with the reason.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

SN_RPC=$((XG_PORT_BASE + 70))
SN_P2P=$((XG_PORT_BASE + 71))
SN_DIR=$XG_VAR/nodes/fit-stagenet
SN_URL=http://127.0.0.1:$SN_RPC

check "the nodes agree on one chain" wait_until 120 nodes_agree

rm -rf "$SN_DIR" && mkdir -p "$SN_DIR"
defer rm -rf "$SN_DIR"
setsid monerod --stagenet --offline --data-dir "$SN_DIR" --log-file "$SN_DIR/monerod.log" \
	--non-interactive --p2p-bind-ip 127.0.0.1 --p2p-bind-port "$SN_P2P" \
	--rpc-bind-ip 127.0.0.1 --rpc-bind-port "$SN_RPC" --no-zmq --no-igd \
	--check-updates disabled --disable-dns-checkpoints >"$SN_DIR/monerod.out" 2>&1 </dev/null &
SN_PID=$!
defer stop_pid "$SN_PID"
sn_answers() { rpc "$SN_URL" get_info | jq -e '.nettype == "stagenet" and .synchronized' >/dev/null; }
check "a stagenet monerod answers, synchronized (offline, at its genesis)" wait_until 60 sn_answers || exit 1

version_of() { rpc "$1" get_version | jq -r '.version'; }
A_VERSION=$(version_of "$NODE_A_URL")
B_VERSION=$(version_of "$NODE_B_URL")
dotted() { echo "$(($1 >> 16)).$(($1 & 0xffff))"; }
echo "# RPC versions: A $(dotted "$A_VERSION"), B $(dotted "$B_VERSION"), stagenet $(dotted "$(version_of "$SN_URL")")"

nodes_table "a:primary b:standby"
psql_q "INSERT INTO nodes (name, url, priority, pruned) VALUES ('stagenet', '$SN_URL', 'primary', false)" >/dev/null

# ---- another network --------------------------------------------------------------------

check_here "a gateway on regtest over A, B and the stagenet node starts" \
	gateway_start fit --base nodes nodes.network=regtest || exit 1
ADM=$GW_ADMIN
node_is() { gw_node_status "$1" | jq -e "$2" >/dev/null; }
both_up() { node_is a '.up' && node_is b '.up'; }
check "A and B are up" wait_until 30 both_up
# Three rounds (2 s each) after A and B came up: a node that fit would be up by now.
rounds_pass() {
	local from
	from=$(metric "$ADM" xmrgate_gateway_prober_rounds_total)
	wait_until 30 metric_at_least "$ADM" xmrgate_gateway_prober_rounds_total $((from + $1))
}
check "three more probe rounds" rounds_pass 3
sn=$(gw_node_status stagenet)
echo "# /v1/nodes stagenet: $sn"
assert_json "the stagenet node is never up, refused for its network" "$sn" \
	'.up == false and .state == "down" and .fits == false and
	 .refused == "wrong network: node is on stagenet, gateway is on regtest" and
	 .last_error == .refused'
assert_json "… with what it told: stagenet, its RPC and release versions, not restricted" "$sn" \
	'.network == "stagenet" and (.rpc_version | test("^[0-9]+\\.[0-9]+$")) and
	 (.version | startswith("0.18.")) and .restricted == false'
assert_json "A is up and shows regtest, its RPC version, its mode, its error rate" \
	"$(gw_node_status a)" \
	".up and .fits and .refused == \"\" and .network == \"regtest\" and
	 .rpc_version == \"$(dotted "$A_VERSION")\" and (.restricted | type) == \"boolean\" and
	 (.error_rate | type) == \"number\" and (.failures | type) == \"number\""
assert_json "the quorum is A and B's, not degraded: the refused node has no vote" \
	"$(curl -s -H "Authorization: Bearer $XG_TEST_ADMIN_TOKEN" "$ADM/v1/quorum")" \
	'.degraded == false and .voters == 2 and .agreeing == 2'
check "the gateway logged the refusal with its reason" \
	grep -q '"event":"node_refused".*node stagenet does not fit the pool: wrong network' "$GW_LOG"
check "… and never logged it up" bash -c "! grep -q '\"event\":\"node_up\".*node stagenet ' '$GW_LOG'"

check_here "a tenant is granted" grant_tenant --bare sovereign 1
foreign=0 served=0
for ((i = 0; i < 30; i++)); do
	nt=$(gw_call /json_rpc '{"jsonrpc":"2.0","id":0,"method":"get_info"}' | jq -r '.result.nettype // empty')
	[[ -n $nt ]] && served=$((served + 1))
	[[ $nt == stagenet ]] && foreign=$((foreign + 1))
	nt=$(gw_call /get_info '' | jq -r '.nettype // empty')
	[[ -n $nt ]] && served=$((served + 1))
	[[ $nt == stagenet ]] && foreign=$((foreign + 1))
done
echo "# 60 get_info reads through the gateway: $served answered, $foreign by the stagenet node"
assert_eq "every read is answered by a regtest node" "60 0" "$served $foreign"

m=$(curl -s "$ADM/metrics")
check "metrics: the stagenet node's info series" grep -q \
	'^xmrgate_gateway_node_info{node="stagenet",network="stagenet",rpc_version="[0-9.]*",restricted="false"} 1$' <<<"$m"
check "metrics: A's info series (regtest)" grep -q \
	"^xmrgate_gateway_node_info{node=\"a\",network=\"regtest\",rpc_version=\"$(dotted "$A_VERSION")\",restricted=\"[a-z]*\"} 1$" <<<"$m"
check "metrics: the stagenet node is refused" grep -q '^xmrgate_gateway_node_refused{node="stagenet"} 1$' <<<"$m"
check "metrics: A is not" grep -q '^xmrgate_gateway_node_refused{node="a"} 0$' <<<"$m"
check "metrics: each node's error rate" grep -q '^xmrgate_gateway_node_error_rate{node="a"} ' <<<"$m"
gateway_stop fit

# ---- a minimum RPC version --------------------------------------------------------------

MIN=$(dotted $((A_VERSION + 1)))
psql_q "DELETE FROM nodes WHERE name = 'stagenet'" >/dev/null
check_here "a gateway with [nodes] min_rpc_version = $MIN starts" \
	gateway_start fitv --base nodes --wait alive nodes.network=regtest "nodes.min_rpc_version=$MIN" || exit 1
ADM=$GW_ADMIN
check "three probe rounds" rounds_pass 3
a=$(gw_node_status a)
echo "# /v1/nodes a: $a"
assert_json "A (RPC $(dotted "$A_VERSION")) is refused for its version" "$a" \
	".up == false and .fits == false and
	 .refused == \"RPC version $(dotted "$A_VERSION") below the minimum $MIN\""
if ((B_VERSION > A_VERSION)); then
	check "B (RPC $(dotted "$B_VERSION")) fits and is up" wait_until 20 node_is b '.up and .fits'
	check "reads are served (by B)" test -n "$(gw_call /get_height '' | jq -r '.height // empty')"
else
	assert_json "B (RPC $(dotted "$B_VERSION")) is refused too" "$(gw_node_status b)" \
		".up == false and .refused == \"RPC version $(dotted "$B_VERSION") below the minimum $MIN\""
fi
gateway_stop fitv

# ---- restricted mode required -----------------------------------------------------------

check_here "a gateway with [nodes] require_restricted = true starts" \
	gateway_start fitr --base nodes --wait alive nodes.require_restricted=true || exit 1
ADM=$GW_ADMIN
check "three probe rounds" rounds_pass 3
for n in a b; do
	s=$(gw_node_status "$n")
	if jq -e '.restricted == true' >/dev/null <<<"$s"; then
		assert_json "node $n, restricted, fits" "$s" '.fits and .refused == ""'
	else
		assert_json "node $n, not restricted, is refused for it" "$s" \
			'.up == false and .fits == false and
			 .refused == "not in restricted RPC mode, which is required"'
	fi
done
gateway_stop fitr

