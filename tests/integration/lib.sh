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
#   payer_pays ADDRESS PICONERO        the payer wallet pays (relayed); prints the txid
#   defer CMD...                       runs CMD when the test script exits
#
# Further down: whether a transaction is in a pool (in_pool_*), versions, tenants and
# scratch databases, and the one way to start a gateway or a billing of a test's own
# (gateway_start, billing_start). The topic libraries (billing_lib.sh, lib_limits.sh,
# nodes_lib.sh, ops_lib.sh, xmr402_lib.sh) build on these.
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

payer_pays() {
	rpc "$PAYER_WALLET_URL" transfer "$(jq -cn --arg a "$1" --argjson n "$2" \
		'{destinations: [{address: $a, amount: $n}], account_index: 0, priority: 0}')" |
		jq -er '.tx_hash'
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

# --- pools: is a transaction in one? ---------------------------------------------------------
#
# One question, asked four ways; each helper's name says which. TXID is the transaction's
# hash. URL is a node (NODE_A_URL) or a gateway with a tenant's path token
# ($GATEWAY_URL/v1/$TOKEN): the same monerod endpoint either way.
#
#   in_pool_hashes URL TXID      URL's /get_transaction_pool_hashes lists TXID
#   not_in_pool_hashes URL TXID  it answered, and does not list TXID
#   in_pool_listing URL TXID     URL's /get_transaction_pool (the full listing, with the
#                                transactions) holds TXID
#   in_pool_lookup URL TXID      URL's /get_transactions for TXID says in_pool
#   in_chain_lookup URL TXID     … says it is known and not in the pool: in a block
#   in_wallet_pool [--refresh] WALLET TXID
#                                the wallet-rpc at WALLET lists TXID in its pool view
#                                (get_transfers pool), after a refresh with --refresh
#   not_in_wallet_pool WALLET TXID   it answered, and does not list TXID

_pool_hashes() { curl -sf --max-time 10 -d '{}' "$1/get_transaction_pool_hashes"; }

in_pool_hashes() {
	_pool_hashes "$1" | jq -e --arg t "$2" '(.tx_hashes // []) | index($t) != null' >/dev/null
}

not_in_pool_hashes() {
	_pool_hashes "$1" | jq -e --arg t "$2" '.status == "OK" and ((.tx_hashes // []) | index($t) == null)' >/dev/null
}

in_pool_listing() {
	curl -sf --max-time 10 -d '{}' "$1/get_transaction_pool" |
		jq -e --arg t "$2" '[.transactions[]?.id_hash] | index($t) != null' >/dev/null
}

in_pool_lookup() {
	curl -sf --max-time 10 -d "{\"txs_hashes\":[\"$2\"]}" "$1/get_transactions" |
		jq -e --arg t "$2" '.status == "OK" and any(.txs[]?; .tx_hash == $t and .in_pool)' >/dev/null
}

in_chain_lookup() {
	curl -sf --max-time 10 -d "{\"txs_hashes\":[\"$2\"]}" "$1/get_transactions" |
		jq -e --arg t "$2" 'any(.txs[]?; .tx_hash == $t and .in_pool == false)' >/dev/null
}

_wallet_pool() { xg_rpc "$1" get_transfers '{"pool":true}'; }

in_wallet_pool() {
	if [[ $1 == --refresh ]]; then
		shift
		xg_rpc "$1" refresh '{}' >/dev/null || return 1
	fi
	_wallet_pool "$1" | jq -e --arg t "$2" '[.pool[]?.txid] | index($t) != null' >/dev/null
}

not_in_wallet_pool() {
	_wallet_pool "$1" | jq -e --arg t "$2" '[.pool[]?.txid] | index($t) == null' >/dev/null
}

# --- versions ---------------------------------------------------------------------------------
#
#   version_at_least VERSION MIN    VERSION (0.18.4.0-release, 0.18.3.4…) is MIN or newer
#   host_monero_version PROGRAM     the version of this machine's monero PROGRAM
#                                   (monero-wallet-rpc, monero-wallet-cli), such as 0.18.0.0

version_at_least() { [[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1) == "$2" ]]; }

host_monero_version() { "$1" --version | sed -n 's/.*(v\([0-9.]*\).*/\1/p'; }

# --- tenants, databases, sockets --------------------------------------------------------------
#
# These set variables or register deferred clean-ups: call them through check_here,
# never through check (which runs its command in a subshell).
#
#   grant_tenant [--bare] TIER DAYS  creates a tenant through billing; sets HANDLE, TOKEN
#                                    and LOGIN (HANDLE:TOKEN, for Digest). Its Digest key
#                                    is wrapped with the stack's HA1 key (the stack's
#                                    gateway and gateways on the `stack` base know it), or
#                                    with --bare with XG_TEST_HA1_KEY (the `bare` base)
#   scratch_db NAME [NODE=URL...]    a database NAME beside the stack's, migrated, whose
#                                    nodes table holds those nodes; dropped at exit. Sets
#                                    SCRATCH_DB_URL
#   raw PORT REQUEST                 sends REQUEST (printf %b escapes) on a new connection
#                                    to 127.0.0.1:PORT and prints all that comes back
#                                    until the other side closes; fails when it is not
#                                    closed within 8 s (or when it was reset: what came
#                                    before the reset is printed all the same). It reads
#                                    while it sends: a server that answers before the
#                                    request is all sent, and closes, cannot make it lose
#                                    the answer
#   stop_pid PID                     SIGTERM, then waits (up to 15 s) for the process to
#                                    exit; SIGKILL after that

# The HA1 wrapping key and the admin token of gateways on the `bare` base (and of the
# tenants granted for them).
XG_TEST_HA1_KEY=$(printf '%064d' 0)
XG_TEST_ADMIN_TOKEN=test-admin-token

grant_tenant() {
	local out
	HANDLE='' TOKEN='' LOGIN=''
	if [[ $1 == --bare ]]; then
		shift
		out=$(XMRGATE_DATABASE_URL=$DATABASE_URL XMRGATE_GATEWAY_HA1_KEY=$XG_TEST_HA1_KEY \
			"$XG_REPO/bin/xmrgate-billing" grant --tier "$1" --days "$2" 2>/dev/null) || return 1
	else
		out=$("$XG_REPO/bin/xmrgate-billing" --config "$XG_VAR/etc/billing.ini" grant \
			--tier "$1" --days "$2" 2>/dev/null) || return 1
	fi
	HANDLE=$(sed -n 's/^HANDLE=//p' <<<"$out")
	TOKEN=$(sed -n 's/^TOKEN=//p' <<<"$out")
	# shellcheck disable=SC2034 # read by the test scripts
	LOGIN=$HANDLE:$TOKEN
	[[ -n $HANDLE && -n $TOKEN ]]
}

scratch_db() {
	local name=$1 base=${DATABASE_URL%/*} node sql=''
	shift
	SCRATCH_DB_URL=$base/$name
	psql -X -q "$base/postgres" -c "DROP DATABASE IF EXISTS $name" -c "CREATE DATABASE $name" ||
		return 1
	defer psql -X -q "$base/postgres" -c "DROP DATABASE IF EXISTS $name WITH (FORCE)"
	XMRGATE_DATABASE_URL=$SCRATCH_DB_URL "$XG_REPO/bin/xmrgate-billing" \
		--config "$XG_VAR/etc/billing.ini" migrate >/dev/null 2>&1 || return 1
	for node in "$@"; do
		sql+="INSERT INTO nodes (name, url) VALUES ('${node%%=*}', '${node#*=}');"
	done
	[[ -z $sql ]] || psql -X -q -v ON_ERROR_STOP=1 "$SCRATCH_DB_URL" -c "$sql" >/dev/null
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

stop_pid() {
	kill "$1" 2>/dev/null || return 0
	local i
	for ((i = 0; i < 150; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null || true
}

# --- wallet-rpcs ------------------------------------------------------------------------------
#
#   wallet_rpc_start [--trixie] [--trusted] [--log-level N] NAME PORT DAEMON [LOGIN]
#       a monero-wallet-rpc on 127.0.0.1:PORT whose daemon is DAEMON (host:port), logging
#       in with LOGIN (--daemon-login HANDLE:TOKEN) when given: this machine's, or with
#       --trixie 0.18.4 from the Debian 13 root (scripts/monero-trixie.sh; with
#       --allow-mismatched-daemon-version, without which it refuses a regtest daemon's hard
#       forks). --trusted: --trusted-daemon. Its wallets, log (level N, default 1) and
#       output are in $XG_VAR/wallet-rpc/NAME, removed at exit. Returns once it answers
#       get_version (60 s); stopped at exit. Sets WALLET_URL and WALLET_PID. Call it through
#       check_here.
#   wallet_rpc_version NAME   the version it printed when it started (0.18.4.0…)

wallet_rpc_start() {
	local run=() extra=() level=1 name port daemon login dir
	while (($#)); do
		case $1 in
		--trixie) run=("$XG_REPO/scripts/monero-trixie.sh" exec "$XG_VAR") && shift ;;
		--trusted) extra+=(--trusted-daemon) && shift ;;
		--log-level) level=$2 && shift 2 ;;
		*) break ;;
		esac
	done
	name=$1 port=$2 daemon=$3 login=${4:-}
	# Under XG_VAR: a 0.18.4 wallet-rpc sees the directory its root binds.
	dir=$XG_VAR/wallet-rpc/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	defer rm -rf "$dir"
	# The default ring database of a 0.18.4 wallet-rpc would be in the root.
	((${#run[@]} == 0)) || extra+=(--allow-mismatched-daemon-version --shared-ringdb-dir "$dir/ringdb")
	"${run[@]}" monero-wallet-rpc --daemon-address "$daemon" ${login:+--daemon-login "$login"} \
		--rpc-bind-ip 127.0.0.1 --rpc-bind-port "$port" --disable-rpc-login \
		--wallet-dir "$dir" --log-file "$dir/wallet-rpc.log" --log-level "$level" \
		--non-interactive "${extra[@]}" >"$dir/wallet-rpc.out" 2>&1 </dev/null &
	WALLET_PID=$!
	WALLET_URL=http://127.0.0.1:$port
	defer stop_pid "$WALLET_PID"
	xg_wait_until 60 _wallet_rpc_answers "$WALLET_PID" "$WALLET_URL"
}

# PID URL: the wallet-rpc started there answers (it is ours, not a process left on the port).
_wallet_rpc_answers() {
	kill -0 "$1" 2>/dev/null &&
		curl -sf --max-time 5 -o /dev/null "$2/json_rpc" -d '{"jsonrpc":"2.0","id":"0","method":"get_version"}'
}

wallet_rpc_version() {
	sed -n "s/^Monero '.*' (v\([0-9.]*\).*/\1/p" "$XG_VAR/wallet-rpc/$1/wallet-rpc.out" | head -n 1
}

# --- the daemons a test starts itself ---------------------------------------------------------
#
# One way to run a gateway or a billing of a test's own. Call these through check_here or
# directly, never through check (a subshell: what they record, and the stop at exit, would
# be lost).
#
#   gateway_start NAME [OPTION...] [SECTION.KEY=VALUE...] [VAR=VALUE...]
#   billing_start NAME [OPTION...] [SECTION.KEY=VALUE...] [VAR=VALUE...]
#       Writes NAME's configuration file from a base and the overrides (as *_config
#       below), starts the daemon on it (billing migrates first) with its output in
#       $XG_VAR/log/KIND-NAME.log, waits until it is ready (60 s; the tail of its log as
#       diagnostics when not) and stops it when the test ends. VAR=VALUE goes into its
#       environment, which holds no other XMRGATE_* variable: the file says what it runs
#       with. Options:
#         --base BASE   the base (below)
#         --asan        the ASan+UBSan build (asan_built makes it); without it
#                       $XG_GATEWAY_BIN / $XG_BILLING_BIN, or bin/
#         --nofile N    its file descriptor limit
#         --wait WHAT   ready (the default: a gateway's /readyz answers 200; billing's
#                       /healthz and its API's /api/tiers do), alive (/healthz answers
#                       200), or none
#       Sets GW_URL, GW_ADMIN, GW_PID, GW_LOG, GW_CONF (a gateway) or BL_URL, BL_ADMIN,
#       BL_PID, BL_LOG, BL_CONF (a billing) to this one's. GW_URL is https:// when it has
#       [server] tls_cert.
#   gateway_config NAME [--base BASE] [SECTION.KEY=VALUE...]
#   billing_config NAME [--base BASE] [SECTION.KEY=VALUE...]
#       (Re)writes NAME's file ($XG_VAR/etc/tests/KIND-NAME.ini) only: the base, with each
#       SECTION.KEY=VALUE (the keys of README.md's configuration reference) replacing the
#       base's value or added to SECTION, a later one winning; [server] port and [admin]
#       port are NAME's own pair (below) unless given (both given: NAME takes no pair, for
#       a drill that runs more daemons than the range holds). A reload test rewrites the file of
#       a running daemon this way, then sends it SIGHUP.
#       Bases (the function KIND_base_BASE prints it): for a gateway `stack` (the default:
#       the stack's own gateway.ini, with its nodes' ZMQ, XMR402 through the stack's
#       billing and the keys its tenants are made with) or `bare` (the database,
#       XG_TEST_HA1_KEY, XG_TEST_ADMIN_TOKEN, log level info; nodes_lib.sh adds `nodes`);
#       for a billing `stack` (the stack's billing.ini) or billing_lib.sh's `test` (the
#       default).
#   gateway_exit NAME [--base BASE] [SECTION.KEY=VALUE...] / billing_exit NAME [...]
#       writes NAME's file, runs the daemon on it in the foreground until it exits (20 s at
#       the most: then 124, as timeout(1)), prints what it wrote, returns its exit status:
#       for a configuration it must refuse.
#   gateway_restart NAME [--wait WHAT] / billing_restart NAME [--wait WHAT]
#       stops NAME if it runs, and starts it again on the same file, environment, binary
#       and ports (its log goes on).
#   gateway_stop NAME [SIGNAL] / billing_stop NAME [SIGNAL]
#       sends SIGNAL (TERM) and waits for the exit (30 s, then SIGKILL); sets EXIT_STATUS
#       to its exit status (0 when it was not running); returns 1 when it had to be killed.
#   asan_gateway_built        builds (or brings up to date) the ASan+UBSan gateway
#   asan_gateway_stop NAME [WHAT]
#       gateway_stop, then checks (named after WHAT) a clean exit and nothing from the
#       sanitizers in its log
#   gw_url, gw_admin, gw_port, gw_pid, gw_log NAME            the named gateway's
#   billing_url, billing_admin, billing_port, billing_pid, billing_log NAME   a billing's
#   gw_ready [NAME]           the gateway (the last one started) answers 200 on /readyz
#   gw_logged EVENT [NAME]    the gateway's log (the last one started) has an EVENT line
#
#   stack_billing_restart [--kill] [SECTION.KEY=VALUE...]
#       the stack's own billing, stopped (SIGTERM; SIGKILL with --kill) and started again
#       with its own command line and environment, and those keys given as XMRGATE_*
#       variables (its file is the stack's); none: as the stack runs it. Returns once its
#       /healthz answers.
#   stack_billing_pause
#       stops the stack's billing for the test (billing instances share one leader lock);
#       it is started again, as the stack runs it, when the test ends.
#
# Ports, relative to XG_PORT_BASE: a gateway's pair from +60..+69, a billing's from
# +80..+89, handed out in the order the names are first configured and kept for the
# test. +70..+79 and +90..+99 are for the tests' other servers (stand-in nodes, proxies,
# receivers, wallets).

XG_TEST_ETC=$XG_VAR/etc/tests
declare -A _XG_PORT=() _XG_ADMIN=() _XG_PID=() _XG_ENV=() _XG_BIN=() _XG_NOFILE=()
declare -A _XG_NEXT_PORT=([gateway]=60 [billing]=80) _XG_LAST_PORT=([gateway]=69 [billing]=89)

# xg_ini_set SECTION.KEY=VALUE... < INI: prints INI with each key set in its section (the
# line replaced where the key is, added at the end of its section otherwise, the section
# added at the end when missing); for a key given twice the last value counts.
xg_ini_set() {
	awk '
	BEGIN {
		for (i = 1; i < ARGC; i++) {
			eq = index(ARGV[i], "="); dot = index(ARGV[i], ".")
			s = substr(ARGV[i], 1, dot - 1); k = substr(ARGV[i], dot + 1, eq - dot - 1)
			if (!((s, k) in at)) { n++; sec[n] = s; key[n] = k; at[s, k] = n }
			val[at[s, k]] = substr(ARGV[i], eq + 1)
		}
		ARGC = 1
	}
	function rest(s,   j) {
		for (j = 1; j <= n; j++)
			if (sec[j] == s && !done[j]) { print key[j] " = " val[j]; done[j] = 1 }
	}
	/^[ \t]*\[[^]]*\]/ {
		rest(cur)
		cur = $0; sub(/^[ \t]*\[/, "", cur); sub(/\].*/, "", cur)
		print; next
	}
	/^[ \t]*[A-Za-z0-9_]+[ \t]*=/ {
		k = $0; sub(/^[ \t]*/, "", k); sub(/[ \t]*=.*/, "", k)
		if ((cur, k) in at) { j = at[cur, k]; print k " = " val[j]; done[j] = 1; next }
	}
	{ print }
	END {
		rest(cur)
		for (j = 1; j <= n; j++)
			if (!done[j]) {
				print "[" sec[j] "]"
				rest(sec[j])
			}
	}' "$@"
}

# xg_ini_get FILE SECTION KEY: the key's value (empty when it is not there).
xg_ini_get() {
	awk -v s="$2" -v k="$3" '
		/^[ \t]*\[/ { cur = $0; sub(/^[ \t]*\[/, "", cur); sub(/\].*/, "", cur); next }
		cur == s {
			line = $0; sub(/^[ \t]*/, "", line)
			if (index(line, k) == 1 && line ~ ("^" k "[ \t]*=")) {
				sub(/^[^=]*=[ \t]*/, "", line); v = line
			}
		}
		END { print v }' "$1"
}

gateway_base_stack() { cat "$XG_VAR/etc/gateway.ini"; }

gateway_base_bare() {
	cat <<EOF
[database]
url = $DATABASE_URL
[auth]
ha1_key = $XG_TEST_HA1_KEY
[admin]
token = $XG_TEST_ADMIN_TOKEN
[log]
level = info
EOF
}

billing_base_stack() { cat "$XG_VAR/etc/billing.ini"; }

_xg_conf() { echo "$XG_TEST_ETC/$1-$2.ini"; }

# _xg_config KIND NAME [--base BASE] [SECTION.KEY=VALUE...]
_xg_config() {
	local kind=$1 name=$2 id=$1/$2 base=stack conf arg tmp
	shift 2
	[[ $kind == billing ]] && base='test'
	if [[ ${1:-} == --base ]]; then
		base=$2
		shift 2
	fi
	declare -F "${kind}_base_$base" >/dev/null || {
		echo "# no $kind base \"$base\" (${kind}_base_$base)" >&2
		return 1
	}
	for arg in "$@"; do
		[[ $arg =~ ^[a-z0-9]+\.[a-z0-9_]+= ]] || {
			echo "# $kind $name: \"$arg\" is not SECTION.KEY=VALUE" >&2
			return 1
		}
	done
	local given=0
	for arg in "$@"; do [[ $arg != server.port=* && $arg != admin.port=* ]] || given=$((given + 1)); done
	if [[ -z ${_XG_PORT[$id]:-} ]] && ((given < 2)); then
		local p=${_XG_NEXT_PORT[$kind]}
		((p + 1 <= ${_XG_LAST_PORT[$kind]})) || {
			echo "# $kind $name: no ports left in +${_XG_NEXT_PORT[$kind]}..+${_XG_LAST_PORT[$kind]}" >&2
			return 1
		}
		_XG_NEXT_PORT[$kind]=$((p + 2))
		_XG_PORT[$id]=$((XG_PORT_BASE + p))
		_XG_ADMIN[$id]=$((XG_PORT_BASE + p + 1))
	fi
	conf=$(_xg_conf "$kind" "$name")
	tmp=$conf.tmp
	mkdir -p "$XG_TEST_ETC"
	chmod 700 "$XG_TEST_ETC"
	# A test's gateway runs beside the stack's and gives each tenant its whole burst (the
	# fleet drill measures the share): limits.share_burst=false unless the test says otherwise.
	local defaults=()
	[[ $kind == gateway ]] && defaults=(limits.share_burst=false)
	local pair=()
	[[ -z ${_XG_PORT[$id]:-} ]] || pair=("server.port=${_XG_PORT[$id]}" "admin.port=${_XG_ADMIN[$id]}")
	(umask 077 && "${kind}_base_$base" | xg_ini_set "${pair[@]}" "${defaults[@]}" "$@" >"$tmp") ||
		return 1
	mv "$tmp" "$conf"
	# An override may have named other ports: the file says which.
	_XG_PORT[$id]=$(xg_ini_get "$conf" server port)
	_XG_ADMIN[$id]=$(xg_ini_get "$conf" admin port)
}

_xg_log() { echo "$XG_VAR/log/$1-$2.log"; }
_xg_url() {
	local scheme=http conf host
	conf=$(_xg_conf "$1" "$2")
	[[ $1 == gateway && -n $(xg_ini_get "$conf" server tls_cert) ]] && scheme=https
	# a daemon bound to one address (server.bind) is reached there, an IPv6 one in brackets
	host=$(xg_ini_get "$conf" server bind)
	[[ -z $host || $host == 0.0.0.0 ]] && host=127.0.0.1
	[[ $host != :: ]] || host=::1 # an IPv6 listener takes IPv6 alone
	[[ $host != *:* ]] || host="[$host]"
	echo "$scheme://$host:${_XG_PORT[$1/$2]}"
}
_xg_admin_url() { echo "http://127.0.0.1:${_XG_ADMIN[$1/$2]}"; }

_xg_alive() {
	local stat
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != Z ]]
}

# _xg_ready KIND NAME WHAT
_xg_ready() {
	local admin
	admin=$(_xg_admin_url "$1" "$2")
	case $3 in
	alive) curl -sf --max-time 2 -o /dev/null "$admin/healthz" ;;
	ready)
		if [[ $1 == gateway ]]; then
			curl -sf --max-time 2 -o /dev/null "$admin/readyz"
		else
			curl -sf --max-time 2 -o /dev/null "$admin/healthz" &&
				curl -sf --max-time 2 -o /dev/null "$(_xg_url "$1" "$2")/api/tiers"
		fi
		;;
	esac
}

# _xg_spawn KIND NAME WAIT: starts NAME as recorded; waits as asked.
_xg_spawn() {
	local kind=$1 name=$2 id=$1/$2 wait=$3 conf log bin nofile i
	local envs=() unset=()
	conf=$(_xg_conf "$kind" "$name")
	log=$(_xg_log "$kind" "$name")
	bin=${_XG_BIN[$id]} nofile=${_XG_NOFILE[$id]}
	eval "envs=(${_XG_ENV[$id]})"
	mapfile -t unset < <(_xg_unset_env)
	mkdir -p "$XG_VAR/log"
	if [[ $kind == billing ]]; then
		env "${unset[@]}" "${envs[@]}" "$bin" --config "$conf" migrate >>"$log" 2>&1 || {
			echo "# billing $name: the migration failed; its log:" >&2
			tail -n 20 "$log" | sed 's/^/#   /' >&2
			return 1
		}
	fi
	(
		[[ -z $nofile ]] || ulimit -n "$nofile" || exit 1
		exec env "${unset[@]}" "${envs[@]}" "$bin" --config "$conf"
	) >>"$log" 2>&1 </dev/null &
	_XG_PID[$id]=$!
	[[ $wait == none ]] && return 0
	for ((i = 0; i < 240; i++)); do
		_xg_ready "$kind" "$name" "$wait" && return 0
		_xg_alive "${_XG_PID[$id]}" || break
		sleep 0.25
	done
	if _xg_alive "${_XG_PID[$id]}"; then
		echo "# $kind $name is not $wait within 60 s; its log:" >&2
	else
		echo "# $kind $name exited; its log:" >&2
	fi
	tail -n 20 "$log" | sed 's/^/#   /' >&2
	return 1
}

# shellcheck disable=SC2034 # the test scripts read these
_xg_publish() { # KIND NAME: the variables of the one just started
	local url admin
	url=$(_xg_url "$1" "$2") admin=$(_xg_admin_url "$1" "$2")
	if [[ $1 == gateway ]]; then
		GW_URL=$url GW_ADMIN=$admin GW_PID=${_XG_PID[$1/$2]}
		GW_LOG=$(_xg_log "$1" "$2") GW_CONF=$(_xg_conf "$1" "$2")
	else
		BL_URL=$url BL_ADMIN=$admin BL_PID=${_XG_PID[$1/$2]}
		BL_LOG=$(_xg_log "$1" "$2") BL_CONF=$(_xg_conf "$1" "$2")
	fi
}

# _xg_start KIND NAME [OPTION...] [SECTION.KEY=VALUE...] [VAR=VALUE...]
_xg_start() {
	local kind=$1 name=$2 id=$1/$2 wait=ready bin='' nofile='' base_opt=() keys=() envs=() arg
	shift 2
	while (($#)); do
		case $1 in
		--base) base_opt=(--base "$2") && shift 2 ;;
		--asan) bin=$XG_REPO/build/asan/bin/xmrgate-$kind && shift ;;
		--nofile) nofile=$2 && shift 2 ;;
		--wait) wait=$2 && shift 2 ;;
		*) break ;;
		esac
	done
	if [[ -n $bin ]]; then
		envs=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
			"UBSAN_OPTIONS=print_stacktrace=1:suppressions=$XG_REPO/tests/ubsan.supp")
	else
		bin=$(_xg_bin "$kind")
	fi
	for arg in "$@"; do
		if [[ $arg =~ ^[A-Z_][A-Z0-9_]*= ]]; then
			envs+=("$arg")
		else
			keys+=("$arg")
		fi
	done
	[[ -z ${_XG_PID[$id]:-} ]] || _xg_stop "$kind" "$name"
	_xg_config "$kind" "$name" "${base_opt[@]}" "${keys[@]}" || return 1
	if [[ -z ${_XG_BIN[$id]+set} ]]; then # the first start in this test
		: >"$(_xg_log "$kind" "$name")"
		defer _xg_stop "$kind" "$name"
	fi
	_XG_BIN[$id]=$bin _XG_NOFILE[$id]=$nofile
	_XG_ENV[$id]=''
	((${#envs[@]} == 0)) || _XG_ENV[$id]=$(printf '%q ' "${envs[@]}")
	_xg_spawn "$kind" "$name" "$wait"
	local rc=$?
	_xg_publish "$kind" "$name"
	return $rc
}

_xg_bin() { # KIND: the binary, unless --asan
	if [[ $1 == gateway ]]; then
		echo "${XG_GATEWAY_BIN:-$XG_REPO/bin/xmrgate-gateway}"
	else
		echo "${XG_BILLING_BIN:-$XG_REPO/bin/xmrgate-billing}"
	fi
}

_xg_unset_env() { # prints -u NAME for every exported XMRGATE_* variable
	local v
	for v in $(compgen -e); do [[ $v != XMRGATE_* ]] || printf -- '-u\n%s\n' "$v"; done
}

_xg_exit() { # KIND NAME [--base BASE] [SECTION.KEY=VALUE...]
	local kind=$1 name=$2 unset=()
	_xg_config "$@" || return 125
	mapfile -t unset < <(_xg_unset_env)
	timeout 20 env "${unset[@]}" "$(_xg_bin "$kind")" --config "$(_xg_conf "$kind" "$name")" 2>&1
}

_xg_restart() { # KIND NAME [--wait WHAT]
	local wait=ready rc
	[[ ${3:-} == --wait ]] && wait=$4
	[[ -n ${_XG_BIN[$1/$2]+set} ]] || {
		echo "# $1 $2 was never started" >&2
		return 1
	}
	_xg_stop "$1" "$2"
	_xg_spawn "$1" "$2" "$wait"
	rc=$?
	_xg_publish "$1" "$2"
	return $rc
}

_xg_stop() { # KIND NAME [SIGNAL]
	local id=$1/$2 pid i rc=0
	EXIT_STATUS=0
	pid=${_XG_PID[$id]:-}
	[[ -n $pid ]] || return 0
	_XG_PID[$id]=''
	kill "-${3:-TERM}" "$pid" 2>/dev/null
	for ((i = 0; i < 300; i++)); do
		_xg_alive "$pid" || break
		sleep 0.1
	done
	if _xg_alive "$pid"; then
		echo "# $1 $2 did not exit within 30 s: SIGKILL" >&2
		kill -9 "$pid" 2>/dev/null
		rc=1
	fi
	wait "$pid" 2>/dev/null || EXIT_STATUS=$?
	return $rc
}

gateway_start() { _xg_start gateway "$@"; }
gateway_config() { _xg_config gateway "$@"; }
gateway_exit() { _xg_exit gateway "$@"; }
gateway_restart() { _xg_restart gateway "$@"; }
gateway_stop() { _xg_stop gateway "$@"; }
billing_start() { _xg_start billing "$@"; }
billing_config() { _xg_config billing "$@"; }
billing_exit() { _xg_exit billing "$@"; }
billing_restart() { _xg_restart billing "$@"; }
billing_stop() { _xg_stop billing "$@"; }

gw_url() { _xg_url gateway "$1"; }
gw_admin() { _xg_admin_url gateway "$1"; }
gw_port() { echo "${_XG_PORT[gateway/$1]}"; }
gw_pid() { echo "${_XG_PID[gateway/$1]}"; }
gw_log() { _xg_log gateway "$1"; }
billing_url() { _xg_url billing "$1"; }
billing_admin() { _xg_admin_url billing "$1"; }
billing_port() { echo "${_XG_PORT[billing/$1]}"; }
billing_pid() { echo "${_XG_PID[billing/$1]}"; }
billing_log() { _xg_log billing "$1"; }

gw_ready() {
	local admin=$GW_ADMIN
	[[ -z ${1:-} ]] || admin=$(gw_admin "$1")
	curl -sf --max-time 2 -o /dev/null "$admin/readyz"
}

gw_logged() {
	local log=$GW_LOG
	[[ -z ${2:-} ]] || log=$(gw_log "$2")
	grep -q "\"event\":\"$1\"" "$log"
}

# Builds (or brings up to date: a binary left from older sources would test those) the
# ASan+UBSan gateway.
asan_gateway_built() {
	make -C "$XG_REPO" SANITIZE=1 all >/dev/null 2>&1 && test -x "$XG_REPO/build/asan/bin/xmrgate-gateway"
}

asan_gateway_stop() {
	local what=${2:+$2: } log
	log=$(gw_log "$1")
	gateway_stop "$1"
	check "${what}the ASan gateway exits cleanly on SIGTERM" test "$EXIT_STATUS" -eq 0
	check "${what}no AddressSanitizer or LeakSanitizer report" bash -c "! grep -q 'Sanitizer' '$log'"
	check "${what}no UBSan report" bash -c "! grep -q 'runtime error' '$log'"
	grep -E 'Sanitizer|runtime error' -A12 "$log" | head -40 | sed 's/^/# /' || true
}

_XG_STACK_BILLING_CMD=()
_XG_STACK_BILLING_ENV=()

# The stack's billing as the stack started it, read once from /proc.
_xg_stack_billing_saved() {
	local pidfile=$XG_VAR/run/billing.pid pid
	((${#_XG_STACK_BILLING_CMD[@]})) && return 0
	xg_pid_owned "$pidfile" || return 1
	read -r pid <"$pidfile"
	mapfile -d '' -t _XG_STACK_BILLING_CMD <"/proc/$pid/cmdline"
	mapfile -d '' -t _XG_STACK_BILLING_ENV <"/proc/$pid/environ"
	((${#_XG_STACK_BILLING_CMD[@]}))
}

_xg_stack_billing_kill() { # SIGNAL
	local pidfile=$XG_VAR/run/billing.pid pid
	xg_pid_owned "$pidfile" || return 0
	read -r pid <"$pidfile"
	kill "-$1" "$pid" 2>/dev/null
	xg_wait_until 15 bash -c "! kill -0 $pid 2>/dev/null"
}

# _xg_stack_billing_spawn [SECTION.KEY=VALUE...]
_xg_stack_billing_spawn() {
	local pidfile=$XG_VAR/run/billing.pid marker arg s k envs=()
	marker=$(sed -n 2p "$pidfile" 2>/dev/null)
	[[ -n $marker ]] || marker=$XG_VAR/etc/billing.ini
	for arg in "$@"; do
		[[ $arg =~ ^([a-z0-9]+)\.([a-z0-9_]+)=(.*)$ ]] || {
			echo "# the stack's billing: \"$arg\" is not SECTION.KEY=VALUE" >&2
			return 1
		}
		s=${BASH_REMATCH[1]} k=${BASH_REMATCH[2]}
		envs+=("XMRGATE_${s^^}_${k^^}=${BASH_REMATCH[3]}")
	done
	xg_spawn "$pidfile" "$marker" "$XG_VAR/log/billing.log" \
		env -i "${_XG_STACK_BILLING_ENV[@]}" "${envs[@]}" "${_XG_STACK_BILLING_CMD[@]}"
	xg_wait_until 30 curl -sf -o /dev/null "$BILLING_ADMIN_URL/healthz"
}

stack_billing_restart() {
	local sig=TERM
	[[ ${1:-} == --kill ]] && sig=KILL && shift
	_xg_stack_billing_saved || {
		echo "# the stack does not run billing" >&2
		return 1
	}
	_xg_stack_billing_kill "$sig" || return 1
	_xg_stack_billing_spawn "$@"
}

stack_billing_pause() {
	_xg_stack_billing_saved || return 0 # the stack runs none: nothing holds the lock
	_xg_stack_billing_kill TERM || return 1
	defer _xg_stack_billing_spawn
}
