#!/usr/bin/env bash
# XMR402's global caps and the pending allowance's bound, against the stack's billing
# restarted with small numbers: [xmr402] max_open_challenges holds over all client
# addresses (429 with Retry-After, no invoice, no subaddress), and a pending allowance of
# [xmr402] pending_requests requests is served, then answered 429 pending_spent with
# Retry-After — never a 402 for a challenge that was paid.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/xmr402_lib.sh
. "$(dirname "$0")/xmr402_lib.sh"

check_here "the test tier confirms after $X4_CONFIRMATIONS blocks" x4_setup || exit 1
check "the stack runs billing" xg_pid_owned "$XG_VAR/run/billing.pid" || exit 1
open_now() {
	psql_q "SELECT count(*) FROM invoices WHERE channel = 'xmr402' AND state = 'pending'
	        AND expires_at > now()"
}
OPEN=$(open_now)
CAP=$((OPEN + 3))
check_here "billing restarted with max_open_challenges = $CAP, pending_requests = 2" \
	stack_billing_restart xmr402.max_open_challenges=$CAP xmr402.pending_requests=2
defer stack_billing_restart

# ---- open challenges, over all addresses -------------------------------------------------
statuses=()
for ((i = 0; i < 5; i++)); do
	x4_from_fresh # a new address each time: the per-address limiter is not what stops them
	x4_call ""
	statuses+=("$X4_STATUS")
done
assert_eq "three more challenges open, then 429 from any address" "402 402 402 429 429" \
	"${statuses[*]}"
assert_json "the reason" "$X4_BODY" '.error.code == "rate_limited" and .retry_after > 0'
check "with Retry-After" grep -Eq '^Retry-After: [0-9]+$' <<<"$X4_HEADERS"
check "and no challenge" test -z "$(x4_header WWW-Authenticate)"
assert_eq "no invoice beyond the cap" "$CAP" "$(open_now)"

# ---- the pending allowance is bounded ------------------------------------------------------
psql_q "UPDATE invoices SET expires_at = now() - interval '1 minute'
        WHERE channel = 'xmr402' AND state = 'pending'" >/dev/null # frees the cap
x4_from_fresh
x4_call ""
assert_eq "a challenge once the open ones expired" 402 "$X4_STATUS"
P_ADDR=$(x4_param address) P_AMOUNT=$(x4_param amount) P_MSG=$(x4_param message)
P_INV=$(jq -r .invoice <<<"$X4_BODY")
P_TXID=$(payer_pays "$P_ADDR" "$P_AMOUNT")
P_AUTH=$(x4_auth "$P_TXID" "$(x4_proof "$P_TXID" "$P_ADDR" "$P_MSG")")
statuses=() left=()
for ((i = 0; i < 3; i++)); do
	x4_call "$P_AUTH"
	statuses+=("$X4_STATUS")
	left+=("$(x4_header X-XMR402-Pending)")
done
assert_eq "two requests from the allowance, then 429" "200 200 429" "${statuses[*]}"
assert_eq "counting down" "1 0" "${left[*]:0:2}"
assert_json "pending_spent, with the confirmations so far" "$X4_BODY" \
	".error.code == \"pending_spent\" and .confirmations_required == $X4_CONFIRMATIONS"
check "with Retry-After" grep -Eq '^Retry-After: [0-9]+$' <<<"$X4_HEADERS"
check "and no challenge" test -z "$(x4_header WWW-Authenticate)"
assert_eq "billing counted two" 2 \
	"$(psql_q "SELECT xmr402_pending_used FROM invoices WHERE id = '$P_INV'")"
mine "$X4_CONFIRMATIONS" >/dev/null
served() {
	x4_call "$P_AUTH" && [[ $X4_STATUS == 200 && -n $(x4_header X-XMR402-Token) ]] && return 0
	mine 1 >/dev/null
	sleep 1
	return 1
}
check_here "at the confirmations the same proof is served with its token" wait_until 60 served

# ---- a flood: 1,000 credential-less requests from 100 addresses ------------------------------
# The cap is soft by the requests billing's 4 API threads run at the same instant.
poll_cycles() {
	curl -s "$BILLING_ADMIN_URL/metrics" | awk '$1 == "xmrgate_billing_poll_cycles_total" { print $2 }'
}
OPEN=$(open_now)
CAP=$((OPEN + 40))
check_here "billing restarted with max_open_challenges = $CAP" \
	stack_billing_restart xmr402.max_open_challenges=$CAP
FLOOD=$(mktemp -d)
defer rm -rf "$FLOOD"
cycles_before=$(poll_cycles) started=$SECONDS senders=()
for ((a = 0; a < 100; a++)); do
	x4_from_fresh
	(
		for ((i = 0; i < 10; i++)); do
			curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 --interface "$X4_FROM" \
				-H 'Content-Type: application/json' \
				--data '{"jsonrpc":"2.0","id":1,"method":"get_info"}' "$GATEWAY_URL/v1/json_rpc"
		done >"$FLOOD/$a"
	) &
	senders+=($!)
done
wait "${senders[@]}" # not a bare wait: the restarted billing is a child of this shell too
took=$((SECONDS - started))
cycles=$(($(poll_cycles) - cycles_before))
assert_eq "1,000 answers" 1000 "$(cat "$FLOOD"/* | wc -l)"
assert_eq "each a challenge (402) or a refusal with Retry-After (429), nothing else" "" \
	"$(cat "$FLOOD"/* | grep -Ev '^(402|429)$' | sort | uniq -c | tr '\n' ' ')"
open_after=$(open_now)
check "open challenges stay within the cap ($open_after of $CAP, + at most 4 in flight)" \
	test "$open_after" -le $((CAP + 4))
check "the cap was reached, so it is what held ($open_after)" test "$open_after" -ge "$CAP"
# the stack polls every 2 s: the poller kept at least half its cycles during the flood
check "the poller kept its cycle ($cycles cycles in ${took}s)" \
	test "$cycles" -ge $((took / 4))
