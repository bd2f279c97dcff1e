#!/usr/bin/env bash
# A paying tenant's latency and the gateway's memory while 2,000 slow clients from a
# handful of loopback addresses (127.0.0.2-9) try to hold connections (#19).
#
#   tests/bench/slowclients.sh [SECONDS]     (default 20 s per run)
#
# Starts (or reuses) the bench stack (XG_BENCH_VAR, XG_BENCH_PORT_BASE) and a gateway on
# its own database with node A, [server] loops 2, the defaults for the slow-client keys
# (header_timeout 10 s, body_min_rate 1k after body_grace 5 s, 64 connections per
# address) unless a run says otherwise. Each run: slowloris.py holds 2,000 connections
# (reopening each one the gateway closes) while wrk (1 thread, 4 connections, from
# 127.0.0.1) asks /get_block_count with the tenant's path token for the whole time.
#   1. baseline: no slow client;
#   2. 2,000 trickled heads, the per-address cap at its default (64);
#   3. the same with no cap: all 2,000 held until the header timeout;
#   4. 2,000 slow bodies with the tenant's token (100 kB declared, one byte a second),
#      no cap: closed under the minimum rate.
# Reported: the tenant's requests/s, p50 and p99 (wrk --latency), what the slow clients
# got, and the gateway's RSS (VmRSS at the end, VmHWM the peak) and RLIMIT_NOFILE.
# Prints Markdown for docs/BENCHMARKS.md ("## Slow clients").
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_PER_RUN=${1:-20}
export XG_VAR=${XG_BENCH_VAR:-$REPO/var/bench} XG_PORT_BASE=${XG_BENCH_PORT_BASE:-29100}
# shellcheck source=tests/bench/lib.sh
. "$REPO/tests/bench/lib.sh"
gw_pid=
# shellcheck disable=SC2016 # expanded at exit
bench_exit_hook='[[ -z $gw_pid ]] || kill "$gw_pid" 2>/dev/null'
bench_begin
ulimit -n "$(ulimit -Hn)" # the slow clients' own sockets
BENCH_DB=${DATABASE_URL%/*}/xmrgate_slow_bench
psql -X -q "${DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS xmrgate_slow_bench WITH (FORCE)" \
	-c "CREATE DATABASE xmrgate_slow_bench"
GW_PORT=$((XG_PORT_BASE + 82)) GW_ADMIN=$((XG_PORT_BASE + 83))
HA1_KEY=$(printf '%064d' 0)
XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_GATEWAY_HA1_KEY=$HA1_KEY \
	"$REPO/bin/xmrgate-billing" migrate >/dev/null 2>&1 || true
TOKEN=$(XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_GATEWAY_HA1_KEY=$HA1_KEY \
	"$REPO/bin/xmrgate-billing" grant --tier sovereign --days 1 2>/dev/null | sed -n 's/^TOKEN=//p')
psql -X -q "$BENCH_DB" -c "DELETE FROM nodes; INSERT INTO nodes (name, url) VALUES ('a', '$NODE_A_URL');
	UPDATE tiers SET burst_rps = 1000000, daily_quota = 1000000000 WHERE id = 'sovereign'"
URL=http://127.0.0.1:$GW_PORT/v1/$TOKEN
ADDRS=(127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 127.0.0.6 127.0.0.7 127.0.0.8 127.0.0.9)

start_gateway() { # ENV...
	env XMRGATE_DATABASE_URL="$BENCH_DB" XMRGATE_AUTH_HA1_KEY="$HA1_KEY" \
		XMRGATE_SERVER_PORT="$GW_PORT" XMRGATE_ADMIN_PORT="$GW_ADMIN" XMRGATE_SERVER_LOOPS=2 \
		"$@" "$REPO/bin/xmrgate-gateway" >"$work/gateway.log" 2>&1 &
	gw_pid=$!
	for _ in $(seq 300); do
		curl -sf -o /dev/null "http://127.0.0.1:$GW_ADMIN/readyz" && return 0
		sleep 0.1
	done
	tail "$work/gateway.log" >&2
	exit 1
}
stop_gateway() {
	kill "$gw_pid" && wait "$gw_pid" 2>/dev/null || true
	gw_pid=
	for _ in $(seq 100); do # the port is released asynchronously
		ss -Hltn "sport = :$GW_PORT" | grep -q . || break
		sleep 0.1
	done
}
status_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$gw_pid/status"; }
# wrk's --latency line for a percentile, in ms
pct_ms() {
	awk -v p="$1" '$1 == p {
		v = $2; u = v; gsub(/[0-9.]/, "", u); sub(/[a-z]+$/, "", v)
		if (u == "us") v /= 1000; else if (u == "s") v *= 1000
		printf "%.2f", v }' "$work/wrk.out"
}

echo "| run | tenant req/s | p50 ms | p99 ms | slow clients (opened / answers / closed unanswered / most held) | gateway RSS end / peak MiB |"
echo "| --- | ---: | ---: | ---: | --- | ---: |"
run() { # NAME MODE(none|head|body) ENV...
	local name=$1 mode=$2 slow_pid= slow='-'
	shift 2
	start_gateway "$@"
	if [[ $mode != none ]]; then
		python3 "$REPO/tests/bench/slowloris.py" "$GW_PORT" 2000 "$((SECONDS_PER_RUN + 5))" \
			"$mode" "/v1/$TOKEN/json_rpc" "${ADDRS[@]}" >"$work/slow.json" &
		slow_pid=$!
		sleep 5 # the 2,000 are connecting
	fi
	wrk -t1 -c4 -d"${SECONDS_PER_RUN}s" --latency "$URL/get_block_count" >"$work/wrk.out" 2>&1 || true
	local rss hwm rps
	rss=$(status_kb VmRSS) hwm=$(status_kb VmHWM)
	rps=$(awk '/^Requests\/sec/ { printf "%.0f", $2 }' "$work/wrk.out")
	if [[ -n $slow_pid ]]; then
		wait "$slow_pid" || true
		slow=$(jq -r '"\(.opened) / \(.answers | to_entries | map("\(.value)×\(.key)") | join(", ")) / \(.closed_unanswered) / \(.held_max)"' "$work/slow.json")
	fi
	printf '| %s | %s | %s | %s | %s | %.0f / %.0f |\n' "$name" "$rps" "$(pct_ms 50%)" "$(pct_ms 99%)" \
		"$slow" "$((rss / 1024))" "$((hwm / 1024))"
	NOFILE=$(awk '/Max open files/ { print $4 " soft / " $5 " hard" }' "/proc/$gw_pid/limits")
	stop_gateway
}
run "baseline" none
run "2,000 slow heads, cap 64/address" head
run "2,000 slow heads, no cap" head XMRGATE_SERVER_MAX_CONNECTIONS_PER_ADDRESS=0
run "2,000 slow bodies (tenant token), no cap" body XMRGATE_SERVER_MAX_CONNECTIONS_PER_ADDRESS=0
echo
echo "Run $(date -u +%Y-%m-%dT%H:%MZ), ${SECONDS_PER_RUN} s per run, slow clients from ${ADDRS[0]}-${ADDRS[-1]##*.}; the gateway's RLIMIT_NOFILE: $NOFILE (raised to the hard limit at start)."
