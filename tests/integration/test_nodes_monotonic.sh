#!/usr/bin/env bash
# Per-tenant monotonic reads and read-your-writes, with real regtest nodes.
#
# Monotonic reads: C is cut from its peers while A mines, so it lags 3 blocks behind A and
# B. Tenant 1 reads the tip from A and B; then A and B are frozen (SIGSTOP) and the gateway
# fails over to C, which a tenant with no history (tenant 2) is served from, degraded. Tenant
# 1, polling every height-bearing call all through the freeze, is never answered with a
# height below the one it was served: the gateway refuses it (503 behind_served_tip) rather
# than answer older. Thawed, tenant 1 is served the tip again.
#
# Read-your-writes: B is frozen while tenant 1 broadcasts a transaction (not relayed), so
# only A and C accept it; B is thawed and its pool cleared of it. Tenant 1's pool and
# transaction queries then find it every time, although B, the primary, ranks first again;
# tenant 2's pool listings, which B answers, do not.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

# B is the only primary: rank 1 for every read while it is on the tip.
check "the nodes table holds B (primary), A and C (standby)" nodes_table "a:standby b:primary c:standby"
grant_tenant --bare sovereign 1
T1=$TOKEN
grant_tenant --bare sovereign 1
T2=$TOKEN
check "two tenants are granted" test -n "$T1" -a -n "$T2" -a "$T1" != "$T2"
TOKEN=$T1
check_here "a gateway starts and is ready" gateway_start monotonic --base nodes nodes.tip_wait=1s nodes.hedge_cap=300ms

on_tip() { gw_node_status "$1" | jq -e '.up and .tip_distance == 0' >/dev/null; }
for n in a b c; do
	check "$n is up on the tip" wait_until 30 on_tip "$n"
done

# What one call tells a tenant of the chain height: a number, or "refused" (an error
# answer), or "timeout".
call_height() { # TOKEN WHAT
	local url=$GW_URL/v1/$1 out
	case $2 in
	count) out=$(curl -s --max-time 10 -d '{"jsonrpc":"2.0","id":0,"method":"get_block_count"}' \
		"$url/json_rpc") && jq -r '.result.count // "refused"' <<<"$out" ;;
	info) out=$(curl -s --max-time 10 -d '{"jsonrpc":"2.0","id":0,"method":"get_info"}' \
		"$url/json_rpc") && jq -r '.result.height // "refused"' <<<"$out" ;;
	header) out=$(curl -s --max-time 10 -d '{"jsonrpc":"2.0","id":0,"method":"get_last_block_header"}' \
		"$url/json_rpc") && jq -r 'if .result.block_header.height then .result.block_header.height + 1 else "refused" end' <<<"$out" ;;
	height) out=$(curl -s --max-time 10 -d '{}' "$url/get_height") &&
		jq -r 'if .status == "OK" then .height else "refused" end' <<<"$out" ;;
	pinfo) out=$(curl -s --max-time 10 -d '{}' "$url/get_info") &&
		jq -r 'if .status == "OK" then .height else "refused" end' <<<"$out" ;;
	esac || echo timeout
}

# --- C lags ------------------------------------------------------------------------------
node_peers_cut c
check "C has no peers" wait_until 15 node_isolated c
rpc "$NODE_A_URL" generateblocks "{\"amount_of_blocks\":3,\"wallet_address\":\"$MINER_ADDRESS\"}" >/dev/null
check "B follows A's 3 new blocks" wait_until 30 same_top a b
top=$(rpc "$NODE_A_URL" get_info | jq -r .height)
c_height=$(rpc "$NODE_C_URL" get_info | jq -r .height)
check "C lags behind A and B" test "$c_height" -lt "$top"
c_lags() { gw_node_status c | jq -e '.tip_distance > 0' >/dev/null; }
check "the gateway sees C lagging" wait_until 15 c_lags
echo "# A and B at height $top, C at $c_height"

t1_at_top() { [[ $(call_height "$T1" count) == "$top" ]]; }
check "tenant 1 is served the tip from A and B" wait_until 15 t1_at_top
for what in count info header height pinfo; do
	assert_eq "tenant 1's $what names height $top" "$top" "$(call_height "$T1" "$what")"
done

# --- A and B frozen: the gateway fails over to C ----------------------------------------
freeze a
freeze b
# Tenant 2 asks only once the gateway has taken A and B out: before that a tip answer of
# theirs may still be in the cache, and serving it would hold tenant 2 to their tip too.
ab_down() { gw_status | jq -e '[.nodes[] | select(.name != "c") | .up] == [false, false]' >/dev/null; }
below=0 refused=0 served=0 t2_lagging=0 t2_asked=0 rounds=0
deadline=$(($(date +%s) + 90))
# At least 20 s of polling, and until tenant 2 has been served C's height 3 times.
started=$(date +%s)
while (($(date +%s) < deadline)); do
	rounds=$((rounds + 1))
	for what in count info header height pinfo; do
		h=$(call_height "$T1" "$what")
		if [[ $h =~ ^[0-9]+$ ]]; then
			served=$((served + 1))
			((h < top)) && below=$((below + 1)) && echo "# tenant 1 got $what = $h"
		else
			refused=$((refused + 1))
		fi
	done
	if ((t2_asked)) || ab_down; then
		t2_asked=1
		[[ $(call_height "$T2" count) == "$c_height" ]] && t2_lagging=$((t2_lagging + 1))
	fi
	(($(date +%s) - started >= 20 && t2_lagging >= 3)) && break
done
echo "# $rounds rounds: tenant 1 answered $served times at or past $top, refused $refused times;" \
	"tenant 2 served C's height $t2_lagging times"
check "the gateway failed over to C: tenant 2 (no history) is served C's height" test "$t2_lagging" -ge 3
assert_eq "tenant 1 is never answered with a height below $top" 0 "$below"
check "tenant 1 is refused instead while only C can answer" test "$refused" -gt 0
out=$(curl -s --max-time 10 -D - -d '{"jsonrpc":"2.0","id":7,"method":"get_block_count"}' \
	"$GW_URL/v1/$T1/json_rpc" | tr -d '\r')
echo "# tenant 1's refusal: $(tr '\n' ' ' <<<"$out")"
check "the refusal is a 503 with Retry-After" bash -c "grep -q '^HTTP/1.1 503' <<<'$out' && grep -qi '^Retry-After: 1' <<<'$out'"
assert_json "in the JSON-RPC shape, with the request's id" "$(sed '1,/^$/d' <<<"$out")" \
	'.id == 7 and (.error.message | test("chain tip already served"))'
refused_metric() {
	curl -s "$GW_ADMIN/metrics" | awk '$1 == "xmrgate_gateway_behind_served_tip_total" { print $2 }'
}
check "the refusals are counted in the metrics" test "$(refused_metric)" -gt 0

thaw a
thaw b
t1_back() { h=$(call_height "$T1" count) && [[ $h =~ ^[0-9]+$ ]] && ((h >= top)); }
check "thawed, tenant 1 is served the tip again" wait_until 60 t1_back
node_peers_restore c
check "reconnected, C catches up" wait_until 90 nodes_agree
for n in a b c; do
	check "$n is back up on the tip" wait_until 120 on_tip "$n"
done

# --- read-your-writes --------------------------------------------------------------------
read -r txhash txhex < <(payer_tx_hex)
check "the payer signs a transaction without relaying it" test -n "${txhex:-}"
freeze b
sent=$(curl -s --max-time 30 -d "$(jq -cn --arg h "$txhex" '{tx_as_hex: $h, do_not_relay: true}')" \
	"$GW_URL/v1/$T1/send_raw_transaction")
assert_json "tenant 1's broadcast is accepted" "$sent" '.status == "OK"'
sleep 3 # the broadcast's call to B times out in the background
thaw b
check "B answers again after the thaw" wait_until 60 curl -sf -o /dev/null "$NODE_B_URL/get_height"
sleep 1
# A request that sat in B's socket while it was frozen may still have reached it.
rpc "$NODE_B_URL" flush_txpool "$(jq -cn --arg h "$txhash" '{txids: [$h]}')" >/dev/null
check "A holds the transaction" in_pool_hashes "$NODE_A_URL" "$txhash"
check "C holds the transaction" in_pool_hashes "$NODE_C_URL" "$txhash"
check "B does not" not_in_pool_hashes "$NODE_B_URL" "$txhash"
check "B is back up on the tip in the gateway" wait_until 120 on_tip b

pool_miss=0 hashes_miss=0 tx_miss=0 other_miss=0
for i in $(seq 1 15); do
	in_pool_hashes "$GW_URL/v1/$T1" "$txhash" || hashes_miss=$((hashes_miss + 1))
	in_pool_listing "$GW_URL/v1/$T1" "$txhash" || pool_miss=$((pool_miss + 1))
	in_pool_lookup "$GW_URL/v1/$T1" "$txhash" || tx_miss=$((tx_miss + 1))
	in_pool_hashes "$GW_URL/v1/$T2" "$txhash" || other_miss=$((other_miss + 1))
done
echo "# tenant 2, which did not send it, missed it in $other_miss of 15 pool listings"
check "tenant 2's pool listings go to B, the primary, which lacks it" test "$other_miss" -gt 0
assert_eq "15 pool hash listings for tenant 1: the transaction is always there" 0 "$hashes_miss"
assert_eq "15 pool listings for tenant 1: always there" 0 "$pool_miss"
assert_eq "15 get_transactions for tenant 1: always found in the pool" 0 "$tx_miss"
check "B still does not hold it (the queries did not put it there)" not_in_pool_hashes "$NODE_B_URL" "$txhash"

# Leave clean pools and one chain for the next test.
mine 1 >/dev/null || true
check "the nodes agree on one chain again" wait_until 120 nodes_agree
