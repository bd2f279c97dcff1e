#!/usr/bin/env bash
# One payment holds at most [xmr402] streams_per_payment of the gateway's event-stream
# places (issue #30's low: each stream takes one request of the pending allowance, 20 by
# default, so one payment could hold 20 of the 256 places for an hour). A gateway of the
# test's own with streams = 8 and streams_per_payment = 2: the draft client pays and opens
# its stream, a second stream of the same proof opens, a third is 503 streams_full before
# billing is asked (no allowance spent), while another payment's stream still opens.
# Real stack: gateway, billing, monerod, the payer's wallet and PostgreSQL.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/xmr402_lib.sh
. "$(dirname "$0")/xmr402_lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"

TIER=agent
CAP=100000000000
STREAMS=xmrgate_gateway_xmr402_streams_open
check_here "the agent tier confirms after 2 blocks" x4_setup "$TIER" 2 || exit 1
check_here "a gateway with [xmr402] streams = 8, streams_per_payment = 2 starts" \
	gateway_start sse-share xmr402.streams=8 xmr402.streams_per_payment=2 || exit 1
GW=$GW_URL
ADMIN=$(gw_admin sse-share)
W=$(mktemp -d)
defer rm -rf "$W"

# sse_run NAME: the draft client pays and streams, in the background; SSE_PID
sse_run() {
	python3 "$(dirname "$0")/xmr402_draft_client.py" --sse --source "$X4_FROM" \
		--max-piconero "$CAP" "$GW/v1/json_rpc?tier=$TIER" "$PAYER_WALLET_URL" >"$W/$1" 2>&1 &
	SSE_PID=$!
	defer stop_pid "$SSE_PID"
}
sse_has() { grep -qs "$2" "$W/$1"; }
# stream NAME AUTH: one more stream of that proof for at most 8 s; its head in $W/NAME
stream() {
	curl -sS --max-time 8 -D "$W/$1" -o /dev/null --interface "$X4_FROM" \
		-H 'Content-Type: application/json' -H 'Accept: text/event-stream' \
		-H "Authorization: $2" --data-binary '{"jsonrpc":"2.0","id":"t","method":"get_info"}' \
		"$GW/v1/json_rpc?tier=$TIER" 2>/dev/null
}

x4_from_fresh
sse_run first
check_here "the payment's first stream opens (event: accepted)" \
	wait_until 90 sse_has first '"event": "accepted"' || sed 's/^/# /' "$W/first"
AUTH=$(jq -r .authorization <<<"$(grep -m 1 '"authorization"' "$W/first")")
INV=$(jq -r .data.invoice <<<"$(grep -m 1 '"event": "accepted"' "$W/first")")
stream second "$AUTH" &
SECOND=$!
defer stop_pid "$SECOND"
check_here "a second stream of the same payment opens" \
	wait_until 10 grep -q '^HTTP/1.1 200' "$W/second"
check "… as an event stream" grep -qi '^Content-Type: text/event-stream' "$W/second"
check_here "two places are taken" wait_until 10 metric_is "$ADMIN" "$STREAMS" 2
used=$(psql_q "SELECT xmr402_pending_used FROM invoices WHERE id = '$INV'")
stream third "$AUTH"
check "a third stream of the same payment: 503" grep -q '^HTTP/1.1 503' "$W/third"
check "… with Retry-After" grep -qi '^Retry-After: [0-9]' "$W/third"
assert_eq "refused before billing: no allowance spent" "$used" \
	"$(psql_q "SELECT xmr402_pending_used FROM invoices WHERE id = '$INV'")"
check "the gateway still holds two" metric_is "$ADMIN" "$STREAMS" 2

x4_from_fresh
sse_run other
check_here "another payment's stream opens meanwhile (6 places were left)" \
	wait_until 90 sse_has other '"event": "accepted"' || sed 's/^/# /' "$W/other"
check_here "three places are taken" wait_until 10 metric_is "$ADMIN" "$STREAMS" 3
