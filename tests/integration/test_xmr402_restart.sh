#!/usr/bin/env bash
# XMR402: billing restarted (kill -9) between the proof and the confirmation threshold.
# The proven payment is already in the payments table, so whichever comes first after the
# restart — the poller or the agent's next proof — settles the invoice, and it completes
# once: one payment row, one tenant, the same token for every later proof.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/xmr402_lib.sh
. "$(dirname "$0")/xmr402_lib.sh"

check_here "the test tier confirms after $X4_CONFIRMATIONS blocks" x4_setup || exit 1
# the extended flow (202 while confirming) is what this test restarts billing in
X4_MODE=confirmations
check "the stack runs billing" xg_pid_owned "$XG_VAR/run/billing.pid" || exit 1

x4_call ""
assert_eq "a challenge" 402 "$X4_STATUS" || exit 1
ADDR=$(x4_param address) AMOUNT=$(x4_param amount) MSG=$(x4_param message)
INV=$(jq -r '.invoice' <<<"$X4_BODY")
TXID=$(payer_pays "$ADDR" "$AMOUNT")
PROOF=$(x4_proof "$TXID" "$ADDR" "$MSG")
x4_call "$(x4_auth "$TXID" "$PROOF")"
assert_eq "the proof is accepted while confirming: 202" 202 "$X4_STATUS"
assert_eq "the payment is recorded" 1 "$(psql_q "SELECT count(*) FROM payments WHERE txid = '$TXID'")"

check_here "billing killed (-9) and started again with the same command line" \
	stack_billing_restart --kill
mine "$X4_CONFIRMATIONS" >/dev/null
provisioned() { [[ $(psql_q "SELECT state FROM invoices WHERE id = '$INV'") == provisioned ]]; }
check "after the restart the invoice reaches the threshold and is provisioned" \
	xg_wait_until 60 provisioned
x4_call "$(x4_auth "$TXID" "$PROOF")"
assert_eq "the agent's retry is served" 200 "$X4_STATUS"
TOKEN=$(x4_header X-XMR402-Token)
x4_call "$(x4_auth "$TXID" "$PROOF" "$INV")"
assert_eq "again: the same token" "$TOKEN" "$(x4_header X-XMR402-Token)"
assert_eq "one payment row" 1 "$(psql_q "SELECT count(*) FROM payments WHERE txid = '$TXID'")"
assert_eq "one tenant, the invoice's" 1 "$(psql_q "SELECT count(*) FROM tenants t JOIN invoices i
	ON i.tenant_id = t.id WHERE i.id = '$INV' AND t.token_hash = i.token_hash")"
assert_eq "paid once" "$AMOUNT" "$(psql_q "SELECT paid FROM invoices WHERE id = '$INV'")"
hash=$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)
assert_eq "no other tenant has that token" 1 \
	"$(psql_q "SELECT count(*) FROM tenants WHERE token_hash = decode('$hash', 'hex')")"
reply=$(rpc "$GATEWAY_URL/v1/$TOKEN" get_block_count 2>&1)
check "the token works at the gateway" xg_json_holds '.count > 0' "$reply"

# ---- the operator's 0-conf option ----------------------------------------------------------
# billing started again with [xmr402] zero_conf_max above the price: a payment still in the
# pool provisions at once (confirmations_required 0 on the invoice); then the stack's own
# configuration (off) comes back.
check_here "billing restarted with zero_conf_max = 1 XMR" \
	stack_billing_restart xmr402.zero_conf_max=1000000000000
defer stack_billing_restart
x4_call ""
Z_ADDR=$(x4_param address) Z_AMOUNT=$(x4_param amount) Z_MSG=$(x4_param message)
assert_json "the challenge says 0 confirmations" "$X4_BODY" '.confirmations_required == 0'
Z_TXID=$(payer_pays "$Z_ADDR" "$Z_AMOUNT")
x4_call "$(x4_auth "$Z_TXID" "$(x4_proof "$Z_TXID" "$Z_ADDR" "$Z_MSG")")"
assert_eq "a payment still in the pool is served at once" 200 "$X4_STATUS"
assert_eq "while its transaction is unconfirmed" pool \
	"$(psql_q "SELECT state FROM payments WHERE txid = '$Z_TXID'")"
