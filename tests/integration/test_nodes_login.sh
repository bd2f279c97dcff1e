#!/usr/bin/env bash
# Nodes with a login: two extra regtest nodes started with `monerod --rpc-login`, one on
# the system's monero (0.18.0 on Debian 12) and one on 0.18.4 (Debian 13's, through
# scripts/monero-trixie.sh), synced from the stack's nodes. They answer 401 with a Digest
# challenge without the login. A gateway given them as `http://user:pass@host:port` nodes
# (and nothing else) probes them up and serves through them: it speaks Digest, as a wallet
# does. A third row with a wrong password stays down. The password shows nowhere: not in
# the admin API's node list, xmrgate-admin nodes, /readyz, /metrics or the gateway's log.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"

LOGIN_USER=xg-node
LOGIN_PASS=s3cret-Node-pass
OLD_P2P=$((XG_PORT_BASE + 44)) OLD_RPC=$((XG_PORT_BASE + 45))
NEW_P2P=$((XG_PORT_BASE + 46)) NEW_RPC=$((XG_PORT_BASE + 47))

# login_rpc PORT METHOD: JSON-RPC with the login (curl speaks Digest as the wallet does).
login_rpc() {
	curl -sS --max-time 10 --digest -u "$LOGIN_USER:$LOGIN_PASS" -H 'Content-Type: application/json' \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"$2\"}" "http://127.0.0.1:$1/json_rpc"
}
a_height() { rpc "$NODE_A_URL" get_info | jq -r '.height'; }
synced() {
	login_rpc "$1" get_info | jq -e --argjson h "$(a_height)" \
		'.result.status == "OK" and .result.height >= $h and .result.synchronized' >/dev/null
}

check "the stack's nodes agree on one chain" wait_until 120 nodes_agree
# Not under check: that would run it in a subshell, and its defers would be lost.
node_start login-old "$OLD_P2P" "$OLD_RPC" --peers "a b c" \
	--rpc-login "$LOGIN_USER:$LOGIN_PASS"
assert_eq "a 0.18.0 node with --rpc-login starts" 0 "$?"
node_start login-new "$NEW_P2P" "$NEW_RPC" --trixie --peers "a b c" \
	--rpc-login "$LOGIN_USER:$LOGIN_PASS"
assert_eq "a 0.18.4 node with --rpc-login starts" 0 "$?"
# The stack's chain is over 1,000 blocks once test_gateway_sync_cache has run; two fresh
# nodes fetch it over P2P at once, slowly on a loaded 2-core machine.
check "the 0.18.0 login node syncs from the stack" wait_until 400 synced "$OLD_RPC"
check "the 0.18.4 login node syncs from the stack" wait_until 400 synced "$NEW_RPC"
old_version=$(login_rpc "$OLD_RPC" get_info | jq -r '.result.version')
new_version=$(login_rpc "$NEW_RPC" get_info | jq -r '.result.version')
echo "# login nodes: old $old_version, new $new_version"
check "the old login node runs 0.18.0 ($old_version)" test "${old_version%.*}" = 0.18.0
check "the new login node runs 0.18.4 or later ($new_version)" \
	version_at_least "$new_version" 0.18.4

for port in "$OLD_RPC" "$NEW_RPC"; do
	h=$(curl -sS --max-time 10 -o /dev/null -D - -H 'Content-Type: application/json' \
		--data-binary '{"jsonrpc":"2.0","id":0,"method":"get_info"}' \
		"http://127.0.0.1:$port/json_rpc" | tr -d '\r')
	check "port $port without the login: 401 with a Digest challenge" \
		bash -c 'grep -q "^HTTP/1.1 401" <<<"$1" && grep -qi "^www-authenticate: digest" <<<"$1"' _ "$h"
	h=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -u "$LOGIN_USER:$LOGIN_PASS" \
		-H 'Content-Type: application/json' \
		--data-binary '{"jsonrpc":"2.0","id":0,"method":"get_info"}' "http://127.0.0.1:$port/json_rpc")
	assert_eq "port $port refuses the login sent as Basic" 401 "$h"
done

login_url() { echo "http://$LOGIN_USER:$1@127.0.0.1:$2"; }
psql_q "BEGIN; DELETE FROM nodes;
	INSERT INTO nodes (name, url, priority) VALUES
		('login-old', '$(login_url "$LOGIN_PASS" "$OLD_RPC")', 'primary'),
		('login-new', '$(login_url "$LOGIN_PASS" "$NEW_RPC")', 'standby'),
		('login-wrong', '$(login_url wrong-pass "$OLD_RPC")', 'standby');
	COMMIT;" >/dev/null
check_here "a tenant is granted" grant_tenant --bare sovereign 1
gateway_start login --base nodes
state_of() { gw_status | jq -r --arg n "$1" '.nodes[] | select(.name == $n) | .state'; }
up_both() { [[ $(state_of login-old) == up && $(state_of login-new) == up ]]; }
check "the gateway probes both login nodes up (Digest, 0.18.0 and 0.18.4)" wait_until 40 up_both
assert_eq "the node with a wrong password stays down" down "$(state_of login-wrong)"
check "a gateway with login nodes only is ready" gw_ready

info=$(gw_rpc get_info)
assert_json "get_info through the gateway, served by a login node" "$info" \
	'.status == "OK" and .nettype == "fakechain"'
for i in 1 2 3 4 5 6; do
	out=$(gw_call /get_transaction_pool_hashes '{}')
	assert_json "pool hashes through the gateway ($i)" "$out" '.status == "OK"'
done
hdr=$(gw_rpc get_last_block_header | jq -r '.block_header.hash')
check "the answer is the stack's chain" test "$hdr" = "$(rpc "$NODE_A_URL" get_last_block_header | jq -r '.block_header.hash')"

# The password shows nowhere.
nodes_json=$(gw_status)
assert_json "GET /nodes shows each URL without its password" "$nodes_json" \
	"[.nodes[] | select(.name | startswith(\"login\")) | .url] | sort ==
	 ([\"http://$LOGIN_USER:***@127.0.0.1:$NEW_RPC\", \"http://$LOGIN_USER:***@127.0.0.1:$OLD_RPC\",
	   \"http://$LOGIN_USER:***@127.0.0.1:$OLD_RPC\"] | sort)"
no_secret() { ! grep -q -e "$LOGIN_PASS" -e wrong-pass <<<"$2" || { echo "$1 shows it"; return 1; }; }
check "… and nothing in GET /nodes holds a password" no_secret "GET /nodes" "$nodes_json"
cli_out=$(XMRGATE_ADMIN_URL=$GW_ADMIN XMRGATE_ADMIN_TOKEN=$XG_TEST_ADMIN_TOKEN \
	"$XG_REPO/bin/xmrgate-admin" nodes 2>&1)
check "xmrgate-admin nodes lists the login nodes" grep -q login-old <<<"$cli_out"
check "xmrgate-admin nodes shows no password" no_secret "xmrgate-admin nodes" "$cli_out"
cli_json=$(XMRGATE_ADMIN_URL=$GW_ADMIN XMRGATE_ADMIN_TOKEN=$XG_TEST_ADMIN_TOKEN \
	"$XG_REPO/bin/xmrgate-admin" --json nodes 2>&1)
check "xmrgate-admin --json nodes shows no password" no_secret "xmrgate-admin --json" "$cli_json"
check "/readyz shows no password" no_secret /readyz "$(curl -s "$GW_ADMIN/readyz")"
check "/metrics shows no password" no_secret /metrics "$(curl -s "$GW_ADMIN/metrics")"
check "the gateway's log shows no password" no_secret log "$(cat "$GW_LOG")"

# Over TLS: monerod's --rpc-ssl autodetect serves https on the same port with a certificate
# it generated itself, which no CA vouches for. A gateway given the 0.18.0 node's certificate
# fingerprint ([nodes] tls_fingerprints) accepts that node over https, with its login; the
# 0.18.4 node, whose certificate is not pinned, stays down.
fingerprint() {
	openssl s_client -connect "127.0.0.1:$1" </dev/null 2>/dev/null |
		openssl x509 -noout -fingerprint -sha256 | sed 's/^.*=//'
}
fp_old=$(fingerprint "$OLD_RPC")
fp_new=$(fingerprint "$NEW_RPC")
check "both login nodes serve TLS with a certificate of their own ($fp_old, $fp_new)" \
	test -n "$fp_old" -a -n "$fp_new" -a "$fp_old" != "$fp_new"
tls_url() { echo "https://$LOGIN_USER:$LOGIN_PASS@127.0.0.1:$1"; }
psql_q "BEGIN; DELETE FROM nodes;
	INSERT INTO nodes (name, url, priority) VALUES
		('tls-old', '$(tls_url "$OLD_RPC")', 'primary'),
		('tls-new', '$(tls_url "$NEW_RPC")', 'standby');
	COMMIT;" >/dev/null
gateway_stop login
gateway_start login-tls --base nodes nodes.tls_fingerprints="$fp_old"
tls_old_up() { [[ $(state_of tls-old) == up ]]; }
check "the pinned https node with a login is probed up" wait_until 40 tls_old_up
assert_eq "the https node whose certificate is not pinned stays down" down "$(state_of tls-new)"
assert_json "get_info over https through the pinned node" "$(gw_rpc get_info)" '.status == "OK"'
check "the TLS gateway's log shows no password" no_secret log "$(cat "$GW_LOG")"
