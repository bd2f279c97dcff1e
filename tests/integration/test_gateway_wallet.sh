#!/usr/bin/env bash
# A stock monero-wallet-rpc uses the gateway as its daemon, authenticating with HTTP
# Digest (--daemon-login handle:token), over plain HTTP and over HTTPS with a
# self-signed certificate: it creates a wallet, refreshes, agrees with a wallet on a
# node directly about height and balance, and sends a transfer that reaches the nodes.
. "$(dirname "$0")/lib.sh"

work=$(mktemp -d)
defer rm -rf "$work"
port_base=$((XG_PORT_BASE + 70))
G_PORT=$((port_base + 0)) D_PORT=$((port_base + 1)) T_PORT=$((port_base + 2))
TLS_GW=$((port_base + 3)) TLS_ADMIN=$((port_base + 4))

# start_wallet NAME PORT DAEMON_ADDRESS [LOGIN]
start_wallet() {
	local name=$1 port=$2 daemon=$3 login=${4:-} pid
	mkdir -p "$work/$name"
	monero-wallet-rpc --daemon-address "$daemon" ${login:+--daemon-login "$login"} \
		--rpc-bind-ip 127.0.0.1 --rpc-bind-port "$port" --disable-rpc-login \
		--wallet-dir "$work/$name" --log-file "$work/$name.log" --log-level 1 \
		--non-interactive >"$work/$name.out" 2>&1 &
	pid=$!
	defer stop_pid "$pid"
	wait_until 30 curl -sf -o /dev/null "http://127.0.0.1:$port/json_rpc" \
		-d '{"jsonrpc":"2.0","id":"0","method":"get_version"}'
}

check_here "grant a tenant" grant_tenant wallet 30
gw_hostport=${GATEWAY_URL#http://}
node_hostport=${NODE_A_URL#http://}

check_here "wallet-rpc through the gateway starts" \
	start_wallet gw "$G_PORT" "$gw_hostport" "$HANDLE:$TOKEN"
check_here "wallet-rpc on node A directly starts" start_wallet direct "$D_PORT" "$node_hostport"
G=http://127.0.0.1:$G_PORT
D=http://127.0.0.1:$D_PORT

check "create a wallet through the gateway" \
	rpc "$G" create_wallet '{"filename":"w","language":"English"}'
seed=$(rpc "$G" query_key '{"key_type":"mnemonic"}' | jq -r .key)
address=$(rpc "$G" get_address '{"account_index":0}' | jq -r .address)
check "restore the same wallet on the direct wallet-rpc" rpc "$D" restore_deterministic_wallet \
	"$(jq -cn --arg s "$seed" '{filename:"w",seed:$s,restore_height:0,password:"",language:"English"}')"

# Fund it from the payer and let the coins unlock (10 confirmations).
check "the payer pays the new wallet" rpc "$PAYER_WALLET_URL" transfer \
	"$(jq -cn --arg a "$address" '{destinations:[{amount:2000000000000,address:$a}]}')"
check "mine 12 blocks" mine 12

refreshed() { rpc "$1" refresh '{}' >/dev/null && rpc "$1" get_balance '{}' | jq -e '.unlocked_balance > 0' >/dev/null; }
check "the gateway wallet refreshes and sees unlocked funds" wait_until 60 refreshed "$G"
check "the direct wallet refreshes and sees unlocked funds" wait_until 60 refreshed "$D"
assert_eq "same height through the gateway as direct" \
	"$(rpc "$D" get_height | jq .height)" "$(rpc "$G" get_height | jq .height)"
assert_eq "same balance through the gateway as direct" \
	"$(rpc "$D" get_balance | jq -c '[.balance,.unlocked_balance]')" \
	"$(rpc "$G" get_balance | jq -c '[.balance,.unlocked_balance]')"

# Send through the gateway; the transaction must reach the nodes' pools.
sent=$(rpc "$G" transfer "$(jq -cn --arg a "$PAYER_ADDRESS" \
	'{destinations:[{amount:500000000000,address:$a}]}')")
assert_json "a transfer is sent through the gateway" "$sent" '.tx_hash | length == 64'
txid=$(jq -r .tx_hash <<<"$sent")
in_pool() { curl -sf "$1/get_transaction_pool" | jq -e --arg t "$txid" '[.transactions[]?.id_hash] | index($t) != null' >/dev/null; }
check "the transaction is in node A's pool" wait_until 20 in_pool "$NODE_A_URL"
check "the transaction is in node B's pool" wait_until 20 in_pool "$NODE_B_URL"

# HTTPS: a second gateway with a self-signed certificate that speaks only TLS; the
# wallet detects TLS by itself.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
	-keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1
check_here "a TLS gateway starts" start_gateway tls "$TLS_GW" "$TLS_ADMIN" \
	XMRGATE_SERVER_TLS_CERT="$work/cert.pem" XMRGATE_SERVER_TLS_KEY="$work/key.pem"
check "curl reaches the TLS gateway with the path token" \
	curl -sfk "https://127.0.0.1:$TLS_GW/v1/$TOKEN/get_height" -o /dev/null
check_here "wallet-rpc through the TLS gateway starts" \
	start_wallet tls "$T_PORT" "127.0.0.1:$TLS_GW" "$HANDLE:$TOKEN"
T=http://127.0.0.1:$T_PORT
check "restore the wallet behind the TLS gateway" rpc "$T" restore_deterministic_wallet \
	"$(jq -cn --arg s "$seed" '{filename:"w",seed:$s,restore_height:0,password:"",language:"English"}')"
check "mine 1 block" mine 1
# The transfer above spent the only output: its change is still locked, so compare
# total balances here.
synced() { rpc "$1" refresh '{}' >/dev/null && rpc "$1" get_balance '{}' | jq -e '.balance > 0' >/dev/null; }
check "the TLS wallet refreshes and sees the funds" wait_until 60 synced "$T"
rpc "$D" refresh '{}' >/dev/null
assert_eq "same height over TLS as direct" \
	"$(rpc "$D" get_height | jq .height)" "$(rpc "$T" get_height | jq .height)"
assert_eq "same balance over TLS as direct" \
	"$(rpc "$D" get_balance | jq -c '[.balance,.unlocked_balance]')" \
	"$(rpc "$T" get_balance | jq -c '[.balance,.unlocked_balance]')"
