#!/usr/bin/env bash
# XMR402's global caps shared fairly (issue #30): many networks flood challenges and
# proofs, and a fresh network still gets a challenge and has its proofs checked. Each
# loopback address 127.0.95.x is its own network here ([clients] ipv4_network_prefix = 32;
# by default a /24 is one network). With [xmr402] max_open_challenges = 60 and
# challenge_share = 5 a network holds at most 3 open challenges; with verifies_per_second
# = 20 and verify_share = 5 it has one proof checked a second. The same challenge flood
# with challenge_share = 100 (no share: the cap alone) fills the cap and refuses the fresh
# network, so the test sees the difference. Real stack: the stack's billing restarted with
# these settings, its gateway, monerod, the view-only wallet and PostgreSQL.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/xmr402_lib.sh
. "$(dirname "$0")/xmr402_lib.sh"

CAP=60
ATTACKERS=12   # networks flooding at once
PER_ATTACKER=8 # challenges each asks for
SHARE=3        # 5 % of CAP
FLOOD_S=6      # the proof flood's length
FRESH_NET=127.0.96

check_here "the test tier confirms after $X4_CONFIRMATIONS blocks" x4_setup || exit 1
check "the stack runs billing" xg_pid_owned "$XG_VAR/run/billing.pid" || exit 1
W=$(mktemp -d)
defer rm -rf "$W"

open_now() {
	psql_q "SELECT count(*) FROM invoices WHERE channel = 'xmr402' AND state = 'pending'
	        AND expires_at > now()"
}
# frees the cap: every open challenge of the stack (this test's and earlier ones') expires
expire_open() {
	psql_q "UPDATE invoices SET expires_at = now() - interval '1 minute'
	        WHERE channel = 'xmr402' AND state = 'pending'" >/dev/null
}
# restart_with SHARE: billing with the test's caps and the challenge share SHARE (percent)
restart_with() {
	stack_billing_restart clients.ipv4_network_prefix=32 invoices.create_burst=100 \
		invoices.create_per_hour=100000 xmr402.max_open_challenges=$CAP \
		xmr402.challenge_share="$1" xmr402.verifies_per_second=20 xmr402.verify_share=5 \
		xmr402.unseen_hold=0s
}
# challenge_flood: ATTACKERS addresses ask PER_ATTACKER challenges each, all at once,
# through the gateway; statuses into $W/challenge.<address>
challenge_flood() {
	local a i pids=()
	rm -f "$W"/challenge.*
	for ((a = 1; a <= ATTACKERS; a++)); do
		(
			for ((i = 0; i < PER_ATTACKER; i++)); do
				curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 --interface "127.0.95.$a" \
					-H 'Content-Type: application/json' \
					--data '{"jsonrpc":"2.0","id":1,"method":"get_info"}' "$GATEWAY_URL/v1/json_rpc"
			done >"$W/challenge.127.0.95.$a"
		) &
		pids+=($!)
	done
	wait "${pids[@]}" # not a bare wait: the restarted billing is a child of this shell too
}

# ---- without a share, the flood takes every open challenge ------------------------------------
expire_open
check_here "billing restarted with max_open_challenges = $CAP and no share (100 %)" \
	restart_with 100
defer stack_billing_restart
challenge_flood
# the cap is soft by the challenges billing's 4 API threads create at the same instant
open=$(open_now)
check "no share: the flood holds the whole cap ($open of $CAP, + at most 4 in flight)" \
	test "$open" -ge "$CAP" -a "$open" -le $((CAP + 4))
X4_FROM=$FRESH_NET.1
x4_call ""
assert_eq "… and a fresh network is refused (429)" 429 "$X4_STATUS"

# ---- with a share of 5 %, each network holds 3 and the fresh one gets a challenge -------------
expire_open
check_here "billing restarted with challenge_share = 5 (a network holds $SHARE of $CAP)" \
	restart_with 5
challenge_flood
assert_eq "$((ATTACKERS * PER_ATTACKER)) answers" $((ATTACKERS * PER_ATTACKER)) \
	"$(cat "$W"/challenge.* | wc -l)"
assert_eq "each a challenge (402) or a refusal (429), nothing else" "" \
	"$(cat "$W"/challenge.* | grep -Ev '^(402|429)$' | sort | uniq -c | tr '\n' ' ')"
over=$(for f in "$W"/challenge.*; do
	n=$(grep -c '^402$' "$f")
	((n == SHARE)) || echo "${f##*/challenge.}: $n"
done)
assert_eq "each flooding network got exactly its $SHARE challenges" "" "$over"
assert_eq "PostgreSQL counts $SHARE open per network, for $ATTACKERS networks" \
	"$ATTACKERS|$SHARE|$SHARE" \
	"$(psql_q "SELECT count(*), min(n), max(n) FROM (SELECT count(*) AS n FROM invoices
	           WHERE channel = 'xmr402' AND state = 'pending' AND expires_at > now()
	           GROUP BY client_network) s")"
assert_eq "the flood holds $((ATTACKERS * SHARE)) of $CAP" $((ATTACKERS * SHARE)) "$(open_now)"
X4_FROM=127.0.95.1
x4_call ""
assert_eq "a flooding network asking again is refused (429)" 429 "$X4_STATUS"
assert_json "… told its network holds its share, with a retry_after" "$X4_BODY" \
	'.error.code == "rate_limited" and (.error.message | test("share")) and .retry_after > 0'
check "… with Retry-After" grep -Eq '^Retry-After: [0-9]+$' <<<"$X4_HEADERS"
X4_FROM=$FRESH_NET.2
x4_call ""
assert_eq "a fresh network still gets a challenge (402) under the flood" 402 "$X4_STATUS"
check "… with its XMR402 offer" test -n "$(x4_param address)"
assert_eq "… counted as its own network" 1 \
	"$(psql_q "SELECT count(*) FROM invoices WHERE channel = 'xmr402' AND state = 'pending'
	           AND client_network = '4:$FRESH_NET.2/32'")"

# ---- proofs: each network has one checked a second; the fresh one is checked ------------------
# A public txid (a block's coinbase, which every node has) with a junk proof: it costs a
# node and a wallet call, as the issue's attackers' did.
top=$(rpc "$NODE_A_URL" get_block_count | jq -r '.count')
TXID=$(rpc "$NODE_A_URL" get_block "{\"height\":$((top - 1))}" | jq -r '.miner_tx_hash')
check "a public txid ($TXID)" grep -Eq '^[0-9a-f]{64}$' <<<"$TXID"
PROOF="OutProofV2$(head -c 300 /dev/urandom | base64 -w0 | tr -dc '1-9A-HJ-NP-Za-km-z' | head -c 180)"
BODY="{\"txid\":\"$TXID\",\"proof\":\"$PROOF\"}"
# verify FROM: one proof; "status code" appended to $W/verify.FROM
verify() {
	local out code
	out=$(curl -s -w '\n%{http_code}' --max-time 30 --interface "$1" \
		-H 'Content-Type: application/json' --data "$BODY" "$BILLING_URL/api/xmr402/verify")
	code=$(sed '$d' <<<"$out" | jq -r '.error.code // .state // "?"' 2>/dev/null)
	echo "$(tail -n 1 <<<"$out") ${code:-?}" >>"$W/verify.$1"
}
# attack FROM: two proofs at a time, without pause, for FLOOD_S seconds
attack() {
	local end=$((SECONDS + FLOOD_S))
	while ((SECONDS < end)); do
		verify "$1" &
		verify "$1"
		wait
	done
}
pids=()
for ((a = 1; a <= ATTACKERS; a++)); do
	attack "127.0.95.$a" &
	pids+=($!)
done
sleep 1 # the flood is on
for ((i = 0; i < 4; i++)); do
	verify "$FRESH_NET.3"
	sleep 1.1
done
wait "${pids[@]}"
all_attack() { cat "$W"/verify.127.0.95.*; }
summary() { awk '{ print $1 "/" $2 }' | sort | uniq -c | awk '{ printf "%s×%d ", $2, $1 }'; }
echo "# the flood's $(all_attack | wc -l) proofs: $(all_attack | summary)"
echo "# the fresh network's: $(summary <"$W/verify.$FRESH_NET.3")"
check "the flood was refused on its share (429 rate_limited)" \
	grep -q '^429 rate_limited$' <(all_attack)
checked_most=$(for f in "$W"/verify.127.0.95.*; do grep -vc '^429 ' "$f"; done | sort -n | tail -n 1)
check "no flooding network had more than one proof checked a second ($checked_most in ${FLOOD_S}s)" \
	test "$checked_most" -le $((FLOOD_S + 1))
assert_eq "the fresh network's 4 proofs were each checked, none refused on a limit" 0 \
	"$(grep -c '^429 ' "$W/verify.$FRESH_NET.3")"
assert_eq "… each answered as a proof (402, not its payment)" 4 \
	"$(grep -Ec '^402 ' "$W/verify.$FRESH_NET.3")"

held=$(curl -s "$BILLING_ADMIN_URL/metrics" | awk '$1 == "xmrgate_billing_xmr402_held_proofs" { print $2 }')
assert_eq "billing's metrics show the proofs held now (none: unseen_hold = 0)" 0 "$held"

expire_open # the stack's later tests get their cap back
