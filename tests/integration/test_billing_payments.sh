#!/usr/bin/env bash
# Payments through the real view-only wallet: exact, 1% short (accepted), 5% short
# (underpaid, then a second payment covers it: two transactions add up), overpaid
# (recorded), paid after expiry (late, honoured within the grace period), and a renewal
# with a tier change onto a dearer tier: the time left is carried at the price ratio, and
# 300 dust payments to the renewal subaddress do not hide the real one.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"

bt_setup
PRICE=10000000000 # 0.01 XMR a month
bt_tier bt-pay "$PRICE" 3
bt_tier bt-pay-plus $((PRICE * 2)) 3
check_here "billing (leader) starts" billing_start leader invoices.create_burst=100
check_here "billing (second instance, short quotes) starts" billing_start shortttl \
	invoices.ttl=5s invoices.create_burst=100

field() { jq -r ".$2" <<<"$1"; }

exact=$(bt_new_invoice leader '{"tier":"bt-pay","months":1}')
short1=$(bt_new_invoice leader '{"tier":"bt-pay","months":1}')
short5=$(bt_new_invoice leader '{"tier":"bt-pay","months":1}')
over=$(bt_new_invoice leader '{"tier":"bt-pay","months":1}')
late=$(bt_new_invoice shortttl '{"tier":"bt-pay","months":1}')
for inv in "$exact" "$short1" "$short5" "$over" "$late"; do
	assert_json "invoice $(field "$inv" id) is pending at 0.01 XMR" "$inv" \
		".status == \"pending\" and .amount == \"$PRICE\""
done

tx_exact=$(payer_pays "$(field "$exact" address)" "$PRICE")
payer_pays "$(field "$short1" address)" $((PRICE * 99 / 100)) >/dev/null
payer_pays "$(field "$short5" address)" $((PRICE * 95 / 100)) >/dev/null
payer_pays "$(field "$over" address)" $((PRICE + 12345)) >/dev/null
E=$(field "$exact" id) S1=$(field "$short1" id) S5=$(field "$short5" id) O=$(field "$over" id)
L=$(field "$late" id)

check "exact payment: seen while in the pool" bt_wait_status leader "$E" seen 30
assert_json "seen: 0 confirmations, the txid and amount listed" "$(bt_get leader "$E")" \
	".confirmations == 0 and .paid == \"$PRICE\" and .remaining == \"0\" and
	 (.payments | length == 1) and .payments[0].txid == \"$tx_exact\" and
	 .payments[0].confirmations == 0 and .payments[0].state == \"pool\""
check "5% short: underpaid" bt_wait_status leader "$S5" underpaid 30
assert_json "underpaid shows the remaining amount and a URI for it" "$(bt_get leader "$S5")" \
	".remaining == \"$((PRICE * 5 / 100))\" and .paid == \"$((PRICE * 95 / 100))\" and
	 (.remaining_uri | endswith(\"tx_amount=0.0005\"))"

gw_status() { # TOKEN: the gateway's HTTP status for get_info with the path token
	curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary '{"jsonrpc":"2.0","id":"0","method":"get_info"}' "$GATEWAY_URL/v1/$1/json_rpc"
}
if [[ -n ${GATEWAY_URL:-} ]]; then
	assert_eq "before provisioning the token does not work at the gateway" 401 \
		"$(gw_status "$(field "$exact" token)")"
fi
check "one block is mined" mine 1
is_confirming_1() { bt_get leader "$E" | jq -e '.status == "confirming" and .confirmations == 1' >/dev/null; }
check "exact payment: confirming with 1 confirmation" wait_until 30 is_confirming_1

payer_pays "$(field "$short5" address)" $((PRICE * 5 / 100)) >/dev/null
check "5% short, second payment in the pool: seen" bt_wait_status leader "$S5" seen 30
check "three more blocks are mined" mine 3
check "exact payment: provisioned at 3 confirmations" bt_wait_status leader "$E" provisioned 30
check "1% short: provisioned" bt_wait_status leader "$S1" provisioned 30
check "5% short plus the rest: provisioned" bt_wait_status leader "$S5" provisioned 30
check "overpaid: provisioned" bt_wait_status leader "$O" provisioned 30

got=$(bt_get leader "$E")
assert_json "provisioned: valid_until and the connection settings" "$got" \
	'.valid_until != null and (.connection.username | test("^t_[a-z2-7]{12}$")) and
	 .confirmations >= 3'
token=$(field "$exact" token)
if [[ -n ${GATEWAY_URL:-} ]]; then
	gw_ok() { [[ $(gw_status "$token") == 200 ]]; }
	check "the token works at the gateway once provisioned, without a restart" wait_until 5 gw_ok
else
	echo "# no gateway in this stack (GATEWAY_URL unset): its check is not made"
fi
assert_eq "the tenant exists once, with the token's hash, the tier and the subaddress" 1 \
	"$(bt_db "SELECT count(*) FROM tenants t JOIN invoices i ON i.tenant_id = t.id
	          WHERE i.id = '$E' AND t.token_hash = sha256('$token'::bytea)
	            AND t.tier_id = 'bt-pay' AND t.subaddress_index = i.subaddress_index
	            AND t.valid_until BETWEEN now() + interval '1 month' - interval '5 min'
	                                  AND now() + interval '1 month'")"
assert_eq "one payment row per transfer" 1 "$(bt_db "SELECT count(*) FROM payments WHERE txid = '$tx_exact'")"
assert_json "two transactions added up" "$(bt_get leader "$S5")" \
	"(.payments | length == 2) and .paid == \"$PRICE\""
assert_json "overpayment recorded" "$(bt_get leader "$O")" \
	".overpaid == \"12345\" and .paid == \"$((PRICE + 12345))\""
assert_json "1% short: paid as received, nothing remaining" "$(bt_get leader "$S1")" \
	".paid == \"$((PRICE * 99 / 100))\" and .remaining == \"0\""

# --- paid after expiry ---------------------------------------------------------------
check "an unpaid invoice expires after its quote's lifetime" bt_wait_status leader "$L" expired 30
payer_pays "$(field "$late" address)" "$PRICE" >/dev/null
check "paid after expiry: late" bt_wait_status leader "$L" late 30
assert_json "late within the grace period at the locked amount: honoured" "$(bt_get leader "$L")" \
	'.late_policy == "honoured"'
check "three blocks are mined" mine 3
check "late and honoured: provisioned" bt_wait_status leader "$L" provisioned 30

# --- renewal with a tier change ---------------------------------------------------------
us() { echo "(extract(epoch FROM $1) * 1000000)::bigint"; } # a timestamp in microseconds
before=$(bt_db "SELECT $(us t.valid_until) FROM tenants t
                 JOIN invoices i ON i.tenant_id = t.id WHERE i.id = '$E'")
renew=$(bt_new_invoice leader "{\"tier\":\"bt-pay-plus\",\"months\":2,\"token\":\"$token\"}")
assert_json "a renewal is an invoice to the tenant's own subaddress, without a new token" "$renew" \
	".kind == \"renewal\" and .address == \"$(field "$exact" address)\" and
	 .amount == \"$((PRICE * 4))\" and (has(\"token\") | not)"
R=$(field "$renew" id)
# Dust first: 300 transfers of 1 piconero to the renewal subaddress, settled long ago
# (below the poller's window). The invoice is summed whole, whatever their number.
bt_db "INSERT INTO payments (txid, subaddress_index, invoice_id, amount, height, confirmations,
                             state, source)
       SELECT encode(sha256(('dust-$R-' || n)::bytea), 'hex'), i.subaddress_index, i.id, 1, 1,
              100, 'confirmed', 'poller'
         FROM invoices i, generate_series(1, 300) n WHERE i.id = '$R'" >/dev/null
payer_pays "$(field "$renew" address)" $((PRICE * 4)) >/dev/null
check "the renewal payment is seen" bt_wait_status leader "$R" seen 30
check "three blocks are mined" mine 3
check "the renewal is provisioned" bt_wait_status leader "$R" provisioned 30
assert_json "the dust and the real payment are all counted" "$(bt_get leader "$R")" \
	".paid == \"$((PRICE * 4 + 300))\" and .remaining == \"0\""
after=$(bt_db "SELECT $(us t.valid_until) FROM tenants t
                JOIN invoices i ON i.tenant_id = t.id WHERE i.id = '$E'")
# The month left on bt-pay is worth half as long on bt-pay-plus (twice the price), counted
# from the settling transaction's now() (the invoice's provisioned_at), then 2 months.
expected=$(bt_db "SELECT $(us "provisioned_at + (($before - $(us provisioned_at)) / 2)
                              * interval '1 microsecond' + interval '2 months'")
                    FROM invoices WHERE id = '$R'")
assert_eq "valid_until = now + half the time left (price ratio 1:2) + 2 months" "$expected" "$after"
assert_eq "the tier changed to the renewal's" bt-pay-plus \
	"$(bt_db "SELECT t.tier_id FROM tenants t JOIN invoices i ON i.tenant_id = t.id WHERE i.id = '$E'")"
assert_eq "still one tenant for that token" 1 \
	"$(bt_db "SELECT count(*) FROM tenants WHERE token_hash = sha256('$token'::bytea)")"
