#!/usr/bin/env bash
# What an XMR402 proof or challenge costs billing, against the stack's billing restarted
# with small numbers: a made-up txid is answered from the node ([wallet] daemon_url) with
# "not visible, retry", without a wallet call, but it takes a verify token before it waits
# (unseen_hold), so a burst of them meets the global cap; [xmr402] verifies_per_second holds
# over a burst of proofs that do reach the wallet (counted answers, not timings); the leader's poller deletes an unpaid challenge
# past [xmr402] challenge_retention, and keeps one inside the late grace period, one just
# expired, and one that was paid (part of) its amount.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/xmr402_lib.sh
. "$(dirname "$0")/xmr402_lib.sh"

check_here "the test tier confirms after $X4_CONFIRMATIONS blocks" x4_setup || exit 1
check "the stack runs billing" xg_pid_owned "$XG_VAR/run/billing.pid" || exit 1
check "billing asks a node ([wallet] daemon_url)" \
	grep -q '^daemon_url = http' "$XG_VAR/etc/billing.ini"
check_here "billing restarted with verifies_per_second = 1, unseen_hold = 1s, retention 1h" \
	stack_billing_restart xmr402.verifies_per_second=1 xmr402.unseen_hold=1s \
	xmr402.challenge_retention=1h
defer stack_billing_restart

BURST=$(mktemp -d)
defer rm -rf "$BURST"
# burst N AUTH: N proofs at once, each from a fresh address; prints the statuses sorted
burst() {
	local n=$1 auth=$2 i pids=()
	rm -f "$BURST"/*
	for ((i = 0; i < n; i++)); do
		x4_from_fresh
		curl -s -o "$BURST/body.$i" -w '%{http_code}\n' --max-time 60 --interface "$X4_FROM" \
			-H 'Content-Type: application/json' -H "Authorization: $auth" \
			--data '{"jsonrpc":"2.0","id":1,"method":"get_info"}' \
			"$GATEWAY_URL/v1/json_rpc" >"$BURST/status.$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
	cat "$BURST"/status.* | sort | uniq -c | awk '{ print $2 "x" $1 }' | tr '\n' ' ' | sed 's/ $//'
}
BAD_PROOF=OutProofV2abcdefghijkmnopqrstuvwxyz123456789

# ---- a made-up txid: the node says no, the wallet is not asked ------------------------
FAKE=$(openssl rand -hex 32)
assert_eq "the node has no such transaction" "[\"$FAKE\"]" \
	"$(curl -s "$NODE_A_URL/get_transactions" -d "{\"txs_hashes\":[\"$FAKE\"]}" | jq -c .missed_tx)"
got=$(burst 5 "$(x4_auth "$FAKE" "$BAD_PROOF")")
assert_eq "5 made-up txids at once, cap 1 proof/s: one waits, then 'retry' (503); 4 capped (429)" \
	"429x4 503x1" "$got"
unknown_body=$(grep -l '^503$' "$BURST"/status.* | head -n 1 | sed 's/status/body/')
assert_json "txid_unknown, from the node, never a challenge" "$(cat "$unknown_body")" \
	'.error.code == "txid_unknown" and (.error.message | test("node")) and .challenge == null'

# ---- verifies_per_second: proofs that reach the wallet -------------------------------------
x4_from_fresh
x4_call ""
assert_eq "a challenge" 402 "$X4_STATUS"
D_ADDR=$(x4_param address) D_AMOUNT=$(x4_param amount) D_MSG=$(x4_param message)
D_INV=$(jq -r .invoice <<<"$X4_BODY")
D_TX=$(payer_pays "$D_ADDR" "$((D_AMOUNT / 2))")
check "half of it paid" test -n "$D_TX"
sleep 1.2 # the bucket (1 a second, burst 1) is full again
started=$SECONDS
got=$(burst 12 "$(x4_auth "$D_TX" "$BAD_PROOF")")
took=$((SECONDS - started))
passed=$(grep -l '^403$' "$BURST"/status.* | wc -l)
capped=$(grep -l '^429$' "$BURST"/status.* | wc -l)
assert_eq "12 proofs of a real transaction: each checked (403) or capped (429)" 12 \
	"$((passed + capped))" || echo "# $got"
check "at most 1 + 1 per second were checked ($passed in ${took}s)" \
	test "$passed" -ge 1 -a "$passed" -le $((2 + took))
check "the rest were refused before the wallet ($capped)" test "$capped" -ge $((10 - took))
capped_body=$(grep -l '^429$' "$BURST"/status.* | head -n 1 | sed 's/status/body/')
# With one network asking, its share of the cap (fair_share.h: at least one a second) is
# what it meets first, and the answer says so.
assert_json "refused as too many proofs: this network's share of the cap" "$(cat "$capped_body")" \
	'.error.code == "rate_limited" and (.error.message | test("this network uses its share"))'

sleep 1.2
x4_from_fresh
x4_call "$(x4_auth "$D_TX" "$(x4_proof "$D_TX" "$D_ADDR" "$D_MSG")")"
assert_eq "the half payment, proven: 403 funds missing" 403 "$X4_STATUS"
assert_json "underpaid" "$X4_BODY" '.error.code == "underpaid"'
assert_eq "billing recorded it" "$((D_AMOUNT / 2))" \
	"$(psql_q "SELECT paid FROM invoices WHERE id = '$D_INV'")"

# ---- the sweep of unpaid challenges ----------------------------------------------------------
challenge() {
	x4_from_fresh
	x4_call ""
	[[ $X4_STATUS == 402 ]] && jq -r .invoice <<<"$X4_BODY"
}
A_INV=$(challenge) B_INV=$(challenge) C_INV=$(challenge)
check "three more challenges" test -n "$A_INV" -a -n "$B_INV" -a -n "$C_INV"
age() { psql_q "UPDATE invoices SET expires_at = now() - interval '$2' WHERE id = '$1'" >/dev/null; }
age "$A_INV" '3 days'  # past the 1 h retention and the 24 h late grace: deleted
age "$B_INV" '2 hours' # past the retention, inside the late grace: kept
age "$C_INV" '1 minute'
age "$D_INV" '3 days' # half paid: kept whatever its age and state
swept() {
	curl -s "$BILLING_ADMIN_URL/metrics" |
		awk '$1 == "xmrgate_billing_xmr402_challenges_swept_total" { print $2 }'
}
gone() { [[ $(psql_q "SELECT count(*) FROM invoices WHERE id = '$A_INV'") == 0 ]]; }
check_here "the poller deletes the unpaid challenge 3 days past its expiry" wait_until 60 gone
state_of() { psql_q "SELECT state FROM invoices WHERE id = '$1'"; }
expired_all() { [[ $(state_of "$B_INV") == expired && $(state_of "$C_INV") == expired ]]; }
check_here "the others expired too (the same cycles)" wait_until 30 expired_all
sleep 3 # a cycle or more after that
assert_eq "the one inside the late grace period is kept" expired "$(state_of "$B_INV")"
assert_eq "the one just expired is kept" expired "$(state_of "$C_INV")"
# (its money now counts as late: it came after the expiry the test gave it)
assert_eq "the half-paid one, 3 days past its expiry, is kept with its payment" "1 $D_TX" \
	"$(psql_q "SELECT count(DISTINCT i.id), min(p.txid) FROM invoices i
	            JOIN payments p ON p.invoice_id = i.id WHERE i.id = '$D_INV'" | tr '|' ' ')"
check "billing counts what it swept ($(swept))" test "$(swept)" -ge 1
