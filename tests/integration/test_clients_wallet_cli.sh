#!/usr/bin/env bash
# shellcheck disable=SC2153 # NODE_*_URL, PAYER_* come from stack.env
# A stock monero-wallet-cli, typed into as a person would (tests/integration/
# wallet_cli_driver.py on a pseudo-terminal), uses the gateway as its daemon with a fresh
# free-tier login (--daemon-login handle:token, HTTP Digest): it creates a wallet and
# syncs, receives a payment from the payer (`balance` shows it once mined and unlocked),
# rescans the chain from the genesis block, and sends part of it back with `transfer`,
# answering its questions; the transaction reaches every own node's pool (A, B and C).
# The free tier's bucket shapes the wallet's bursts: no call is refused with 429.
#
# Twice: this machine's monero-wallet-cli (Debian 12: 0.18.0), then Debian 13's
# (0.18.4, from scripts/monero-trixie.sh's root, built when missing), which is started
# with --allow-mismatched-daemon-version for the regtest chain's hard fork versions.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"

TRIXIE_SH=$XG_REPO/scripts/monero-trixie.sh
DRIVER=$XG_REPO/tests/integration/wallet_cli_driver.py
# Under XG_VAR: the 0.18.4 wallet sees the directory its root binds.
work=$(mktemp -d "$XG_VAR/wallet-cli-test.XXXXXX")
defer rm -rf "$work"
gw_hostport=${GATEWAY_URL#http://}


# cli_start host|trixie NAME LOGIN: monero-wallet-cli creating the wallet NAME through
# the gateway, on the driver (a coprocess, CLI); CLI_OUT is the start's JSON answer.
cli_start() {
	local kind=$1 name=$2 login=$3 run=() extra=()
	if [[ $kind == trixie ]]; then
		run=("$TRIXIE_SH" exec "$XG_VAR")
		extra=(--allow-mismatched-daemon-version --shared-ringdb-dir "$work/$name-ringdb")
	fi
	coproc CLI {
		exec python3 "$DRIVER" "$work/$name-terminal.log" -- "${run[@]}" monero-wallet-cli \
			--generate-new-wallet "$work/$name" --password "" --mnemonic-language English \
			--daemon-address "$gw_hostport" --daemon-login "$login" \
			--log-file "$work/$name.log" "${extra[@]}" 2>>"$work/$name-driver.err"
	}
	CLI_DRIVER=$CLI_PID
	defer stop_pid "$CLI_DRIVER"
	cli_read
}

# cli_read: the driver's next JSON answer into CLI_OUT (up to 5 min: its own timeout
# for a command is 4 min).
cli_read() {
	CLI_OUT=''
	read -r -t 300 CLI_OUT <&"${CLI[0]}" || {
		echo "# the wallet-cli driver answered nothing within 300 s"
		return 1
	}
	jq -e .ok <<<"$CLI_OUT" >/dev/null && return 0
	jq -r '"the wallet-cli driver: \(.error // "?"); the wallet printed:", (.output // "" | split("\n") | .[-15:][])' \
		<<<"$CLI_OUT" | sed 's/^/# /'
	return 1
}

# cli COMMAND [DONE]: types COMMAND at the wallet's prompt and waits until it printed
# DONE (an extended regular expression; default: anything; see wallet_cli_driver.py);
# its output in CLI_TEXT.
cli() {
	CLI_TEXT=''
	printf '%s\t%s\n' "$1" "${2:-}" >&"${CLI[1]}" || return 1
	cli_read || return 1
	CLI_TEXT=$(jq -r .output <<<"$CLI_OUT")
}

# cli_stop: end of input: the driver types `exit`; true when the wallet quit cleanly.
cli_stop() {
	eval "exec ${CLI[1]}>&-"
	wait "$CLI_DRIVER"
}

REFRESHED='Refresh done|[Ee]rror' BALANCE='unlocked balance|[Ee]rror'

# unlocked_is AMOUNT: `refresh` then `balance` shows AMOUNT unlocked (as it prints it).
unlocked_is() {
	cli refresh "$REFRESHED" && cli balance "$BALANCE" && grep -q "unlocked balance: $1" <<<"$CLI_TEXT"
}

# cli_round host|trixie: the whole story with one monero-wallet-cli.
cli_round() {
	local kind=$1 name login v address paid txid refused_before p
	name=cli-$kind
	local -A whose=([host]="this machine's" [trixie]="Debian 13's")
	check_here "$kind: a free-tier tenant is granted" grant_tenant free 1 || return 1
	login=$HANDLE:$TOKEN
	refused_before=$(burst_refusals)
	check_here "${whose[$kind]} monero-wallet-cli creates a wallet through the gateway (free tier) and syncs" \
		cli_start "$kind" "$name" "$login"
	jq -r .output <<<"$CLI_OUT" | tail -n 5 | sed 's/^/# /'
	assert_json "$kind: its first refresh is done" "$CLI_OUT" '.output | test("Refresh done")'
	check_here "$kind: \`version\`" cli version "Monero '|[Ee]rror" || return 1
	v=$(sed -n 's/.*(v\([0-9][0-9.]*\).*/\1/p' <<<"$CLI_TEXT" | head -n 1)
	if [[ $kind == trixie ]]; then
		check "$kind: it runs 0.18.4 or newer ($v)" version_at_least "$v" 0.18.4
	else
		assert_eq "$kind: it runs this machine's monero-wallet-cli" "$(host_monero_version monero-wallet-cli)" "$v"
	fi
	p="wallet-cli $v:"
	check_here "$p \`address\`" cli address 'Primary address|[Ee]rror' || return 1
	address=$(grep -oE '\b4[1-9A-HJ-NP-Za-km-z]{94}\b' <<<"$CLI_TEXT" | head -n 1)
	check "$p it shows its primary address" test -n "$address"

	# The payer's wallet first learns of what earlier tests spent from it without telling it
	# (a transaction signed with do_not_relay and relayed by hand), or it picks those
	# outputs again and the node rejects the double spend.
	XG_RPC_TIMEOUT=120 rpc "$PAYER_WALLET_URL" refresh '{}' >/dev/null || true
	paid=$(rpc "$PAYER_WALLET_URL" transfer \
		"$(jq -cn --arg a "$address" '{destinations:[{amount:2000000000000,address:$a}]}')")
	assert_json "$p the payer pays it 2 XMR" "$paid" '.tx_hash | length == 64'
	check "$p mine 11 blocks (the payment unlocks)" mine 11
	check_here "$p \`refresh\` and \`balance\`: 2 XMR, unlocked" wait_until 60 unlocked_is 2.000000000000
	grep 'Balance:' <<<"$CLI_TEXT" | sed 's/^/# /'

	check_here "$p \`rescan_bc\`: a sync from the genesis block through the free tier" \
		cli rescan_bc "$REFRESHED"
	check_here "$p … the balance is the same after it" wait_until 60 unlocked_is 2.000000000000

	check_here "$p \`transfer\` 0.5 XMR back to the payer (its questions answered)" \
		cli "transfer $PAYER_ADDRESS 0.5" 'successfully submitted|[Ee]rror'
	txid=$(sed -n 's/.*[Tt]ransaction successfully submitted, transaction <\?\([0-9a-f]\{64\}\)>\?.*/\1/p' <<<"$CLI_TEXT" | head -n 1)
	if ! check "$p the transfer is submitted" test -n "$txid"; then
		tail -n 15 <<<"$CLI_TEXT" | sed 's/^/#   /'
		return 1
	fi
	check "$p … it is in node A's pool" wait_until 20 in_pool_hashes "$NODE_A_URL" "$txid"
	check "$p … in node B's pool" wait_until 20 in_pool_hashes "$NODE_B_URL" "$txid"
	check "$p … and in node C's pool" wait_until 20 in_pool_hashes "$NODE_C_URL" "$txid"
	check_here "$p \`balance\` shows the send" cli balance "$BALANCE"
	assert_json "$p … less than 1.5 XMR left, 0.5 and the fee gone" \
		"$(sed -n 's/^Balance: \([0-9.]*\),.*/\1/p' <<<"$CLI_TEXT" | head -n 1 | jq -R 'tonumber? // 99')" '. < 1.5 and . > 1.4'
	assert_eq "$p no call was refused with 429 (the free tier shapes its bursts)" \
		"$refused_before" "$(burst_refusals)"
	check_here "$p \`exit\`: it saves and quits cleanly" cli_stop
}

cli_round host
check "the Debian 13 root with monero 0.18.4 is there (built when missing)" "$TRIXIE_SH" root
cli_round trixie
