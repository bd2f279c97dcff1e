# shellcheck shell=bash
# lib.sh — what every bench does first, sourced by tests/bench/*.sh once REPO, XG_VAR and
# XG_PORT_BASE are set: the stack it runs against (started here when none is running, and
# then stopped again at exit), a scratch directory ($work, removed at exit unless
# XG_BENCH_KEEP=1) and the processes it starts (appended to pids: killed at exit).
#
#   bench_begin       sets the exit trap, starts the stack if needed, loads its stack.env
#   bench_exit_hook   a command run first at exit (e.g. to thaw a node a bench froze)
STACK=$REPO/scripts/stack.sh
work=$(mktemp -d)
chmod 755 "$work" # wallet-rpc and nginx read files in it
pids=()
bench_exit_hook=

bench_cleanup() {
	[[ -z $bench_exit_hook ]] || eval "$bench_exit_hook" || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [[ ${XG_BENCH_KEEP:-0} == 1 ]]; then
		echo "# kept $work" >&2
	else
		rm -rf "$work"
	fi
	if [[ ${bench_started_stack:-0} == 1 ]]; then
		"$STACK" stop >/dev/null 2>&1 || true
	fi
}

bench_begin() {
	trap bench_cleanup EXIT
	if ! "$STACK" status >/dev/null 2>&1; then
		# a still chain: the benches mine what they measure
		XG_BLOCK_INTERVAL=0 "$STACK" start >/dev/null
		bench_started_stack=1
	fi
	set -a
	# shellcheck source=/dev/null
	. "$XG_VAR/stack.env"
	set +a
}
