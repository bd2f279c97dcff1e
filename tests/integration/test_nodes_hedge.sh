#!/usr/bin/env bash
# No request waits on a frozen node. 8 clients, each with a 5 s timeout, read answers the
# cache cannot hold (/get_transaction_pool_hashes, /is_key_image_spent of a fresh key image,
# /get_transactions of a transaction that does not exist, whose "not found" is confirmed on
# a second node) through a gateway in front of A, B and C, with the 10 s node timeout of
# the default configuration, while the node serving them most (the choice follows load, so
# it is looked up first) is frozen with kill -STOP for 15 s: not one request fails. A read
# (or a confirmation) that the frozen node has not answered within its hedge delay goes to
# the next node too, and the first good answer wins, so the requests in flight at the
# freeze are saved as well.
# The hedges are counted in the metrics. A broadcast sent during the freeze is answered
# once another node accepted it and a hedge delay passed, not after the frozen node's
# timeout. The latency distribution is printed (tests/bench/hedge.sh measures it,
# docs/BENCHMARKS.md reports it); it is not asserted here.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

CLIENTS=8
RUN_S=30
FREEZE_AT_S=6
FREEZE_S=15

check "the nodes agree on one chain" wait_until 120 nodes_agree
check "the nodes table holds A, B and C" nodes_table "a:primary b:primary c:primary"
check_here "a tenant is granted" grant_tenant --bare sovereign 1
# Probes every 30 s: the frozen node leaves rotation by what its client reads tell the
# breaker (each hedged read counts at once), not by a probe that happens to come first, so
# the reads at the freeze go to it and need their hedges.
check_here "a gateway starts and is ready" gateway_start hedge --base nodes nodes.timeout=10s \
	nodes.probe_interval=30s
wait_until 30 bash -c "curl -s '$GW_ADMIN/readyz' | jq -e '.status == \"ready\"' >/dev/null"

read -r _ tx_hex < <(payer_tx_hex)
check "the payer signs a transaction without relaying it" test -n "${tx_hex:-}"
tx_body=$(jq -cn --arg h "$tx_hex" '{tx_as_hex: $h, do_not_relay: true}')

results=$(mktemp -d)
defer rm -rf "$results"

# client N: reads until the run ends; one line per request: "ok|fail MS PATH [why]".
client() {
	local n=$1 end=$(($(date +%s) + RUN_S)) i=0 out code ms path body
	while (($(date +%s) < end)); do
		i=$((i + 1))
		case $((i % 3)) in
		1) path=/get_transaction_pool_hashes body='{}' ;;
		2)
			path=/is_key_image_spent
			body=$(printf '{"key_images":["%056x%08x"]}' "$n" "$i")
			;;
		0)
			# a transaction that does not exist: its "not found" is confirmed on a second node
			path=/get_transactions
			body=$(printf '{"txs_hashes":["%040x%08x%08x%08x"]}' "$SRANDOM" "$SRANDOM" "$n" "$i")
			;;
		esac
		out=$(curl -sS --max-time 5 -o "$results/body-$n" -w '%{http_code} %{time_total}' \
			-H 'Content-Type: application/json' --data-binary "$body" "$GW_URL/v1/$TOKEN$path" 2>&1)
		code=${out%% *}
		ms=$(awk -v s="${out##* }" 'BEGIN { printf "%d", s * 1000 }')
		if [[ $code == 200 ]] && jq -e '.status == "OK"' "$results/body-$n" >/dev/null 2>&1; then
			echo "ok $ms $path" >>"$results/client-$n"
		else
			echo "fail $ms $path $out" >>"$results/client-$n"
		fi
	done
}

pids=()
for ((c = 0; c < CLIENTS; c++)); do
	client "$c" &
	pids+=($!)
done
# The client requests each node has been sent, "NODE COUNT" sorted by node.
node_counts() {
	curl -s "$GW_ADMIN/metrics" | awk '/^xmrgate_gateway_node_requests_total\{/ {
		match($0, /node="[^"]*"/); c[substr($0, RSTART + 6, RLENGTH - 7)] += $NF }
		END { for (n in c) print n, c[n] }' | sort
}
sleep $((FREEZE_AT_S - 1))
before=$(node_counts)
sleep 1
F=$(join <(echo "$before") <(node_counts) |
	awk '$3 - $2 > most { most = $3 - $2; n = $1 } END { print n }')
check "a node serves the clients (${F:-none}: the one frozen)" test -n "$F" || F=a
F_URL_VAR=NODE_${F^^}_URL
F_URL=${!F_URL_VAR}
freeze "$F"
echo "# $F frozen at $(date +%T.%3N)"
sleep 1
started=$(now_ms)
bc_out=$(curl -sS --max-time 30 -D - -H 'Content-Type: application/json' --data-binary "$tx_body" \
	"$GW_URL/v1/$TOKEN/send_raw_transaction" | tr -d '\r')
bc_ms=$(($(now_ms) - started))
sleep $((FREEZE_S - 1 - bc_ms / 1000))
thaw "$F"
echo "# $F thawed at $(date +%T.%3N)"
wait "${pids[@]}"

all=$(cat "$results"/client-*)
total=$(wc -l <<<"$all")
failed=$(grep -c '^fail' <<<"$all" || true)
grep '^fail' <<<"$all" | head -5 | sed 's/^/# /'
sorted=$(awk '{ print $2 }' <<<"$all" | sort -n)
pct() { awk -v p="$1" -v n="$total" 'NR == int((n - 1) * p / 100) + 1 { print; exit }' <<<"$sorted"; }
echo "# $total requests from $CLIENTS clients, $F frozen ${FREEZE_S} s: p50 $(pct 50) ms, p99 $(pct 99) ms, max $(tail -1 <<<"$sorted") ms"
# at least 10 per client: on a loaded machine the clients' own curl and jq processes are
# slow to start, which is no measure of the gateway (the latencies above are)
check "the clients sent requests throughout (at least $((CLIENTS * 10)))" test "$total" -ge $((CLIENTS * 10))
assert_eq "no request failed while $F was frozen" 0 "$failed"

echo "# broadcast with $F frozen: $(sed -n 's/^X-Xmrgate-Broadcast: //Ip' <<<"$bc_out") in $bc_ms ms"
assert_json "the broadcast during the freeze is accepted" "$(sed '1,/^$/d' <<<"$bc_out")" \
	'.status == "OK"'
check "it is answered well before $F's 10 s node timeout (under 5 s)" test "$bc_ms" -lt 5000

metrics=$(curl -s "$GW_ADMIN/metrics")
sent=$(awk '/^xmrgate_gateway_hedged_reads_total\{event="sent"\}/ { print $2 }' <<<"$metrics")
won=$(awk '/^xmrgate_gateway_hedged_reads_total\{event="won"\}/ { print $2 }' <<<"$metrics")
moved=$(awk '/^xmrgate_gateway_hedged_reads_total\{event="moved"\}/ { print $2 }' <<<"$metrics")
echo "# hedges: sent ${sent:-0}, won ${won:-0}; confirmations moved on: ${moved:-0}"
# The frozen node held first reads (hedged: sent) or confirmations (moved on to the next
# node), whichever it was serving: the node the gateway ranks first takes the first reads,
# the next one the confirmations of unspent key images and missing transactions.
check "the metrics count the reads the frozen node held, hedged or moved on" \
	awk -v s="${sent:-0}" -v m="${moved:-0}" 'BEGIN { exit !(s + m > 0) }'
check "when hedges were sent, their answers were served (won ${won:-0} of ${sent:-0})" \
	awk -v s="${sent:-0}" -v w="${won:-0}" 'BEGIN { exit !(w > 0 || s == 0) }'

check "$F answers again after the thaw" wait_until 60 curl -sf -o /dev/null "$F_URL/get_height"
# The broadcast was sent with do_not_relay: monerod never mines it, and the payer's wallet
# counts its inputs unspent. Take it out of every pool, so that the payer's next payment
# does not collide with it.
IFS=, read -ra node_urls <<<"$NODE_URLS"
xg_flush_unrelayed "${node_urls[@]}" | sed 's/^/# /'
check "the nodes agree before the last block" wait_until 120 nodes_agree
mine 1 >/dev/null || true
check "the nodes agree on one chain again" wait_until 120 nodes_agree
