#!/usr/bin/env bash
# `make run` supervises: the foreground stack (scripts/stack.sh run) restarts a daemon
# killed with SIGKILL, and nothing else; its TERM (as Ctrl-C) still stops everything.
# The test stack is stopped for this and started again (reusing its state) at the end.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

STACK=$XG_REPO/scripts/stack.sh
RUN_LOG=$XG_VAR/log/stack-run.log
run_ended() { ! kill -0 "$run_pid" 2>/dev/null; }
# At exit, whatever happened: end the foreground stack, then start the test stack again.
restore_test_stack() {
	run_ended || { kill -TERM "$run_pid" && wait_until 120 run_ended; }
	"$STACK" start >/dev/null 8>&- || echo "# could not start the test stack again"
}

"$STACK" stop >/dev/null 2>&1 8>&-
setsid "$STACK" run >"$RUN_LOG" 2>&1 </dev/null 8>&- &
run_pid=$!
defer restore_test_stack

ready() { [[ -s $XG_VAR/stack.env ]] && curl -sf -o /dev/null "$BILLING_ADMIN_URL/readyz"; }
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

kill -TERM "$run_pid"
check_here "TERM ends the foreground stack" wait_until 120 run_ended
status=0
"$STACK" status >/dev/null 8>&- || status=$?
assert_eq "... and it stopped everything" 3 "$status"
