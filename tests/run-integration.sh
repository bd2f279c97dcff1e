#!/usr/bin/env bash
# Runs the integration tests against a fresh test stack of real processes.
#
#   tests/run-integration.sh [PATTERN...]
#
# Starts scripts/stack.sh with XG_VAR=<repo>/var/test and XG_PORT_BASE=28100
# (override with XG_TEST_VAR / XG_TEST_PORT_BASE), so it can run beside a dev stack,
# from a wiped state; exports its stack.env; runs every tests/integration/test_*.sh
# whose file name contains one of the PATTERNs (all when none is given), each under
# a 10-minute timeout; stops the stack on exit (XG_KEEP_STACK=1 leaves it running).
# XG_TEST_DIR names another directory of test_*.sh (the drills: tests/drills).
# The fleet is mixed, as in the field: node B runs monero 0.18.4 (Debian 13's; the root
# is built on the first run, about a minute), A and C this machine's
# (XG_TEST_MONERO_TRIXIE, default b, becomes the stack's XG_MONERO_TRIXIE; empty: none).
# The stack mines nothing by itself (XG_BLOCK_INTERVAL=0).
# Two runs on the same test var dir take turns: the second waits for the first.
#
# Counting: every `ok - …` / `not ok - …` line a test prints is one assertion, and
# the closing line `N passed, N failed` counts assertions. A test script that exits
# non-zero without printing a `not ok` (it crashed, or timed out) counts as one
# failed assertion more. Exit status: 0 only when nothing failed.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export XG_VAR=${XG_TEST_VAR:-$REPO/var/test}
export XG_PORT_BASE=${XG_TEST_PORT_BASE:-28100}
export XG_MONERO_TRIXIE=${XG_TEST_MONERO_TRIXIE-b}
# A still chain: the tests mine what they need and count on nothing else moving it (the
# stack's own miner is tested by test_stack_automine.sh, which turns it on).
export XG_BLOCK_INTERVAL=0
STACK=$REPO/scripts/stack.sh

tests=()
for t in "${XG_TEST_DIR:-$REPO/tests/integration}"/test_*.sh; do
	[[ -e $t ]] || continue
	name=${t##*/}
	if (($# == 0)); then
		tests+=("$t")
		continue
	fi
	for pat in "$@"; do
		if [[ $name == *"$pat"* ]]; then
			tests+=("$t")
			break
		fi
	done
done
if ((${#tests[@]} == 0)); then
	echo "no integration test matches: $*"
	echo "0 passed, 1 failed"
	exit 1
fi

stop_stack() {
	if [[ ${XG_KEEP_STACK:-0} == 1 ]]; then
		echo "# stack left running: XG_VAR=$XG_VAR XG_PORT_BASE=$XG_PORT_BASE $STACK stop"
	else
		"$STACK" stop 8>&-
	fi
}

# One run at a time per test var dir (fd 8; children never get it, so a process
# left behind cannot hold the lock).
mkdir -p "$XG_VAR"
exec 8>"$XG_VAR/.integration.lock"
if ! flock -n 8; then
	echo "# another integration run uses $XG_VAR: waiting for it (up to 30 min)"
	flock -w 1800 8 || {
		echo "not ok - the test stack is free"
		echo "0 passed, 1 failed"
		exit 1
	}
fi

"$STACK" stop >/dev/null 2>&1 8>&- # a test stack left over by an interrupted run
trap stop_stack EXIT
trap 'exit 130' INT TERM
if ! XG_FRESH=1 "$STACK" start >/dev/null 8>&-; then
	echo "not ok - the test stack starts (logs: $XG_VAR/log)"
	echo "0 passed, 1 failed"
	exit 1
fi
set -a
# shellcheck source=/dev/null
. "$XG_VAR/stack.env"
set +a

passed=0
failed=0
out=$(mktemp)
# shellcheck source=scripts/lib-stack.sh
. "$REPO/scripts/lib-stack.sh"
IFS=, read -ra node_urls <<<"${NODE_URLS:?stack.env names the nodes}"
for t in "${tests[@]}"; do
	# Each test begins with no transaction an earlier one signed and left unrelayed.
	xg_flush_unrelayed "${node_urls[@]}" | sed 's/^/# /'
	echo "# ${t#"$REPO"/}"
	t_started=$SECONDS
	timeout --kill-after=10 600 bash "$t" 2>&1 8>&- | tee "$out"
	rc=${PIPESTATUS[0]}
	echo "# ${t##*/} took $((SECONDS - t_started))s"
	p=$(grep -c '^ok ' "$out")
	f=$(grep -c '^not ok ' "$out")
	if ((rc != 0 && f == 0)); then
		echo "not ok - ${t##*/} exited with status $rc"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done
rm -f "$out"

# Stop first, so that the count is the last line printed.
trap - EXIT
stop_stack
echo "$passed passed, $failed failed"
((failed == 0))
