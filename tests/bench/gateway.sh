#!/usr/bin/env bash
# Gateway throughput and latency against direct monerod and HAProxy, side by side.
#
#   tests/bench/gateway.sh [DURATION_S [ROUNDS]]   (default 3 s per run, 3 rounds)
#
# Each cell is measured ROUNDS times, the three targets taking turns within a round (so a
# background blip on this shared machine hits one run, not one target) in an order that
# rotates from round to round, and the table shows each target's median run (by
# requests/s; failures summed over the rounds).
#
# XG_BENCH_CALLS (default "get_info get_block_count blocks_by_height blocks_at_tip
# pool_hashes") and XG_BENCH_CONNS (default "1 16 64") pick a subset of the table's rows;
# XG_BENCH_FRONT_END (default native) sets the gateway's [server] front_end; XG_BENCH_NODES=3
# puts nodes A, B and C behind both the gateway and HAProxy (round-robin) instead of node A
# alone ("direct" stays node A).
#
# XG_BENCH_GATEWAY_B=PATH (another build's xmrgate-gateway, e.g. a worktree of an older
# commit) runs that build beside this one, on the same database, node and configuration,
# and the table compares the two instead of HAProxy: node A directly, this build (A) and
# build B take turns in each round, and each build's requests/s shows its median and the
# range (lowest–highest) over the rounds.
#
# Starts a bench stack (XG_VAR=var/bench, XG_PORT_BASE=29100) unless one is running,
# then, for get_info and get_block_count (/json_rpc) and get_blocks_by_height.bin (block 1,
# which the gateway caches, and the top block, which it proxies every time), at
# 1, 16 and 64 connections, runs wrk against: node A directly, HAProxy (Debian's, http
# mode, keep-alive, at most 20 connections to each node) in front of node A, and a
# gateway whose only node is node A; and /get_transaction_pool_hashes, which no rule may
# cache (the pool changes without the tip), proxied every time. Prints a Markdown table (requests/s, p50, p99,
# failed requests, the gateway's ratios, and the CPU time HAProxy and the gateway each spent
# per request, from /proc, all threads) for docs/BENCHMARKS.md.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
DURATION=${1:-3}
ROUNDS=${2:-3}
export XG_VAR=${XG_BENCH_VAR:-$REPO/var/bench} XG_PORT_BASE=${XG_BENCH_PORT_BASE:-29100}
# shellcheck source=tests/bench/lib.sh
. "$REPO/tests/bench/lib.sh"
bench_begin

# A database whose only node is node A and a tenant on an unlimited bench tier.
base_url=${DATABASE_URL%/*}
db_url=$base_url/xmrgate_bench
psql -X -q "$base_url/postgres" -c "DROP DATABASE IF EXISTS xmrgate_bench WITH (FORCE)" \
	-c "CREATE DATABASE xmrgate_bench"
XMRGATE_DATABASE_URL=$db_url "$REPO/bin/xmrgate-billing" --config "$XG_VAR/etc/billing.ini" \
	migrate 2>/dev/null
NODES=${XG_BENCH_NODES:-1}
[[ $NODES == 1 || $NODES == 3 ]] || { echo "XG_BENCH_NODES must be 1 or 3" >&2; exit 2; }
psql -X -q "$db_url" -c "INSERT INTO nodes (name, url) VALUES ('a', '$NODE_A_URL')"
[[ $NODES == 3 ]] && psql -X -q "$db_url" \
	-c "INSERT INTO nodes (name, url) VALUES ('b', '$NODE_B_URL'), ('c', '$NODE_C_URL')"
psql -X -q "$db_url" \
	-c "INSERT INTO tiers (id, name, burst_rps, daily_quota, price_currency, price_minor,
	    confirmations) VALUES ('bench', 'Bench', 1000000, 1000000000000, 'XMR', 1, 1)"
creds=$(XMRGATE_DATABASE_URL=$db_url "$REPO/bin/xmrgate-billing" \
	--config "$XG_VAR/etc/billing.ini" grant --tier bench --days 1 2>/dev/null)
TOKEN=$(sed -n 's/^TOKEN=//p' <<<"$creds")

GW_PORT=$((XG_PORT_BASE + 90)) GW_ADMIN=$((XG_PORT_BASE + 91)) HA_PORT=$((XG_PORT_BASE + 92))
XMRGATE_DATABASE_URL=$db_url XMRGATE_SERVER_PORT=$GW_PORT XMRGATE_ADMIN_PORT=$GW_ADMIN \
	XMRGATE_SERVER_FRONT_END=${XG_BENCH_FRONT_END:-native} XMRGATE_LOG_LEVEL=warn \
	"$REPO/bin/xmrgate-gateway" --config "$XG_VAR/etc/gateway.ini" 2>"$work/gateway.log" &
GW_PID=$!
pids+=("$GW_PID")
GW_B=${XG_BENCH_GATEWAY_B:-}
if [[ -n $GW_B ]]; then
	GWB_PORT=$((XG_PORT_BASE + 93)) GWB_ADMIN=$((XG_PORT_BASE + 94))
	XMRGATE_DATABASE_URL=$db_url XMRGATE_SERVER_PORT=$GWB_PORT XMRGATE_ADMIN_PORT=$GWB_ADMIN \
		XMRGATE_SERVER_FRONT_END=${XG_BENCH_FRONT_END:-native} XMRGATE_LOG_LEVEL=warn \
		"$GW_B" --config "$XG_VAR/etc/gateway.ini" 2>"$work/gateway_b.log" &
	GWB_PID=$!
	pids+=("$GWB_PID")
	for _ in $(seq 100); do
		curl -sf -o /dev/null "http://127.0.0.1:$GWB_ADMIN/readyz" && break
		sleep 0.1
	done
	curl -sf -o /dev/null "http://127.0.0.1:$GWB_ADMIN/readyz" ||
		{ echo "gateway B ($GW_B) is not ready: $(tail -3 "$work/gateway_b.log")" >&2; exit 1; }
fi
servers="    server a ${NODE_A_URL#http://} maxconn 20"
[[ $NODES == 3 ]] && servers+="
    server b ${NODE_B_URL#http://} maxconn 20
    server c ${NODE_C_URL#http://} maxconn 20"
cat >"$work/haproxy.cfg" <<CFG
global
    maxconn 4096
defaults
    mode http
    option http-keep-alive
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    timeout queue 30s
frontend bench
    bind 127.0.0.1:$HA_PORT
    default_backend node
backend node
    balance roundrobin
    http-reuse always
$servers
CFG
haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
HA_PID=$!
pids+=("$HA_PID")
for _ in $(seq 100); do
	curl -sf -o /dev/null "http://127.0.0.1:$GW_ADMIN/readyz" &&
		curl -sf -o /dev/null "http://127.0.0.1:$HA_PORT/get_height" && break
	sleep 0.1
done

printf '{"jsonrpc":"2.0","id":"0","method":"get_info"}' >"$work/get_info"
printf '{"jsonrpc":"2.0","id":"0","method":"get_block_count"}' >"$work/get_block_count"
printf '{}' >"$work/pool_hashes"
# get_blocks_by_height.bin (epee) for block 1, settled long ago (cached), and for the top
# block, which no rule may cache (proxied to the node every time).
. "$REPO/tests/epee_bodies.sh"
epee_heights_body 1 >"$work/blocks_by_height"
top=$(curl -s "$NODE_A_URL/get_height" | jq -r '.height - 1')
epee_heights_body "$top" >"$work/blocks_at_tip"

# The CPU a process has used so far (user + system, all its threads), in clock ticks.
proc_cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
TICK_US=$((1000000 / $(getconf CLK_TCK)))

# run_wrk URL BODY CTYPE CONNS [PID] → "rps p50_us p99_us failed cpu_us_per_request": the
# last is the CPU process PID (the proxy) spent per request during the run, 0 without PID.
run_wrk() {
	local out threads=$(($4 < 2 ? 1 : 2)) cpu0=0 cpu1=0
	[[ -z ${5:-} ]] || cpu0=$(proc_cpu "$5")
	out=$(BODY_FILE=$2 CONTENT_TYPE=$3 wrk -t"$threads" -c"$4" -d"${DURATION}s" --latency \
		-s "$REPO/tests/bench/post.lua" "$1" 2>&1)
	[[ -z ${5:-} ]] || cpu1=$(proc_cpu "$5")
	awk -v cpu=$(((cpu1 - cpu0) * TICK_US)) '
	function us(v) { if (v ~ /us$/) return v + 0; if (v ~ /ms$/) return v * 1000; if (v ~ /s$/) return v * 1000000; return v }
	/Requests\/sec/ { rps = $2 }
	/ requests in / { n = $1 }
	/^ +50%/ { p50 = us($2) } /^ +99%/ { p99 = us($2) }
	/Non-2xx/ { failed += $NF }
	/Socket errors/ { gsub(/,/, ""); failed += $4 + $6 + $8 + $10 }
	END { printf "%d %d %d %d %.1f\n", rps, p50, p99, failed, (n > 0 ? cpu / n : 0) }' <<<"$out"
}

# median_run FILE (lines "rps p50 p99 failed cpu") → the median line by rps, failures summed
median_run() {
	sort -n "$1" | awk '{ line[NR] = $1 " " $2 " " $3 " " $5; failed += $4 }
	END { split(line[int((NR + 1) / 2)], m, " "); print m[1], m[2], m[3], failed, m[4] }'
}

# spread FILE → "lowest highest" requests/s over the rounds
spread() { sort -n "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo, hi }'; }

if [[ -n $GW_B ]]; then
	echo "| call | conns | direct req/s | A req/s median (range) | B req/s median (range) | A/B | p50 direct / A / B (µs) | p99 direct / A / B (µs) | failed direct / A / B | gateway CPU per request A / B (µs) |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
fi
[[ -n $GW_B ]] || echo "| call | conns | direct req/s | HAProxy req/s | gateway req/s | gw/direct | gw/HAProxy | p50 direct / HAProxy / gw (µs) | p99 direct / HAProxy / gw (µs) | failed direct / HAProxy / gw | proxy CPU per request HAProxy / gw (µs) |"
[[ -n $GW_B ]] || echo "|---|---|---|---|---|---|---|---|---|---|---|"
for call in ${XG_BENCH_CALLS:-get_info get_block_count blocks_by_height blocks_at_tip pool_hashes}; do
	case $call in
	blocks_by_height | blocks_at_tip) path=/get_blocks_by_height.bin ctype="" ;;
	pool_hashes) path=/get_transaction_pool_hashes ctype=application/json ;;
	*) path=/json_rpc ctype=application/json ;;
	esac
	for conns in ${XG_BENCH_CONNS:-1 16 64}; do
		: >"$work/d" && : >"$work/h" && : >"$work/g"
		for ((round = 0; round < ROUNDS; round++)); do
			# The order rotates each round, so that no target always runs right after the
			# same other one (monerod's state after a run carries into the next).
			for ((k = 0; k < 3; k++)); do
				case $(((round + k) % 3)) in
				0) run_wrk "$NODE_A_URL$path" "$work/$call" "$ctype" "$conns" >>"$work/d" ;;
				1) if [[ -n $GW_B ]]; then # build B takes HAProxy's turn (and file)
					run_wrk "http://127.0.0.1:$GWB_PORT/v1/$TOKEN$path" "$work/$call" "$ctype" \
						"$conns" "$GWB_PID" >>"$work/h"
				else
					run_wrk "http://127.0.0.1:$HA_PORT$path" "$work/$call" "$ctype" "$conns" \
						"$HA_PID" >>"$work/h"
				fi ;;
				2) run_wrk "http://127.0.0.1:$GW_PORT/v1/$TOKEN$path" "$work/$call" "$ctype" "$conns" \
					"$GW_PID" >>"$work/g" ;;
				esac
			done
		done
		read -r d_rps d_p50 d_p99 d_fail _ < <(median_run "$work/d")
		read -r h_rps h_p50 h_p99 h_fail h_cpu < <(median_run "$work/h")
		read -r g_rps g_p50 g_p99 g_fail g_cpu < <(median_run "$work/g")
		ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "–" }'; }
		if [[ -n $GW_B ]]; then
			read -r g_lo g_hi < <(spread "$work/g")
			read -r h_lo h_hi < <(spread "$work/h")
			echo "| $call | $conns | $d_rps | $g_rps ($g_lo–$g_hi) | $h_rps ($h_lo–$h_hi) | $(ratio "$g_rps" "$h_rps") | $d_p50 / $g_p50 / $h_p50 | $d_p99 / $g_p99 / $h_p99 | $d_fail / $g_fail / $h_fail | $g_cpu / $h_cpu |"
			continue
		fi
		echo "| $call | $conns | $d_rps | $h_rps | $g_rps | $(ratio "$g_rps" "$d_rps") | $(ratio "$g_rps" "$h_rps") | $d_p50 / $h_p50 / $g_p50 | $d_p99 / $h_p99 / $g_p99 | $d_fail / $h_fail / $g_fail | $h_cpu / $g_cpu |"
	done
done
