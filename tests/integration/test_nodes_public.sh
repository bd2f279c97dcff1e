#!/usr/bin/env bash
# A third party's node (priority 'public') is a last resort. It stands here as a capture
# server that records every request and passes it on to node C, so it is a real node on the
# quorum tip that the gateway would rank if the rules let it. While the own nodes A
# (primary) and B (standby) are healthy it gets no read and no broadcast, only the
# gateway's probes. With A and B frozen it serves the reads, none of its answers is stored
# in the shared cache, and it still gets no transaction until its row opts in
# (broadcast = true, migrations/0003).
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

capture_port=$((XG_PORT_BASE + 99))
log=$XG_VAR/capture-public.jsonl
rm -f "$log"

check "the nodes agree on one chain" wait_until 120 nodes_agree
"$XG_REPO/build/release/tests/tools/capture_server" "$capture_port" "$log" "$NODE_C_URL" &
capture_pid=$!
defer stop_pid "$capture_pid"
check "the nodes table holds A (primary) and B (standby)" nodes_table "a:primary b:standby"
psql_q "INSERT INTO nodes (name, url, priority) VALUES ('pub', 'http://127.0.0.1:$capture_port', 'public')" >/dev/null
id_pub=n$(psql_q "SELECT id FROM nodes WHERE name = 'pub'")
check_here "a tenant is granted" grant_tenant --bare sovereign 1
check_here "a gateway starts and is ready" gateway_start public --base nodes

node_field() { gw_status | jq -r --arg n "$1" ".nodes[] | select(.name == \$n) | $2"; }
pub_on_tip() { [[ $(node_field pub '"\(.up) \(.tip_distance)"') == "true 0" ]]; }
check "the public node is up and on the quorum tip (it could serve)" wait_until 60 pub_on_tip

# What reached the public node besides the gateway's probes.
client_requests() {
	jq -c 'select(.url != "/json_rpc" or ((.body | fromjson? | .method) as $m |
		($m != "get_info" and $m != "get_version" and $m != "get_last_block_header" and $m != "get_block_headers_range")))' \
		"$log" 2>/dev/null
}

top=$(rpc "$NODE_A_URL" get_block_count | jq -r '.count - 1')
image=$(printf '%064d' 7)
# reads N HEIGHT: N rounds of a pool read, a key image check and a header deep below the
# tip (cacheable when an own node serves it); prints how many succeeded.
reads() {
	local ok=0 i out deep=$2
	for ((i = 0; i < $1; i++)); do
		out=$(gw_call /get_transaction_pool_hashes '{}') && jq -e '.status == "OK"' <<<"$out" >/dev/null && ok=$((ok + 1))
		out=$(gw_call /is_key_image_spent "{\"key_images\":[\"$image\"]}") &&
			jq -e '.status == "OK"' <<<"$out" >/dev/null && ok=$((ok + 1))
		out=$(gw_rpc get_block_header_by_height "{\"height\":$deep}") &&
			jq -e '.block_header.height' <<<"$out" >/dev/null && ok=$((ok + 1))
	done
	echo "$ok"
}

# --- own nodes healthy -----------------------------------------------------------------
assert_eq "30 reads through the gateway succeed" 30 "$(reads 10 $((top - 20)))"
read -r hash1 hex1 < <(payer_tx_hex)
check "the payer signs a transaction without relaying it" test -n "${hex1:-}"
body=$(jq -cn --arg h "$hex1" '{tx_as_hex: $h, do_not_relay: true}')
headers=$(gw_headers /send_raw_transaction "$body")
bc=$(sed -n 's/^X-Xmrgate-Broadcast: //Ip' <<<"$headers")
echo "# X-Xmrgate-Broadcast: $bc"
check "the broadcast is accepted by the own nodes" grep -q '=ok' <<<"$bc"
check "the broadcast header does not name the public node" bash -c "! grep -q '$id_pub=' <<<'$bc'"
assert_eq "the public node received no read and no broadcast while own nodes are healthy" "" \
	"$(client_requests)"

# --- own nodes frozen ------------------------------------------------------------------
freeze a
freeze b
own_down() { [[ $(node_field a .up) == false && $(node_field b .up) == false ]]; }
check "A and B are taken down by the probes" wait_until 60 own_down
check "the public node serves alone, on its own tip" wait_until 60 pub_on_tip
deep=$((top - 25))
assert_eq "30 reads through the gateway succeed on the public node" 30 "$(reads 10 "$deep")"
served=$(client_requests | jq -s '[.[] | select(.url == "/get_transaction_pool_hashes")] | length')
assert_eq "the public node served every pool read" 10 "$served"
headers=$(gw_headers /json_rpc "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get_block_header_by_height\",\"params\":{\"height\":$deep}}")
check "a deep header the public node served is not taken from the cache" \
	bash -c "! grep -qi '^X-Xmrgate-Cache: hit' <<<'$headers'"
by_height=$(client_requests | jq -s '[.[] | select((.body | fromjson? | .method) == "get_block_header_by_height")] | length')
assert_eq "every deep header read reached the public node (none was cached)" 11 "$by_height"

mine_blocked=$(gw_headers /send_raw_transaction "$body")
assert_eq "no transaction reached the public node (its row does not opt in)" 0 \
	"$(client_requests | jq -s '[.[] | select(.url == "/send_raw_transaction")] | length')"
echo "# broadcast without a node: $(head -1 <<<"$mine_blocked")"

psql_q "UPDATE nodes SET broadcast = true WHERE name = 'pub'" >/dev/null
check "the public node is back after its row changed" wait_until 60 pub_on_tip
answer=$(gw_call /send_raw_transaction "$body")
assert_json "with its row opted in, the public node takes the broadcast" "$answer" '.status == "OK"'
assert_eq "the transaction reached the public node once" 1 \
	"$(client_requests | jq -s '[.[] | select(.url == "/send_raw_transaction")] | length')"

thaw a
thaw b
own_up() { [[ $(node_field a .up) == true && $(node_field b .up) == true ]]; }
check "A and B are back" wait_until 90 own_up
before=$(client_requests | wc -l)
assert_eq "30 reads succeed with the own nodes back" 30 "$(reads 10 $((top - 30)))"
assert_eq "the public node gets no more reads once an own node can serve" "$before" \
	"$(client_requests | wc -l)"
# The transaction is mined, so that the payer's next transaction spends other outputs.
check "the nodes agree again after the thaw" wait_until 120 nodes_agree
mine 1 >/dev/null || true
check "the nodes agree on one chain again" wait_until 120 nodes_agree
