#!/usr/bin/env bash
# The two-node freeze drill: one node frozen, then another instead, under steady reads.
#
#   tests/bench/freeze_two.sh [RUNS] [RUN_S]      (defaults 3 runs of 30 s)
#
# Runs against the stack in $XG_BENCH_VAR (default var/bench; started here with
# XG_PORT_BASE=${XG_BENCH_PORT_BASE:-29100} when none is running). Uses ports
# XG_PORT_BASE+80…81 and a scratch database of its own.
#
# Each run starts a gateway over nodes A, B and C with the defaults (10 s node timeout,
# hedging on) and 8 clients (curl, 10 s timeout, one request at a time each) reading for
# RUN_S what the cache cannot hold, in turn /get_transaction_pool_hashes,
# /is_key_image_spent of a fresh key image and /get_transactions of a transaction that does
# not exist (a fresh random txid, whose "not found" the gateway confirms on a second node:
# bench_clients in tests/bench/lib.sh). At 5 s node 1, the one the gateway has sent most
# client requests to, is frozen (kill -STOP); at 18 s it is thawed and node 2, the one sent
# most since, is frozen instead, until the run ends. Every node is thawed at exit.
# Reported per run: the failed requests (target 0) and the latency distribution, of all
# requests and of the missing transactions alone, and the hedges sent. Prints Markdown for
# docs/BENCHMARKS.md ("## Hedged reads", "### Two nodes frozen in turn").
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${1:-3}
RUN_S=${2:-30}
CLIENTS=8
TIMEOUT=10
FIRST_AT=5
SECOND_AT=18
export XG_VAR=${XG_BENCH_VAR:-$REPO/var/bench} XG_PORT_BASE=${XG_BENCH_PORT_BASE:-29100}
# shellcheck source=tests/bench/lib.sh
. "$REPO/tests/bench/lib.sh"
declare -A node_pid
# the freezer stopped (it must not freeze a node after this), every node thawed
thaw_all() {
	local p
	[[ -z ${freezer:-} ]] || kill "$freezer" 2>/dev/null
	for p in "${node_pid[@]}"; do kill -CONT "$p" 2>/dev/null; done
}
bench_exit_hook=thaw_all
bench_begin
for n in a b c; do
	read -r node_pid[$n] _ <"$XG_VAR/run/node-$n.pid"
done
bench_gateway_db xmrgate_freeze_bench
GW_PORT=$((XG_PORT_BASE + 80)) GW_ADMIN=$((XG_PORT_BASE + 81))
GW_URL=http://127.0.0.1:$GW_PORT/v1/$TOKEN

# freeze_in_turn: node 1 frozen at FIRST_AT, node 2 instead at SECOND_AT; their names in
# $work/frozen.
freeze_in_turn() {
	local first second since
	sleep "$FIRST_AT"
	first=$(bench_busiest "")
	since=$(bench_node_counts)
	kill -STOP "${node_pid[$first]}"
	sleep $((SECOND_AT - FIRST_AT))
	second=$(BENCH_SINCE=$since bench_busiest "$first")
	kill -STOP "${node_pid[$second]}"
	kill -CONT "${node_pid[$first]}"
	echo "$first $second" >"$work/frozen"
}

rows=()
for ((run = 1; run <= RUNS; run++)); do
	bench_gateway_start "$GW_PORT" "$GW_ADMIN"
	freeze_in_turn &
	freezer=$!
	bench_clients "$CLIENTS" "$RUN_S" "$TIMEOUT" "$GW_URL" "run$run"
	wait "$freezer"
	freezer=''
	thaw_all
	read -r first second <"$work/frozen"
	hedges=$(bench_metric_sum xmrgate_gateway_hedged_reads_total 'event="sent"')
	kill "$gw"
	wait "$gw" 2>/dev/null || true
	read -r total failed p50 p99 max < <(bench_summary "run$run")
	read -r n_total n_failed n_p50 n_p99 n_max < <(bench_summary "run$run" missing)
	# the failed requests, "KIND CODE MS" (CODE 000: the client's timeout)
	fails=$(cat "$work/run$run"-* | awk '$1 == "fail" { printf "%s%s %s %s ms", sep, $3, $4, $2; sep = ", " }')
	rows+=("| $run | $first, then $second | $total | $failed | $p50 ms | $p99 ms | $max ms | $n_total | $n_failed | $n_p50 ms | $n_p99 ms | $n_max ms | $hedges | ${fails:-–} |")
	((run == RUNS)) || sleep 15 # the frozen nodes reconnect to their peers
done

echo "### $CLIENTS clients (${TIMEOUT} s timeout), node 1 frozen at ${FIRST_AT} s, node 2 instead at ${SECOND_AT} s, ${RUN_S} s runs"
echo
echo "| run | nodes frozen | requests | failed | p50 | p99 | max | negatives | failed | p50 | p99 | max | hedges sent | failures (kind, HTTP code, time) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
