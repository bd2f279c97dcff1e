#!/usr/bin/env bash
# Hedged reads: what they cost in steady state and what they save through a freeze.
#
#   tests/bench/hedge.sh [STEADY_S] [FREEZE_S]      (defaults 20 s and 15 s)
#
# Runs against the stack in $XG_BENCH_VAR (default var/bench; started here with
# XG_PORT_BASE=${XG_BENCH_PORT_BASE:-29100} when none is running). Uses ports
# XG_PORT_BASE+80…82 and a scratch database of its own.
#
# In one run, four front ends to the same nodes A, B and C, one after the other: a gateway
# (the default 10 s node timeout) with hedging on ([nodes] hedge_budget 5, the default) and
# off (0), and Debian's HAProxy as a plain load balancer (round robin; health checks POST
# /get_height every 2 s, fall 2 rise 3, as monerod does not answer HAProxy's default
# HTTP/1.0 GET check; `retries 3`, `option redispatch`, 1 s connect and 2 s server
# timeouts), once as that and once with `retry-on conn-failure empty-response
# response-timeout` over a buffered request body (without retry-on, HAProxy retries only a
# connection that failed, and a frozen node's kernel still accepts connections). Each time
# 8 clients (curl, 5 s timeout) read answers the cache cannot hold, in turn
# /get_transaction_pool_hashes, /is_key_image_spent of a fresh key image and
# /get_transactions of a transaction that does not exist (a fresh random txid; bench_clients
# in tests/bench/lib.sh):
#   1. steady state for STEADY_S: node requests per client request (the gateway's
#      xmrgate_gateway_node_requests_total against the client count; an unspent key image
#      and a missing transaction are confirmed on a second node by design, one node
#      request more each, the same in both runs) and the hedges sent;
#   2. one node frozen (kill -STOP) for FREEZE_S in the middle of a run of FREEZE_S + 10 s:
#      failed requests and the latency distribution. The gateway's is the node it sent most
#      steady-state reads to (it ranks by latency: an idle node's freeze would show
#      nothing); HAProxy's is A (round robin).
# Prints Markdown for docs/BENCHMARKS.md ("## Hedged reads"): all requests, then the
# missing transactions alone (the negatives whose confirmation the freeze may catch).
# HAProxy has no node request count or hedges: those cells are "–".
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
STEADY=${1:-20}
FREEZE=${2:-15}
CLIENTS=8
export XG_VAR=${XG_BENCH_VAR:-$REPO/var/bench} XG_PORT_BASE=${XG_BENCH_PORT_BASE:-29100}
# shellcheck source=tests/bench/lib.sh
. "$REPO/tests/bench/lib.sh"
# at exit: the freezer stopped first (it must not freeze a node after this), the node thawed
thaw() {
	[[ -z ${freezer:-} ]] || kill "$freezer" 2>/dev/null
	[[ -z ${frozen:-} ]] || kill -CONT "$frozen" 2>/dev/null
}
bench_exit_hook=thaw
bench_begin
bench_gateway_db xmrgate_hedge_bench
GW_PORT=$((XG_PORT_BASE + 80)) GW_ADMIN=$((XG_PORT_BASE + 81)) HAPROXY_PORT=$((XG_PORT_BASE + 82))
GW_URL=http://127.0.0.1:$GW_PORT/v1/$TOKEN
declare -A node_pid
for n in a b c; do
	read -r node_pid[$n] _ <"$XG_VAR/run/node-$n.pid"
done

# haproxy plain|retry-on: HAProxy in front of A, B and C on HAPROXY_PORT.
haproxy_start() {
	local retry_on=""
	[[ $1 == retry-on ]] && retry_on="retry-on conn-failure empty-response response-timeout
	option http-buffer-request"
	cat >"$work/haproxy.cfg" <<-CFG
		global
			maxconn 512
		defaults
			mode http
			timeout connect 1s
			timeout client 10s
			timeout server 2s
			retries 3
			option redispatch
			$retry_on
		frontend monerod
			bind 127.0.0.1:$HAPROXY_PORT
			default_backend nodes
		backend nodes
			balance roundrobin
			option httpchk
			http-check send meth POST uri /get_height ver HTTP/1.1 hdr Host node hdr Content-Type application/json body "{}"
			http-check expect status 200
			default-server inter 2s fall 2 rise 3
			server a ${NODE_A_URL#http://} check
			server b ${NODE_B_URL#http://} check
			server c ${NODE_C_URL#http://} check
	CFG
	haproxy -q -f "$work/haproxy.cfg" 2>"$work/haproxy.log" &
	gw=$!
	pids+=("$gw")
	for _ in $(seq 100); do
		curl -sf -o /dev/null "http://127.0.0.1:$HAPROXY_PORT/get_height" && return
		sleep 0.1
	done
	echo "HAProxy did not start" >&2
	exit 1
}

rows=() neg_rows=()
for front in 5 0 haproxy retry-on; do
	budget=$front
	if [[ $front == haproxy || $front == retry-on ]]; then
		haproxy_start "$([[ $front == haproxy ]] && echo plain || echo retry-on)"
		URL=http://127.0.0.1:$HAPROXY_PORT
	else
		bench_gateway_start "$GW_PORT" "$GW_ADMIN" XMRGATE_NODES_HEDGE_BUDGET="$budget"
		URL=$GW_URL
	fi
	gateway_front=$([[ $URL == "$GW_URL" ]] && echo 1 || echo 0)
	((gateway_front)) && calls0=$(bench_metric_sum xmrgate_gateway_node_requests_total)
	bench_clients "$CLIENTS" "$STEADY" 5 "$URL" "steady$budget"
	if ((gateway_front)); then
		calls=$(($(bench_metric_sum xmrgate_gateway_node_requests_total) - calls0))
		hedges=$(bench_metric_sum xmrgate_gateway_hedged_reads_total 'event="sent"')
	fi
	read -r s_total s_failed s_p50 s_p99 _ < <(bench_summary "steady$budget")
	read -r sn_total sn_failed sn_p50 sn_p99 _ < <(bench_summary "steady$budget" missing)
	victim=a
	((gateway_front)) && victim=$(bench_busiest "")
	victim_pid=${node_pid[$victim]}
	(
		sleep 5
		kill -STOP "$victim_pid"
		sleep "$FREEZE"
		kill -CONT "$victim_pid"
	) &
	freezer=$!
	frozen=$victim_pid
	bench_clients "$CLIENTS" $((FREEZE + 10)) 5 "$URL" "freeze$budget"
	wait "$freezer"
	frozen='' freezer=''
	read -r f_total f_failed f_p50 f_p99 f_max < <(bench_summary "freeze$budget")
	read -r fn_total fn_failed fn_p50 fn_p99 fn_max < <(bench_summary "freeze$budget" missing)
	kill "$gw"
	wait "$gw" 2>/dev/null || true
	case $front in
	haproxy) label="HAProxy (retries 3, redispatch)" per=– hedges=– ;;
	retry-on) label="HAProxy (retries 3, redispatch, retry-on)" per=– hedges=– ;;
	0) label="gateway, hedging off (hedge_budget 0)" ;;
	*) label="gateway, hedging on (hedge_budget $budget)" ;;
	esac
	((gateway_front)) &&
		per=$(awk -v c="$calls" -v n="$s_total" 'BEGIN { printf "%.3f", c / n }')
	rows+=("| $label | $victim | $s_total | $s_failed | $per | $hedges | $s_p50 ms | $s_p99 ms | $f_total | $f_failed | $f_p50 ms | $f_p99 ms | $f_max ms |")
	neg_rows+=("| $label | $victim | $sn_total | $sn_failed | $sn_p50 ms | $sn_p99 ms | $fn_total | $fn_failed | $fn_p50 ms | $fn_p99 ms | $fn_max ms |")
	sleep 15 # A reconnects to its peers
done

echo "### 8 clients (5 s timeout), uncached reads, one node frozen for ${FREEZE} s"
echo
echo "| front end | node frozen | steady requests | steady failed | node requests per request | hedges sent | steady p50 | steady p99 | freeze requests | freeze failed | p50 | p99 | max |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "### The negatives among them: /get_transactions of a transaction that does not exist"
echo
echo "| front end | node frozen | steady negatives | steady failed | steady p50 | steady p99 | freeze negatives | freeze failed | p50 | p99 | max |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${neg_rows[@]}"
