#!/usr/bin/env bash
# Webhooks for programs that buy through the API (docs/BILLING.md "Webhooks"), with the
# real wallet, monerod and PostgreSQL: an invoice created with a webhook_url is paid and
# mined to its tier's confirmations while its receiver (webhook_receiver.py, which checks
# every signature as the contract tells a receiver to) is down for a minute and billing is
# killed with SIGKILL mid-flow; each of seen, confirming and provisioned still arrives at
# least once, validly signed, and GET /api/invoices/<id> shows each event's delivery. The
# SSRF guard: a billing without [webhooks] allow refuses 127.0.0.1 (and its disguises) at
# creation, without a resolver call (a host name passes there), and its sender refuses to connect there for an event it has to deliver (an
# invoice that expires, whose expired event is delivered once an allow-listed billing runs).
# Two replicas share the outbox: each event is delivered by one of them, once.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"

bt_setup
PRICE=10000000000
DOWN_S=${XG_WEBHOOK_DOWN_S:-60} # the receiver's outage
RECV_PORT=$((XG_PORT_BASE + 78))
HOOK_URL="http://127.0.0.1:$RECV_PORT/hook"
SECRETS=$BT_DIR/webhook-secrets
DELIVERIES=$BT_DIR/webhook-deliveries.jsonl
: >"$SECRETS"
: >"$DELIVERIES"
bt_tier bt-hook "$PRICE" 3
# Retries and the destination's breaker on this test's scale: a minute's outage at the
# defaults (30 s cooldown, doubled by each failed probe) could hold the events two minutes
# past the receiver's return; test_billing_webhook_fairness tests the breaker itself.
HOOKS=(webhooks.retry_base=500ms webhooks.retry_cap=4s webhooks.timeout=3s
	webhooks.poll_interval=200ms webhooks.breaker_cooldown=2s webhooks.breaker_cooldown_max=8s)
# The billings' configurations (billing_start): allow-listed or not, short quotes or not.
OPEN=(invoices.create_burst=100 invoices.free_burst=100 "${HOOKS[@]}"
	"webhooks.allow=127.0.0.0/8, ::1")
SHORT=(invoices.create_burst=100 invoices.ttl=8s "${HOOKS[@]}" webhooks.allow=127.0.0.0/8)
STRICT=(invoices.create_burst=100 "${HOOKS[@]}")
OPEN2=(invoices.create_burst=100 invoices.free_burst=100 "${HOOKS[@]}" webhooks.allow=127.0.0.0/8)

receiver_up() { curl -s -o /dev/null -X POST "http://127.0.0.1:$RECV_PORT/" -d '{}'; }
receiver_start() {
	xg_spawn "$BT_DIR/receiver.pid" "$DELIVERIES" "$BT_DIR/receiver.log" \
		python3 "$XG_REPO/tests/integration/webhook_receiver.py" "$RECV_PORT" "$SECRETS" \
		"$DELIVERIES"
	xg_wait_until 10 receiver_up
}
receiver_stop() { xg_kill_pidfiles 10 "$BT_DIR/receiver.pid"; }
defer receiver_stop

create() { # NAME BODY -> "STATUS BODY"
	bt_invoice "$1" "$2"
}
# Deliveries of an event id that the receiver found validly signed.
valid_count() { jq -s --arg id "$1" '[.[] | select(.event_id == $id and .valid)] | length' "$DELIVERIES"; }
received() { (($(valid_count "$1") >= 1)); }
event_state() { bt_get "$1" "$2" | jq -r --arg id "$3" '.webhook.events[] | select(.id == $id) | .state'; }
event_is() { [[ $(event_state "$1" "$2" "$3") == "$4" ]]; }

check "the receiver starts" receiver_start

# --- the SSRF guard at creation, on a billing without [webhooks] allow ---------------------
check_here "billing (no allow list) starts" billing_start strict "${STRICT[@]}"
refused() { # URL: creation answers 400 webhook_url_refused
	local st body
	read -r st body <<<"$(create strict "{\"tier\":\"bt-hook\",\"webhook_url\":\"$1\"}")"
	[[ $st == 400 && $(jq -r .error.code <<<"$body") == webhook_url_refused ]] || {
		echo "# $1: $st $body" >&2
		return 1
	}
}
check "no allow list: 127.0.0.1 is refused" refused "$HOOK_URL"
check "no allow list: localhost (resolving to loopback) is refused" \
	refused "http://localhost:$RECV_PORT/hook"
check "no allow list: [::1] is refused" refused "http://[::1]:$RECV_PORT/hook"
check "no allow list: IPv4-mapped [::ffff:127.0.0.1] is refused" \
	refused "http://[::ffff:127.0.0.1]:$RECV_PORT/hook"
check "no allow list: IPv4-translated [::ffff:0:127.0.0.1] is refused" \
	refused "http://[::ffff:0:127.0.0.1]:$RECV_PORT/hook"
check "no allow list: 2130706433 (127.0.0.1 as a number) is refused" \
	refused "http://2130706433:$RECV_PORT/hook"
check "no allow list: 169.254.169.254 (metadata) is refused" refused "http://169.254.169.254/"
check "no allow list: 10.0.0.1 is refused" refused "http://10.0.0.1/hook"
# A host name is not resolved at creation (a name server that never answers must not hold an
# API thread): a name that resolves nowhere is accepted at once and judged at delivery.
started=$(date +%s%N)
read -r st body <<<"$(create strict '{"tier":"bt-hook","webhook_url":"http://hook.no-such-name.invalid/x"}')"
took_ms=$((($(date +%s%N) - started) / 1000000))
assert_eq "no allow list: a name that resolves nowhere is accepted, not resolved (201)" 201 "$st" ||
	echo "# $body"
check "… answered in under 1 s (${took_ms} ms)" test "$took_ms" -lt 1000
read -r st body <<<"$(create strict '{"tier":"bt-hook","webhook_url":"ftp://example.com/x"}')"
assert_json "a non-http(s) URL is invalid_webhook_url (400)" "$body" '.error.code == "invalid_webhook_url"'
assert_eq "… answered 400" 400 "$st"
read -r st body <<<"$(create strict '{"tier":"bt-hook","webhook_url":"http://u:p@example.com/"}')"
assert_eq "a URL with a password is refused (400)" 400 "$st"
check_here "billing (no allow list) stops" billing_stop strict

# --- an event the guard must refuse at delivery ---------------------------------------------
# Created on an allow-listed billing (ttl 8 s), then that billing stops and one without the
# allow list is the only one left when the invoice expires: its sender must not connect.
check_here "billing (allow list, 8 s quotes) starts" billing_start short "${SHORT[@]}"
read -r st exp <<<"$(create short "{\"tier\":\"bt-hook\",\"webhook_url\":\"$HOOK_URL\"}")"
assert_eq "allow-listed: an invoice with a loopback webhook is created (201)" 201 "$st"
X=$(jq -r .id <<<"$exp")
echo "$X $(jq -r .webhook_secret <<<"$exp")" >>"$SECRETS"
check_here "billing (allow list) stops before the quote expires" billing_stop short
check_here "billing (no allow list) starts again" billing_restart strict
check "the invoice expires" bt_wait_status strict "$X" expired 40
refused_at_connect() {
	bt_get strict "$X" | jq -e --arg id "$X.expired" '.webhook.events[] | select(.id == $id) |
		.attempts >= 1 and .state == "pending" and (.last_error | test("SSRF guard: loopback"))' \
		>/dev/null
}
check "the sender without allow list refuses to connect to 127.0.0.1" wait_until 30 refused_at_connect
assert_eq "… and the receiver got nothing" 0 "$(jq -s --arg id "$X.expired" '[.[] | select(.event_id == $id)] | length' "$DELIVERIES")"
check_here "billing (no allow list) stops" billing_stop strict

# --- two replicas send, neither twice --------------------------------------------------------
# Free-tier purchases are provisioned at creation: their provisioned events are written in
# the creating transaction, alternately on two replicas whose senders both claim from the
# outbox (FOR UPDATE SKIP LOCKED): each event is delivered, and by one of them only.
check_here "billing (allow list) starts" billing_start open "${OPEN[@]}"
check_here "a second billing replica (allow list) starts" billing_start open2 "${OPEN2[@]}"
free_ids=()
for i in 1 2 3 4 5 6 7 8; do
	name=open
	((i % 2)) && name=open2
	read -r st f <<<"$(create "$name" "{\"tier\":\"free\",\"webhook_url\":\"$HOOK_URL\"}")"
	[[ $st == 201 ]] || echo "# free purchase $i: $st $f" >&2
	id=$(jq -r .id <<<"$f")
	echo "$id $(jq -r .webhook_secret <<<"$f")" >>"$SECRETS"
	free_ids+=("$id")
done
all_free_received() { local id; for id in "${free_ids[@]}"; do received "$id.provisioned" || return 1; done; }
check "eight free purchases: each provisioned event arrives, validly signed" wait_until 30 all_free_received
sleep 3 # time for a second delivery, were there one
twice=0
for id in "${free_ids[@]}"; do (($(valid_count "$id.provisioned") == 1)) || twice=$((twice + 1)); done
assert_eq "two senders on one outbox: no event delivered twice" 0 "$twice"
check_here "the second replica stops" billing_stop open2

# --- the main flow ---------------------------------------------------------------------------
check "the expired event is delivered once an allow-listed sender runs" wait_until 60 received "$X.expired"
check "… and shows as delivered" wait_until 10 event_is open "$X" "$X.expired" delivered

read -r st inv <<<"$(create open "{\"tier\":\"bt-hook\",\"months\":1,\"webhook_url\":\"$HOOK_URL\"}")"
assert_eq "an invoice with a webhook_url is created (201)" 201 "$st"
M=$(jq -r .id <<<"$inv")
SECRET=$(jq -r .webhook_secret <<<"$inv")
assert_json "the creation answer has the secret once, and the webhook" "$inv" \
	"(.webhook_secret | test(\"^whsec_[0-9a-f]{64}$\")) and .webhook.url == \"$HOOK_URL\" and
	 .webhook.events == []"
echo "$M $SECRET" >>"$SECRETS"
got=$(bt_get open "$M")
assert_json "GET never shows the secret" "$got" 'has("webhook_secret") | not'
assert_json "GET shows the webhook" "$got" ".webhook.url == \"$HOOK_URL\""

tx=$(payer_pays "$(jq -r .address <<<"$inv")" "$PRICE")
check "the payment is seen" bt_wait_status open "$M" seen 30
check "seen arrives, validly signed" wait_until 30 received "$M.seen"
check "one block is mined" mine 1
check "confirming (1) arrives, validly signed" wait_until 30 received "$M.confirming.1"
delivered_row() {
	bt_get open "$M" | jq -e --arg id "$M.confirming.1" '.webhook.events[] | select(.id == $id) |
		.state == "delivered" and .last_status == 200 and .attempts >= 1 and
		.delivered_at != null and .type == "confirming" and .confirmations == 1' >/dev/null
}
check "GET shows confirming (1) delivered with status 200" wait_until 10 delivered_row

# The receiver goes down; the invoice goes on confirming and is provisioned while billing
# is killed mid-flow and restarted.
check "the receiver is stopped" receiver_stop
down_at=$SECONDS
check "one more block is mined" mine 1
is_conf2() { bt_get open "$M" | jq -e '.confirmations >= 2' >/dev/null; }
check "the invoice has 2 confirmations" wait_until 30 is_conf2
failing() {
	bt_get open "$M" | jq -e --arg id "$M.confirming.2" '.webhook.events[] | select(.id == $id) |
		.state == "pending" and .attempts >= 1 and .last_error != null and
		.next_attempt_at != null and .delivered_at == null' >/dev/null
}
check "GET shows confirming (2) failing: attempts, last error, next attempt" wait_until 30 failing
check "the last blocks are mined" mine 1
sleep "0.$((RANDOM % 9))"
check_here "billing is killed with SIGKILL" billing_stop open KILL
check_here "billing restarts" billing_restart open
check "the invoice is provisioned" bt_wait_status open "$M" provisioned 60
pending_prov() {
	bt_get open "$M" | jq -e --arg id "$M.provisioned" '.webhook.events[] | select(.id == $id) |
		.state == "pending"' >/dev/null
}
check "the provisioned event waits in the outbox" wait_until 30 pending_prov
check_here "billing is killed with SIGKILL again while it retries" billing_stop open KILL
check_here "billing restarts again" billing_restart open
left=$((DOWN_S - (SECONDS - down_at)))
((left > 0)) && sleep "$left"
echo "# the receiver was down for $((SECONDS - down_at)) s"
check "the receiver comes back" receiver_start
for ev in seen confirming.1 confirming.2 provisioned; do
	check "$ev arrives at least once with a valid signature" wait_until 60 received "$M.$ev"
done
all_delivered() {
	bt_get open "$M" | jq -e '(.webhook.events | length >= 4) and
		all(.webhook.events[]; .state == "delivered" and .delivered_at != null)' >/dev/null
}
check "GET shows every event delivered" wait_until 30 all_delivered
got=$(bt_get open "$M")
assert_json "the retried events show more than one attempt" "$got" \
	"[.webhook.events[] | select(.id == \"$M.provisioned\" or .id == \"$M.confirming.2\") |
	  .attempts > 1] | all and length == 2"
assert_json "every event of the invoice is one of the contract's types" "$got" \
	'all(.webhook.events[]; .type | IN("seen", "confirming", "provisioned"))'
assert_eq "no delivery of ours failed signature checks" 0 \
	"$(jq -s --arg m "$M" --arg x "$X" '[.[] | select((.invoice == $m or .invoice == $x) and (.valid | not))] | length' "$DELIVERIES")"
assert_eq "one event row per event id (a settle rerun writes none twice)" \
	"$(bt_db "SELECT count(DISTINCT event_id) FROM webhook_events WHERE invoice_id = '$M'")" \
	"$(bt_db "SELECT count(*) FROM webhook_events WHERE invoice_id = '$M'")"
assert_eq "one payment row for the transfer" 1 "$(bt_db "SELECT count(*) FROM payments WHERE txid = '$tx'")"

# An invoice without a webhook_url has no webhook and writes no events.
read -r st plain <<<"$(create open '{"tier":"bt-hook","months":1}')"
assert_json "without webhook_url: no webhook, no secret" "$plain" \
	'(has("webhook") | not) and (has("webhook_secret") | not)'
