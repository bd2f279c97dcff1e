#!/usr/bin/env bash
# Webhooks when one receiver is dead (billing/hooks/hook_sender.h, hook_dest.h): a billing
# with the default 4 senders and 1 attempt per destination, a 2 s [webhooks] timeout and a
# breaker opening after 3 failures in a row. One address buys 40 free plans whose
# webhook_url is a black hole (webhook_blackhole.py: accepts, reads, never answers), then a
# healthy merchant buys one whose receiver answers (webhook_receiver.py).
#
# Asserted: the healthy merchant's event is delivered within a few seconds (one sender
# working the queue one event at a time would have waited 40 × 2 s), the black hole never
# holds more than one connection at once, its breaker opens (the metric
# xmrgate_billing_webhook_destinations{state="open"}) after 3 failed attempts, and while it
# is open the 40 events cost no further attempt; once its cooldown ends one probe goes,
# which fails and opens it again.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"

bt_setup
DEAD=40
RECV_PORT=$((XG_PORT_BASE + 78)) HOLE_PORT=$((XG_PORT_BASE + 79))
GOOD_URL="http://127.0.0.1:$RECV_PORT/hook" HOLE_URL="http://127.0.0.1:$HOLE_PORT/hook"
SECRETS=$BT_DIR/fair-secrets DELIVERIES=$BT_DIR/fair-deliveries.jsonl HOLE=$BT_DIR/hole.json
: >"$SECRETS"
: >"$DELIVERIES"
rm -f "$HOLE"

xg_spawn "$BT_DIR/fair-receiver.pid" "$DELIVERIES" "$BT_DIR/fair-receiver.log" \
	python3 "$XG_REPO/tests/integration/webhook_receiver.py" "$RECV_PORT" "$SECRETS" "$DELIVERIES"
xg_spawn "$BT_DIR/hole.pid" "$HOLE" "$BT_DIR/hole.log" \
	python3 "$XG_REPO/tests/integration/webhook_blackhole.py" "$HOLE_PORT" "$HOLE"
stop_helpers() { xg_kill_pidfiles 5 "$BT_DIR/fair-receiver.pid" "$BT_DIR/hole.pid"; }
defer stop_helpers
receiver_up() { curl -s -o /dev/null -X POST "$GOOD_URL" -d '{}'; }
check "the healthy receiver listens" wait_until 10 receiver_up
check "the black hole listens" wait_until 10 test -s "$HOLE"

check_here "billing (4 senders, breaker after 3) starts" billing_start fair \
	invoices.free_burst=100 invoices.free_per_hour=100 "webhooks.allow=127.0.0.0/8" \
	webhooks.timeout=2s webhooks.retry_base=500ms webhooks.poll_interval=200ms \
	webhooks.senders=4 webhooks.per_destination=1 webhooks.breaker_threshold=3 \
	webhooks.breaker_cooldown=15s

buy() { # URL: a free plan with that webhook; prints the invoice id
	local st body
	read -r st body <<<"$(bt_invoice fair "{\"tier\":\"free\",\"webhook_url\":\"$1\"}")"
	[[ $st == 201 ]] || { echo "# purchase: $st $body" >&2; return 1; }
	echo "$(jq -r .id <<<"$body") $(jq -r .webhook_secret <<<"$body")" >>"$SECRETS"
	jq -r .id <<<"$body"
}
dead_ids=()
for ((i = 0; i < DEAD; i++)); do
	id=$(buy "$HOLE_URL") && dead_ids+=("$id")
done
assert_eq "$DEAD free plans with a black-holed webhook are bought" "$DEAD" "${#dead_ids[@]}"
good=$(buy "$GOOD_URL")
check "then a healthy merchant's plan is bought" test -n "$good"

received() { jq -e -s --arg id "$good.provisioned" 'any(.[]; .event_id == $id and .valid)' "$DELIVERIES" >/dev/null; }
check "the healthy merchant's event is delivered" wait_until 30 received
took=$(psql_q "SELECT (extract(epoch FROM delivered_at - created_at) * 1000)::bigint
                 FROM webhook_events WHERE event_id = '$good.provisioned'")
echo "# the healthy merchant's event: delivered ${took} ms after it was written"
check "… within 3 s of being written, behind $DEAD events to the black hole (${took} ms)" \
	test "${took:-99999}" -lt 3000

in_list=$(printf "'%s'," "${dead_ids[@]}")
in_list=${in_list%,}
dead_attempts() { psql_q "SELECT coalesce(sum(attempts), 0) FROM webhook_events WHERE invoice_id IN ($in_list)"; }
metric() { curl -s "$(billing_admin fair)/metrics" | awk -v s="state=\"$1\"" 'index($0, "xmrgate_billing_webhook_destinations{") == 1 && index($0, s) {print $2 + 0}'; }
opened() { [[ $(metric open) == 1 ]]; }
check "the black hole's breaker opens (webhook_destinations{state=\"open\"} = 1)" wait_until 30 opened
three() { (($(dead_attempts) >= 3)); }
wait_until 5 three # the third attempt's outcome is written just after the breaker opens
n_open=$(dead_attempts)
echo "# attempts to the black hole when its breaker opened: $n_open; black hole: $(cat "$HOLE")"
check "… after 3 failed attempts ($n_open)" test "$n_open" -eq 3
assert_json "the black hole never held more than one connection at once" "$(cat "$HOLE")" \
	'.max_open == 1'
# While open (15 s), the events are put back unsent: no attempt is counted. Read again after
# the events have cycled through the claims a few times (put back, due again, claimed).
cycled() { (($(psql_q "SELECT count(*) FROM webhook_events WHERE invoice_id IN ($in_list) AND next_attempt_at > now() + interval '5 seconds'") == DEAD)); }
check "… its $DEAD events wait for the cooldown, unsent" wait_until 10 cycled
assert_eq "… and cost no attempt while it is open" "$n_open" "$(dead_attempts)"
probed() { (($(dead_attempts) == n_open + 1)) && opened; }
check "after the cooldown one probe goes, fails, and the breaker opens again" wait_until 40 probed
assert_eq "… one probe only: the black hole saw $((n_open + 1)) connections" $((n_open + 1)) \
	"$(jq .connections "$HOLE")"
