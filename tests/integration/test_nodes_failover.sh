#!/usr/bin/env bash
# Failover under load: the only primary node (so rank 1) is frozen with kill -STOP while
# clients send 20 requests/s for 30 s through the gateway. No client request fails. It
# leaves rotation within two probe intervals: the circuit breaker fed by the failing
# client requests opens first, and the probes mark it down (two failed probes: at most
# two intervals plus the probe timeout). After kill -CONT it is back after three good
# probes: not at the first one (three probes span at least two intervals, less the
# timeout of a probe already waiting when the node resumed), and within three intervals
# plus that timeout.
#
# A round with node A as the primary, and, when A runs an older monero, one more with
# the fleet's 0.18.4 node as the primary (tests/run-integration.sh runs B from Debian 13's
# 0.18.4): wallets in the field mostly talk to 0.18.4 nodes, and a frozen 0.18.4 node
# must fail over as well.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

INTERVAL_MS=2000
TIMEOUT_MS=1500

check "the nodes agree on one chain before the load" wait_until 120 nodes_agree
check_here "a tenant is granted" grant_tenant --bare sovereign 1

results=$(mktemp)
defer rm -f "$results"
one_request() {
	local path=${1%%|*} body=${1#*|} out code
	out=$(curl -sS --max-time 25 -w '\n%{http_code}' -H 'Content-Type: application/json' \
		--data-binary "$body" "$GW_URL/v1/$TOKEN$path" 2>&1)
	code=${out##*$'\n'}
	out=${out%$'\n'*}
	if [[ $code == 200 ]] && jq -e '(.error | not) and ((.status // .result.status) == "OK")' \
		<<<"$out" >/dev/null 2>&1; then
		echo ok >>"$results"
	else
		echo "fail $code $path $(head -c 200 <<<"$out")" >>"$results"
	fi
}

# 600 requests, one every 50 ms (20/s), each in the background so a slow answer does not
# slow the rate.
load() {
	local i
	for ((i = 0; i < 600; i++)); do
		one_request "${requests[i % ${#requests[@]}]}" &
		sleep 0.05
	done
	wait
}

# failover_round NODE VERSION: NODE (a, b or c) is the only primary, the others standby;
# a gateway of the round's own; NODE frozen and thawed under the load.
failover_round() {
	local n=$1 N=${1^^} version=$2 standby=() o load_pid stop_at down_at breaker_at took out
	local cont_at up_at total failed
	for o in a b c; do [[ $o == "$n" ]] || standby+=("$o"); done
	check "the nodes table holds $N (primary, $version), ${standby[0]^^} and ${standby[1]^^} (standby)" \
		nodes_table "$n:primary ${standby[0]}:standby ${standby[1]}:standby"
	check_here "a gateway starts and is ready" gateway_start "failover-$n" --base nodes
	assert_json "readiness reports the quorum" "$(curl -s "$GW_ADMIN/readyz")" '.checks.quorum == "ok"'

	# A mix the tip cache cannot absorb: pool hashes (passthrough), recent headers (too
	# close to the tip to cache) and get_info (tip class).
	local top
	top=$(rpc "$(nodes_url_of "$n")" get_block_count | jq -r '.count - 1')
	requests=(
		"/get_transaction_pool_hashes|{}"
		"/json_rpc|{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get_block_header_by_height\",\"params\":{\"height\":$top}}"
		"/json_rpc|{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"get_info\"}"
		"/get_height|{}"
	)
	: >"$results"

	load &
	load_pid=$!
	sleep 5
	GW_MARK=$(now_ms)
	stop_at=$GW_MARK
	freeze "$n"
	down_at=''
	wait_until 15 log_event_ms node_down "$n" >/dev/null && down_at=$(log_event_ms node_down "$n")
	breaker_at=$(log_event_ms breaker_open "$n" || true)
	if [[ -n $down_at ]]; then
		took=$((down_at - stop_at))
		out=$took
		[[ -n $breaker_at ]] && ((breaker_at - stop_at < out)) && out=$((breaker_at - stop_at))
		echo "# $N out of rotation ${out} ms after kill -STOP (breaker ${breaker_at:+$((breaker_at - stop_at)) ms}, probes ${took} ms)"
		check "$N leaves rotation within two probe intervals ($out ms)" \
			test "$out" -le $((2 * INTERVAL_MS))
		check "the probes mark $N down within two intervals plus the probe timeout ($took ms)" \
			test "$took" -le $((2 * INTERVAL_MS + TIMEOUT_MS + 200))
	else
		_xg_fail "$N is marked down after kill -STOP" "$(tail -n 5 "$GW_LOG")"
	fi
	sleep 8
	GW_MARK=$(now_ms)
	cont_at=$GW_MARK
	thaw "$n"
	up_at=''
	wait_until 20 log_event_ms node_up "$n" >/dev/null && up_at=$(log_event_ms node_up "$n")
	if [[ -n $up_at ]]; then
		took=$((up_at - cont_at))
		echo "# $N back up ${took} ms after kill -CONT"
		check "$N is back after three good probes, not one ($took ms)" \
			test "$took" -ge $((2 * INTERVAL_MS - TIMEOUT_MS - 100))
		check "the gateway logged exactly one node_up for $N after the resume" \
			test "$(jq -r --argjson m "$GW_MARK" --arg p "node $n " 'select(.event == "node_up" and (.msg | startswith($p)))
				| .ts' "$GW_LOG" | while read -r t; do (($(date -d "$t" +%s%3N) >= GW_MARK)) && echo x; done | wc -l)" -eq 1
		check "$N is back within three intervals plus the probe timeout ($took ms)" \
			test "$took" -le $((3 * INTERVAL_MS + TIMEOUT_MS + 200))
	else
		_xg_fail "$N comes back up after kill -CONT" "$(tail -n 5 "$GW_LOG")"
	fi
	wait "$load_pid"

	total=$(wc -l <"$results")
	failed=$(grep -vc '^ok$' "$results")
	echo "# $total requests, $failed failed"
	assert_eq "all 600 client requests were answered" 600 "$total"
	assert_eq "no client request failed while $N was frozen and resumed" 0 "$failed" ||
		grep -v '^ok$' "$results" | head -n 5 | sed 's/^/#   /'
	assert_json "readiness is back to ready" "$(curl -s "$GW_ADMIN/readyz")" '.status == "ready"'
	gateway_stop "failover-$n"
}

declare -A version=()
for n in a b c; do version[$n]=$(xg_monerod_version "$(nodes_url_of "$n")" || echo '?'); done
echo "# monerod versions: A ${version[a]}, B ${version[b]}, C ${version[c]}"

failover_round a "${version[a]}"
if ! version_at_least "${version[a]}" 0.18.4; then
	modern=''
	for n in b c; do version_at_least "${version[$n]}" 0.18.4 && modern=${modern:-$n}; done
	if check "the fleet holds a 0.18.4 node (get_info: B ${version[b]}, C ${version[c]})" test -n "$modern"; then
		check "the nodes agree on one chain again" wait_until 120 nodes_agree
		failover_round "$modern" "${version[$modern]}"
	fi
fi
