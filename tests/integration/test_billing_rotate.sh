#!/usr/bin/env bash
# A leaked token, replaced: POST /api/tenant/rotate with the current token returns a new
# token and Digest login; two gateway replicas (LISTEN/NOTIFY) refuse the old token and
# login and serve the new ones, while the plan's end date, tier and today's usage stay.
# The delay from the rotation's answer to the old token's refusal at each replica is
# measured and reported (not asserted: this machine is shared). Also: billing's own token
# key (it refuses to serve without one; the gateways run without it), and a token issued
# before that key existed, derived under ha1_key, is still handed out again by an
# idempotent replay and served.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"
# shellcheck source=tests/integration/lib_limits.sh
. "$(dirname "$0")/lib_limits.sh"
defer rm -rf "$LIM_DIR"

bt_setup
check_here "billing starts" billing_start rot invoices.free_per_hour=20 invoices.free_burst=20
API=$BL_URL

# --- keys: billing serves only with its own token key; the gateways never have one -----
billing_base_nokey() { billing_base_test | grep -v '^token_key'; }
nokey_rc=0
nokey_out=$(billing_exit nokey --base nokey invoices.free_per_hour=20 invoices.free_burst=20) ||
	nokey_rc=$?
check "billing without [billing] token_key refuses to serve (exit $nokey_rc)" \
	bash -c "(($nokey_rc != 0 && $nokey_rc != 124)) && grep -q 'token_key: required to serve' <<<\"\$1\"" _ "$nokey_out"

lim_setup
gateway_start g1 --base bare auth.ha1_key="$BT_HA1_KEY" || exit 1
gateway_start g2 --base bare auth.ha1_key="$BT_HA1_KEY" || exit 1
G=("$(gw_url g1)" "$(gw_url g2)")
check "the gateways run with ha1_key alone (no token key in their environment or config)" \
	bash -c "! tr '\0' '\n' </proc/$(gw_pid g1)/environ | grep -qi token_key"

BODY='{"jsonrpc":"2.0","id":1,"method":"get_block_count"}'
path_status() { curl -s -o /dev/null -w '%{http_code}' --data-binary "$BODY" "$1/v1/$2/json_rpc"; }
digest_status() {
	curl -s -o /dev/null -w '%{http_code}' --digest -u "$2" --data-binary "$BODY" "$1/json_rpc"
}
served_everywhere() { # TOKEN
	local g
	for g in "${G[@]}"; do [[ $(path_status "$g" "$1") == 200 ]] || return 1; done
}

# --- a tenant with some usage -----------------------------------------------------------
read -r st body <<<"$(bt_invoice rot '{"tier":"free"}' "Idempotency-Key: rot-$$-$RANDOM")"
assert_eq "a free token is provisioned (201)" 201 "$st"
old=$(jq -r .token <<<"$body")
inv=$(jq -r .id <<<"$body")
tenant=$(bt_db "SELECT tenant_id FROM invoices WHERE id = '$inv'")
old_handle=$(bt_db "SELECT handle FROM tenants WHERE id = $tenant")
check "both replicas serve the token" wait_until 15 served_everywhere "$old"
for g in "${G[@]}"; do
	assert_eq "$g: the Digest login works before the rotation" 200 "$(digest_status "$g" "$old_handle:$old")"
	for _ in 1 2 3; do path_status "$g" "$old" >/dev/null; done
done
has_usage() { (($(lim_used "$tenant") >= 10)); }
check "the requests reach usage_daily" wait_until 15 has_usage
used_before=$(lim_used "$tenant")

# --- errors -----------------------------------------------------------------------------
rotate() { curl -s -w '\n%{http_code}' -X POST "$@" "$API/api/tenant/rotate"; }
out=$(rotate)
assert_eq "no bearer token: 401" 401 "${out##*$'\n'}"
assert_json "its code is token_required" "${out%$'\n'*}" '.error.code == "token_required"'
out=$(rotate -H "Authorization: Bearer xg_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
assert_eq "a token of no tenant: 404" 404 "${out##*$'\n'}"
assert_json "its code is unknown_token" "${out%$'\n'*}" '.error.code == "unknown_token"'

# --- the rotation -----------------------------------------------------------------------
# Both replicas are polled with the old token from before the rotation until each refuses
# it (15 s bound), with /v1/<token>/usage, which the gateway answers itself (no node in the
# way). Reported: the time from the rotation's answer (the commit is before it) to the end
# of the first probe refused at each replica. The tenant is on a tier fast enough that the
# probes are never held by its burst limit.
lim_tier lt_rot 1000 100000
bt_db "UPDATE tenants SET tier_id = 'lt_rot' WHERE id = $tenant" >/dev/null
plan_before=$(bt_db "SELECT tier_id || ' ' || valid_until FROM tenants WHERE id = $tenant")
poll_refusal() { # URL OUT: the monotonic ns at which the first refused probe ended
	local end=$(($(date +%s%N) + 15000000000)) code
	while (($(date +%s%N) < end)); do
		code=$(curl -s -o /dev/null -w '%{http_code}' "$1/v1/$old/usage")
		if [[ $code == 401 ]]; then
			date +%s%N >"$2"
			return
		fi
	done
}
poll_refusal "${G[0]}" "$BT_DIR/refused.1" &
p1=$!
poll_refusal "${G[1]}" "$BT_DIR/refused.2" &
p2=$!
sleep 0.3 # both pollers are probing
out=$(rotate -H "Authorization: Bearer $old")
t0=$(date +%s%N)
wait "$p1" "$p2"
for i in 1 2; do
	refused_ms=''
	[[ -s $BT_DIR/refused.$i ]] && refused_ms=$((($(cat "$BT_DIR/refused.$i") - t0) / 1000000))
	check "replica $i refuses the old token (measured: ${refused_ms:-never} ms after the answer)" \
		test -n "$refused_ms"
	echo "# rotation: replica $i refused the old token ${refused_ms:-never} ms after billing's answer (≤ 0: before the answer reached the test; one probe is a curl run)"
done
assert_eq "the rotation answers 200" 200 "${out##*$'\n'}"
r=${out%$'\n'*}
new=$(jq -r .token <<<"$r")
new_handle=$(jq -r .handle <<<"$r")
assert_json "it returns a new token, handle, login and URL for the same tenant" "$r" \
	".tenant_id == $tenant and (.token | test(\"^xg_[A-Za-z0-9_-]{43}$\")) and .token != \"$old\" and
	 .handle != \"$old_handle\" and .login == \"\(.handle):\(.token)\" and
	 (.token as \$t | .rpc_url | endswith(\"/v1/\" + \$t)) and (.token_notice | length > 0)"
for g in "${G[@]}"; do
	assert_eq "$g serves the new token" 200 "$(path_status "$g" "$new")"
	assert_eq "$g refuses the old Digest login" 401 "$(digest_status "$g" "$old_handle:$old")"
	assert_eq "$g refuses the old handle with the new token" 401 "$(digest_status "$g" "$old_handle:$new")"
	assert_eq "$g accepts the new Digest login" 200 "$(digest_status "$g" "$(jq -r .login <<<"$r")")"
	reply=$(curl -s --data-binary "$BODY" "$g/v1/$new/json_rpc")
	assert_json "$g answers the new token's request" "$reply" '.result.count > 0'
done
assert_eq "the plan's tier and end date are unchanged" "$plan_before" \
	"$(bt_db "SELECT tier_id || ' ' || valid_until FROM tenants WHERE id = $tenant")"
check "today's usage carried over (usage_daily of the same tenant, $used_before before)" \
	bash -c "(( \$(psql -qAtX -d '$DATABASE_URL' -c \"SELECT used FROM usage_daily WHERE tenant_id = $tenant
		AND day = (now() AT TIME ZONE 'UTC')::date\") >= $used_before ))"
st=$(curl -s -H "Authorization: Bearer $new" "$API/api/tenant")
assert_json "billing shows the new token's plan with the usage so far" "$st" \
	".handle == \"$new_handle\" and .usage_today.used >= $used_before and .tier.id == \"lt_rot\""
usage=$(curl -s "${G[1]}/v1/$new/usage")
assert_json "the gateway counts the new token's usage from the old one's" "$usage" \
	".used_today >= $used_before"
out=$(rotate -H "Authorization: Bearer $old")
assert_eq "the old token cannot rotate again: 404" 404 "${out##*$'\n'}"
out=$(curl -s -w '\n%{http_code}' -H "Authorization: Bearer $old" "$API/api/tenant")
assert_eq "billing no longer knows the old token" 404 "${out##*$'\n'}"

# --- a token derived before [billing] token_key existed -------------------------------
key="rot-legacy-$$-$RANDOM"
read -r st body <<<"$(bt_invoice rot '{"tier":"free"}' "Idempotency-Key: $key")"
assert_eq "an idempotent free purchase (201)" 201 "$st"
cur=$(jq -r .token <<<"$body")
fp=$(bt_db "SELECT encode(request_fingerprint, 'hex') FROM invoices WHERE idempotency_key = '$key'")
# what billing derived before: HMAC-SHA256(ha1_key, label NUL key NUL fingerprint)
legacy=$(python3 -c '
import base64, hashlib, hmac, sys
k = bytes.fromhex(sys.argv[1])
m = b"xmrgate-idempotent-token-v1\0" + sys.argv[2].encode() + b"\0" + sys.argv[3].encode()
print("xg_" + base64.urlsafe_b64encode(hmac.new(k, m, hashlib.sha256).digest()).decode().rstrip("="))
' "$BT_HA1_KEY" "$key" "$fp")
check "the new purchase was not derived under ha1_key" test "$cur" != "$legacy"
# The row as a deployment before token_key has it: token derived under ha1_key.
bt_db "UPDATE invoices SET token_hash = sha256('$legacy'::bytea) WHERE idempotency_key = '$key';
       UPDATE tenants SET token_hash = sha256('$legacy'::bytea)
        WHERE id = (SELECT tenant_id FROM invoices WHERE idempotency_key = '$key')" >/dev/null
read -r st body <<<"$(bt_invoice rot '{"tier":"free"}' "Idempotency-Key: $key")"
assert_json "a replay hands out the token derived under ha1_key again" "$body" ".token == \"$legacy\""
check "the gateways serve that token" wait_until 15 served_everywhere "$legacy"
out=$(rotate -H "Authorization: Bearer $legacy")
assert_eq "it rotates like any token" 200 "${out##*$'\n'}"
read -r st body <<<"$(bt_invoice rot '{"tier":"free"}' "Idempotency-Key: $key")"
assert_json "after the rotation a replay shows the invoice without the old token" "$body" \
	"(has(\"token\") | not) and .status == \"provisioned\""

# --- rate limit -------------------------------------------------------------------------
tok=$(jq -r .token <<<"${out%$'\n'*}")
limited=''
for _ in $(seq 1 10); do
	out=$(curl -s -D "$BT_DIR/rl.h" -w '\n%{http_code}' -X POST -H "Authorization: Bearer $tok" \
		"$API/api/tenant/rotate")
	if [[ ${out##*$'\n'} == 429 ]]; then
		limited=${out%$'\n'*}
		break
	fi
	tok=$(jq -r .token <<<"${out%$'\n'*}")
done
assert_json "rotations from one address are rate-limited (429 rate_limited)" "${limited:-{\}}" \
	'.error.code == "rate_limited" and .retry_after > 0'
check "with Retry-After" grep -qi '^retry-after: [1-9]' "$BT_DIR/rl.h"
