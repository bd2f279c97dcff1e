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
# 8 clients (curl, 5 s timeout) read answers the cache cannot hold
# (/get_transaction_pool_hashes and /is_key_image_spent of fresh key images):
#   1. steady state for STEADY_S: node requests per client request (the gateway's
#      xmrgate_gateway_node_requests_total against the client count; a confirmation of an
#      unspent key image is one node request more by design, the same in both runs) and
#      the hedges sent;
#   2. one node frozen (kill -STOP) for FREEZE_S in the middle of a run of FREEZE_S + 10 s:
#      failed requests and the latency distribution. The gateway's is the node it sent most
#      steady-state reads to (it ranks by latency: an idle node's freeze would show
#      nothing); HAProxy's is A (round robin).
# Prints Markdown for docs/BENCHMARKS.md ("## Hedged reads"). HAProxy has no node request
# count or hedges: those cells are "–".
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
STEADY=${1:-20}
FREEZE=${2:-15}
CLIENTS=8
export XG_VAR=${XG_BENCH_VAR:-$REPO/var/bench} XG_PORT_BASE=${XG_BENCH_PORT_BASE:-29100}
# shellcheck source=tests/bench/lib.sh
. "$REPO/tests/bench/lib.sh"
bench_exit_hook='[[ -n ${frozen:-} ]] && kill -CONT "$frozen" 2>/dev/null'
bench_begin
BENCH_DB=${DATABASE_URL%/*}/xmrgate_hedge_bench
psql -X -q "${DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS xmrgate_hedge_bench WITH (FORCE)" \
	-c "CREATE DATABASE xmrgate_hedge_bench"
GW_PORT=$((XG_PORT_BASE + 80)) GW_ADMIN=$((XG_PORT_BASE + 81)) HAPROXY_PORT=$((XG_PORT_BASE + 82))
HA1_KEY=$(printf '%064d' 0)
XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_GATEWAY_HA1_KEY=$HA1_KEY \
	"$REPO/bin/xmrgate-billing" migrate >/dev/null 2>&1 || true
TOKEN=$(XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_GATEWAY_HA1_KEY=$HA1_KEY \
	"$REPO/bin/xmrgate-billing" grant --tier sovereign --days 1 2>/dev/null | sed -n 's/^TOKEN=//p')
psql -X -q "$BENCH_DB" -c "BEGIN; DELETE FROM nodes;
	INSERT INTO nodes (name, url) VALUES ('a', '$NODE_A_URL'), ('b', '$NODE_B_URL'), ('c', '$NODE_C_URL');
	COMMIT;"
GW_URL=http://127.0.0.1:$GW_PORT/v1/$TOKEN
declare -A node_pid
for n in a b c; do
	read -r node_pid[$n] _ <"$XG_VAR/run/node-$n.pid"
done

# The node the gateway sent most of the steady state's reads to: it ranks by latency, so
# freezing a node it hardly asks would show nothing. HAProxy rotates over all three: A.
busiest() {
	local n best=a most=-1 count
	for n in a b c; do
		count=$(metric_sum xmrgate_gateway_node_requests_total "node=\"$n\"")
		((count > most)) && most=$count best=$n
	done
	echo "$best"
}

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

gateway() {
	XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_AUTH_HA1_KEY=$HA1_KEY XMRGATE_SERVER_PORT=$GW_PORT \
		XMRGATE_ADMIN_PORT=$GW_ADMIN XMRGATE_LIMITS_ENABLED=false XMRGATE_LOG_LEVEL=warn \
		XMRGATE_NODES_HEDGE_BUDGET=$1 "$REPO/bin/xmrgate-gateway" 2>"$work/gateway.log" &
	gw=$!
	pids+=("$gw")
	for _ in $(seq 300); do
		curl -s "http://127.0.0.1:$GW_ADMIN/readyz" | jq -e '.status == "ready"' >/dev/null 2>&1 && return
		sleep 0.1
	done
	echo "the gateway did not get ready" >&2
	exit 1
}

# clients SECONDS TAG: 8 clients; one line per request "ok|fail MS" in $work/TAG-*.
clients() {
	local secs=$1 tag=$2 c cpids=()
	for ((c = 0; c < CLIENTS; c++)); do
		(
			end=$(($(date +%s) + secs)) i=0
			while (($(date +%s) < end)); do
				i=$((i + 1))
				if ((i % 2)); then
					path=/get_transaction_pool_hashes body='{}'
				else
					path=/is_key_image_spent
					body=$(printf '{"key_images":["%048x%08x%08x"]}' "$RANDOM" "$c" "$i")
				fi
				out=$(curl -s --max-time 5 -o "$work/body-$tag-$c" -w '%{http_code} %{time_total}' \
					-H 'Content-Type: application/json' --data-binary "$body" "$URL$path" 2>/dev/null) || true
				ms=$(awk -v s="${out##* }" 'BEGIN { printf "%d", s * 1000 }')
				if [[ ${out%% *} == 200 ]] && jq -e '.status == "OK"' "$work/body-$tag-$c" >/dev/null 2>&1; then
					echo "ok $ms"
				else
					echo "fail $ms"
				fi
			done >"$work/$tag-$c"
		) &
		cpids+=($!)
	done
	wait "${cpids[@]}" # not the gateway's pid
}

metric_sum() { curl -s "http://127.0.0.1:$GW_ADMIN/metrics" | awk -v m="$1" -v f="${2:-}" \
	'index($0, m) == 1 && index($0, f) { s += $NF } END { printf "%d", s }'; }

summary() {
	local tag=$1 all total failed sorted
	all=$(cat "$work/$tag"-*)
	total=$(wc -l <<<"$all")
	failed=$(grep -c '^fail' <<<"$all" || true)
	sorted=$(awk '{ print $2 }' <<<"$all" | sort -n)
	pct() { awk -v p="$1" -v n="$total" 'NR == int((n - 1) * p / 100) + 1 { print; exit }' <<<"$sorted"; }
	echo "$total $failed $(pct 50) $(pct 99) $(tail -1 <<<"$sorted")"
}

rows=()
for front in 5 0 haproxy retry-on; do
	budget=$front
	if [[ $front == haproxy || $front == retry-on ]]; then
		haproxy_start "$([[ $front == haproxy ]] && echo plain || echo retry-on)"
		URL=http://127.0.0.1:$HAPROXY_PORT
	else
		gateway "$budget"
		URL=$GW_URL
	fi
	gateway_front=$([[ $URL == "$GW_URL" ]] && echo 1 || echo 0)
	((gateway_front)) && calls0=$(metric_sum xmrgate_gateway_node_requests_total)
	clients "$STEADY" "steady$budget"
	if ((gateway_front)); then
		calls=$(($(metric_sum xmrgate_gateway_node_requests_total) - calls0))
		hedges=$(metric_sum xmrgate_gateway_hedged_reads_total 'event="sent"')
	fi
	read -r s_total s_failed s_p50 s_p99 s_max < <(summary "steady$budget")
	victim=a
	((gateway_front)) && victim=$(busiest)
	victim_pid=${node_pid[$victim]}
	( sleep 5; kill -STOP "$victim_pid"; sleep "$FREEZE"; kill -CONT "$victim_pid" ) &
	freezer=$!
	frozen=$victim_pid
	clients $((FREEZE + 10)) "freeze$budget"
	wait "$freezer"
	frozen=
	read -r f_total f_failed f_p50 f_p99 f_max < <(summary "freeze$budget")
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
	sleep 15 # A reconnects to its peers
done

echo "### 8 clients (5 s timeout), uncached reads, one node frozen for ${FREEZE} s"
echo
echo "| front end | node frozen | steady requests | steady failed | node requests per request | hedges sent | steady p50 | steady p99 | freeze requests | freeze failed | p50 | p99 | max |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
