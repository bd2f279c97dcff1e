#!/usr/bin/env bash
# Rotating the HA1 wrapping key ([auth] ha1_key = billing's [gateway] ha1_key) with no
# failed Digest login (docs/OPERATIONS.md, "Rotating the HA1 key"), on a database of the
# test's own in front of node A:
#   - why the previous key is needed: a gateway given only the new key K2 refuses Digest
#     (401) for a tenant made under K1, while its token in the path still works;
#   - a gateway and billing restarted with ha1_key = K2, ha1_key_previous = K1; a curl
#     --digest login loop over the K1 tenants runs from then on through billing's restart,
#     a token rotation, a tenant granted under K2 and `xmrgate-billing rewrap-ha1`: no
#     login fails;
#   - billing counts an XMR402 agent's address as its own when the gateway's MAC over it is
#     under K2 or K1, not under another key;
#   - rewrap-ha1's counts: the K1 rows re-wrapped, the K2 ones already current, a row
#     under a third key K3 unwrappable (left alone); a purchase not yet provisioned is
#     re-wrapped too; a second run changes nothing;
#   - the previous key dropped from the gateway (restart): Digest works for every tenant,
#     their rows all under K2 now; the K3 tenant still has its token only.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"

K1=$(printf 'a1%.0s' {1..32})
K2=$(printf 'b2%.0s' {1..32})
K3=$(printf 'c3%.0s' {1..32})
BILLING=${XG_BILLING_BIN:-$XG_REPO/bin/xmrgate-billing}
work=$XG_VAR/ops-ha1-rotation
rm -rf "$work"
mkdir -p "$work"

check_here "a database for this test is migrated" scratch_db xmrgate_ha1_rotation a="$NODE_A_URL"
DB=$SCRATCH_DB_URL
db() { psql -X -q -At -v ON_ERROR_STOP=1 "$DB" -c "$1"; }

# billing_cmd KEY [PREVIOUS] -- ARGS...: billing's subcommand on the test's database with
# that ha1_key (and ha1_key_previous), nothing else configured.
billing_cmd() {
	local key=$1 prev=''
	shift
	if [[ $1 != -- ]]; then
		prev=$1
		shift
	fi
	shift
	XMRGATE_DATABASE_URL=$DB XMRGATE_GATEWAY_HA1_KEY=$key XMRGATE_GATEWAY_HA1_KEY_PREVIOUS=$prev \
		"$BILLING" "$@"
}
# grant KEY: a wallet-tier tenant wrapped under KEY; sets HANDLE and TOKEN.
grant() {
	local out
	out=$(billing_cmd "$1" -- grant --tier wallet --days 1 2>/dev/null) || return 1
	HANDLE=$(sed -n 's/^HANDLE=//p' <<<"$out")
	TOKEN=$(sed -n 's/^TOKEN=//p' <<<"$out")
	[[ -n $HANDLE && -n $TOKEN ]]
}

BODY='{"jsonrpc":"2.0","id":1,"method":"get_block_count"}'
digest_status() { # GATEWAY_URL HANDLE:TOKEN
	curl -s -o /dev/null -w '%{http_code}' --max-time 10 --digest -u "$2" --data-binary "$BODY" \
		"$1/json_rpc"
}
path_status() { # GATEWAY_URL TOKEN
	curl -s -o /dev/null -w '%{http_code}' --max-time 10 --data-binary "$BODY" "$1/v1/$2/json_rpc"
}

# --- tenants under K1, one under K3 -----------------------------------------------------------
OLD=() # HANDLE:TOKEN of the K1 tenants the loop logs in with
for i in 1 2 3 4 5; do
	check_here "K1 tenant $i is granted" grant "$K1" || exit 1
	OLD+=("$HANDLE:$TOKEN")
done
first_handle=${OLD[0]%%:*} first_token=${OLD[0]#*:}
check_here "a K1 tenant whose token will be rotated is granted" grant "$K1" || exit 1
rot_token=$TOKEN
check_here "a tenant under a third key K3 is granted" grant "$K3" || exit 1
k3_handle=$HANDLE k3_token=$TOKEN

# --- the configurations a rotation must refuse --------------------------------------------
rc=0
out=$(gateway_exit same --base bare database.url="$DB" auth.ha1_key="$K1" auth.ha1_key_previous="$K1") ||
	rc=$?
check "a gateway with ha1_key_previous = ha1_key refuses to start (exit $rc)" \
	bash -c "(($rc != 0 && $rc != 124)) && grep -q 'ha1_key_previous: must differ' <<<\"\$1\"" _ "$out"
rc=0
out=$(billing_cmd "$K1" "${K1^^}" -- rewrap-ha1 2>&1) || rc=$?
check "billing with [gateway] ha1_key_previous = ha1_key (other case) refuses it (exit $rc)" \
	bash -c "(($rc == 2)) && grep -q 'ha1_key_previous: must differ' <<<\"\$1\"" _ "$out"
rc=0
out=$(billing_cmd "$K1" 1234 -- rewrap-ha1 2>&1) || rc=$?
check "billing with a malformed ha1_key_previous refuses it (exit $rc)" \
	bash -c "(($rc == 2)) && grep -q 'ha1_key_previous: expected 64 hex digits' <<<\"\$1\"" _ "$out"

# --- why the previous key is needed -------------------------------------------------------------
check_here "a gateway with the new key K2 alone starts" \
	gateway_start k2only --base bare database.url="$DB" auth.ha1_key="$K2" || exit 1
assert_eq "K2 alone: Digest for a K1 tenant is refused" 401 "$(digest_status "$GW_URL" "${OLD[0]}")"
assert_eq "K2 alone: that tenant's token in the path still works" 200 \
	"$(path_status "$GW_URL" "$first_token")"
gateway_stop k2only

# --- before: everything under K1 ------------------------------------------------------------------
check_here "the gateway starts on K1" \
	gateway_start rot --base bare database.url="$DB" auth.ha1_key="$K1" || exit 1
GW=$GW_URL
ok=0
for login in "${OLD[@]}"; do [[ $(digest_status "$GW" "$login") == 200 ]] && ok=$((ok + 1)); done
assert_eq "K1: Digest works for the five K1 tenants" 5 "$ok"
assert_eq "K1: Digest is refused for the K3 tenant" 401 "$(digest_status "$GW" "$k3_handle:$k3_token")"
check_here "billing serves on K1" billing_start bl database.url="$DB" gateway.ha1_key="$K1" || exit 1

# --- the rotation: the gateway, then billing, on K2 with K1 as the previous key ----------------
check "the gateway's file gets K2 and the previous key K1" \
	gateway_config rot --base bare database.url="$DB" auth.ha1_key="$K2" auth.ha1_key_previous="$K1"
check_here "the gateway restarts on it" gateway_restart rot || exit 1
check "it says it is rotating" gw_logged ha1_key_rotating rot

loop_log=$work/digest-loop.log stop_file=$work/digest-loop.stop
: >"$loop_log"
digest_loop() {
	local i=0
	while [[ ! -e $stop_file ]]; do
		echo "$(digest_status "$GW" "${OLD[i % ${#OLD[@]}]}") ${OLD[i % ${#OLD[@]}]%%:*}" >>"$loop_log"
		i=$((i + 1))
	done
}
digest_loop &
loop_pid=$!
defer stop_pid "$loop_pid"
logins() { wc -l <"$loop_log"; }
logins_past() { (($(logins) >= $1)); }
check "the Digest loop runs" wait_until 20 logins_past 10

# Billing stopped, then started again on K2 with K1 as the previous key: as a second
# instance on ports of its own, since the port the first one just released may be bound by
# then (the test ports lie in the kernel's ephemeral range: another program's outgoing
# connection can take one; seen as "Address already in use").
check_here "billing on K1 stops" billing_stop bl
check_here "billing starts again on K2 with the previous key K1" \
	billing_start bl2 database.url="$DB" gateway.ha1_key="$K2" gateway.ha1_key_previous="$K1" || exit 1

# The client address a gateway vouches for with an XMR402 challenge (X-Xmrgate-Client,
# MAC under ha1_key): billing counts its per-client limit under that address when the MAC
# is under K2 or K1, under the connection's address otherwise. One challenge per client.
check_here "a billing on the stack's settings, K2 and K1, one challenge per client, starts" \
	billing_start x4 --base stack database.url="$DB" gateway.ha1_key="$K2" \
	gateway.ha1_key_previous="$K1" invoices.create_burst=1 invoices.create_per_hour=1 || exit 1
client_sig() { # KEY CLIENT
	/usr/bin/python3 -c 'import hashlib, hmac, sys
print(hmac.new(bytes.fromhex(sys.argv[1]), b"xmrgate-xmr402-client-v1\0" + sys.argv[2].encode(),
               hashlib.sha256).hexdigest())' "$1" "$2"
}
challenge() { # [CLIENT SIG]
	local h=()
	(($# == 0)) || h=(-H "X-Xmrgate-Client: $1" -H "X-Xmrgate-Client-Sig: $2")
	curl -s -o /dev/null -w '%{http_code}' --max-time 20 -H 'Content-Type: application/json' \
		"${h[@]}" --data-binary '{"tier":"wallet"}' "$BL_URL/api/xmr402/challenge"
}
c1=$(challenge)
check "a challenge from this address is made (HTTP $c1)" test "${c1:0:1}" = 2
assert_eq "a second one from it is refused" 429 "$(challenge)"
c3=$(challenge 198.51.100.1 "$(client_sig "$K2" 198.51.100.1)")
check "an agent address under the current key's MAC counts as its own (HTTP $c3)" test "${c3:0:1}" = 2
c4=$(challenge 198.51.100.2 "$(client_sig "$K1" 198.51.100.2)")
check "an agent address under the previous key's MAC counts as its own too (HTTP $c4)" \
	test "${c4:0:1}" = 2
assert_eq "one under another key's MAC counts as this address (refused)" 429 \
	"$(challenge 198.51.100.3 "$(client_sig "$K3" 198.51.100.3)")"
billing_stop x4
BL_URL=$(billing_url bl2)

# A token rotation through billing now: its new HA1 is wrapped under K2.
out=$(curl -s -w '\n%{http_code}' -X POST -H "Authorization: Bearer $rot_token" \
	"$BL_URL/api/tenant/rotate")
assert_eq "a token rotation during the key rotation: 200" 200 "${out##*$'\n'}"
rot_login=$(jq -r '"\(.handle):\(.token)"' <<<"${out%$'\n'*}" 2>/dev/null)
check "its new login works with Digest at the gateway (NOTIFY)" \
	wait_until 15 bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' --digest -u '$rot_login' \
		--data-binary '$BODY' '$GW/json_rpc') == 200 ]]"
check_here "a tenant granted by billing on K2" grant "$K2" || exit 1
new_login=$HANDLE:$TOKEN
check "its Digest login works at the gateway" \
	wait_until 15 bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' --digest -u '$new_login' \
		--data-binary '$BODY' '$GW/json_rpc') == 200 ]]"

# A purchase not yet paid, with credentials wrapped under K1 (the first tenant's pair, so
# the wrap's handle binding holds): once paid it becomes a tenant with this HA1.
db "INSERT INTO invoices (kind, channel, tier_id, months, token_hash, digest_ha1, handle, amount,
        subaddress_index, subaddress, confirmations_required, price_currency, price_minor,
        expires_at)
    SELECT 'purchase', 'api', 'wallet', 1, decode(md5(random()::text) || md5(random()::text), 'hex'),
           digest_ha1, handle, 1000000, 424242, 'test-subaddress', 10, 'USD', 500,
           now() + interval '1 hour'
      FROM tenants WHERE handle = '$first_handle'" >/dev/null
invoice_id=$(db "SELECT id FROM invoices WHERE subaddress_index = 424242")
check "a K1 purchase awaits payment" test -n "$invoice_id"

before=$(db "SELECT string_agg(id || ':' || encode(digest_ha1, 'hex'), ',' ORDER BY id) FROM tenants")
rc=0
out=$(billing_cmd "$K2" "$K1" -- rewrap-ha1 --batch 2 2>"$work/rewrap1.err") || rc=$?
echo "# rewrap-ha1: $(tr '\n' ' ' <<<"$out")"
assert_eq "rewrap-ha1 exits 0" 0 "$rc"
at_rewrap=$(logins)
counts() { grep -E "^$1_(REWRAPPED|CURRENT|UNWRAPPABLE|CHANGED)=" <<<"$2" | tr '\n' ' '; }
assert_eq "rewrap-ha1: the 5 K1 tenants re-wrapped, 2 under K2 already, the K3 one unwrappable" \
	"TENANTS_REWRAPPED=5 TENANTS_CURRENT=2 TENANTS_UNWRAPPABLE=1 TENANTS_CHANGED=0 " \
	"$(counts TENANTS "$out")"
assert_eq "rewrap-ha1: the unpaid K1 purchase re-wrapped, the 3 challenges' (K2) current" \
	"INVOICES_REWRAPPED=1 INVOICES_CURRENT=3 INVOICES_UNWRAPPABLE=0 INVOICES_CHANGED=0 " \
	"$(counts INVOICES "$out")"
check "it names the unwrappable K3 tenant" grep -q "ha1_unwrappable.*$k3_handle" "$work/rewrap1.err"
after=$(db "SELECT string_agg(id || ':' || encode(digest_ha1, 'hex'), ',' ORDER BY id) FROM tenants")
changed=$(comm -3 <(tr ',' '\n' <<<"$before" | sort) <(tr ',' '\n' <<<"$after" | sort) |
	sed 's/^\t//; s/:.*//' | sort -u | wc -l)
assert_eq "exactly five tenant rows changed" 5 "$changed"
assert_eq "the K3 row is left as it was" \
	"$(tr ',' '\n' <<<"$before" | grep "^$(db "SELECT id FROM tenants WHERE handle = '$k3_handle'"):")" \
	"$(tr ',' '\n' <<<"$after" | grep "^$(db "SELECT id FROM tenants WHERE handle = '$k3_handle'"):")"

rc=0
out=$(billing_cmd "$K2" "$K1" -- rewrap-ha1 2>/dev/null) || rc=$?
assert_eq "a second run changes nothing" \
	"0:TENANTS_REWRAPPED=0 TENANTS_CURRENT=7 TENANTS_UNWRAPPABLE=1 TENANTS_CHANGED=0 INVOICES_REWRAPPED=0 INVOICES_CURRENT=4 INVOICES_UNWRAPPABLE=0 INVOICES_CHANGED=0 " \
	"$rc:$(counts TENANTS "$out")$(counts INVOICES "$out")"

# The gateway has taken the rewritten rows (NOTIFY) while the loop went on.
check "the Digest loop goes on past the rewrap (40 more logins)" wait_until 30 logins_past $((at_rewrap + 40))
touch "$stop_file"
wait "$loop_pid"
total=$(logins)
failed=$(grep -vc '^200 ' "$loop_log")
echo "# the Digest loop: $total logins, $failed failed, $((total - at_rewrap)) after the rewrap"
assert_eq "no Digest login failed during the rotation" 0 "$failed"
check "every K1 tenant was logged in after the rewrap" bash -c \
	"(($(tail -n +$((at_rewrap + 1)) "$loop_log" | awk '{ print $2 }' | sort -u | wc -l) == 5))"

# The purchase's HA1 is now under K2 and still the first tenant's: AES-256-GCM with the
# handle bound (token.h), checked here outside the C code.
check "the purchase's HA1 unwraps under K2 to MD5(handle:realm:token)" /usr/bin/python3 - \
	"$K2" "$first_handle" "$first_token" "$(db "SELECT encode(digest_ha1, 'hex') FROM invoices WHERE id = '$invoice_id'")" <<'PY'
import hashlib, sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
key, handle, token, wrapped = sys.argv[1], sys.argv[2], sys.argv[3], bytes.fromhex(sys.argv[4])
assert wrapped[0] == 1 and len(wrapped) == 45
ha1 = AESGCM(bytes.fromhex(key)).decrypt(wrapped[1:13], wrapped[13:], b"xmrgate-ha1-v1\0" + handle.encode())
assert ha1 == hashlib.md5(f"{handle}:xmrgate:{token}".encode()).digest()
PY

# --- the previous key dropped ---------------------------------------------------------------------
check "the gateway's file has K2 alone" \
	gateway_config rot --base bare database.url="$DB" auth.ha1_key="$K2"
# The keys are not reloadable: a SIGHUP names the change as needing a restart.
kill -HUP "$(gw_pid rot)"
needs_restart() { grep '"event":"reload_needs_restart"' "$(gw_log rot)" | grep -q 'ha1_key_previous'; }
check "a SIGHUP names ha1_key_previous as applied only at the next start" wait_until 10 needs_restart
check "no key is written to the gateway's log" \
	bash -c "! grep -qiE '$K1|$K2' '$(gw_log rot)'"
check_here "the gateway restarts on it" gateway_restart rot || exit 1
ok=0
for login in "${OLD[@]}" "$rot_login" "$new_login"; do
	[[ $(digest_status "$GW" "$login") == 200 ]] && ok=$((ok + 1))
done
assert_eq "K2 alone after the rewrap: Digest works for all seven tenants" 7 "$ok"
assert_eq "the K3 tenant: Digest refused" 401 "$(digest_status "$GW" "$k3_handle:$k3_token")"
assert_eq "the K3 tenant: its token in the path works" 200 "$(path_status "$GW" "$k3_token")"
rc=0
out=$(billing_cmd "$K2" -- rewrap-ha1 2>/dev/null) || rc=$?
assert_eq "rewrap-ha1 without a previous key only counts" \
	"0:TENANTS_REWRAPPED=0 TENANTS_CURRENT=7 TENANTS_UNWRAPPABLE=1 TENANTS_CHANGED=0 " \
	"$rc:$(counts TENANTS "$out")"

