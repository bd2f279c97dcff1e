# shellcheck shell=bash
# Shell helpers shared by scripts/stack.sh and the integration-test harness
# (tests/integration/lib.sh): JSON-RPC over curl+jq, bounded waits, and processes
# tracked by pidfiles. Source it; it defines functions only and sets no options.
#
# Processes started with xg_spawn run in their own session (setsid), so a Ctrl-C
# in the terminal or the end of the starting shell never reaches them; the only
# way they stop is xg_kill_pidfiles (or stack.sh stop), which checks that the pid
# still belongs to the process it recorded before signalling it.

xg_log() { printf 'stack: %s\n' "$*" >&2; }
xg_die() {
	printf 'stack: error: %s\n' "$*" >&2
	exit 1
}

# xg_json_holds FILTER JSON: true when JSON is exactly one JSON value for which the
# jq FILTER is true. (`jq -e` alone exits 0 on empty input.)
xg_json_holds() {
	jq -es "length == 1 and (.[0] | ($1))" <<<"$2" >/dev/null 2>&1
}

# xg_rpc URL METHOD [PARAMS_JSON]
# POSTs a JSON-RPC 2.0 request to URL/json_rpc and prints its `result` (compact
# JSON). Returns non-zero, with the reply on stderr, on a transport error or an
# `error` member. XG_RPC_TIMEOUT (seconds, default 60) bounds the call.
xg_rpc() {
	local url=$1 method=$2 params=${3:-'{}'} body reply
	body=$(jq -cn --arg m "$method" --argjson p "$params" \
		'{jsonrpc: "2.0", id: "0", method: $m, params: $p}') || return 2
	reply=$(curl -sS --max-time "${XG_RPC_TIMEOUT:-60}" -H 'Content-Type: application/json' \
		--data-binary "$body" "$url/json_rpc") || return 1
	if ! xg_json_holds 'type == "object" and has("result") and (has("error") | not)' "$reply"; then
		printf '%s %s: %s\n' "$url" "$method" "$reply" >&2
		return 1
	fi
	jq -c '.result' <<<"$reply"
}

# xg_monerod_version URL: the version the monerod at URL reports (get_info's
# `version`, such as 0.18.4.0-unknown; empty from a node in restricted mode).
xg_monerod_version() {
	XG_RPC_TIMEOUT=5 xg_rpc "$1" get_info | jq -er '.version'
}

# xg_flush_unrelayed URL...: removes from each node's pool the transactions it holds
# unrelayed (sent with do_not_relay). monerod never mines those (fill_block_template takes
# the legacy relay category only), and the wallet that signed one does not count its
# inputs spent, so its next payment would be refused as a double spend. Prints how many
# it removed from each node.
xg_flush_unrelayed() {
	local url ids
	for url in "$@"; do
		ids=$(curl -s --max-time 10 "$url/get_transaction_pool" |
			jq -c '[.transactions[]? | select(.do_not_relay) | .id_hash]' 2>/dev/null) || continue
		[[ -n $ids && $ids != '[]' ]] || continue
		XG_RPC_TIMEOUT=10 xg_rpc "$url" flush_txpool "{\"txids\":$ids}" >/dev/null &&
			printf '%s: %s unrelayed transaction(s) flushed\n' "$url" "$(jq length <<<"$ids")"
	done
}

# xg_wait_until TIMEOUT_S CMD...: runs CMD every 0.25 s until it succeeds.
# Returns 1 once TIMEOUT_S seconds have passed without a success.
xg_wait_until() {
	local timeout=$1
	shift
	local deadline=$((SECONDS + timeout))
	until "$@"; do
		((SECONDS < deadline)) || return 1
		sleep 0.25
	done
}

# xg_port_free PORT: true when nothing listens on 127.0.0.1:PORT (any address).
xg_port_free() {
	[[ -z $(ss -Hltn "sport = :$1" 2>/dev/null) ]]
}

# A pidfile holds two lines: the pid, and a marker string (a path unique to that
# process, such as its data dir) that its command line must contain. The marker
# keeps a stale pidfile from ever killing a recycled pid.

# xg_write_pidfile PIDFILE PID MARKER
xg_write_pidfile() {
	printf '%s\n%s\n' "$2" "$3" >"$1"
}

# xg_pid_owned PIDFILE: true when the pidfile names a live process whose command
# line contains the pidfile's marker.
xg_pid_owned() {
	local pidfile=$1 pid marker
	[[ -r $pidfile ]] || return 1
	{
		read -r pid
		read -r marker
	} <"$pidfile" || return 1
	[[ $pid =~ ^[0-9]+$ && -n $marker && -r /proc/$pid/cmdline ]] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$marker"
}

# xg_spawn PIDFILE MARKER LOGFILE CMD...: starts CMD in a new session with stdin
# from /dev/null and stdout+stderr appended to LOGFILE, and records it in PIDFILE
# (MARKER must appear in CMD's arguments). The child exec's CMD under its own pid.
# File descriptor 9 (stack.sh's lock) is not passed on: a long-lived child holding
# it would keep the lock taken after stack.sh exits.
xg_spawn() {
	local pidfile=$1 marker=$2 logfile=$3
	shift 3
	setsid "$@" >>"$logfile" 2>&1 </dev/null 9>&- &
	# Without job control a background child is not a process-group leader, so
	# setsid(1) calls setsid(2) itself rather than forking: $! is CMD's pid.
	xg_write_pidfile "$pidfile" "$!" "$marker"
}

# xg_signal_pidfiles SIGNAL PIDFILE...: sends SIGNAL to every owned pid.
xg_signal_pidfiles() {
	local sig=$1 f pid
	shift
	for f in "$@"; do
		if xg_pid_owned "$f"; then
			read -r pid <"$f"
			kill "-$sig" "$pid" 2>/dev/null || true
		fi
	done
}

# xg_none_owned PIDFILE...: true when no pidfile names a live owned process.
xg_none_owned() {
	local f
	for f in "$@"; do
		xg_pid_owned "$f" && return 1
	done
	return 0
}

# xg_kill_pidfiles GRACE_S PIDFILE...: TERM to all at once, waits up to GRACE_S
# seconds for them to exit, then KILL to any left; removes the pidfiles.
xg_kill_pidfiles() {
	local grace=$1
	shift
	(($# > 0)) || return 0
	xg_signal_pidfiles TERM "$@"
	if ! xg_wait_until "$grace" xg_none_owned "$@"; then
		xg_log "still running after ${grace}s, sending KILL: $*"
		xg_signal_pidfiles KILL "$@"
		xg_wait_until 5 xg_none_owned "$@" || xg_log "could not kill: $*"
	fi
	rm -f "$@"
}
