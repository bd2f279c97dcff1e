#!/usr/bin/env bash
# Billing's operator metrics against the real stack (docs/OPERATIONS.md, "What to watch"):
#   - the webhook outbox: invoices created with a black-holed and a refusing webhook URL
#     expire; their events sit undelivered, xmrgate_billing_webhook_backlog counts them and
#     xmrgate_billing_webhook_oldest_pending_seconds grows (read at most every 5 s: two
#     scrapes in a row show the same value), the failed attempts are counted by reason
#     (timeout, connect), and a billing without [webhooks] allow counts its SSRF refusals
#     (refused); the outbox query can use the partial index webhook_events_due;
#   - XMR402: a challenge moves xmrgate_billing_xmr402_challenges_total; a malformed proof
#     and a made-up txid (held for its transaction, a suspended connection) move
#     xmrgate_billing_xmr402_verifies_total and _refusals_total{step="verify",reason=…},
#     and the held one's latency is its whole wait;
#   - the API: requests by route pattern (never the path asked for) and status class, and
#     the latency histogram's count.
# Prints the scrape lines it checked.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"

bt_setup
bt_tier bm-hook 10000000000 3
HOLE_PORT=$((XG_PORT_BASE + 76))   # accepts, never answers: timeout
CLOSED_PORT=$((XG_PORT_BASE + 77)) # nothing listens: connect (billing takes +80..+89)
HOOKS=(webhooks.retry_base=500ms webhooks.retry_cap=2s webhooks.timeout=1s
	webhooks.poll_interval=200ms)
HOLD_S=3

# A listener that completes the handshake and never reads: curl waits out its timeout.
xg_spawn "$BT_DIR/hole.pid" "bm-hole" "$BT_DIR/hole.log" python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64)
held = []
while True:
    c, _ = s.accept(); held.append(c)
' "$HOLE_PORT" bm-hole
defer xg_kill_pidfiles 5 "$BT_DIR/hole.pid"
hole_up() { (exec 3<>"/dev/tcp/127.0.0.1/$HOLE_PORT") 2>/dev/null; }
check "the black hole listens" wait_until 10 hole_up

BM=(invoices.create_burst=100 invoices.ttl=8s "${HOOKS[@]}" webhooks.allow=127.0.0.0/8
	"xmr402.unseen_hold=${HOLD_S}s")
check_here "billing starts (allow-listed loopback, invoices expire after 8 s)" billing_start bm "${BM[@]}"
BA=$(billing_admin bm)
BU=$(billing_url bm)
scrape() { curl -sf --max-time 10 "$BA/metrics"; }
show() { # PATTERN: the scrape lines checked, for the log
	scrape | grep -E "$1" | sed 's/^/# scrape: /'
}
parses() { scrape | promtool check metrics; }
check "billing's /metrics parses (promtool check metrics)" parses
check "it leads" wait_until 15 metric_is "$BA" xmrgate_billing_leader 1
check "the outbox query succeeds" metric_is "$BA" xmrgate_billing_webhook_query_ok 1

# ---- the webhook outbox ------------------------------------------------------------------
backlog0=$(metric "$BA" xmrgate_billing_webhook_backlog)
timeout0=$(metric "$BA" 'xmrgate_billing_webhook_failures_total{reason="timeout"}')
connect0=$(metric "$BA" 'xmrgate_billing_webhook_failures_total{reason="connect"}')
hole_inv=$(bt_new_invoice bm "{\"tier\":\"bm-hook\",\"webhook_url\":\"http://127.0.0.1:$HOLE_PORT/hook\"}" | jq -r .id)
closed_inv=$(bt_new_invoice bm "{\"tier\":\"bm-hook\",\"webhook_url\":\"http://127.0.0.1:$CLOSED_PORT/hook\"}" | jq -r .id)
check "two invoices with webhook URLs are made ($hole_inv, $closed_inv)" \
	test -n "$hole_inv" -a "$hole_inv" != null -a -n "$closed_inv" -a "$closed_inv" != null
check "both expire" wait_until 40 bt_status_is bm "$closed_inv" expired
backlog_at_least() { metric_at_least "$BA" xmrgate_billing_webhook_backlog "$1"; }
check "the backlog counts their expired events (>= $((backlog0 + 2)))" \
	wait_until 20 backlog_at_least $((backlog0 + 2))
check "a black-holed attempt is counted as timeout" wait_until 30 metric_at_least "$BA" \
	'xmrgate_billing_webhook_failures_total{reason="timeout"}' $((timeout0 + 1))
check "a refused connection is counted as connect" wait_until 30 metric_at_least "$BA" \
	'xmrgate_billing_webhook_failures_total{reason="connect"}' $((connect0 + 1))
oldest1=$(metric "$BA" xmrgate_billing_webhook_oldest_pending_seconds)
check "the oldest pending event has an age" wait_until 15 metric_at_least "$BA" \
	xmrgate_billing_webhook_oldest_pending_seconds 1
oldest1=$(metric "$BA" xmrgate_billing_webhook_oldest_pending_seconds)
echo "# the oldest pending event: $oldest1 s"
older() { awk -v a="$(metric "$BA" xmrgate_billing_webhook_oldest_pending_seconds)" -v b="$oldest1" \
	'BEGIN { exit !(a > b) }'; }
check "… and it grows" wait_until 15 older
# The outbox is read at most every 5 s: of two back-to-back pairs of scrapes, at least one
# pair (no refresh between) shows the same age, where a per-scrape query would differ.
same_pair() {
	local a b
	a=$(metric "$BA" xmrgate_billing_webhook_oldest_pending_seconds)
	b=$(metric "$BA" xmrgate_billing_webhook_oldest_pending_seconds)
	[[ $a == "$b" ]]
}
cached() { same_pair || same_pair; }
check "scrapes in a row share one outbox read (cached)" cached
explain=$(psql_q "SET enable_seqscan = off; EXPLAIN SELECT count(*), min(created_at) FROM webhook_events
                  WHERE delivered_at IS NULL AND failed_at IS NULL" | tr '\n' ' ')
echo "# plan: $explain"
check "the outbox query's predicate is the partial index's (webhook_events_due)" \
	grep -q webhook_events_due <<<"$explain"
show '^xmrgate_billing_webhook_'

# The same events, sent by a billing without [webhooks] allow: its guard refuses loopback.
billing_stop bm
check_here "a billing without an allow list starts" billing_start bms invoices.create_burst=100 \
	"${HOOKS[@]}"
BA=$(billing_admin bms)
check "it counts the SSRF guard's refusals as refused" wait_until 40 metric_at_least "$BA" \
	'xmrgate_billing_webhook_failures_total{reason="refused"}' 1
show '^xmrgate_billing_webhook_failures_total'
billing_stop bms
check_here "the allow-listed billing starts again" billing_restart bm
BA=$(billing_admin bm)

# ---- XMR402 --------------------------------------------------------------------------------
ch0=$(metric "$BA" xmrgate_billing_xmr402_challenges_total)
vf0=$(metric "$BA" xmrgate_billing_xmr402_verifies_total)
post() { # PATH BODY -> "STATUS BODY"
	local out
	out=$(curl -s --max-time 30 -w '\n%{http_code}' -H 'Content-Type: application/json' \
		--data-binary "$2" "$BU$1")
	echo "${out##*$'\n'} ${out%$'\n'*}"
}
read -r st body <<<"$(post /api/xmr402/challenge '{"tier":"bm-hook"}')"
check "an XMR402 challenge is issued (HTTP $st)" test "${st:0:1}" = 2
assert_eq "xmrgate_billing_xmr402_challenges_total counts it" $((ch0 + 1)) \
	"$(metric "$BA" xmrgate_billing_xmr402_challenges_total)"
challenge_inv=$(jq -r '.invoice // .id // empty' <<<"$body")
read -r st body <<<"$(post /api/xmr402/verify '{"txid":"nothex"}')"
code=$(jq -r .error.code <<<"$body")
check "a malformed proof is refused (HTTP $st, $code)" test "${st:0:1}" = 4
assert_eq "… counted in xmrgate_billing_xmr402_refusals_total{step=\"verify\",reason=\"$code\"}" 1 \
	"$(metric "$BA" "xmrgate_billing_xmr402_refusals_total{step=\"verify\",reason=\"$code\"}")"
held0=$(metric "$BA" 'xmrgate_billing_api_request_duration_seconds_bucket{route="/api/xmr402/verify",le="2.5"}')
txid=$(openssl rand -hex 32)
proof=$(jq -cn --arg t "$txid" --arg i "$challenge_inv" \
	'{txid: $t, proof: "OutProofV2abcdefghijkmnopqrstuvwxyz123456789"} + (if $i == "" then {} else {invoice: $i} end)')
t0=$(date +%s.%N)
read -r st body <<<"$(post /api/xmr402/verify "$proof")"
t1=$(date +%s.%N)
code2=$(jq -r .error.code <<<"$body")
waited=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
check "a made-up txid is refused after its wait (HTTP $st, $code2, ${waited}s)" test "${st:0:1}" = 4
check "… counted under its reason ($code2)" metric_at_least "$BA" \
	"xmrgate_billing_xmr402_refusals_total{step=\"verify\",reason=\"$code2\"}" 1
assert_eq "xmrgate_billing_xmr402_verifies_total counts both proofs" $((vf0 + 2)) \
	"$(metric "$BA" xmrgate_billing_xmr402_verifies_total)"
if [[ $code2 == txid_unknown ]]; then
	# held for unseen_hold (3 s): its latency is from arrival to answer, above 2.5 s
	assert_eq "the held proof's latency is its whole wait (not under 2.5 s)" "$held0" \
		"$(metric "$BA" 'xmrgate_billing_api_request_duration_seconds_bucket{route="/api/xmr402/verify",le="2.5"}')"
fi
show '^xmrgate_billing_xmr402_|^xmrgate_billing_api_request_duration_seconds_(bucket|count)\{route="/api/xmr402/verify"'

# ---- the API: route patterns, status classes, the histogram ---------------------------------
count0=$(metric "$BA" 'xmrgate_billing_api_request_duration_seconds_count{route="/api/tiers"}')
ok0=$(metric "$BA" 'xmrgate_billing_api_requests_total{route="/api/tiers",code="2xx"}')
inv0=$(metric "$BA" 'xmrgate_billing_api_requests_total{route="/api/invoices/*",code="2xx"}')
nf0=$(metric "$BA" 'xmrgate_billing_api_requests_total{route="/api/invoices/*",code="4xx"}')
for _ in 1 2 3; do curl -sf -o /dev/null "$BU/api/tiers"; done
curl -sf -o /dev/null "$BU/api/invoices/$hole_inv"
curl -s -o /dev/null "$BU/api/invoices/00000000-0000-4000-8000-000000000000"
assert_eq "three GET /api/tiers move the histogram's count by 3" $((count0 + 3)) \
	"$(metric "$BA" 'xmrgate_billing_api_request_duration_seconds_count{route="/api/tiers"}')"
assert_eq "… and requests_total{route=\"/api/tiers\",code=\"2xx\"}" $((ok0 + 3)) \
	"$(metric "$BA" 'xmrgate_billing_api_requests_total{route="/api/tiers",code="2xx"}')"
assert_eq "an invoice read counts under its pattern /api/invoices/*" $((inv0 + 1)) \
	"$(metric "$BA" 'xmrgate_billing_api_requests_total{route="/api/invoices/*",code="2xx"}')"
assert_eq "an unknown invoice counts as 4xx there" $((nf0 + 1)) \
	"$(metric "$BA" 'xmrgate_billing_api_requests_total{route="/api/invoices/*",code="4xx"}')"
no_raw_path() { ! scrape | grep -q -e "$hole_inv" -e 00000000-0000-4000; }
check "no scrape line names an invoice id (the pattern, never the path)" no_raw_path
show '^xmrgate_billing_api_requests_total|^xmrgate_billing_api_request_duration_seconds_(count|sum)\{route="/api/(tiers|invoices/\*)"'
