#!/usr/bin/env bash
# `make run` supervises: the foreground stack (scripts/stack.sh run) restarts a daemon
# killed with SIGKILL, and nothing else; its TERM (as Ctrl-C) still stops everything.
# And it moves by itself: with XG_BLOCK_INTERVAL the stack mines a block every few seconds,
# so the agent command its banner prints pays and finishes with nobody mining, and so does
# a purchase through billing's API (what the browser's invoice page does) paid from the
# payer wallet. The test stack (still: the integration tests run it with
# XG_BLOCK_INTERVAL=0) is stopped for this, run in the foreground with a block every 2 s
# (10 confirmations in about 20 s instead of 2 minutes at the default 10 s), and started
# again, still and reusing its state, at the end.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

STACK=$XG_REPO/scripts/stack.sh
RUN_LOG=$XG_VAR/log/stack-run.log
INTERVAL=2
run_ended() { ! kill -0 "$run_pid" 2>/dev/null; }
# At exit, whatever happened: end the foreground stack, then start the test stack again.
restore_test_stack() {
	run_ended || { kill -TERM "$run_pid" && wait_until 120 run_ended; }
	XG_BLOCK_INTERVAL=0 "$STACK" start >/dev/null 8>&- || echo "# could not start the test stack again"
}

"$STACK" stop >/dev/null 2>&1 8>&-
XG_BLOCK_INTERVAL=$INTERVAL setsid "$STACK" run >"$RUN_LOG" 2>&1 </dev/null 8>&- &
run_pid=$!
defer restore_test_stack

# ready once the banner is out (stack.env is written just before it)
ready() {
	[[ -s $XG_VAR/stack.env ]] && grep -q '^What next:' "$RUN_LOG" &&
		curl -sf -o /dev/null "$BILLING_ADMIN_URL/readyz"
}
check_here "the foreground stack becomes ready" wait_until 180 ready || exit 1

pids_of() {
	local f
	for f in "$XG_VAR"/run/*.pid; do printf '%s %s\n' "${f##*/}" "$(head -n 1 "$f")"; done
}
before=$(pids_of)
billing_pid=$(head -n 1 "$XG_VAR/run/billing.pid")
echo "# before: $(tr '\n' ' ' <<<"$before")"
kill -9 "$billing_pid"

billing_back() {
	local pid
	pid=$(head -n 1 "$XG_VAR/run/billing.pid" 2>/dev/null) || return 1
	[[ $pid != "$billing_pid" ]] && xg_pid_owned "$XG_VAR/run/billing.pid" &&
		curl -sf -o /dev/null "$BILLING_URL/api/tiers"
}
check_here "billing killed with SIGKILL serves again under a new pid" wait_until 60 billing_back
check "the supervisor logged the exit" grep -q 'billing exited unexpectedly' "$RUN_LOG"
check "... and the restart" grep -q 'billing restarted' "$RUN_LOG"
after=$(pids_of)
assert_eq "nothing else was restarted" "$(grep -v '^billing.pid ' <<<"$before")" \
	"$(grep -v '^billing.pid ' <<<"$after")"
assert_eq "the gateway serves the demo tenant meanwhile" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$GATEWAY_URL/v1/$DEMO_TOKEN/get_height")"

# --- the chain moves by itself ----------------------------------------------------------
assert_eq "stack.env names the block interval" "BLOCK_INTERVAL=$INTERVAL" \
	"$(grep '^BLOCK_INTERVAL=' "$XG_VAR/stack.env")"
check "the banner says the stack mines a block every ${INTERVAL}s" \
	grep -q "a block every ${INTERVAL}s, mined by the stack" "$RUN_LOG"
check "... and that the agent command finishes by itself" \
	grep -q "finishes by itself: the stack mines a block every ${INTERVAL}s" "$RUN_LOG"
agent_cmd=$(sed -n 's/^  \(bin\/xmr402-agent .*\)$/\1/p' "$RUN_LOG")
echo "# the banner's agent command: $agent_cmd"
check "the banner prints the agent command" test -n "$agent_cmd"
height_at_start=$(rpc "$NODE_A_URL" get_info | jq -r '.height')

# A purchase as the invoice page makes it: create, pay the exact amount, wait.
inv=$(curl -s -H 'Content-Type: application/json' -H "Idempotency-Key: automine-$$" \
	--data-binary '{"tier":"wallet","months":1,"channel":"web"}' "$BILLING_URL/api/invoices")
inv_id=$(jq -r '.id // empty' <<<"$inv")
check "an invoice for the wallet tier is created" test -n "$inv_id"
inv_token=$(jq -r '.token // empty' <<<"$inv")
web_txid=$(rpc "$PAYER_WALLET_URL" transfer "$(jq -c '{destinations: [{address: .address,
	amount: (.amount | tonumber)}], account_index: 0, priority: 0}' <<<"$inv")" | jq -r '.tx_hash')
check "the payer pays it" test -n "$web_txid"

# The agent, exactly as printed, from the repository (where `make run` is typed).
agent_out=$XG_VAR/log/automine-agent.out
agent_err=$XG_VAR/log/automine-agent.err
agent_rc=0
# shellcheck disable=SC2086 # the banner's words, as a user pastes them
(cd "$XG_REPO" && timeout 300 $agent_cmd >"$agent_out" 2>"$agent_err") || agent_rc=$?
sed 's/^/#   agent: /' "$agent_err" | tail -n 5
assert_eq "the printed agent command finishes with nobody mining (exit status)" 0 "$agent_rc"
check "... waiting on confirmations on the way" grep -q 'confirmations; retrying in' "$agent_err"
agent_token=$(sed -n 's/^XMR402_TOKEN=//p' "$agent_out")
assert_eq "... and the token it bought is served by the gateway" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' "$GATEWAY_URL/v1/$agent_token/get_height")"

provisioned() { [[ $(curl -s "$BILLING_URL/api/invoices/$inv_id" | jq -r '.status') == provisioned ]]; }
check "the web purchase is provisioned with nobody mining" wait_until 240 provisioned
assert_eq "... and its token is served by the gateway" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' "$GATEWAY_URL/v1/$inv_token/get_height")"
height_now=$(rpc "$NODE_A_URL" get_info | jq -r '.height')
echo "# node A: height $height_at_start -> $height_now"
check "the stack's miner made the blocks (it logged them)" grep -q '^stack: mined block' "$XG_VAR/log/miner.log"
check "... at least 10 of them meanwhile" test $((height_now - height_at_start)) -ge 10

# The miner waits on a sleep of its own between blocks, which must go with it. TERM goes out
# as a new sleep begins, so that one has most of its 2 s left when the miner is stopped.
miner_pid=$(head -n 1 "$XG_VAR/run/miner.pid")
tick_of() { pgrep -P "$miner_pid" -x sleep | head -n 1; }
first=$(tick_of)
new_tick() { tick=$(tick_of) && [[ -n $tick && $tick != "$first" ]]; }
check_here "the miner waits on a new sleep between blocks" wait_until 10 new_tick
kill -TERM "$run_pid"
miner_gone() { ! kill -0 "$miner_pid" 2>/dev/null; }
check_here "TERM stops the miner" wait_until 30 miner_gone
sleep_gone() { ! _xg_alive "$tick"; } # killed: gone, or a zombie its new parent reaps
check "... and its sleep with it (none outlives the stack)" sleep_gone
check_here "TERM ends the foreground stack" wait_until 120 run_ended
status=0
"$STACK" status >/dev/null 8>&- || status=$?
assert_eq "... and it stopped everything, the miner too" 3 "$status"
