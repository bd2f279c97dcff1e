#!/usr/bin/env bash
# Cost of the tenant limits (burst bucket + daily quota + usage flush) and the memory and
# load time of a large tenant table.
#
#   tests/bench/limits.sh [DURATION_S] [CONNECTIONS]     (defaults: 10 s, 16)
#
# Needs a running stack (scripts/stack.sh start; XG_VAR / XG_PORT_BASE select it) and
# wrk. Works in its own database (xmrgate_limits_bench on the stack's PostgreSQL, dropped
# at the end) and on ports XG_PORT_BASE+86..+87.
#   1. throughput, limits on vs off ([limits] enabled), of get_block_count over /json_rpc
#      for one hot tenant and for 10,000 tenants round-robin (a path token per request);
#   2. RSS of a gateway holding 1,000,000 tenants loaded from PostgreSQL, and how long
#      the full load takes (pgsync's tenants_loaded log line vs the start).
# LIMITS_BENCH_TENANTS changes the 1,000,000; LIMITS_BENCH_SKIP_THROUGHPUT=1 runs only 2.
# LIMITS_BENCH_GATEWAY runs another build of the gateway (a before/after comparison).
# Prints Markdown for docs/BENCHMARKS.md ("## Tenant limits").
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
DURATION=${1:-10}
CONNS=${2:-16}
BIG=${LIMITS_BENCH_TENANTS:-1000000}
XG_VAR=${XG_VAR:-$REPO/var}
set -a
# shellcheck source=/dev/null
. "$XG_VAR/stack.env"
set +a
base_url=${DATABASE_URL%/*}
db=$base_url/xmrgate_limits_bench
key=$(printf 'ab%.0s' {1..32})
gateway_bin=${LIMITS_BENCH_GATEWAY:-$REPO/bin/xmrgate-gateway}
port=$((XG_PORT_BASE + 86))
work=$(mktemp -d)
gw_pid=
cleanup() {
	[[ -z $gw_pid ]] || { kill "$gw_pid" 2>/dev/null && wait "$gw_pid" 2>/dev/null; } || true
	psql -X -q "$base_url/postgres" -c "DROP DATABASE IF EXISTS xmrgate_limits_bench WITH (FORCE)" || true
	rm -rf "$work"
}
trap cleanup EXIT
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$db" -c "$1"; }

psql -X -q "$base_url/postgres" -c "DROP DATABASE IF EXISTS xmrgate_limits_bench WITH (FORCE)" \
	-c "CREATE DATABASE xmrgate_limits_bench"
XMRGATE_DATABASE_URL=$db XMRGATE_GATEWAY_HA1_KEY=$key "$REPO/bin/xmrgate-billing" migrate 2>/dev/null
q "INSERT INTO nodes (name, url) VALUES ('a', '$NODE_A_URL')"
q "INSERT INTO tiers (id, name, burst_rps, daily_quota, price_currency, price_minor, confirmations)
	VALUES ('bench', 'bench', 1000000000, 1000000000000, 'USD', 1, 1)"

# Tenants n = 1..N: token "xg_" + n zero-padded to 42 digits + "A" (canonical base64url),
# handle "t_" + n in letters a-j, 12 wide. SHA-256 of the token text is what is stored.
# The wrapped HA1 carries the format's version byte, so loading each row runs the whole
# AES-GCM unwrap (its tag then fails, as it costs the same as one that succeeds).
add_tenants() { # FROM TO
	q "INSERT INTO tenants (handle, token_hash, digest_ha1, tier_id, valid_until)
		SELECT 't_' || translate(lpad(n::text, 12, '0'), '0123456789', 'abcdefghij'),
		       sha256(('xg_' || lpad(n::text, 42, '0') || 'A')::bytea),
		       decode('01' || repeat('00', 44), 'hex'), 'bench', now() + interval '30 days'
		  FROM generate_series($1, $2) AS n"
}
token() { printf 'xg_%042dA' "$1"; }

start_gateway() { # ENABLED [READY_TIMEOUT_S]
	local t0 log=$work/gateway.log wait_s=${2:-60}
	: >"$log"
	for _ in $(seq 100); do # the previous instance's port is released asynchronously
		ss -Hltn "sport = :$port or sport = :$((port + 1))" | grep -q . || break
		sleep 0.1
	done
	t0=$(date +%s.%N)
	XMRGATE_DATABASE_URL=$db XMRGATE_AUTH_HA1_KEY=$key XMRGATE_SERVER_PORT=$port \
		XMRGATE_ADMIN_PORT=$((port + 1)) XMRGATE_LIMITS_ENABLED=$1 \
		"$gateway_bin" >"$log" 2>&1 &
	gw_pid=$!
	for _ in $(seq $((wait_s * 10))); do
		curl -sf -o /dev/null "http://127.0.0.1:$((port + 1))/readyz" && break
		sleep 0.1
	done
	curl -sf -o /dev/null "http://127.0.0.1:$((port + 1))/readyz" || {
		tail "$log" >&2
		exit 1
	}
	START_T0=$t0
}
stop_gateway() {
	kill "$gw_pid"
	wait "$gw_pid" 2>/dev/null || true
	gw_pid=
}
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$gw_pid/status"; }

# wrk run → "rps p50 p99 non2xx"
run_wrk() { # SCRIPT_ARGS...
	local out
	out=$(wrk -t2 -c"$CONNS" -d"${DURATION}s" --latency "$@" 2>"$work/wrk.err") || { head -c 600 "$work/wrk.err" >&2; }
	awk '/Requests\/sec/ {rps=$2}
		/^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
		/Non-2xx/ {bad=$5}
		END {printf "%d %s %s %d\n", rps, p50, p99, bad}' <<<"$out"
}

add_tenants 1 10000
seq 1 10000 | while read -r n; do token "$n"; echo; done >"$work/tokens"
printf '{"jsonrpc":"2.0","id":1,"method":"get_block_count"}' >"$work/body"
hot=$(token 1)

declare -A R
R=([hot_false]="0 - - 0" [hot_true]="0 - - 0" [many_false]="0 - - 0" [many_true]="0 - - 0"
	[rss_true]="0 0" [rss_false]="0 0")
phases="false true"
[[ ${LIMITS_BENCH_SKIP_THROUGHPUT:-0} != 1 ]] || phases=""
for enabled in $phases; do
	start_gateway "$enabled"
	curl -s -o /dev/null --data-binary @"$work/body" "http://127.0.0.1:$port/v1/$hot/json_rpc"
	R[hot_$enabled]=$(BODY_FILE=$work/body CONTENT_TYPE=application/json \
		run_wrk -s "$REPO/tests/bench/post.lua" "http://127.0.0.1:$port/v1/$hot/json_rpc")
	rss0=$(rss_kib)
	R[many_$enabled]=$(TOKENS_FILE=$work/tokens run_wrk -s "$REPO/tests/bench/limits_tokens.lua" \
		"http://127.0.0.1:$port/")
	R[rss_$enabled]="$rss0 $(rss_kib)"
	stop_gateway
done
# What the flushes wrote: every served request of the limits-on runs, once.
used=$(q "SELECT coalesce(sum(used), 0) FROM usage_daily")
tenants_used=$(q "SELECT count(*) FROM usage_daily")

row() { # NAME KEY_OFF KEY_ON
	local -a off on
	read -ra off <<<"${R[$2]}"
	read -ra on <<<"${R[$3]}"
	printf '| %s | %s | %s / %s | %s | %s / %s | %s | %.2f |\n' "$1" "${off[0]}" "${off[1]}" \
		"${off[2]}" "${on[0]}" "${on[1]}" "${on[2]}" "${on[3]}" \
		"$(echo "${on[0]} / ${off[0]}" | bc -l)"
}
read -ra rss_on <<<"${R[rss_true]}"
read -ra rss_off <<<"${R[rss_false]}"
[[ -z $phases ]] || cat <<EOF
Run $(date -u +%Y-%m-%dT%H:%MZ), wrk -t2 -c$CONNS -d${DURATION}s, get_block_count over /json_rpc with a
path token, one gateway (2 event-loop threads) in front of node A, $(nproc) cores shared with
the load generator, PostgreSQL and monerod.

| load | limits off: req/s | p50 / p99 | limits on: req/s | p50 / p99 | non-2xx (on) | on/off |
| --- | ---: | --- | ---: | --- | ---: | ---: |
$(row "one hot tenant" hot_false hot_true)
$(row "10,000 tenants round-robin" many_false many_true)

- usage_daily after the limits-on runs: $used weighted requests over $tenants_used tenants
  (every request of those runs, flushed in batches).
- Gateway RSS before / after the 10,000-tenant run: limits off ${rss_off[0]} / ${rss_off[1]} KiB,
  limits on ${rss_on[0]} / ${rss_on[1]} KiB (the difference is the buckets and quota entries
  of 10,000 served tenants, plus allocator noise).
EOF

# 1,000,000 tenants.
t_ins=$(date +%s.%N)
add_tenants 10001 "$BIG"
t_ins=$(echo "$(date +%s.%N) - $t_ins" | bc)
start_gateway true 900
loaded=$(grep -h '"tenants_loaded"' "$work/gateway.log" | head -n 1)
load_ms=$(jq -rn --arg t0 "$START_T0" --argjson l "$loaded" \
	'(($l.ts | sub("\\.[0-9]+Z$"; "Z") | fromdate) + ($l.ts | capture("\\.(?<ms>[0-9]+)Z").ms | tonumber / 1000) - ($t0 | tonumber)) * 1000 | floor')
rss_big=$(rss_kib)
hwm_big=$(awk '/^VmHWM/ {print $2}' "/proc/$gw_pid/status")
# The process's own accounting (pgsync's log line) and its CPU time up to now (the load,
# whatever else runs on the machine): utime + stime from /proc/PID/stat, in clock ticks.
snap_bytes=$(jq -r '.msg | capture("(?<b>[0-9]+) bytes in snapshots").b' <<<"$loaded")
cpu_ms=$(awk -v hz="$(getconf CLK_TCK)" '{print int(($14 + $15) * 1000 / hz)}' "/proc/$gw_pid/stat")
st=$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"$work/body" \
	"http://127.0.0.1:$port/v1/$(token "$BIG")/json_rpc")
stop_gateway
# PostgreSQL alone on the same rows: the gateway's COPY (the sql/queries_gateway.sql of
# the gateway's own tree) into psql and /dev/null, the floor under the load's wall time.
copy_sql=$(awk '/^-- name: gw_tenants_copy/ {on = 1; next} on && /^-- name:/ {exit}
	on && !/^--/ {print}' "$(dirname "$gateway_bin")/../sql/queries_gateway.sql")
t_copy=$(date +%s.%N)
psql -X -q "$db" -c "$copy_sql" >/dev/null
copy_ms=$(echo "($(date +%s.%N) - $t_copy) * 1000 / 1" | bc)

cat <<EOF
- $BIG tenants: inserted in ${t_ins%.*} s (generate_series); the gateway's full load took
  ${load_ms} ms from process start to "tenants_loaded" (gateway CPU time by then: ${cpu_ms} ms;
  PostgreSQL's COPY alone, into psql: ${copy_ms} ms; load average $(cut -d' ' -f1 /proc/loadavg));
  the snapshots hold $snap_bytes bytes by the process's own accounting
  ($(( snap_bytes / BIG )) bytes per tenant, hash buckets not included); RSS with them loaded:
  $rss_big KiB ($(( rss_big * 1024 / BIG )) bytes per tenant, everything included; peak during
  the load $hwm_big KiB); the last tenant answered HTTP $st.
EOF
