#!/usr/bin/env bash
# The stack's wallets: the payer is funded, and a payment to a fresh subaddress of
# the view-only billing wallet shows up there in the pool, then confirmed.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

assert_json "the payer has an unlocked balance" \
	"$(rpc "$PAYER_WALLET_URL" get_balance '{"account_index":0}')" '.unlocked_balance > 0'
assert_eq "the billing wallet serves the merchant's address" "$MERCHANT_ADDRESS" \
	"$(rpc "$BILLING_WALLET_URL" get_address '{"account_index":0}' | jq -r '.address')"
assert_json "the billing wallet is view-only" \
	"$(rpc_error "$BILLING_WALLET_URL" query_key '{"key_type":"spend_key"}')" \
	'.message | test("watch-only")'

sub=$(rpc "$BILLING_WALLET_URL" create_address "{\"account_index\":0,\"label\":\"stack-test-$$\"}")
assert_json "the view-only wallet creates a subaddress" "$sub" \
	'.address_index > 0 and (.address | startswith("8"))'
sub_addr=$(jq -r '.address' <<<"$sub")
sub_index=$(jq -r '.address_index' <<<"$sub")

# An amount no other test pays: 0.1 XMR plus a per-run offset, in piconero.
amount=$((100000000000 + (RANDOM * 32768 + RANDOM) * 1000))
sent=$(rpc "$PAYER_WALLET_URL" transfer "$(jq -cn --arg a "$sub_addr" --argjson n "$amount" \
	'{destinations: [{address: $a, amount: $n}], account_index: 0, priority: 0}')")
assert_json "the payer sends $amount piconero to the subaddress" "$sent" \
	'(.tx_hash | length) == 64 and .fee > 0'
txid=$(jq -r '.tx_hash' <<<"$sent")

# transfers_of KIND: the view-only wallet's transfers of that kind for our txid.
transfers_of() {
	rpc "$BILLING_WALLET_URL" refresh >/dev/null &&
		rpc "$BILLING_WALLET_URL" get_transfers "{\"$1\":true}" |
		jq -c --arg t "$txid" "[.$1 // [] | .[] | select(.txid == \$t)]"
}
seen_in() { transfers_of "$1" | jq -e 'length == 1' >/dev/null; }

check "the view-only wallet sees the payment in the pool within 30 s" wait_until 30 seen_in pool
pool=$(transfers_of pool)
assert_json "the pool transfer has the amount paid, in piconero" "$pool" ".[0].amount == $amount"
assert_json "the pool transfer names the subaddress" "$pool" \
	".[0].subaddr_index.major == 0 and .[0].subaddr_index.minor == $sub_index and
	 .[0].address == \"$sub_addr\""
assert_json "the pool transfer is unconfirmed" "$pool" '.[0].type == "pool" and .[0].height == 0'

check "one block is mined" mine 1
check "the payment moves from pool to in within 30 s" wait_until 30 seen_in in
incoming=$(transfers_of in)
assert_json "the confirmed transfer has the amount and at least 1 confirmation" "$incoming" \
	".[0].amount == $amount and .[0].confirmations >= 1 and .[0].subaddr_index.minor == $sub_index"
assert_json "it has left the pool" "$(transfers_of pool)" 'length == 0'
