#!/usr/bin/env bash
# Free tenants bounded (issue #30, hostile load): clients are counted by network, not by
# address. 100 loopback addresses of one /24 (real source addresses: curl --interface
# 127.0.77.y, all routed to lo) asking twice each mint at most the per-network bound; two
# billing instances hammered at once share the global bound through PostgreSQL; a free
# tenant lapsed beyond [invoices] free_retention is deleted by the leader and a gateway
# stops accepting it (401), while a lapsed paid tenant is kept. Prints the figures.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"

bt_setup
FB_DIR=$BT_DIR/free-bounds
mkdir -p "$FB_DIR"
# The grants this test records count in the shared windows for an hour: take them back.
defer psql_q "DELETE FROM free_grants WHERE client LIKE '4:127.0.77.%' OR client LIKE '4:127.0.8_.%'"

bad_rc=0
bad_out=$(billing_exit badprefix clients.ipv4_prefix=24 clients.ipv4_network_prefix=28) || bad_rc=$?
check "a network prefix longer than its client's is refused at start (exit $bad_rc)" \
	bash -c "(($bad_rc != 0 && $bad_rc != 124)) && grep -q 'network prefix must not be longer' <<<\"\$1\"" _ "$bad_out"

NET_BOUND=10
# The in-memory per-client and per-network buckets out of the way: the shared bounds are
# what is measured here.
roomy=(invoices.free_per_hour=1000 invoices.free_burst=1000 clients.network_factor=1000
	invoices.free_network_per_day=100000 invoices.free_retention=1m)
check_here "billing a starts" billing_start a "${roomy[@]}" \
	invoices.free_network_per_hour=$NET_BOUND invoices.free_global_per_hour=100000
A=$BL_URL

# free_from URL ADDRESS: one free purchase from ADDRESS; prints "STATUS RETRY_AFTER CODE".
free_from() {
	local out hdr
	hdr=$(mktemp -p "$FB_DIR")
	out=$(curl -s --interface "$2" -D "$hdr" -H 'Content-Type: application/json' \
		--data-binary '{"tier":"free"}' -w '\n%{http_code}' "$1/api/invoices")
	printf '%s %s %s\n' "${out##*$'\n'}" \
		"$(tr -d '\r' <"$hdr" | sed -n 's/^[Rr]etry-[Aa]fter: *//p')" \
		"$(jq -r '.error.code // "-"' <<<"${out%$'\n'*}" 2>/dev/null)"
	rm -f "$hdr"
}
export -f free_from
export FB_DIR

# --- 100 addresses of one /24, twice each -----------------------------------------------------
t0=$(date +%s%N)
for _ in 1 2; do
	for y in $(seq 1 100); do echo "127.0.77.$y"; done |
		xargs -P 8 -I{} bash -c "free_from \"\$0\" \"\$1\"" "$A" {}
done >"$FB_DIR/net.out"
t1=$(date +%s%N)
minted=$(grep -c '^201 ' "$FB_DIR/net.out")
refused=$(grep -c '^429 ' "$FB_DIR/net.out")
echo "# one /24: 200 requests from 100 addresses in $(((t1 - t0) / 1000000)) ms: $minted minted, $refused refused (bound $NET_BOUND)"
assert_eq "one /24 (100 addresses, twice each) mints exactly its bound" "$NET_BOUND" "$minted"
assert_eq "every other request is refused with 429" $((200 - NET_BOUND)) "$refused"
# shellcheck disable=SC2016 # awk's own fields
check "each refusal is free_tier_exhausted with a Retry-After (s)" \
	awk '$1 == 429 && !($2 ~ /^[0-9]+$/ && $2 > 0 && $2 <= 3600 && $3 == "free_tier_exhausted") { bad = 1 } END { exit bad }' "$FB_DIR/net.out"
assert_eq "the database holds one grant per tenant minted, under one network key" \
	"$NET_BOUND 1" "$(psql_q "SELECT count(*), count(DISTINCT network) FROM free_grants
	                         WHERE client LIKE '4:127.0.77.%'" | tr '|' ' ')"
assert_eq "the grants are counted by the /24, the clients by address" "4:127.0.77.0/24" \
	"$(psql_q "SELECT DISTINCT network FROM free_grants WHERE client LIKE '4:127.0.77.%'")"
out=$(curl -s -D - --interface 127.0.78.1 -H 'Content-Type: application/json' \
	--data-binary '{"tier":"free"}' "$A/api/invoices")
assert_json "another /24 is still served" "$(sed -n '/^{/,$p' <<<"$out")" '.status == "provisioned"'
defer psql_q "DELETE FROM free_grants WHERE client = '4:127.0.78.1/32'"
FREE_TOKEN=$(sed -n '/^{/,$p' <<<"$out" | jq -r .token)
FREE_ID=$(psql_q "SELECT id FROM tenants WHERE token_hash = sha256('$FREE_TOKEN'::bytea)")
check "it is a tenant (kept for the lapse below)" test -n "$FREE_ID"
check "the web form's error words cover free_tier_exhausted and Retry-After on any 429" \
	grep -q 'free_tier_exhausted' "$XG_REPO/web/assets/common.js"

# --- two instances share the global bound -------------------------------------------------------
billing_stop a
# The bound leaves room for GLOBAL more grants than the last hour already holds.
GLOBAL=12
before=$(psql_q "SELECT count(*) FROM free_grants WHERE granted_at > now() - interval '1 hour'")
cap=$((before + GLOBAL))
for n in a b; do
	check_here "billing $n starts with a global bound of $cap an hour" billing_start "$n" \
		"${roomy[@]}" invoices.free_network_per_hour=100000 invoices.free_global_per_hour=$cap
done
URL_A=$(billing_url a) URL_B=$(billing_url b)
one_leader() {
	local ra rb
	ra=$(bt_role a) rb=$(bt_role b)
	[[ "$ra $rb" == "leader standby" || "$ra $rb" == "standby leader" ]]
}
check "one billing instance leads" wait_until 30 one_leader
t0=$(date +%s%N)
for i in $(seq 0 59); do
	echo "$URL_A 127.0.$((80 + i % 6)).$((i + 1))"
	echo "$URL_B 127.0.$((80 + i % 6)).$((i + 101))"
done | xargs -P 12 -L 1 bash -c "free_from \"\$0\" \"\$1\"" >"$FB_DIR/global.out"
t1=$(date +%s%N)
minted=$(grep -c '^201 ' "$FB_DIR/global.out")
refused=$(grep -c '^429 ' "$FB_DIR/global.out")
after=$(psql_q "SELECT count(*) FROM free_grants WHERE granted_at > now() - interval '1 hour'")
echo "# two instances, 120 concurrent requests in $(((t1 - t0) / 1000000)) ms: $minted minted, $refused refused; the last hour's grants $before -> $after (cap $cap)"
assert_eq "two instances hammered at once mint exactly the room under the global bound" \
	"$GLOBAL" "$minted"
assert_eq "the rest are refused with 429" $((120 - GLOBAL)) "$refused"
check "the database never holds more than the cap" test "$after" -le "$cap"
check "both instances refused some (each counted the other's grants)" \
	bash -c "grep -q free_grant_refused '$(billing_log a)' && grep -q free_grant_refused '$(billing_log b)'"

# --- lapsed free tenants are deleted; paid ones kept ----------------------------------------------
check_here "a paid tenant is granted" grant_tenant wallet 30
PAID_ID=$(psql_q "SELECT id FROM tenants WHERE handle = '$HANDLE'")
check_here "a gateway starts" gateway_start g
G=$(gw_url g) GA=$(gw_admin g)
code() { curl -s -o /dev/null -w '%{http_code}' "$G/v1/$1/get_height"; }
code_is() {
	local got
	got=$(code "$1")
	[[ $got == "$2" ]] || {
		echo "HTTP $got"
		return 1
	}
}
check "the free token is served at the gateway" wait_until 10 code_is "$FREE_TOKEN" 200
check "the paid token too" wait_until 10 code_is "$TOKEN" 200
loaded() { curl -s "$GA/metrics" | awk '/^xmrgate_gateway_tenants_loaded /{ print $2 }'; }
# lapsed, but inside the retention (1m): kept, and answered as expired
psql_q "UPDATE tenants SET valid_until = now() - interval '10 seconds' WHERE id IN ($FREE_ID, $PAID_ID)" >/dev/null
check "a free tenant lapsed inside the retention is answered plan_expired (403)" \
	wait_until 10 code_is "$FREE_TOKEN" 403
check "so is the paid one" wait_until 10 code_is "$TOKEN" 403
assert_eq "and kept" 1 "$(psql_q "SELECT count(*) FROM tenants WHERE id = $FREE_ID")"
n_before=$(loaded)
t0=$(date +%s%N)
psql_q "UPDATE tenants SET valid_until = now() - interval '2 days' WHERE id IN ($FREE_ID, $PAID_ID)" >/dev/null
gone() { [[ $(psql_q "SELECT count(*) FROM tenants WHERE id = $FREE_ID") == 0 ]]; }
check "the leader deletes the free tenant lapsed beyond the retention" wait_until 30 gone
check "the gateway stops accepting it (401)" wait_until 10 code_is "$FREE_TOKEN" 401
t1=$(date +%s%N)
n_after=$(loaded)
echo "# lapsed free tenant: deleted and refused by the gateway $(((t1 - t0) / 1000000)) ms after its valid_until moved; gateway tenants in memory $n_before -> $n_after"
check "the gateway freed it from memory" test "$n_after" -lt "$n_before"
assert_eq "its invoice went with it" 0 \
	"$(psql_q "SELECT count(*) FROM invoices WHERE tenant_id = $FREE_ID")"
assert_eq "the lapsed paid tenant is kept" 1 "$(psql_q "SELECT count(*) FROM tenants WHERE id = $PAID_ID")"
check "and still answered as expired (403)" code_is "$TOKEN" 403
check "billing logged the sweep" grep -q free_tenants_swept "$(billing_log a)" "$(billing_log b)"
