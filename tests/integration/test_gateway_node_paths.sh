#!/usr/bin/env bash
# Nodes the gateway reaches through curl rather than its own client: an https:// node
# (HAProxy terminating TLS in front of node A, with a certificate from a test CA given as
# [nodes] ca_file) and a node named by host name (http://localhost:…). Both serve JSON,
# JSON-RPC and .bin byte for byte; without the CA the https node is never trusted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ops_lib.sh"

tls_port=$((XG_PORT_BASE + 90))
dir=$XG_VAR/node-tls
rm -rf "$dir" && mkdir -p "$dir"

check_here "migrate a database for these gateways" scratch_db xmrgate_nodepaths
DB=$SCRATCH_DB_URL
export XMRGATE_DATABASE_URL=$DB # for grant_tenant

# A test CA and a certificate for 127.0.0.1 and localhost signed by it.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=xmrgate-test-ca -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
	-keyout "$dir/node.key" -out "$dir/node.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$dir/san.ext"
openssl x509 -req -in "$dir/node.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
	-CAcreateserial -days 2 -extfile "$dir/san.ext" -out "$dir/node.crt" 2>/dev/null
cat "$dir/node.crt" "$dir/node.key" >"$dir/node.pem"
check "a CA and a node certificate are made" test -s "$dir/node.pem"

cat >"$dir/haproxy.cfg" <<CFG
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
frontend tls
    bind 127.0.0.1:$tls_port ssl crt $dir/node.pem
    default_backend node
backend node
    server a ${NODE_A_URL#http://}
CFG
# start_tls_node: HAProxy with the test certificate in front of node A; its pid in
# haproxy_pid. Returns once it answers with the test CA (1 if not within 10 s).
start_tls_node() {
	haproxy -f "$dir/haproxy.cfg" -db >>"$XG_VAR/log/haproxy-node-tls.log" 2>&1 &
	haproxy_pid=$!
	defer stop_pid "$haproxy_pid"
	wait_until 10 curl -sf --cacert "$dir/ca.pem" -o /dev/null \
		"https://127.0.0.1:$tls_port/get_height"
}
check_here "the TLS node answers with the test CA" start_tls_node

psql -X -q "$XMRGATE_DATABASE_URL" -c \
	"INSERT INTO nodes (name, url) VALUES ('tls', 'https://127.0.0.1:$tls_port')"
check_here "grant a tenant" grant_tenant wallet 1
check_here "a gateway with [nodes] ca_file starts" \
	gateway_start nodetls database.url="$DB" nodes.ca_file="$dir/ca.pem"
GW=$GW_URL
ADMIN=$GW_ADMIN

printf '\x01\x11\x01\x01\x01\x01\x02\x01\x01\x04\x07heights\x85\x04\x01\x00\x00\x00\x00\x00\x00\x00' \
	>"$dir/heights.bin"
curl -sf --data-binary @"$dir/heights.bin" "$NODE_A_URL/get_blocks_by_height.bin" \
	-o "$dir/direct.bin"
bin_same() {
	curl -sf --data-binary @"$dir/heights.bin" "$GW/v1/$TOKEN/get_blocks_by_height.bin" \
		-o "$dir/via.bin" && cmp -s "$dir/direct.bin" "$dir/via.bin"
}
height_direct=$(curl -sf "$NODE_A_URL/get_height" | jq .height)

check "the https node is probed healthy" wait_until 20 \
	metric_is "$ADMIN" 'xmrgate_gateway_node_up{node="tls"}' 1
assert_json "https node: /get_height" "$(curl -sf "$GW/v1/$TOKEN/get_height")" \
	".status == \"OK\" and .height >= $height_direct"
assert_json "https node: JSON-RPC get_block_count" \
	"$(curl -sf "$GW/v1/$TOKEN/json_rpc" -d '{"jsonrpc":"2.0","id":7,"method":"get_block_count"}')" \
	'.id == 7 and .result.count > 0'
check "https node: .bin is byte for byte the node's answer" bin_same

# The same node by host name, plain HTTP: curl resolves it. HAProxy goes away first, so
# only the host-name node can answer.
stop_pid "$haproxy_pid"
psql -X -q "$XMRGATE_DATABASE_URL" -c \
	"UPDATE nodes SET url = 'http://localhost:${NODE_A_URL##*:}' WHERE name = 'tls'"
check "host-name node: .bin answered byte for byte after the change" wait_until 20 bin_same
assert_json "host-name node: JSON-RPC get_block_count" \
	"$(curl -sf "$GW/v1/$TOKEN/json_rpc" -d '{"jsonrpc":"2.0","id":8,"method":"get_block_count"}')" \
	'.id == 8 and .result.count > 0'

# Without the CA the https node is never trusted: the system store does not know it.
check_here "the TLS node is back" start_tls_node
psql -X -q "$XMRGATE_DATABASE_URL" -c \
	"UPDATE nodes SET url = 'https://127.0.0.1:$tls_port' WHERE name = 'tls'"
# (Never ready: its only node is not trusted. So it is started here, and waited for alive.)
check_here "a gateway without ca_file starts" gateway_start nodetls-strict --wait alive \
	database.url="$DB" nodes.ca_file=
check "the CA gateway trusts the node again" wait_until 20 bin_same
sleep 5 # two probe rounds of the strict gateway
check "the strict gateway is not ready: no node it trusts" \
	test "$(curl -s -o /dev/null -w '%{http_code}' "$(gw_admin nodetls-strict)/readyz")" != 200
assert_eq "without the CA the https node is not healthy" 0 \
	"$(metric "$(gw_admin nodetls-strict)" 'xmrgate_gateway_node_up{node="tls"}')"
code=$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"$dir/heights.bin" \
	"$(gw_url nodetls-strict)/v1/$TOKEN/get_blocks_by_height.bin")
check "and a .bin call through it is refused (HTTP $code), not served" test "$code" != 200
# The tenant is told which node failed and how by the node's opaque id only; the node
# client's own text (the certificate problem, the host) is for the operators' log.
tls_id=$(psql -X -Atq "$XMRGATE_DATABASE_URL" -c "SELECT id FROM nodes WHERE name = 'tls'")
strict_answer=$(curl -s "$(gw_url nodetls-strict)/v1/$TOKEN/get_height")
assert_json "a JSON call says which node failed, by its id, and how" "$strict_answer" \
	".status == \"no node could answer: node n$tls_id: connect_error\""
assert_json "and nothing of the node client's text: no certificate, host or port" \
	"$strict_answer" '.status | test("certificate|SSL|127\\.0\\.0\\.1|'"$tls_port"'|tls") | not'
failed_on_certificate() {
	grep '"request_failed"' "$(gw_log nodetls-strict)" | grep '"node":"tls"' | grep -q certificate
}
check "the operators' log has the detail: the node's name and its certificate" failed_on_certificate
