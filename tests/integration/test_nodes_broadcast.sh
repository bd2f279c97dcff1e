#!/usr/bin/env bash
# Broadcast: /send_raw_transaction through the gateway reaches the pool of every healthy
# node by itself — the transactions carry do_not_relay, so no node passes them on and
# each pool is proof of the gateway's own fan-out — with the outcome per node in
# X-Xmrgate-Broadcast; with one node frozen the broadcast still succeeds on the others;
# sending the same transaction again ("already in the pool") still counts as accepted.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

check "the nodes table holds A, B and C" nodes_table "a:primary b:primary c:primary"
check_here "a tenant is granted" grant_tenant --bare sovereign 1
# The header names each node by its opaque id, n<database id>, never by its name or URL.
for n in a b c; do
	printf -v "id_$n" 'n%s' "$(psql_q "SELECT id FROM nodes WHERE name = '$n'")"
done
every_ok=$(printf '%s=ok\n' "$id_a" "$id_b" "$id_c" | sort | paste -sd,)
check_here "a gateway starts and is ready" gateway_start broadcast --base nodes
wait_until 20 bash -c "curl -s '$GW_ADMIN/readyz' | jq -e '.status == \"ready\"' >/dev/null"

# --- every node healthy ----------------------------------------------------------------
read -r hash1 hex1 < <(payer_tx_hex)
check "the payer signs a transaction without relaying it" test -n "${hex1:-}"
for url in $NODE_A_URL $NODE_B_URL $NODE_C_URL; do
	check "before the broadcast, $url does not hold it" not_in_pool_hashes "$url" "$hash1"
done
body=$(jq -cn --arg h "$hex1" '{tx_as_hex: $h, do_not_relay: true}')
headers=$(gw_headers /send_raw_transaction "$body")
answer=$(gw_call /send_raw_transaction "$body")
bc=$(sed -n 's/^X-Xmrgate-Broadcast: //Ip' <<<"$headers")
echo "# X-Xmrgate-Broadcast: $bc"
assert_json "the broadcast is accepted" "$answer" '.status == "OK"'
assert_eq "every node accepted it, per the header" "$every_ok" \
	"$(tr ',' '\n' <<<"$bc" | sort | paste -sd,)"
for url in $NODE_A_URL $NODE_B_URL $NODE_C_URL; do
	check "$url holds the transaction in its pool" in_pool_hashes "$url" "$hash1"
done

# --- "already in the pool" counts ------------------------------------------------------
again=$(gw_headers /send_raw_transaction "$body")
assert_eq "sending it again is accepted by every node (already in the pool)" "$every_ok" \
	"$(sed -n 's/^X-Xmrgate-Broadcast: //Ip' <<<"$again" | tr ',' '\n' | sort | paste -sd,)"

# --- one node frozen --------------------------------------------------------------------
# Confirm the first one so that the wallet spends other outputs in the second.
mine 1 >/dev/null
read -r hash2 hex2 < <(payer_tx_hex)
check "the payer signs a second transaction" test -n "${hex2:-}"
freeze b
body=$(jq -cn --arg h "$hex2" '{tx_as_hex: $h, do_not_relay: true}')
started=$(now_ms)
out=$(curl -sS --max-time 30 -D - -H 'Content-Type: application/json' --data-binary "$body" \
	"$GW_URL/v1/$TOKEN/send_raw_transaction" | tr -d '\r')
took=$(($(now_ms) - started))
bc=$(sed -n 's/^X-Xmrgate-Broadcast: //Ip' <<<"$out")
echo "# with B frozen: X-Xmrgate-Broadcast: $bc (${took} ms)"
assert_json "with B frozen the broadcast is still accepted" "$(sed '1,/^$/d' <<<"$out")" \
	'.status == "OK"'
check "the header reports A and C accepted it" \
	bash -c "grep -Eq '(^|,)$id_a=ok(,|\$)' <<<'$bc' && grep -Eq '(^|,)$id_c=ok(,|\$)' <<<'$bc'"
check "the header does not report B as accepting it" bash -c "! grep -Eq '(^|,)$id_b=ok(,|\$)' <<<'$bc'"
check "the header names no node by its name" bash -c "! grep -Eq '(^|,)[abc]=' <<<'$bc'"
for url in $NODE_A_URL $NODE_C_URL; do
	check "$url holds the second transaction" in_pool_hashes "$url" "$hash2"
done
thaw b

# Leave clean pools and one chain for the next test: a thawed node may take a while to
# reconnect to its peers, so wait for it before and after the last block.
check "B answers again after the thaw" wait_until 60 curl -sf -o /dev/null "$NODE_B_URL/get_height"
wait_until 120 nodes_agree || true
mine 1 >/dev/null || true
check "the nodes agree on one chain again" wait_until 120 nodes_agree
