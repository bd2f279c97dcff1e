#!/usr/bin/env bash
# The flood drill (issue #30). Two crowds of attackers flood at once for FLOOD_S seconds
# with XMR402 challenges through the gateway, junk proofs of public and of made-up txids
# (billing holds those until unseen_hold), free purchases at billing, and slow and
# burst-then-trickle bodies that hold billing's connections (tests/drills/flood.py):
#   - 1,000 loopback addresses (127.0.100.2 … 127.0.103.251, four /24s) at the stack's
#     gateway and billing;
#   - 1,000 addresses of one ULA /64, from a network namespace this drill makes (a machine
#     on a bridge: tests/integration/netns_lib.sh), at a second gateway and billing bound to
#     the bridge's IPv6 address, over the same PostgreSQL, nodes and wallet;
# while a buyer buys through the web form (tiers, a paid invoice, its page) and through
# XMR402 (the draft client pays and is served), and a paying tenant's wallet
# (monero-wallet-rpc through the gateway with its Digest login) syncs the chain and sends a
# transfer. Every billing runs the production bounds for free tenants and the XMR402 shares
# (the stack's are out of the way). Checks: the buyer's calls p99 under 1 s and none
# failed; the transfer reaches a node's pool; free tenants minted by the loopback crowd
# within the per-network bound (4 networks × [invoices] free_network_per_hour), by the /64
# within one client's ([invoices] free_burst: a /64 is one client); every daemon's peak
# memory printed and under MEM_MIB; the drill stops by itself. `make drill-flood` runs it
# (root: it makes the namespace). Not here: PROXY-protocol floods (test_proxy_reader).
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/../integration/lib.sh"
# shellcheck source=tests/integration/xmr402_lib.sh
. "$(dirname "$0")/../integration/xmr402_lib.sh"
# shellcheck source=tests/integration/netns_lib.sh
. "$(dirname "$0")/../integration/netns_lib.sh"

FLOOD_S=${XG_FLOOD_S:-40}
ADDRESSES=1000
NETWORKS=4
NET_BOUND=10   # [invoices] free_network_per_hour's default
CLIENT_BOUND=2 # [invoices] free_burst's default
MEM_MIB=256
BUYER=127.0.98.2
AGENT=127.0.97.2
TIER=agent
CAP=100000000000
W=$(mktemp -d)
defer rm -rf "$W"

check_here "the agent tier confirms after 2 blocks" x4_setup "$TIER" 2 || exit 1
# what the attackers leave counts against their networks for an hour: take it back
defer psql_q "DELETE FROM free_grants WHERE client LIKE '4:127.0.10_.%'"
defer psql_q "UPDATE invoices SET expires_at = now() - interval '1 minute'
	WHERE channel = 'xmr402' AND state = 'pending' AND client_network LIKE '4:127.0.10_.%'"
BOUNDS=("invoices.free_network_per_hour=$NET_BOUND" invoices.free_network_per_day=40
	invoices.free_global_per_hour=200 xmr402.challenge_share=5 xmr402.verify_share=10
	invoices.create_burst=100)
check_here "billing restarted with the production bounds on free tenants and XMR402 shares" \
	stack_billing_restart "${BOUNDS[@]}"
defer stack_billing_restart
BILLING_PID=$(head -n 1 "$XG_VAR/run/billing.pid")
GATEWAY_PID=$(head -n 1 "$XG_VAR/run/gateway.pid")
check "both daemons run" kill -0 "$BILLING_PID" "$GATEWAY_PID"

# The IPv6 crowd's machine, and the daemons it floods.
PREFIX6=$NS_PREFIX6
HOST6=$(ns_addr6 1)
defer psql_q "DELETE FROM free_grants WHERE client LIKE '6:$PREFIX6:%'"
defer psql_q "UPDATE invoices SET expires_at = now() - interval '1 minute'
	WHERE channel = 'xmr402' AND state = 'pending' AND client_network LIKE '6:${PREFIX6%:*}:%'"
v6_machine() { ns_net_up && ns_net6_up && ns_add v6 2 && ns_add6 v6 2 $ADDRESSES; }
check_here "a machine with $ADDRESSES addresses of $PREFIX6::/64" v6_machine || exit 1
check_here "a second billing, bound to $HOST6" billing_start v6 --base stack \
	"server.bind=$HOST6" "${BOUNDS[@]}" || exit 1
check_here "a second gateway, bound to $HOST6" gateway_start v6 "server.bind=$HOST6" || exit 1
V6_GATEWAY_URL=$(gw_url v6) V6_BILLING_URL=$(billing_url v6)
V6_BILLING_PID=$(billing_pid v6) V6_GATEWAY_PID=$(gw_pid v6)
# from the machine: billing's tiers, and the gateway's answer to a call without a credential
answers_from_v6() {
	ns_exec v6 curl -sf -o /dev/null --max-time 5 --interface "$(ns_addr6 2)" "$V6_BILLING_URL/api/tiers" &&
		[[ $(ns_exec v6 curl -s -o /dev/null -w '%{http_code}' --max-time 5 --interface "$(ns_addr6 2)" \
			-d '{"jsonrpc":"2.0","id":1,"method":"get_info"}' "$V6_GATEWAY_URL/v1/json_rpc") == 40[12] ]]
}
check "the machine reaches both over IPv6 (${V6_GATEWAY_URL#http://}, ${V6_BILLING_URL#http://})" \
	answers_from_v6
peak_kib() { awk '$1 == "VmHWM:" { print $2 }' "/proc/$1/status"; }
rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }
echo "# before: billing $(($(rss_kib "$BILLING_PID") / 1024)) MiB, gateway $(($(rss_kib "$GATEWAY_PID") / 1024)) MiB (RSS)"

# the paying tenant and its wallet, pointed at the gateway
check_here "a paying tenant" grant_tenant wallet 30 || exit 1
T_LOGIN="$HANDLE:$TOKEN"
GW_HOSTPORT=${GATEWAY_URL#http://}
check_here "its wallet-rpc, through the gateway with its Digest login" \
	wallet_rpc_start tenant $((XG_PORT_BASE + 97)) "$GW_HOSTPORT" "$T_LOGIN" || exit 1
TENANT_WALLET=$WALLET_URL
rpc "$TENANT_WALLET" create_wallet '{"filename":"t","language":"English"}' >/dev/null
T_ADDRESS=$(rpc "$TENANT_WALLET" get_address '{"account_index":0}' | jq -r .address)
check "the payer pays the tenant's wallet" payer_pays "$T_ADDRESS" 1000000000000
check "10 blocks unlock it" mine 10

top=$(rpc "$NODE_A_URL" get_block_count | jq -r '.count')
TXID=$(rpc "$NODE_A_URL" get_block "{\"height\":$((top - 1))}" | jq -r '.miner_tx_hash')
free_before=$(psql_q "SELECT count(*) FROM free_grants WHERE client LIKE '4:127.0.10_.%'")
free6_before=$(psql_q "SELECT count(*) FROM free_grants WHERE client LIKE '6:$PREFIX6:%'")

python3 "$(dirname "$0")/flood.py" --addresses $ADDRESSES --seconds "$FLOOD_S" \
	"$GATEWAY_URL" "$BILLING_URL" "$TXID" >"$W/flood.json" 2>"$W/flood.err" &
FLOOD_PID=$!
defer stop_pid "$FLOOD_PID"
ns_exec v6 python3 "$(dirname "$0")/flood.py" --addresses $ADDRESSES --seconds "$FLOOD_S" \
	--prefix6 "$PREFIX6" "$V6_GATEWAY_URL" "$V6_BILLING_URL" "$TXID" >"$W/flood6.json" 2>"$W/flood6.err" &
FLOOD6_PID=$!
defer stop_pid "$FLOOD6_PID"
sleep 3 # the flood is on

# timed NAME OK CMD...: one buyer call, "status seconds" appended to $W/NAME
timed() {
	local name=$1 ok=$2
	shift 2
	"$@" -s -o "$W/last.body" -w '%{http_code} %{time_total}\n' --max-time 10 \
		--interface "$BUYER" >>"$W/$name" || echo "000 10" >>"$W/$name"
	: "$ok"
}
started=$SECONDS
buys=0
while ((SECONDS - started < FLOOD_S - 8)); do
	timed tiers 200 curl "$BILLING_URL/api/tiers"
	timed invoice 201 curl -H 'Content-Type: application/json' \
		--data "{\"tier\":\"$TIER\",\"months\":1}" "$BILLING_URL/api/invoices"
	inv=$(jq -r '.invoice.id // .id // empty' "$W/last.body" 2>/dev/null)
	[[ -z $inv ]] || timed page 200 curl "$BILLING_URL/invoice/$inv"
	buys=$((buys + 1))
	if ((buys == 3)); then # the XMR402 purchase, and the tenant's wallet: sync and send
		python3 "$(dirname "$0")/../integration/xmr402_draft_client.py" --source "$AGENT" \
			--max-piconero "$CAP" "$GATEWAY_URL/v1/json_rpc?tier=$TIER" "$PAYER_WALLET_URL" \
			>"$W/agent.json" 2>"$W/agent.err" &
		AGENT_PID=$!
		sync_start=$SECONDS
		rpc "$TENANT_WALLET" refresh '{}' >"$W/sync.json" 2>&1
		sync_s=$((SECONDS - sync_start))
		send_start=$SECONDS
		rpc "$TENANT_WALLET" transfer "$(jq -cn --arg a "$PAYER_ADDRESS" \
			'{destinations: [{amount: 100000000000, address: $a}]}')" >"$W/send.json" 2>&1
		send_s=$((SECONDS - send_start))
	fi
	sleep 0.5
done
wait "$AGENT_PID"
agent_rc=$?
check_here "the flood stops by itself" wait_until $((FLOOD_S + 60)) \
	bash -c "! kill -0 $FLOOD_PID 2>/dev/null && ! kill -0 $FLOOD6_PID 2>/dev/null"
wait "$FLOOD_PID" "$FLOOD6_PID"

figures() {
	sort -g -k2,2 "$1" | awk -v ok="$2" '{ n++; if ($1 != ok) f++; t[n] = $2 }
		END { printf "n=%d failed=%d p50=%.3fs p99=%.3fs max=%.3fs", n, f,
			t[int((n * 50 + 99) / 100)], t[int((n * 99 + 99) / 100)], t[n] }'
}
p99_under() {
	sort -g -k2,2 "$1" | awk -v lim="$2" '{ t[++n] = $2 } END { exit !(n > 0 && t[int((n * 99 + 99) / 100)] < lim) }'
}
echo "# the loopback attackers: $(jq -c . "$W/flood.json")"
echo "# the /64's attackers: $(jq -c . "$W/flood6.json" 2>/dev/null || sed 's/^/# /' "$W/flood6.err")"
for f in tiers:200 invoice:201 page:200; do
	name=${f%%:*} ok=${f##*:}
	echo "# the buyer's $name: $(figures "$W/$name" "$ok")"
	assert_eq "the buyer's $name calls: none failed" 0 "$(awk -v ok="$ok" '$1 != ok' "$W/$name" | wc -l)"
	check "… p99 under 1 s" p99_under "$W/$name" 1.0
done
check "the loopback attackers used $ADDRESSES addresses" \
	test "$(jq -r .addresses "$W/flood.json")" -eq $ADDRESSES
check "the /64's attackers used $ADDRESSES addresses" \
	test "$(jq -r .addresses "$W/flood6.json")" -eq $ADDRESSES
check "… and were answered (not all refused at connect)" \
	jq -e '[.answers[][]] | add > 0' "$W/flood6.json"
for crowd in flood flood6; do
	check "$crowd: every made-up proof answered 402 (txid_unknown), 429 or 503, none lost" \
		jq -e '(.answers.unknown | length > 0) and
			(.answers.unknown | keys - ["402", "429", "503"] | length == 0)' "$W/$crowd.json"
	check "$crowd: billing ended trickling bodies (408 or closed) before the attackers gave up" \
		jq -e '(.answers.trickle["408"] // 0) + (.answers.trickle.closed // 0) > 0' "$W/$crowd.json"
done
assert_eq "the XMR402 buyer paid and was served" 0 "$agent_rc" || sed 's/^/# /' "$W/agent.err"
assert_json "… 200 with the RPC answer" "$(cat "$W/agent.json")" \
	'.status == 200 and .answer.result.status == "OK"'
echo "# the agent was answered $(jq -r '.answered_at - .paid_at | . * 1000 | floor' "$W/agent.json") ms after paying"
check "the tenant's wallet synced through the gateway (${sync_s}s)" \
	jq -e '.error == null' "$W/sync.json"
wallet_h=$(rpc "$TENANT_WALLET" get_height | jq -r .height)
chain_h=$(rpc "$NODE_A_URL" get_block_count | jq -r .count)
check "… to the chain's height ($wallet_h of $chain_h)" test "$wallet_h" -ge $((chain_h - 1))
assert_json "the tenant's wallet sent a transfer through the gateway (${send_s}s)" \
	"$(cat "$W/send.json")" '.tx_hash | length == 64'
known_to_a() { [[ -n $1 ]] && { in_pool_lookup "$NODE_A_URL" "$1" || in_chain_lookup "$NODE_A_URL" "$1"; }; }
check "… which reached node A's pool or a block" wait_until 30 known_to_a \
	"$(jq -r '.tx_hash // empty' "$W/send.json" 2>/dev/null)"
minted=$(($(psql_q "SELECT count(*) FROM free_grants WHERE client LIKE '4:127.0.10_.%'") - free_before))
echo "# free tenants minted by the attackers: $minted (bound $((NETWORKS * NET_BOUND)))"
check "within $NETWORKS networks × $NET_BOUND" test "$minted" -le $((NETWORKS * NET_BOUND))
minted6=$(($(psql_q "SELECT count(*) FROM free_grants WHERE client LIKE '6:$PREFIX6:%'") - free6_before))
echo "# free tenants minted by the /64: $minted6 (one client: bound $CLIENT_BOUND)"
check "within one client's $CLIENT_BOUND" test "$minted6" -le $CLIENT_BOUND
echo "# the /64's grants are counted as: $(psql_q "SELECT string_agg(DISTINCT client, ' ') FROM free_grants WHERE client LIKE '6:%'")"
bpeak=$(($(peak_kib "$BILLING_PID") / 1024)) gpeak=$(($(peak_kib "$GATEWAY_PID") / 1024))
echo "# peak memory: billing $bpeak MiB, gateway $gpeak MiB (VmHWM)"
check "billing's memory stayed bounded ($bpeak MiB < $MEM_MIB)" test "$bpeak" -lt $MEM_MIB
check "the gateway's memory stayed bounded ($gpeak MiB < $MEM_MIB)" test "$gpeak" -lt $MEM_MIB
b6peak=$(($(peak_kib "$V6_BILLING_PID") / 1024)) g6peak=$(($(peak_kib "$V6_GATEWAY_PID") / 1024))
echo "# peak memory of the IPv6 pair: billing $b6peak MiB, gateway $g6peak MiB (VmHWM)"
check "the second billing's memory stayed bounded ($b6peak MiB < $MEM_MIB)" test "$b6peak" -lt $MEM_MIB
check "the second gateway's memory stayed bounded ($g6peak MiB < $MEM_MIB)" test "$g6peak" -lt $MEM_MIB
