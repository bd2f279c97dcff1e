#!/usr/bin/env bash
# shellcheck disable=SC2153 # NODE_*_URL come from stack.env
# A stock monero-wallet-rpc uses the gateway as its daemon, authenticating with HTTP
# Digest (--daemon-login handle:token), over plain HTTP and over HTTPS with a
# self-signed certificate: it creates a wallet, refreshes, sees an incoming payment in
# the pool, agrees with a wallet on a node directly about height and balance, and sends
# a transfer that reaches the nodes.
#
# Twice: with this machine's wallet-rpc (Debian 12: 0.18.0), then with 0.18.4, which
# most wallets in the field run (Debian 13's, from scripts/monero-trixie.sh, built when
# missing). Its getblocks.bin requests carry the pool (requested_info, pool_info_since)
# that 0.18.0's do not. The wallet on node A directly, the reference, is this machine's
# in both rounds.
#
# Each round ends on the free tier (the demo tenant's: the smallest burst bucket): a
# wallet-rpc logged in as a fresh free-tier tenant restores the same wallet through the
# gateway, syncs and sends from a second output; its calls are shaped, never refused
# (no 429), and the transaction reaches every own node's pool (A, B and C).
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"

TRIXIE_SH=$XG_REPO/scripts/monero-trixie.sh
work=$(mktemp -d "$XG_VAR/wallet-test.XXXXXX")
defer rm -rf "$work"
D_PORT=$((XG_PORT_BASE + 71))

refreshed() { rpc "$1" refresh '{}' >/dev/null && rpc "$1" get_balance '{}' | jq -e '.unlocked_balance > 0' >/dev/null; }
synced() { rpc "$1" refresh '{}' >/dev/null && rpc "$1" get_balance '{}' | jq -e '.balance > 0' >/dev/null; }

# grant_free [TIER]: a fresh tenant of TIER (default free) for one round (its own bucket
# and quota) in FREE_LOGIN; HANDLE and TOKEN stay the wallet-tier tenant's.
grant_free() {
	local handle=$HANDLE token=$TOKEN
	grant_tenant "${1:-free}" 1 || return 1
	FREE_LOGIN=$HANDLE:$TOKEN
	HANDLE=$handle TOKEN=$token
}
# A tier with the free tier's old bucket (4 at 2/s), which refused a wallet's send.
psql_q "INSERT INTO tiers (id, name, burst_rps, burst_size, daily_quota, price_currency,
	price_minor, confirmations, public) VALUES ('wt_tiny', 'tiny', 2, 4, 100000, 'USD', 100, 1, false)
	ON CONFLICT (id) DO NOTHING" >/dev/null

# wallet_round host|trixie G_PORT T_PORT F_PORT S_PORT: the whole story with one kind of
# wallet-rpc through the gateways, each round on a wallet of its own.
wallet_round() {
	local kind=$1 g_port=$2 t_port=$3 f_port=$4 s_port=$5 G T F v seed address file paid sent txid
	local as=()
	[[ $kind == trixie ]] && as=(--trixie)
	G=http://127.0.0.1:$g_port T=http://127.0.0.1:$t_port F=http://127.0.0.1:$f_port
	local -A whose=([host]="this machine's" [trixie]="Debian 13's")
	check_here "${whose[$kind]} wallet-rpc through the gateway starts" \
		wallet_rpc_start "${as[@]}" "gw-$kind" "$g_port" "$gw_hostport" "$HANDLE:$TOKEN" || return 1
	v=$(wallet_rpc_version "gw-$kind")
	if [[ $kind == trixie ]]; then
		check "it runs 0.18.4 or newer ($v)" version_at_least "$v" 0.18.4
	else
		assert_eq "it runs this machine's monero-wallet-rpc" \
			"$(host_monero_version monero-wallet-rpc)" "$v"
	fi
	local p="wallet $v:"

	file=w-$kind
	check "$p create a wallet through the gateway" \
		rpc "$G" create_wallet "{\"filename\":\"$file\",\"language\":\"English\"}"
	seed=$(rpc "$G" query_key '{"key_type":"mnemonic"}' | jq -r .key)
	address=$(rpc "$G" get_address '{"account_index":0}' | jq -r .address)
	check "$p restore the same wallet on the direct wallet-rpc" rpc "$D" restore_deterministic_wallet \
		"$(jq -cn --arg f "$file" --arg s "$seed" '{filename:$f,seed:$s,restore_height:0,password:"",language:"English"}')"

	# Fund it from the payer: seen in the pool first, then unlocked (10 confirmations).
	paid=$(rpc "$PAYER_WALLET_URL" transfer \
		"$(jq -cn --arg a "$address" '{destinations:[{amount:2000000000000,address:$a}]}')")
	assert_json "$p the payer pays the new wallet" "$paid" '.tx_hash | length == 64'
	check "$p the gateway wallet sees the payment in the pool" \
		wait_until 30 in_wallet_pool --refresh "$G" "$(jq -r .tx_hash <<<"$paid")"
	check "$p mine 12 blocks" mine 12

	check "$p the gateway wallet refreshes and sees unlocked funds" wait_until 60 refreshed "$G"
	check "$p the direct wallet refreshes and sees unlocked funds" wait_until 60 refreshed "$D"
	assert_eq "$p same height through the gateway as direct" \
		"$(rpc "$D" get_height | jq .height)" "$(rpc "$G" get_height | jq .height)"
	assert_eq "$p same balance through the gateway as direct" \
		"$(rpc "$D" get_balance | jq -c '[.balance,.unlocked_balance]')" \
		"$(rpc "$G" get_balance | jq -c '[.balance,.unlocked_balance]')"

	# Send through the gateway; the transaction must reach the nodes' pools.
	sent=$(rpc "$G" transfer "$(jq -cn --arg a "$PAYER_ADDRESS" \
		'{destinations:[{amount:500000000000,address:$a}]}')")
	assert_json "$p a transfer is sent through the gateway" "$sent" '.tx_hash | length == 64'
	txid=$(jq -r .tx_hash <<<"$sent")
	check "$p the transaction is in node A's pool" wait_until 20 in_pool_listing "$NODE_A_URL" "$txid"
	check "$p the transaction is in node B's pool" wait_until 20 in_pool_listing "$NODE_B_URL" "$txid"

	# HTTPS: the TLS gateway; the wallet detects TLS by itself.
	check_here "$p wallet-rpc through the TLS gateway starts" \
		wallet_rpc_start "${as[@]}" "tls-$kind" "$t_port" "127.0.0.1:$(gw_port tls)" "$HANDLE:$TOKEN" ||
		return 1
	check "$p restore the wallet behind the TLS gateway" rpc "$T" restore_deterministic_wallet \
		"$(jq -cn --arg f "$file" --arg s "$seed" '{filename:$f,seed:$s,restore_height:0,password:"",language:"English"}')"
	check "$p mine 1 block" mine 1
	# The transfer above spent the only output: its change is still locked, so compare
	# total balances here.
	check "$p the TLS wallet refreshes and sees the funds" wait_until 60 synced "$T"
	rpc "$D" refresh '{}' >/dev/null
	assert_eq "$p same height over TLS as direct" \
		"$(rpc "$D" get_height | jq .height)" "$(rpc "$T" get_height | jq .height)"
	assert_eq "$p same balance over TLS as direct" \
		"$(rpc "$D" get_balance | jq -c '[.balance,.unlocked_balance]')" \
		"$(rpc "$T" get_balance | jq -c '[.balance,.unlocked_balance]')"

	# The free tier: the payer pays the wallet again, and the same wallet, restored
	# through the gateway with a free-tier login, syncs and sends from that output.
	local refused_before delayed_before free
	assert_json "$p the payer pays the wallet a second time (for the free tier's send)" \
		"$(rpc "$PAYER_WALLET_URL" transfer "$(jq -cn --arg a "$address" \
			'{destinations:[{amount:1000000000000,address:$a}]}')")" '.tx_hash | length == 64'
	check "$p mine 11 blocks (it unlocks)" mine 11
	check_here "$p a free-tier tenant is granted" grant_free || return 1
	refused_before=$(burst_refusals) delayed_before=$(burst_delays)
	check_here "$p wallet-rpc through the gateway with the free tier's login starts" \
		wallet_rpc_start "${as[@]}" "free-$kind" "$f_port" "$gw_hostport" "$FREE_LOGIN" || return 1
	check "$p restore the wallet through the free tier" rpc "$F" restore_deterministic_wallet \
		"$(jq -cn --arg f "$file" --arg s "$seed" '{filename:$f,seed:$s,restore_height:0,password:"",language:"English"}')"
	check "$p the free-tier wallet refreshes and sees unlocked funds" wait_until 60 refreshed "$F"
	free=$(rpc "$F" transfer "$(jq -cn --arg a "$PAYER_ADDRESS" \
		'{destinations:[{amount:300000000000,address:$a}]}')")
	assert_json "$p a transfer is sent through the free tier" "$free" '.tx_hash | length == 64'
	txid=$(jq -r .tx_hash <<<"$free")
	check "$p … it is in node A's pool (get_transaction_pool_hashes)" wait_until 20 in_pool_hashes "$NODE_A_URL" "$txid"
	check "$p … in node B's pool" wait_until 20 in_pool_hashes "$NODE_B_URL" "$txid"
	check "$p … and in node C's pool" wait_until 20 in_pool_hashes "$NODE_C_URL" "$txid"
	assert_eq "$p the free-tier wallet got no 429 (its burst is shaped, not refused)" \
		"$refused_before" "$(burst_refusals)"
	echo "# $p free tier: $(($(burst_delays) - delayed_before)) calls delayed by the burst limit"

	# A bucket of 4 at 2/s (the free tier before burst_size): the send is over the
	# bucket, so it is shaped — held, not refused — and goes through.
	assert_json "$p the payer pays the wallet a third time (for the small bucket's send)" \
		"$(rpc "$PAYER_WALLET_URL" transfer "$(jq -cn --arg a "$address" \
			'{destinations:[{amount:1000000000000,address:$a}]}')")" '.tx_hash | length == 64'
	check "$p mine 11 blocks (it unlocks)" mine 11
	check_here "$p a tenant with a bucket of 4 at 2/s is granted" grant_free wt_tiny || return 1
	check_here "$p wallet-rpc through the gateway with that login starts" \
		wallet_rpc_start "${as[@]}" "tiny-$kind" "$s_port" "$gw_hostport" "$FREE_LOGIN" || return 1
	local S=http://127.0.0.1:$s_port t0
	check "$p restore the wallet through the small bucket" rpc "$S" restore_deterministic_wallet \
		"$(jq -cn --arg f "$file" --arg s "$seed" '{filename:$f,seed:$s,restore_height:0,password:"",language:"English"}')"
	check "$p … it refreshes and sees unlocked funds" wait_until 60 refreshed "$S"
	sleep 2 # a full bucket, as for a wallet that was idle
	refused_before=$(burst_refusals) delayed_before=$(burst_delays) t0=$(date +%s%3N)
	free=$(rpc "$S" transfer "$(jq -cn --arg a "$PAYER_ADDRESS" \
		'{destinations:[{amount:300000000000,address:$a}]}')")
	assert_json "$p a transfer over a bucket of 4 is sent (the one that failed with -4 before)" \
		"$free" '.tx_hash | length == 64'
	echo "# $p bucket of 4: the send took $(($(date +%s%3N) - t0)) ms, $(($(burst_delays) - delayed_before)) calls delayed"
	check "$p … its calls were held by the burst limit" test "$(burst_delays)" -gt "$delayed_before"
	assert_eq "$p … and none refused" "$refused_before" "$(burst_refusals)"
	txid=$(jq -r .tx_hash <<<"$free")
	check "$p … it is in node A's pool" wait_until 20 in_pool_hashes "$NODE_A_URL" "$txid"
	check "$p … in node B's pool" wait_until 20 in_pool_hashes "$NODE_B_URL" "$txid"
	check "$p … and in node C's pool" wait_until 20 in_pool_hashes "$NODE_C_URL" "$txid"
}

check_here "grant a tenant" grant_tenant wallet 30
gw_hostport=${GATEWAY_URL#http://}
check_here "wallet-rpc on node A directly starts" \
	wallet_rpc_start direct "$D_PORT" "${NODE_A_URL#http://}"
D=http://127.0.0.1:$D_PORT

# A second gateway with a self-signed certificate that speaks only TLS.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
	-keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1
check_here "a TLS gateway starts" gateway_start tls \
	server.tls_cert="$work/cert.pem" server.tls_key="$work/key.pem"
check "curl reaches the TLS gateway with the path token" \
	curl -sfk "$(gw_url tls)/v1/$TOKEN/get_height" -o /dev/null

# Wallet-rpc ports: +70, +72..+78 (D, the direct one, +71).
wallet_round host $((XG_PORT_BASE + 70)) $((XG_PORT_BASE + 72)) $((XG_PORT_BASE + 73)) \
	$((XG_PORT_BASE + 74))
check "the Debian 13 root with monero 0.18.4 is there (built when missing)" "$TRIXIE_SH" root
wallet_round trixie $((XG_PORT_BASE + 75)) $((XG_PORT_BASE + 76)) $((XG_PORT_BASE + 77)) \
	$((XG_PORT_BASE + 78))
