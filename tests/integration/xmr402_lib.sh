# shellcheck shell=bash
# Helpers for the XMR402 integration tests (test_xmr402*.sh), sourced after lib.sh.
# They drive the stack's gateway ($GATEWAY_URL, [xmr402] enabled) and billing.
#
#   x4_setup [TIER CONFIRMATIONS]  TIER (default "wallet") at CONFIRMATIONS (default 2) for
#                                the test (restored at exit); checks that the stack sells
#                                XMR402
#   x4_call [AUTH] [PATH] [METHOD]  POST GATEWAY_URL/PATH (default /v1/json_rpc) with a
#                                JSON-RPC METHOD (default get_info) from the loopback
#                                address X4_FROM (with X-XMR402-Mode: $X4_MODE when set and
#                                AUTH is given); sets X4_STATUS, and X4_BODY / X4_HEADERS
#   x4_from_fresh                picks a loopback source address this test run has not
#                                used yet (challenges are rate-limited per client address)
#   x4_header NAME               a header of the last answer
#   x4_param NAME                a parameter of its WWW-Authenticate: XMR402 challenge
#   x4_proof TXID ADDRESS MESSAGE  the payer's get_tx_proof signature
#   x4_auth TXID PROOF [INVOICE] the Authorization value
#   x4_until_served AUTH [PATH]  x4_call until it is not 202, mining a block after each
#                                202 (a transaction may reach the miner one block late)
#   x4_mine_while PID [MAX_S]    mines a block every 1.5 s while PID runs (a waiting agent)
# The stack's billing restarted with other settings: lib.sh's stack_billing_restart.

# shellcheck disable=SC2034 # X4_BODY and X4_HEADERS are read by the test scripts
X4_TIER=wallet
X4_CONFIRMATIONS=2
X4_FROM=127.0.0.1
X4_MODE=
_X4_NEXT_FROM=$(($$ % 200 * 10))

x4_setup() {
	local tier=${1:-$X4_TIER} confirmations=${2:-$X4_CONFIRMATIONS} before
	before=$(psql_q "SELECT confirmations FROM tiers WHERE id = '$tier'") || return 1
	[[ -n $before ]] || return 1
	defer psql_q "UPDATE tiers SET confirmations = $before WHERE id = '$tier'"
	psql_q "UPDATE tiers SET confirmations = $confirmations WHERE id = '$tier'" >/dev/null
}

x4_call() {
	local auth=${1:-} path=${2:-/v1/json_rpc} method=${3:-get_info} args
	args=(-sS --max-time 60 -D - --interface "$X4_FROM" -H 'Content-Type: application/json'
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":\"t\",\"method\":\"$method\"}")
	[[ -z $auth ]] || args+=(-H "Authorization: $auth")
	[[ -z $auth || -z $X4_MODE ]] || args+=(-H "X-XMR402-Mode: $X4_MODE")
	local out
	out=$(curl "${args[@]}" -w '\n%{http_code}' "$GATEWAY_URL$path") || return 1
	X4_STATUS=$(tail -n 1 <<<"$out")
	out=$(sed '$d' <<<"$out")
	X4_HEADERS=$(sed -n '1,/^\r\{0,1\}$/p' <<<"$out" | tr -d '\r')
	X4_BODY=$(sed '1,/^\r\{0,1\}$/d' <<<"$out")
}

x4_header() { grep -i "^$1:" <<<"$X4_HEADERS" | tail -n 1 | cut -d: -f2- | sed 's/^ *//'; }

x4_param() { x4_header WWW-Authenticate | grep -o "$1=\"[^\"]*\"" | head -n 1 | cut -d'"' -f2; }

x4_proof() {
	rpc "$PAYER_WALLET_URL" get_tx_proof "$(jq -cn --arg t "$1" --arg a "$2" --arg m "$3" \
		'{txid: $t, address: $a, message: $m}')" | jq -er '.signature'
}

x4_auth() {
	local v="XMR402 txid=\"$1\", proof=\"$2\""
	[[ -z ${3:-} ]] || v+=", invoice=\"$3\""
	echo "$v"
}

x4_mine_while() {
	local pid=$1 max=${2:-120} start=$SECONDS
	while kill -0 "$pid" 2>/dev/null && ((SECONDS - start < max)); do
		mine 1 >/dev/null || return 1
		sleep 1.5
	done
}

x4_until_served() {
	local i
	for ((i = 0; i < 6; i++)); do
		x4_call "$@" || return 1
		[[ $X4_STATUS == 202 ]] || return 0
		mine 1 >/dev/null
		sleep 1
	done
}

x4_from_fresh() {
	X4_FROM=127.0.$((_X4_NEXT_FROM / 250)).$((_X4_NEXT_FROM % 250 + 2))
	_X4_NEXT_FROM=$((_X4_NEXT_FROM + 1))
}
