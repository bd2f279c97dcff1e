#!/usr/bin/env bash
# Checked reads: what they cost a wallet's send, against the build just before them.
#
#   tests/bench/checked_reads.sh [SENDS [ROUNDS]]    (defaults 5 sends, 2 rounds)
#
# The gateway serves get_outs(.bin), get_output_distribution(.bin) and get_fee_estimate only
# when two own nodes agree. There is no switch to turn that off, so "off" is the build just
# before checked reads: commit e004946 (XG_BENCH_BEFORE_REF picks another ref), built here
# in a git worktree under the bench var dir (removed at exit); "on" is this checkout's
# bin/xmrgate-gateway. Both run in one run in front of the same nodes A, B and C (A and B
# full, C pruned, as the stack lists them; [nodes] zmq as the stack sets it; limits off),
# on a scratch database of their own, in turn: each round runs both builds, the order
# alternating (before, after; after, before; …) so that drift on this machine is shared.
#
# Each turn starts a fresh gateway of that build, a logging relay (tests/tools/call_log:
# one line per call with its duration) in front of it, and the host's stock
# monero-wallet-rpc (Debian 12: 0.18.0) through the relay with a tenant's Digest login,
# on that build's own wallet (two wallets funded alike at the start with 1 XMR outputs from
# the stack's payer wallet, so both builds see the same wallet states). The wallet's auto
# refresh is off, so nothing but the operations below reaches the gateway.
# Then SENDS times:
#   1. transfer 0.1 XMR to the payer: what the wallet asks to build and relay one
#      transaction (fee estimate, output distribution, decoys, relay, and any height or
#      fork checks it makes on the way);
#   2. ten blocks mined on node A (scripts/stack.sh mine 10, then until the gateway has seen
#      them on all three nodes): the transfer's change unlocks, so at every send each wallet
#      has all it ever got spendable, and the wallet's refresh that finds them.
# Node requests are the delta of the gateway's xmrgate_gateway_node_requests_total (summed
# over nodes and outcomes; probes excluded, each node of a broadcast counted) around each
# step; the wallet's calls and their latency (as its client sees them: the relay's time
# from the call's arrival to the gateway's answer, ms) come from the relay's log, 401
# Digest challenges left out. "Checked" calls are those to the three methods above.
#
# Needs `make all test-tools`. Runs against the stack in $XG_BENCH_VAR (default var/bench;
# started here with XG_PORT_BASE=${XG_BENCH_PORT_BASE:-29100} when none is running) and
# mines on its chain; uses ports XG_PORT_BASE+84, +85, +87 and +68. Prints Markdown for
# docs/BENCHMARKS.md ("## Checked reads: what they cost").
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
SENDS=${1:-5}
ROUNDS=${2:-2}
BEFORE_REF=${XG_BENCH_BEFORE_REF:-e004946}
export XG_VAR=${XG_BENCH_VAR:-$REPO/var/bench} XG_PORT_BASE=${XG_BENCH_PORT_BASE:-29100}
RELAY=$REPO/build/release/tests/tools/call_log
[[ -x $RELAY && -x $REPO/bin/xmrgate-gateway ]] ||
	{
		echo "checked_reads: make all test-tools first" >&2
		exit 1
	}
# shellcheck source=tests/bench/lib.sh
. "$REPO/tests/bench/lib.sh"
tree=
before_tree_remove() {
	[[ -n $tree ]] || return 0
	git -C "$REPO" worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
	git -C "$REPO" worktree prune
	tree=
}
bench_exit_hook=before_tree_remove
bench_begin
GW_PORT=$((XG_PORT_BASE + 84)) GW_ADMIN=$((XG_PORT_BASE + 85))
RELAY_PORT=$((XG_PORT_BASE + 87)) WALLET_PORT=$((XG_PORT_BASE + 68))
W=http://127.0.0.1:$WALLET_PORT

# The build before checked reads, from a worktree of BEFORE_REF; its binary is kept in $work.
tree=$XG_VAR/checked-reads-before.$$
git -C "$REPO" worktree add --detach "$tree" "$BEFORE_REF" >/dev/null 2>&1
before_commit=$(git -C "$tree" rev-parse --short=7 HEAD)
after_commit=$(git -C "$REPO" rev-parse --short=7 HEAD)
make -C "$tree" -j"$(nproc)" bin/xmrgate-gateway >"$work/build-before.log" 2>&1 ||
	{
		echo "the build of $BEFORE_REF failed: $(tail -3 "$work/build-before.log")" >&2
		exit 1
	}
cp "$tree/bin/xmrgate-gateway" "$work/gateway-before"
before_tree_remove
declare -A gw_bin=([before]=$work/gateway-before [after]=$REPO/bin/xmrgate-gateway)

# A scratch database: the stack's three nodes and one tenant (limits are off).
bench_gateway_db xmrgate_checked_bench
psql -X -q "$BENCH_DB" -c "UPDATE nodes SET pruned = true WHERE name = 'c'" # as the stack runs it
login=$HANDLE:$TOKEN

rpc() { # URL METHOD [PARAMS]
	curl -sf --max-time 300 "$1/json_rpc" -H 'Content-Type: application/json' \
		-d "{\"jsonrpc\":\"2.0\",\"id\":\"0\",\"method\":\"$2\",\"params\":${3:-{\}}}" | jq -c '.result // .error'
}
wait_for() {
	local i
	for ((i = 0; i < ${1}0; i++)); do
		"${@:2}" && return 0
		sleep 0.1
	done
	return 1
}
metrics() { curl -s "http://127.0.0.1:$GW_ADMIN/metrics"; }
metric_sum() { metrics | awk -v m="$1" -v f="${2:-}" \
	'index($0, m) == 1 && index($0, f) { s += $NF } END { printf "%d", s }'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# gateway_sees HEIGHT: the gateway has all three nodes up at chain height HEIGHT.
gateway_sees() {
	metrics | awk -v h="$1" '/^xmrgate_gateway_node_up\{/ { up += $NF }
		/^xmrgate_gateway_node_height\{/ { n++; at += ($NF == h) }
		END { exit !(up == 3 && n == 3 && at == 3) }'
}
height() { curl -sf "$NODE_A_URL/get_height" | jq .height; }
mine() { "$STACK" mine "$1" >/dev/null && wait_for 30 gateway_sees "$(height)"; }

wallet_start() { # DAEMON [LOGIN]
	monero-wallet-rpc --daemon-address "$1" ${2:+--daemon-login "$2"} \
		--rpc-bind-ip 127.0.0.1 --rpc-bind-port "$WALLET_PORT" --disable-rpc-login \
		--wallet-dir "$work/wallet" --shared-ringdb-dir "$work/wallet/ringdb" \
		--log-file "$work/wallet-rpc.log" --non-interactive >>"$work/wallet-rpc.out" 2>&1 </dev/null &
	wallet=$!
	pids+=("$wallet")
	wait_for 60 rpc "$W" get_version >/dev/null
}
stop() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# Two wallets, one per build, made and funded alike through node A directly (not measured):
# an output of 1 XMR for each send and a few more, 15 to a payment. Each build's wallet then
# passes through the same states, so both builds serve the same calls (which calls a 0.18
# wallet makes depends on what it can spend: with change unlocked it spends two inputs and
# asks for the distribution and decoys twice).
mkdir -p "$work/wallet"
wallet_start "${NODE_A_URL#http://}"
need=$((SENDS * ROUNDS + 4))
rpc "$PAYER_WALLET_URL" refresh '{}' >/dev/null
for build in before after; do
	rpc "$W" create_wallet "{\"filename\":\"$build\",\"language\":\"English\"}" >/dev/null
	addr=$(rpc "$W" get_address '{"account_index":0}' | jq -r .address)
	for ((left = need; left > 0; left -= 15)); do
		paid=$(rpc "$PAYER_WALLET_URL" transfer "$(jq -cn --arg a "$addr" --argjson n $((left < 15 ? left : 15)) \
			'{destinations:[range($n) | {amount:1000000000000,address:$a}]}')")
		jq -e '.tx_hash' <<<"$paid" >/dev/null || {
			echo "the payer could not fund a wallet: $paid" >&2
			exit 1
		}
	done
	rpc "$W" close_wallet >/dev/null
done
"$STACK" mine 11 >/dev/null # no gateway runs yet
funded() { rpc "$W" refresh '{}' >/dev/null && rpc "$W" get_balance '{}' | jq -e --argjson n "$need" \
	'.unlocked_balance >= $n * 1000000000000' >/dev/null; }
for build in before after; do
	rpc "$W" open_wallet "{\"filename\":\"$build\"}" >/dev/null
	wait_for 60 funded || {
		echo "the $build wallet's funds did not unlock" >&2
		exit 1
	}
	rpc "$W" close_wallet >/dev/null
done
stop "$wallet"

# turn BUILD: one gateway of BUILD, the relay and the wallet through it; SENDS sends. Appends
# "transfer|refresh NODE_REQUESTS MS" per step to $work/steps-BUILD and the calls the wallet
# made in them, "transfer|refresh checked|other METHOD MS", to $work/calls-BUILD.
turn() {
	local build=$1 log=$work/calls-$1.jsonl gw relay i m0 l0 t0 out
	XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_AUTH_HA1_KEY=$HA1_KEY XMRGATE_SERVER_PORT=$GW_PORT \
		XMRGATE_ADMIN_PORT=$GW_ADMIN XMRGATE_LIMITS_ENABLED=false XMRGATE_LOG_LEVEL=warn \
		XMRGATE_NODES_ZMQ="a=$NODE_A_ZMQ,b=$NODE_B_ZMQ,c=$NODE_C_ZMQ" \
		"${gw_bin[$build]}" 2>>"$work/gateway-$build.log" &
	gw=$!
	pids+=("$gw")
	wait_for 30 gateway_sees "$(height)" ||
		{
			echo "the $build gateway did not see the three nodes: $(tail -3 "$work/gateway-$build.log")" >&2
			exit 1
		}
	: >"$log.turn"
	"$RELAY" "$RELAY_PORT" "http://127.0.0.1:$GW_PORT" "$log.turn" &
	relay=$!
	pids+=("$relay")
	wallet_start "127.0.0.1:$RELAY_PORT" "$login"
	rpc "$W" open_wallet "{\"filename\":\"$build\"}" >/dev/null
	rpc "$W" auto_refresh '{"enable":false}' >/dev/null
	rpc "$W" refresh '{}' >/dev/null
	# step NAME METHOD PARAMS: one wallet call, its node requests, wall time and calls.
	step() {
		m0=$(metric_sum xmrgate_gateway_node_requests_total) l0=$(wc -l <"$log.turn") t0=$(now_ms)
		out=$(rpc "$W" "$2" "$3")
		echo "$1 $(($(metric_sum xmrgate_gateway_node_requests_total) - m0)) $(($(now_ms) - t0))" >>"$work/steps-$build"
		[[ $out != *'"code"'* ]] || {
			echo "$build $1 failed: $out" >&2
			exit 1
		}
		tail -n +$((l0 + 1)) "$log.turn" | jq -r --arg s "$1" 'select(.status != 401) |
			(.rpc // .path) as $m | "\($s) \(if ($m | test("^/?(get_outs|get_output_distribution)(\\.bin)?$"))
			or $m == "get_fee_estimate" then "checked" else "other" end) \($m) \(.ms)"' >>"$work/calls-$build"
	}
	for ((i = 0; i < SENDS; i++)); do
		step transfer transfer "$(jq -cn --arg a "$PAYER_ADDRESS" '{destinations:[{amount:100000000000,address:$a}]}')"
		mine 10
		step refresh refresh '{}'
	done
	metrics | awk '/^xmrgate_gateway_checked_reads_total\{/ { print }' >>"$work/checked-$build"
	rpc "$W" close_wallet >/dev/null
	stop "$wallet"
	stop "$relay"
	stop "$gw"
	cat "$log.turn" >>"$log"
}

for ((round = 0; round < ROUNDS; round++)); do
	if ((round % 2)); then order=(after before); else order=(before after); fi
	for build in "${order[@]}"; do turn "$build"; done
done

# pct P: the P-th percentile (nearest rank) of the numbers on stdin.
pct() { sort -n | awk -v p="$1" '{ v[NR] = $1 } END { if (NR) print v[int((NR - 1) * p / 100) + 1]; else print "–" }'; }
mean() { awk '{ s += $1; n++ } END { if (n) printf "%.1f", s / n; else print "–" }'; }
# per BUILD STEP [KIND]: the calls (of KIND: checked|other) per STEP (transfer|refresh).
per() { awk -v n="$(grep -c "^$2 " "$work/steps-$1")" -v s="$2" -v k="${3:-}" \
	'$1 == s && (k == "" || $2 == k) { c++ } END { printf "%.1f", c / n }' "$work/calls-$1"; }
# summary BUILD → "transfer_requests refresh_requests requests_per_call transfer_calls
#   checked_calls checked_p50 checked_p99 all_p50 all_p99 transfer_ms_p50 sends"
summary() {
	local s=$work/steps-$1 c=$work/calls-$1
	echo "$(awk '$1 == "transfer" { print $2 }' "$s" | mean)" \
		"$(awk '$1 == "refresh" { print $2 }' "$s" | mean)" \
		"$(awk 'NR == FNR { r += $2; next } { n++ } END { printf "%.2f", r / n }' "$s" "$c")" \
		"$(per "$1" transfer)" "$(per "$1" transfer checked)" \
		"$(awk '$2 == "checked" { print $4 }' "$c" | pct 50)" "$(awk '$2 == "checked" { print $4 }' "$c" | pct 99)" \
		"$(awk '{ print $4 }' "$c" | pct 50)" "$(awk '{ print $4 }' "$c" | pct 99)" \
		"$(awk '$1 == "transfer" { print $3 }' "$s" | pct 50)" "$(grep -c '^transfer' "$s")"
}
read -r b_tr b_rf b_pc b_calls b_checked b_cp50 b_cp99 b_p50 b_p99 b_ms b_n < <(summary before)
read -r a_tr a_rf a_pc a_calls a_checked a_cp50 a_cp99 a_p50 a_p99 a_ms a_n < <(summary after)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "–" }'; }
# outcomes BUILD: its gateways' xmrgate_gateway_checked_reads_total, summed over its turns.
outcomes() { sed -n 's/.*="\([a-z]*\)"} \([0-9]*\)$/\1 \2/p' "$work/checked-$1" | awk '{ n[$1] += $2 }
	END { for (k in n) if (n[k]) out = out (out == "" ? "" : ", ") k " " n[k]; print (out == "" ? "none" : out) }'; }
# methods BUILD: the calls its wallet made in all transfers, by method.
methods() { awk '$1 == "transfer" { n[$3]++ } END { for (k in n) print k "×" n[k] }' "$work/calls-$1" | sort | paste -sd ' '; }
b_methods=$(methods before) a_methods=$(methods after)
echo "### ${SENDS} sends per build per round, ${ROUNDS} rounds, monero-wallet-rpc 0.18.0, nodes A, B, C"
echo
echo "| build | sends | node requests per transfer | per refresh after its blocks | per wallet call | wallet calls per transfer | checked calls per transfer | checked calls p50 / p99 | all calls p50 / p99 | transfer p50 | checked reads |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
echo "| before ($before_commit) | $b_n | $b_tr | $b_rf | $b_pc | $b_calls | $b_checked | $b_cp50 / $b_cp99 ms | $b_p50 / $b_p99 ms | $b_ms ms | $(outcomes before) |"
echo "| after ($after_commit) | $a_n | $a_tr | $a_rf | $a_pc | $a_calls | $a_checked | $a_cp50 / $a_cp99 ms | $a_p50 / $a_p99 ms | $a_ms ms | $(outcomes after) |"
echo "| after / before | | $(ratio "$a_tr" "$b_tr")× | $(ratio "$a_rf" "$b_rf")× | $(ratio "$a_pc" "$b_pc")× | | | p99 $(printf %+d $((a_cp99 - b_cp99))) ms | p99 $(printf %+d $((a_p99 - b_p99))) ms | $(printf %+d $((a_ms - b_ms))) ms | |"
echo
echo "A send with the refresh that finds its blocks: before $(awk -v t="$b_tr" -v r="$b_rf" 'BEGIN { printf "%.1f", t + r }'), after $(awk -v t="$a_tr" -v r="$a_rf" 'BEGIN { printf "%.1f", t + r }') node requests ($(awk -v a="$a_tr" -v b="$b_tr" -v x="$a_rf" -v y="$b_rf" 'BEGIN { printf "%.2f", (a + x) / (b + y) }')×)."
echo "The wallets' calls in all transfers: before $b_methods; after $a_methods."
[[ $b_methods == "$a_methods" ]] ||
	echo "The two wallets did not make the same calls: compare the builds per wallet call."
# by_method BUILD METHOD → "calls p50 p99" of that method's calls (transfers and refreshes).
by_method() {
	local c=$work/calls-$1
	echo "$(awk -v m="$2" '$3 == m { n++ } END { print n + 0 }' "$c")" \
		"$(awk -v m="$2" '$3 == m { print $4 }' "$c" | pct 50)" "$(awk -v m="$2" '$3 == m { print $4 }' "$c" | pct 99)"
}
echo
echo "| method | checked | calls before / after | before p50 / p99 | after p50 / p99 |"
echo "|---|---|---|---|---|"
while read -r kind m; do
	read -r bn b50 b99 < <(by_method before "$m")
	read -r an a50 a99 < <(by_method after "$m")
	echo "| $m | $([[ $kind == checked ]] && echo yes || echo no) | $bn / $an | $b50 / $b99 ms | $a50 / $a99 ms |"
done < <(awk '{ print $2, $3 }' "$work/calls-before" "$work/calls-after" | sort -u)
