# shellcheck shell=bash
# Helpers for the integration tests (tests/integration/test_*.sh). Each test is a
# bash script that sources this file and runs against the stack described by the
# environment (stack.env, exported by tests/run-integration.sh; when run by hand,
# $XG_VAR/stack.env of a stack started with scripts/stack.sh is loaded here).
#
# Output is TAP-like: every assertion prints `ok - NAME` or `not ok - NAME`, with
# diagnostics on `# ` lines. The runner counts those lines. A test script exits 1
# when any assertion failed or when it made none.
#
#   check NAME CMD...                  ok when CMD exits 0
#   assert_eq NAME EXPECTED ACTUAL     ok when the strings are equal
#   assert_json NAME JSON JQ_FILTER    ok when JSON is one value and FILTER is true
#   rpc URL METHOD [PARAMS_JSON]       JSON-RPC call to URL/json_rpc; prints `result`
#   rpc_error URL METHOD [PARAMS_JSON] prints the `error` object; fails on success
#   wait_until TIMEOUT_S CMD...        retries CMD every 0.25 s until it succeeds
#   mine N [ADDRESS]                   mines N blocks on node A (default: the miner
#                                      wallet), waits <= 90 s for every node to
#                                      agree (a regtest node that lost its peers
#                                      takes up to a minute to reconnect), prints
#                                      the new top block's height
#   nodes_agree [MIN_COUNT]            all NODE_URLS report the same height (>=
#                                      MIN_COUNT) and top block hash
#   psql_q SQL                         runs SQL on DATABASE_URL, unaligned rows
#   defer CMD...                       runs CMD when the test script exits
set -uo pipefail

XG_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib-stack.sh
. "$XG_REPO/scripts/lib-stack.sh"

if [[ -z ${NODE_A_URL:-} ]]; then
	if [[ ! -r ${XG_VAR:-$XG_REPO/var}/stack.env ]]; then
		echo "not ok - stack environment (no ${XG_VAR:-$XG_REPO/var}/stack.env: start the stack)"
		exit 1
	fi
	set -a
	# shellcheck source=/dev/null
	. "${XG_VAR:-$XG_REPO/var}/stack.env"
	set +a
fi

_XG_OK=0
_XG_NOT_OK=0
_XG_DEFERRED=()

_xg_diag() { sed 's/^/#   /'; }

_xg_pass() {
	_XG_OK=$((_XG_OK + 1))
	echo "ok - $1"
}

# _xg_fail NAME [DIAGNOSTIC_LINES]
_xg_fail() {
	_XG_NOT_OK=$((_XG_NOT_OK + 1))
	echo "not ok - $1"
	[[ -z ${2:-} ]] || _xg_diag <<<"$2"
}

check() {
	local name=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if ((rc == 0)); then
		_xg_pass "$name"
	else
		_xg_fail "$name" "$(printf 'command: %s\nexit %s; output:\n%s' "$*" "$rc" "$(tail -n 20 <<<"$out")")"
	fi
	return "$rc"
}

# check_here NAME CMD...: as check, but runs CMD in this shell, so the variables it
# sets and the clean-ups it defers survive (its output is not captured).
check_here() {
	local name=$1 rc=0
	shift
	"$@" || rc=$?
	if ((rc == 0)); then
		_xg_pass "$name"
	else
		_xg_fail "$name" "$(printf 'command: %s\nexit %s' "$*" "$rc")"
	fi
	return "$rc"
}

assert_eq() {
	if [[ $2 == "$3" ]]; then
		_xg_pass "$1"
	else
		_xg_fail "$1" "$(printf 'expected: %s\n     got: %s' "$2" "$3")"
		return 1
	fi
}

assert_json() {
	if xg_json_holds "$3" "$2"; then
		_xg_pass "$1"
	else
		_xg_fail "$1" "$(printf 'filter: %s\n  json: %s' "$3" "$(head -c 2000 <<<"$2")")"
		return 1
	fi
}

rpc() { xg_rpc "$@"; }

rpc_error() {
	local url=$1 method=$2 params=${3:-'{}'} body reply
	body=$(jq -cn --arg m "$method" --argjson p "$params" \
		'{jsonrpc: "2.0", id: "0", method: $m, params: $p}') || return 2
	reply=$(curl -sS --max-time "${XG_RPC_TIMEOUT:-60}" -H 'Content-Type: application/json' \
		--data-binary "$body" "$url/json_rpc") || return 2
	xg_json_holds 'type == "object" and has("error")' "$reply" || return 1
	jq -c '.error' <<<"$reply"
}

wait_until() { xg_wait_until "$@"; }

nodes_agree() {
	local min=${1:-0} url info tip first='' urls
	IFS=, read -ra urls <<<"$NODE_URLS"
	for url in "${urls[@]}"; do
		info=$(XG_RPC_TIMEOUT=5 xg_rpc "$url" get_info 2>/dev/null) || return 1
		tip=$(jq -er --argjson min "$min" 'select(.height >= $min) |
			"\(.height) \(.top_block_hash)"' <<<"$info") || return 1
		[[ -z $first || $tip == "$first" ]] || return 1
		first=$tip
	done
}

mine() {
	local n=$1 addr=${2:-$MINER_ADDRESS} top
	top=$(XG_RPC_TIMEOUT=$((60 + n)) xg_rpc "$NODE_A_URL" generateblocks \
		"$(jq -cn --argjson n "$n" --arg a "$addr" '{amount_of_blocks: $n, wallet_address: $a}')" |
		jq -er '.height') || return 1
	xg_wait_until 90 nodes_agree $((top + 1)) || {
		echo "# mined to $top, but the nodes did not agree within 90 s" >&2
		return 1
	}
	echo "$top"
}

psql_q() {
	psql -X -q -At -v ON_ERROR_STOP=1 "$DATABASE_URL" -c "$1"
}

defer() { _XG_DEFERRED+=("$(printf '%q ' "$@")"); }

_xg_on_exit() {
	local rc=$? i
	for ((i = ${#_XG_DEFERRED[@]} - 1; i >= 0; i--)); do
		eval "${_XG_DEFERRED[i]}" || true
	done
	if ((_XG_OK + _XG_NOT_OK == 0)); then
		echo "not ok - ${0##*/} made no assertion"
		exit 1
	fi
	echo "# ${0##*/}: $_XG_OK ok, $_XG_NOT_OK not ok"
	((_XG_NOT_OK == 0 && rc == 0)) || exit 1
}
trap _xg_on_exit EXIT

# --- xmrgate daemons ---------------------------------------------------------------
#
# These set variables or register deferred clean-ups: call them through check_here,
# never through check (which runs its command in a subshell).
#
#   grant_tenant TIER DAYS          creates a tenant through billing; sets HANDLE, TOKEN
#   start_gateway NAME PORT ADMIN_PORT [VAR=VALUE...]
#                                   runs another gateway on the stack's configuration
#                                   with the given XMRGATE_* overrides; stopped at exit;
#                                   returns once its /readyz answers 200 (1 if never). It
#                                   and the ASan gateway below give each tenant its whole
#                                   burst (XMRGATE_LIMITS_SHARE_BURST=false) unless told
#                                   otherwise: they run beside the stack's gateway
#   asan_gateway_built              builds the ASan+UBSan gateway when it is missing;
#                                   fails when it is not there after that
#   asan_gateway_start NAME ADMIN_PORT [VAR=VALUE...]
#                                   runs the ASan+UBSan gateway on the stack's
#                                   configuration with the given XMRGATE_* overrides
#                                   (ADMIN_PORT is its XMRGATE_ADMIN_PORT); sets ASAN_PID
#                                   and ASAN_LOG; stopped at exit; returns once its
#                                   /readyz answers 200
#   asan_gateway_stop [WHAT]        SIGTERM, then checks (named after WHAT) a clean exit
#                                   and nothing from the sanitizers in ASAN_LOG
#   gw_url PORT                     http://127.0.0.1:PORT
#   raw PORT REQUEST                sends REQUEST (printf %b escapes) on a new connection
#                                   to 127.0.0.1:PORT and prints all that comes back
#                                   until the other side closes; fails when it is not
#                                   closed within 8 s (or when it was reset: what came
#                                   before the reset is printed all the same). It reads
#                                   while it sends: a server that answers before the
#                                   request is all sent, and closes, cannot make it lose
#                                   the answer

grant_tenant() {
	local out
	HANDLE='' TOKEN=''
	out=$("$XG_REPO/bin/xmrgate-billing" --config "$XG_VAR/etc/billing.ini" grant \
		--tier "$1" --days "$2" 2>/dev/null) || return 1
	HANDLE=$(sed -n 's/^HANDLE=//p' <<<"$out")
	TOKEN=$(sed -n 's/^TOKEN=//p' <<<"$out")
	[[ -n $HANDLE && -n $TOKEN ]]
}

gw_url() { echo "http://127.0.0.1:$1"; }

XG_ASAN_GATEWAY=$XG_REPO/build/asan/bin/xmrgate-gateway

# Builds (or brings up to date: a binary left from older sources would test those) the
# ASan+UBSan gateway.
asan_gateway_built() {
	make -C "$XG_REPO" SANITIZE=1 all >/dev/null 2>&1 && test -x "$XG_ASAN_GATEWAY"
}

asan_gateway_start() {
	local name=$1 admin=$2
	shift 2
	ASAN_LOG=$XG_VAR/log/gateway-$name-asan.log
	: >"$ASAN_LOG"
	env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1:suppressions=$XG_REPO/tests/ubsan.supp \
		XMRGATE_ADMIN_PORT="$admin" XMRGATE_LIMITS_SHARE_BURST=false "$@" \
		"$XG_ASAN_GATEWAY" --config "$XG_VAR/etc/gateway.ini" >>"$ASAN_LOG" 2>&1 &
	ASAN_PID=$!
	defer stop_pid "$ASAN_PID"
	xg_wait_until 60 curl -sf -o /dev/null "http://127.0.0.1:$admin/readyz"
}

asan_gateway_stop() {
	local what=${1:+$1: }
	kill -TERM "$ASAN_PID"
	wait "$ASAN_PID"
	check "${what}the ASan gateway exits cleanly on SIGTERM" test $? -eq 0
	check "${what}no AddressSanitizer or LeakSanitizer report" bash -c "! grep -q 'Sanitizer' '$ASAN_LOG'"
	check "${what}no UBSan report" bash -c "! grep -q 'runtime error' '$ASAN_LOG'"
	grep -E 'Sanitizer|runtime error' -A12 "$ASAN_LOG" | head -40 | sed 's/^/# /' || true
}

raw() {
	local fd rc writer
	exec {fd}<>"/dev/tcp/127.0.0.1/$1" || return 1
	# bash writes line by line: the server may refuse the first line and close before the
	# rest is out. The writer is a child that ignores SIGPIPE (a write into a closed
	# connection would kill this shell before it read the answer); its errors are moot.
	(
		trap '' PIPE
		printf '%b' "$2" >&"$fd"
	) >/dev/null 2>&1 &
	writer=$!
	timeout 8 cat <&"$fd"
	rc=$?
	kill "$writer" 2>/dev/null
	wait "$writer" 2>/dev/null
	exec {fd}>&-
	return $rc
}

# stop_pid PID: SIGTERM, then wait (up to 15 s) for the process to exit.
stop_pid() {
	kill "$1" 2>/dev/null || return 0
	local i
	for ((i = 0; i < 150; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null || true
}

start_gateway() {
	local name=$1 port=$2 admin=$3 pid
	shift 3
	env XMRGATE_SERVER_PORT="$port" XMRGATE_ADMIN_PORT="$admin" XMRGATE_LIMITS_SHARE_BURST=false "$@" \
		"$XG_REPO/bin/xmrgate-gateway" --config "$XG_VAR/etc/gateway.ini" \
		>>"$XG_VAR/log/gateway-$name.log" 2>&1 &
	pid=$!
	defer stop_pid "$pid"
	xg_wait_until 20 curl -sf "http://127.0.0.1:$admin/readyz" -o /dev/null
}
