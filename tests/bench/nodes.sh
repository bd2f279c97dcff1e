#!/usr/bin/env bash
# Nodes and cache: what the tip cache is worth, and what caching saves the nodes.
#
#   tests/bench/nodes.sh [DURATION_S]     (default 10 s per cell)
#
# Runs against the stack in $XG_VAR (started with scripts/stack.sh; started here with
# XG_VAR=var/bench, XG_PORT_BASE=29100 when none is running). Uses ports XG_PORT_BASE+80…89.
#
# 1. get_info at 1, 16 and 64 connections (wrk, POST, keep-alive) against:
#    - the gateway, answered from its tip cache (every answer after the first is a hit);
#    - nginx returning a static body of the same size (the machine's upper bound for an
#      HTTP answer of that size; POST served through `error_page 405 =200`);
#    - HAProxy in http mode passing through to monerod (what a TCP/HTTP balancer gives).
# 2. Two view-only wallets (the payer's address and view key, restored from height 0)
#    syncing the chain through the gateway at the same time, against one such wallet
#    syncing directly. Node requests are counted by an HAProxy in front of node A (its
#    CSV stats), which is the only node in both cases; the gateway's own probes over the
#    same time (measured idle) are reported apart. The cache hit ratio is the gateway's
#    (GET /nodes on its admin port).
# Prints Markdown for docs/BENCHMARKS.md ("## Nodes and cache").
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
DURATION=${1:-10}
export XG_VAR=${XG_VAR:-$REPO/var/bench} XG_PORT_BASE=${XG_PORT_BASE:-29100}
# shellcheck source=tests/bench/lib.sh
. "$REPO/tests/bench/lib.sh"
bench_begin
. "$REPO/scripts/lib-stack.sh"
# A scratch database of its own: the stack's nodes table stays as it is.
BENCH_DB=${DATABASE_URL%/*}/xmrgate_nodes_bench
psql -X -q "${DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS xmrgate_nodes_bench WITH (FORCE)" \
	-c "CREATE DATABASE xmrgate_nodes_bench"

P=$((XG_PORT_BASE + 80))
GW_PORT=$P GW_ADMIN=$((P + 1)) HA_PORT=$((P + 2)) HA_STATS=$((P + 3)) NGINX_PORT=$((P + 4))
W1=$((P + 5)) W2=$((P + 6)) WD=$((P + 7)) HA_DIRECT=$((P + 8))
HA1_KEY=$(printf '%064d' 0)

XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_GATEWAY_HA1_KEY=$HA1_KEY \
	"$REPO/bin/xmrgate-billing" migrate >/dev/null 2>&1 || true
creds=$(XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_GATEWAY_HA1_KEY=$HA1_KEY \
	"$REPO/bin/xmrgate-billing" grant --tier sovereign --days 1 2>/dev/null)
TOKEN=$(sed -n 's/^TOKEN=//p' <<<"$creds")
HANDLE=$(sed -n 's/^HANDLE=//p' <<<"$creds")

# HAProxy in front of node A: the pass-through contender, and the request counter.
node=${NODE_A_URL#http://}
cat >"$work/haproxy.cfg" <<CFG
global
    maxconn 4096
defaults
    mode http
    option http-keep-alive
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout queue 30s
frontend counter
    bind 127.0.0.1:$HA_PORT
    default_backend node
frontend direct
    bind 127.0.0.1:$HA_DIRECT
    default_backend node
backend node
    http-reuse always
    server a $node maxconn 20
listen stats
    bind 127.0.0.1:$HA_STATS
    stats enable
    stats uri /stats
CFG
haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
pids+=($!)
# Requests a frontend has seen (CSV column req_tot): "counter" is the gateway's node,
# "direct" the directly connected wallet's.
node_requests() {
	curl -s "http://127.0.0.1:$HA_STATS/stats;csv" | awk -F, -v fe="${1:-counter}" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == "req_tot") col = i }
		$1 == fe && $2 == "FRONTEND" { print $col }'
}

# The gateway's only node is the counting HAProxy.
psql -X -q "$BENCH_DB" -c "BEGIN; DELETE FROM nodes;
	INSERT INTO nodes (name, url) VALUES ('a', 'http://127.0.0.1:$HA_PORT'); COMMIT;"
XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_AUTH_HA1_KEY=$HA1_KEY XMRGATE_SERVER_PORT=$GW_PORT \
	XMRGATE_ADMIN_PORT=$GW_ADMIN XMRGATE_LIMITS_ENABLED=false XMRGATE_LOG_LEVEL=warn \
	XMRGATE_ADMIN_TOKEN=bench-admin-token \
	"$REPO/bin/xmrgate-gateway" 2>"$work/gateway.log" &
pids+=($!)
for _ in $(seq 200); do
	curl -sf -o /dev/null "http://127.0.0.1:$GW_ADMIN/readyz" && break
	sleep 0.1
done

# nginx: a static body the size of the gateway's cached get_info answer.
GW=http://127.0.0.1:$GW_PORT/v1/$TOKEN
printf '{"jsonrpc":"2.0","id":"0","method":"get_info"}' >"$work/get_info"
mkdir -p "$work/www" "$work/nginx"
curl -s -H 'Content-Type: application/json' --data-binary @"$work/get_info" "$GW/json_rpc" \
	>"$work/www/json_rpc"
body_size=$(wc -c <"$work/www/json_rpc")
cat >"$work/nginx.conf" <<CFG
user root;
worker_processes 2;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $work/nginx/body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $work/www;
        default_type application/json;
        error_page 405 =200 \$uri;
    }
}
CFG
nginx -c "$work/nginx.conf" 2>"$work/nginx/start.log" &
pids+=($!)
sleep 1

# run_wrk URL CONNS → "rps p50_us p99_us failed"
run_wrk() {
	local out threads=$(($2 < 2 ? 1 : 2))
	out=$(BODY_FILE=$work/get_info CONTENT_TYPE=application/json wrk -t"$threads" -c"$2" \
		-d"${DURATION}s" --latency -s "$REPO/tests/bench/post.lua" "$1" 2>&1)
	awk '
	function us(v) { if (v ~ /us$/) return v + 0; if (v ~ /ms$/) return v * 1000; if (v ~ /s$/) return v * 1000000; return v }
	/Requests\/sec/ { rps = $2 }
	/^ +50%/ { p50 = us($2) } /^ +99%/ { p99 = us($2) }
	/Non-2xx/ { failed += $NF }
	/Socket errors/ { gsub(/,/, ""); failed += $4 + $6 + $8 + $10 }
	END { printf "%d %d %d %d\n", rps, p50, p99, failed }' <<<"$out"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "–" }'; }

echo "### get_info: tip-cache hits against nginx (static, $body_size bytes) and HAProxy → monerod"
echo
echo "| conns | nginx static req/s | gateway tip-cache req/s | HAProxy→monerod req/s | gateway/nginx | gateway/HAProxy | p50 nginx / gw / HAProxy (µs) | p99 nginx / gw / HAProxy (µs) | failed nginx / gw / HAProxy |"
echo "|---|---|---|---|---|---|---|---|---|"
hits_before=$(curl -s -H "Authorization: Bearer bench-admin-token" "http://127.0.0.1:$GW_ADMIN/nodes" | jq '.cache.hits')
for conns in 1 16 64; do
	read -r n_rps n_p50 n_p99 n_fail < <(run_wrk "http://127.0.0.1:$NGINX_PORT/json_rpc" "$conns")
	read -r g_rps g_p50 g_p99 g_fail < <(run_wrk "$GW/json_rpc" "$conns")
	read -r h_rps h_p50 h_p99 h_fail < <(run_wrk "http://127.0.0.1:$HA_PORT/json_rpc" "$conns")
	echo "| $conns | $n_rps | $g_rps | $h_rps | $(ratio "$g_rps" "$n_rps") | $(ratio "$g_rps" "$h_rps") | $n_p50 / $g_p50 / $h_p50 | $n_p99 / $g_p99 / $h_p99 | $n_fail / $g_fail / $h_fail |"
done
stats=$(curl -s -H "Authorization: Bearer bench-admin-token" "http://127.0.0.1:$GW_ADMIN/nodes")
echo
echo "Gateway cache during the get_info runs: $(($(jq '.cache.hits' <<<"$stats") - hits_before)) hits, $(jq '.cache.misses' <<<"$stats") misses in all (one miss per new tip or TTL)."
echo

# --- 2. wallets ------------------------------------------------------------------------
view_key=$(xg_rpc "$PAYER_WALLET_URL" query_key '{"key_type":"view_key"}' | jq -r '.key')
restore=$(jq -cn --arg a "$PAYER_ADDRESS" --arg v "$view_key" \
	'{filename: "w", password: "", address: $a, viewkey: $v, restore_height: 0, autosave_current: false}')
start_wallet() { # PORT DAEMON [LOGIN]
	local dir=$work/wallet-$1
	mkdir -p "$dir"
	monero-wallet-rpc --daemon-address "$2" ${3:+--daemon-login "$3"} --trusted-daemon \
		--rpc-bind-ip 127.0.0.1 --rpc-bind-port "$1" --disable-rpc-login --wallet-dir "$dir" \
		--log-file "$dir/log" --log-level 0 --non-interactive >/dev/null 2>&1 &
	pids+=($!)
	for _ in $(seq 120); do
		XG_RPC_TIMEOUT=2 xg_rpc "http://127.0.0.1:$1" get_version >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	return 1
}
sync_wallet() { # PORT
	XG_RPC_TIMEOUT=300 xg_rpc "http://127.0.0.1:$1" generate_from_keys "$restore" >/dev/null
	XG_RPC_TIMEOUT=300 xg_rpc "http://127.0.0.1:$1" refresh '{"start_height":0}' >/dev/null
	xg_rpc "http://127.0.0.1:$1" get_height | jq -r '.height'
}
height=$(xg_rpc "$NODE_A_URL" get_block_count | jq -r '.count')

start_wallet "$WD" "127.0.0.1:$HA_DIRECT"
before=$(node_requests direct)
t0=$(date +%s%3N)
direct_blocks=$(sync_wallet "$WD")
direct_ms=$(($(date +%s%3N) - t0))
direct=$(($(node_requests direct) - before))

start_wallet "$W1" "127.0.0.1:$GW_PORT" "$HANDLE:$TOKEN"
start_wallet "$W2" "127.0.0.1:$GW_PORT" "$HANDLE:$TOKEN"
sleep 2
c0=$(curl -s -H "Authorization: Bearer bench-admin-token" "http://127.0.0.1:$GW_ADMIN/nodes" | jq -c '.cache')
before=$(node_requests)
t0=$(date +%s%3N)
sync_wallet "$W1" >"$work/w1" &
s1=$!
sync_wallet "$W2" >"$work/w2" &
s2=$!
wait "$s1" "$s2"
both_ms=$(($(date +%s%3N) - t0))
through=$(($(node_requests) - before))
c1=$(curl -s -H "Authorization: Bearer bench-admin-token" "http://127.0.0.1:$GW_ADMIN/nodes" | jq -c '.cache')
# The gateway's probes over the same time, measured idle.
before=$(node_requests)
sleep $(((both_ms + 999) / 1000))
probes=$(($(node_requests) - before))
hits=$(($(jq '.hits' <<<"$c1") - $(jq '.hits' <<<"$c0")))
misses=$(($(jq '.misses' <<<"$c1") - $(jq '.misses' <<<"$c0")))

echo "### Wallet sync: two wallets through the gateway against one wallet direct"
echo
echo "Chain of $height blocks; view-only wallets of the payer (restore height 0)."
echo
echo "| case | wallet height after the sync | wall time | requests reaching the node |"
echo "|---|---|---|---|"
echo "| one wallet, direct (through the counting HAProxy) | $direct_blocks | ${direct_ms} ms | $direct |"
echo "| two wallets at once, through the gateway | $(cat "$work/w1") + $(cat "$work/w2") | ${both_ms} ms | $through, of which ~$probes the gateway's own probes: $((through - probes)) for the wallets |"
echo
echo "Gateway cache during the two syncs: $hits hits, $misses misses (hit ratio $(ratio "$hits" $((hits + misses))) over cacheable requests: a second wallet's getblocks.bin for the same body at the same tip is a hit); pool queries pass through."
