#!/usr/bin/env bash
# Wallets that share their sync: WALLETS view-only wallets (default 10) restoring from
# height 0 at once through the gateway, against one such wallet restoring directly, on a
# realistic regtest chain.
#
#   tests/bench/wallet_sync.sh [WALLETS]
#
# Runs against the bench stack (XG_BENCH_VAR, default <repo>/var/bench; XG_BENCH_PORT_BASE,
# default 29100; started here when none is running, and stopped again). Uses ports
# XG_PORT_BASE+60…79, all on loopback. Environment:
#   SYNC_CHAIN_BLOCKS  the chain is grown to at least this many blocks first (default 2000;
#                      nothing is mined when it is that long already: building it takes
#                      minutes). Each round the payer sends SYNC_TXS_PER_ROUND transfers
#                      (default 3) of 4 outputs each to its own subaddresses, then
#                      SYNC_BLOCKS_PER_ROUND blocks (default 20) are mined to it, whose
#                      coinbase unlocks later and keeps it spending.
#   SYNC_CHAIN_ONLY=1  only grow the chain.
#
# The wallets are monero-wallet-rpc with the payer's address and view key (restore height
# 0, generate_from_keys then refresh). Node requests and the bytes the node sent are
# counted by HAProxy in front of node A, the gateway's only node, with a separate frontend
# for the direct wallet (CSV stats: req_tot, bout); the gateway's own probes (the prober's
# exact request bodies) go to a backend of their own and are reported apart. Prints Markdown for docs/BENCHMARKS.md
# ("Wallet sync").
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
WALLETS=${1:-10}
CHAIN_BLOCKS=${SYNC_CHAIN_BLOCKS:-2000}
export XG_VAR=${XG_BENCH_VAR:-$REPO/var/bench} XG_PORT_BASE=${XG_BENCH_PORT_BASE:-29100}
# shellcheck source=tests/bench/lib.sh
. "$REPO/tests/bench/lib.sh"
bench_begin
. "$REPO/scripts/lib-stack.sh"

chain_height() { xg_rpc "$NODE_A_URL" get_block_count | jq -r '.count'; }

# --- 1. the chain ------------------------------------------------------------------------
grow_chain() {
	local per_round=${SYNC_BLOCKS_PER_ROUND:-20} txs=${SYNC_TXS_PER_ROUND:-3}
	local round=0 sent=0 have subs t k i dests
	(($(chain_height) >= CHAIN_BLOCKS)) && return 0
	have=$(xg_rpc "$PAYER_WALLET_URL" get_address '{"account_index":0}' | jq '.addresses | length')
	while ((have < 25)); do
		xg_rpc "$PAYER_WALLET_URL" create_address '{"account_index":0}' >/dev/null
		have=$((have + 1))
	done
	mapfile -t subs < <(xg_rpc "$PAYER_WALLET_URL" get_address '{"account_index":0}' |
		jq -r '.addresses[1:][].address')
	# Bounded: a round mines per_round blocks, so this many rounds always get there.
	while (($(chain_height) < CHAIN_BLOCKS && round <= CHAIN_BLOCKS / per_round)); do
		round=$((round + 1))
		XG_RPC_TIMEOUT=120 xg_rpc "$PAYER_WALLET_URL" refresh >/dev/null || true
		for t in $(seq "$txs"); do
			dests=$(for k in 0 1 2 3; do
				i=$(((round * 7 + t * 5 + k * 3) % ${#subs[@]}))
				jq -cn --arg a "${subs[$i]}" --argjson n $((1000000000 + round * 1000 + t * 10 + k)) \
					'{address: $a, amount: $n}'
			done | jq -cs '{destinations: ., priority: 0}')
			XG_RPC_TIMEOUT=120 xg_rpc "$PAYER_WALLET_URL" transfer "$dests" >/dev/null 2>&1 &&
				sent=$((sent + 1))
		done
		"$STACK" mine "$per_round" "$PAYER_ADDRESS" >/dev/null
		((round % 10 == 0)) && echo "# chain: round $round, height $(chain_height), $sent transfers" >&2
	done
	echo "# chain: height $(chain_height) ($sent transfers in $round rounds)" >&2
}
grow_chain
[[ ${SYNC_CHAIN_ONLY:-0} == 1 ]] && exit 0
height=$(chain_height)
txs_in_chain=$(curl -s "$NODE_A_URL/get_info" | jq -r '.tx_count')

# --- 2. the gateway and the counting HAProxy -----------------------------------------------
BENCH_DB=${DATABASE_URL%/*}/xmrgate_sync_bench
psql -X -q "${DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS xmrgate_sync_bench WITH (FORCE)" \
	-c "CREATE DATABASE xmrgate_sync_bench"
P=$((XG_PORT_BASE + 60))
GW_PORT=$P GW_ADMIN=$((P + 1)) HA_PORT=$((P + 2)) HA_DIRECT=$((P + 3)) HA_STATS=$((P + 4))
WD=$((P + 5)) W0=$((P + 6))
HA1_KEY=$(printf '%064d' 0)
XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_GATEWAY_HA1_KEY=$HA1_KEY \
	"$REPO/bin/xmrgate-billing" migrate >/dev/null 2>&1 || true
creds=$(XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_GATEWAY_HA1_KEY=$HA1_KEY \
	"$REPO/bin/xmrgate-billing" grant --tier sovereign --days 1 2>/dev/null)
TOKEN=$(sed -n 's/^TOKEN=//p' <<<"$creds")
HANDLE=$(sed -n 's/^HANDLE=//p' <<<"$creds")

cat >"$work/haproxy.cfg" <<CFG
global
    maxconn 4096
    log stdout format raw local0
defaults
    mode http
    log global
    log-format "%b %HM %HP %[capture.req.hdr(0)] %B"
    option http-keep-alive
    timeout connect 2s
    timeout client 300s
    timeout server 300s
    timeout queue 30s
frontend counter
    bind 127.0.0.1:$HA_PORT
    option http-buffer-request
    acl probe req.body -m str '{"jsonrpc":"2.0","id":0,"method":"get_info"}'
    acl probe req.body -m str '{"jsonrpc":"2.0","id":0,"method":"get_last_block_header"}'
    acl probe req.body -m beg '{"jsonrpc":"2.0","id":0,"method":"get_block_headers_range",'
    declare capture request len 64
    http-request capture req.body id 0
    use_backend probes if probe
    default_backend wallets
frontend direct
    bind 127.0.0.1:$HA_DIRECT
    option http-buffer-request
    declare capture request len 64
    http-request capture req.body id 0
    default_backend direct
backend wallets
    http-reuse always
    server a ${NODE_A_URL#http://} maxconn 20
backend probes
    http-reuse always
    server a ${NODE_A_URL#http://} maxconn 20
backend direct
    http-reuse always
    server a ${NODE_A_URL#http://} maxconn 20
listen stats
    bind 127.0.0.1:$HA_STATS
    stats enable
    stats uri /stats
CFG
haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
pids+=($!)
# node_count BACKEND COLUMN: requests (req_tot) or bytes sent back (bout) so far. The
# gateway's probes (the prober's exact bodies) are counted in "probes", the rest of what
# it sends in "wallets"; the direct wallet's in "direct".
node_count() {
	curl -s "http://127.0.0.1:$HA_STATS/stats;csv" | awk -F, -v be="$1" -v want="$2" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == want || $i == "# " want) col = i }
		$1 == be && $2 == "BACKEND" { print $col }'
}
psql -X -q "$BENCH_DB" -c "BEGIN; DELETE FROM nodes;
	INSERT INTO nodes (name, url) VALUES ('a', 'http://127.0.0.1:$HA_PORT'); COMMIT;"
XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_AUTH_HA1_KEY=$HA1_KEY XMRGATE_SERVER_PORT=$GW_PORT \
	XMRGATE_ADMIN_PORT=$GW_ADMIN XMRGATE_LIMITS_ENABLED=false XMRGATE_LOG_LEVEL=warn \
	XMRGATE_ADMIN_TOKEN=bench-admin-token "$REPO/bin/xmrgate-gateway" 2>"$work/gateway.log" &
pids+=($!)
for _ in $(seq 300); do
	curl -sf -o /dev/null "http://127.0.0.1:$GW_ADMIN/readyz" && break
	sleep 0.1
done
metric() { # NAME: the gateway's counter now
	curl -s -H "Authorization: Bearer bench-admin-token" "http://127.0.0.1:$GW_ADMIN/metrics" |
		awk -v n="$1" '$1 == n { print int($2) } END {}' | head -1
}

# --- 3. the wallets ------------------------------------------------------------------------
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
}
wallet_up() { XG_RPC_TIMEOUT=2 xg_rpc "http://127.0.0.1:$1" get_version >/dev/null 2>&1; }
sync_wallet() { # PORT: restore, refresh, print "height balance"
	local url=http://127.0.0.1:$1
	XG_RPC_TIMEOUT=900 xg_rpc "$url" generate_from_keys "$restore" >/dev/null
	XG_RPC_TIMEOUT=900 xg_rpc "$url" refresh '{"start_height":0}' >/dev/null
	echo "$(xg_rpc "$url" get_height | jq -r '.height') $(xg_rpc "$url" get_balance '{"account_index":0}' | jq -r '.balance')"
}
ms() { date +%s%3N; }

start_wallet "$WD" "127.0.0.1:$HA_DIRECT"
xg_wait_until 120 wallet_up "$WD"
r0=$(node_count direct req_tot) b0=$(node_count direct bout) t0=$(ms)
read -r direct_height direct_balance < <(sync_wallet "$WD")
direct_ms=$(($(ms) - t0))
direct_req=$(($(node_count direct req_tot) - r0)) direct_bytes=$(($(node_count direct bout) - b0))

ports=()
for i in $(seq 0 $((WALLETS - 1))); do
	ports+=($((W0 + i)))
	start_wallet $((W0 + i)) "127.0.0.1:$GW_PORT" "$HANDLE:$TOKEN"
done
for p in "${ports[@]}"; do xg_wait_until 120 wallet_up "$p"; done
sleep 2
h0=$(metric xmrgate_gateway_cache_hits_total) s0=$(metric xmrgate_gateway_cache_settled_hits_total)
c0=$(metric xmrgate_gateway_cache_coalesced_total) m0=$(metric xmrgate_gateway_cache_misses_total)
r0=$(node_count wallets req_tot) b0=$(node_count wallets bout)
pr0=$(node_count probes req_tot) pb0=$(node_count probes bout) t0=$(ms)
spids=()
for p in "${ports[@]}"; do
	sync_wallet "$p" >"$work/result-$p" &
	spids+=($!)
done
wait "${spids[@]}"
all_ms=$(($(ms) - t0))
wallet_req=$(($(node_count wallets req_tot) - r0)) wallet_bytes=$(($(node_count wallets bout) - b0))
probe_req=$(($(node_count probes req_tot) - pr0)) probe_bytes=$(($(node_count probes bout) - pb0))
all_req=$((wallet_req + probe_req)) all_bytes=$((wallet_bytes + probe_bytes))
hits=$(($(metric xmrgate_gateway_cache_hits_total) - h0))
settled=$(($(metric xmrgate_gateway_cache_settled_hits_total) - s0))
coalesced=$(($(metric xmrgate_gateway_cache_coalesced_total) - c0))
misses=$(($(metric xmrgate_gateway_cache_misses_total) - m0))
same=0
for p in "${ports[@]}"; do
	[[ $(cat "$work/result-$p") == "$direct_height $direct_balance" ]] && same=$((same + 1))
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "–" }'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.2f MiB", b / 1048576 }'; }
load=$(cut -d' ' -f1-3 /proc/loadavg)

echo "### Wallet sync: $WALLETS wallets through the gateway against one wallet direct"
echo
echo "Chain of $height blocks with $txs_in_chain transactions; view-only wallets of the payer (restore height 0); $(nproc) cores, load average $load at the end."
echo
echo "| case | wallets at the right height and balance | wall time | node requests | bytes from the node |"
echo "|---|---|---|---|---|"
echo "| one wallet, direct (through the counting HAProxy) | 1 (height $direct_height) | ${direct_ms} ms | $direct_req | $(mib "$direct_bytes") |"
echo "| $WALLETS wallets at once, through the gateway | $same of $WALLETS | ${all_ms} ms | $all_req: $wallet_req for the wallets, $probe_req the gateway's own probes | $(mib "$all_bytes"): $(mib "$wallet_bytes") for the wallets, $(mib "$probe_bytes") probes |"
echo "| $WALLETS wallets through the gateway / one direct | | $(ratio "$all_ms" "$direct_ms") | $(ratio "$wallet_req" "$direct_req") (with the probes $(ratio "$all_req" "$direct_req")) | $(ratio "$wallet_bytes" "$direct_bytes") (with the probes $(ratio "$all_bytes" "$direct_bytes")) |"
# What reached the node, by backend, path and JSON-RPC method (HAProxy's log).
echo
echo "What reached node A (requests by path; JSON-RPC by method):"
echo
awk '$1 == "wallets" || $1 == "direct" {
	what = $3; if ($3 == "/json_rpc" && match($0, /"method":"[a-z_]*"/)) what = substr($0, RSTART + 10, RLENGTH - 11)
	n[$1 " " what]++ } END { for (k in n) print "    " k ": " n[k] }' "$work/haproxy.log" | sort
echo
echo "Gateway cache during the $WALLETS syncs: $hits hits ($settled of them settled entries), $misses misses, $coalesced requests answered after waiting for an identical one in flight."
