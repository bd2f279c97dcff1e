#!/usr/bin/env bash
# Billing's API without payments: the plans and their quotes (a local rate source),
# every documented error, the free tier (a working token at once, rate-limited per
# client), Idempotency-Key, and a quote refused when the rate is stale.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"

bt_setup
RATE_PORT=$((XG_PORT_BASE + 79))
RATE_FILE=$BT_DIR/rate.json
echo '{"monero":{"usd":150.00}}' >"$RATE_FILE"
defer xg_kill_pidfiles 10 "$BT_DIR/rate.pid"
xg_spawn "$BT_DIR/rate.pid" "$RATE_FILE" "$BT_DIR/rate.log" \
	"$XG_REPO/build/release/tests/tools/rate_server" "$RATE_PORT" "$RATE_FILE"
bt_tier bt-xmr 10000000000 2
check_here "billing starts" billing_start api \
	pricing.rate_url="http://127.0.0.1:$RATE_PORT/simple/price" pricing.rate_path=monero.usd \
	pricing.refresh=1s pricing.max_age=3s \
	invoices.free_per_hour=2 invoices.free_burst=2 invoices.create_burst=200
API=$BL_URL API_CONF=$BL_CONF

# --- plans and quotes --------------------------------------------------------------
has_quote() { curl -s "$API/api/tiers" | jq -e '.tiers[] | select(.id == "wallet") | .quote_per_month != null' >/dev/null; }
check "a USD rate arrives from the rate source" wait_until 10 has_quote
tiers=$(curl -s "$API/api/tiers")
assert_json "tiers list free and paid plans with rate, quota and confirmations" "$tiers" \
	'[.tiers[].id] | index("free") != null and index("wallet") != null'
# $5.00 at 150 USD/XMR = 0.0333… XMR, rounded up to the piconero
assert_json "the wallet tier's quote is exact and rounded up" "$tiers" \
	'.tiers[] | select(.id == "wallet") | .quote_per_month.amount == "33333333334" and
	 .quote_per_month.amount_xmr == "0.033333333334" and .price_per_month.amount == "5.00" and
	 .confirmations == 10 and .burst_rps == 20'

read -r st body <<<"$(bt_invoice api '{"tier":"wallet","months":3}')"
assert_eq "a fiat purchase is created (201)" 201 "$st"
assert_json "it is pending at the locked quote with a subaddress, URI and token" "$body" \
	'.status == "pending" and .amount == "100000000000" and .amount_xmr == "0.1" and
	 (.address | startswith("8")) and .uri == "monero:\(.address)?tx_amount=0.1" and
	 (.token | test("^xg_[A-Za-z0-9_-]{43}$")) and .price.currency == "USD" and
	 .confirmations_required == 10 and .paid == "0" and .remaining == "100000000000"'
id=$(jq -r .id <<<"$body")
token=$(jq -r .token <<<"$body")
assert_eq "the invoice stores the token's hash, never the token" 1 \
	"$(bt_db "SELECT count(*) FROM invoices WHERE id = '$id'
	          AND token_hash = sha256('$token'::bytea) AND state = 'pending'")"
assert_eq "its subaddress index is stored with it" 1 \
	"$(bt_db "SELECT count(*) FROM invoices WHERE id = '$id' AND subaddress_index > 0")"
got=$(bt_get api "$id")
assert_json "GET shows it without the token" "$got" \
	".id == \"$id\" and .status == \"pending\" and (has(\"token\") | not) and
	 .expires_at != null and .payments == []"

# --- errors --------------------------------------------------------------------------
err_is() { # NAME EXPECTED_STATUS CODE STATUS BODY
	assert_eq "$1: HTTP $2" "$2" "$4"
	assert_json "$1: error code $3" "$5" ".error.code == \"$3\" and (.error.message | length > 0)"
}
read -r st body <<<"$(bt_invoice api '{"tier":"wallet",')"
err_is "malformed JSON" 400 malformed_json "$st" "$body"
read -r st body <<<"$(bt_invoice api '{"tier":"gold","months":1}')"
err_is "unknown tier" 400 unknown_tier "$st" "$body"
read -r st body <<<"$(bt_invoice api '{"tier":"wallet","months":13}')"
err_is "months over the tier's maximum" 400 months_out_of_range "$st" "$body"
read -r st body <<<"$(bt_invoice api '{"tier":"wallet","months":0}')"
err_is "zero months" 400 months_out_of_range "$st" "$body"
read -r st body <<<"$(bt_invoice api '{"tier":"wallet","months":1,"token":"xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"}')"
err_is "a renewal token that is not a tenant" 404 unknown_token "$st" "$body"
body=$(curl -s -w '\n%{http_code}' "$API/api/invoices/00000000-0000-4000-8000-000000000000")
err_is "unknown invoice" 404 invoice_not_found "${body##*$'\n'}" "${body%$'\n'*}"
body=$(curl -s -w '\n%{http_code}' "$API/api/invoices/not-a-uuid")
err_is "a malformed invoice id" 404 invoice_not_found "${body##*$'\n'}" "${body%$'\n'*}"

# --- Idempotency-Key -------------------------------------------------------------------
key="bt-$$-$RANDOM"
read -r st1 b1 <<<"$(bt_invoice api '{"tier":"bt-xmr","months":2}' "Idempotency-Key: $key")"
read -r _ b2 <<<"$(bt_invoice api '{ "months": 2, "tier": "bt-xmr" }' "Idempotency-Key: $key")"
assert_eq "first request with a key: 201" 201 "$st1"
assert_json "the XMR-priced tier needs no rate" "$b1" '.amount == "20000000000" and .price.rate == null'
assert_eq "same key and body: same invoice" "$(jq -r .id <<<"$b1")" "$(jq -r .id <<<"$b2")"
assert_eq "same key and body: the same token again" "$(jq -r .token <<<"$b1")" "$(jq -r .token <<<"$b2")"
assert_eq "one invoice row for the key" 1 "$(bt_db "SELECT count(*) FROM invoices WHERE idempotency_key = '$key'")"
read -r st body <<<"$(bt_invoice api '{"tier":"bt-xmr","months":3}' "Idempotency-Key: $key")"
err_is "same key, different body" 409 idempotency_key_reused "$st" "$body"

# --- the free tier -------------------------------------------------------------------
free_key="bt-free-$$-$RANDOM"
read -r st body <<<"$(bt_invoice api '{"tier":"free"}' "Idempotency-Key: $free_key")"
assert_eq "free tier: 201" 201 "$st"
assert_json "free tier: provisioned at once, no address, with a token and settings" "$body" \
	'.status == "provisioned" and .amount == "0" and .address == null and
	 (.token | startswith("xg_")) and .valid_until != null and
	 (.connection.username | test("^t_[a-z2-7]{12}$"))'
free_token=$(jq -r .token <<<"$body")
assert_eq "free tier: the tenant exists with the token's hash" 1 \
	"$(bt_db "SELECT count(*) FROM tenants WHERE tier_id = 'free'
	          AND token_hash = sha256('$free_token'::bytea) AND valid_until > now()")"
read -r st body <<<"$(bt_invoice api '{"tier":"free"}')"
assert_eq "free tier: a second one from the same address (burst 2)" 201 "$st"
out=$(curl -s -D - -H 'Content-Type: application/json' --data-binary '{"tier":"free"}' "$API/api/invoices")
assert_json "free tier: the third is refused with 429 rate_limited" "$(sed -n '/^{/,$p' <<<"$out")" \
	'.error.code == "rate_limited"'
check "free tier: the 429 says when to retry" grep -qi '^Retry-After: [1-9]' <<<"$out"
# The limit comes before the Idempotency-Key lookup: a replay answers with the token, so
# unlimited replays would let anyone guess weak keys for tokens.
out=$(curl -s -D - -H 'Content-Type: application/json' -H "Idempotency-Key: $free_key" \
	--data-binary '{"tier":"free"}' "$API/api/invoices")
assert_json "free tier: a replay of the first, over the limit, is refused too (no token)" \
	"$(sed -n '/^{/,$p' <<<"$out")" '.error.code == "rate_limited" and (has("token") | not)'
read -r st body <<<"$(bt_invoice api "{\"tier\":\"free\",\"token\":\"$free_token\"}")"
err_is "the free tier cannot be renewed" 400 free_tier_not_renewable "$st" "$body"

# --- a tier change that cannot be priced ------------------------------------------------
# Time left on a USD-priced tier has no locked rate to be valued in XMR (docs/BILLING.md).
granted=$("$XG_REPO/bin/xmrgate-billing" --config "$API_CONF" grant --tier wallet --days 30 2>/dev/null |
	sed -n 's/^TOKEN=//p')
read -r st body <<<"$(bt_invoice api "{\"tier\":\"bt-xmr\",\"months\":1,\"token\":\"$granted\"}")"
err_is "time left on a USD tier onto an XMR-priced one" 400 tier_change_unpriced "$st" "$body"

# --- a stale rate ------------------------------------------------------------------------
rm -f "$RATE_FILE"
stale() { [[ $(bt_invoice api '{"tier":"wallet","months":1}' | cut -d' ' -f1) == 503 ]]; }
check "with the rate source down, fiat invoices are refused within max_age" wait_until 10 stale
read -r st body <<<"$(bt_invoice api '{"tier":"wallet","months":1}')"
err_is "no fresh rate" 503 rate_unavailable "$st" "$body"
assert_json "the invoice issued before keeps its locked quote" "$(bt_get api "$id")" \
	'.status == "pending" and .amount == "100000000000"'
read -r st body <<<"$(bt_invoice api '{"tier":"bt-xmr","months":1}')"
assert_eq "XMR-priced tiers are still sold without a rate" 201 "$st"
