#!/usr/bin/env bash
# PostgreSQL under Patroni, the drill: three Patroni 3.0.2 members with etcd 3.4, each
# member in a network namespace of its own (tests/integration/patroni_lib.sh); two
# gateways and two billing instances on the multi-host URL
# (target_session_attrs=read-write, every member named: what docs/DEPLOYMENT.md
# recommends), a steady load of a known tenant on both gateways, both gateways' /readyz
# polled throughout, and a payment waiting for its confirmations throughout. Then:
#   (1) the primary's PostgreSQL is killed (SIGKILL to its postmaster): Patroni promotes a
#       replica (master_start_timeout 0) and the old primary rejoins as a replica;
#   (2) the new primary's whole machine goes: its link is cut (no reset reaches anyone)
#       and every process in its namespace is killed; Patroni promotes a replica once the
#       leader key expires (ttl 10 s).
# After each: once both gateways follow the new primary (how long that took is printed), a
# tenant bought at billing (the free tier, provisioned at once) is accepted at both
# gateways within 1 s p99 of billing's answer. At the end:
#   - 0 failed requests of the known tenant, and /readyz answered 200 in every poll;
#   - the payment is provisioned exactly once (one payment row, one tenant, one month);
#   - usage is never counted twice (usage_daily <= served); what a lost COMMIT or a lost
#     asynchronous commit took is printed.
# Times (no primary, first answer after each failover) are printed, not asserted.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/netns_lib.sh
. "$(dirname "$0")/netns_lib.sh"
# shellcheck source=tests/integration/patroni_lib.sh
. "$(dirname "$0")/patroni_lib.sh"

PRICE=10000000000
((EUID == 0)) || {
	echo "not ok - the Patroni drill needs root (network namespaces)"
	exit 1
}
command -v patroni >/dev/null && command -v etcd >/dev/null || {
	echo "not ok - patroni and etcd-server are installed (scripts/deps.sh)"
	exit 1
}

ns_net_up || {
	echo "not ok - the drill's bridge is set up"
	exit 1
}
t0=$SECONDS
check_here "a three-member Patroni cluster is up (a leader, two streaming replicas)" pt_up || exit 1
echo "# cluster up after $((SECONDS - t0)) s; leader $(pt_leader)"
# The daemons get the whole URL by environment (XMRGATE_DATABASE_URL overrides the file);
# the helpers' psql and the configuration files get it without the keepalive options.
DATABASE_URL=$PT_URL_SHORT XMRGATE_DATABASE_URL=$PT_URL
export DATABASE_URL XMRGATE_DATABASE_URL

# shellcheck source=tests/integration/lib_limits.sh
. "$(dirname "$0")/lib_limits.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"
defer rm -rf "$LIM_DIR"
[[ -z ${XG_PATRONI_LOGS:-} ]] || PT_KEEP_LOGS=$XG_PATRONI_LOGS
bt_setup
lim_setup
lim_tier pt_load 100000 100000000
lim_tenant pt_load
tenant_id=$LIM_ID token=$LIM_TOKEN
bt_tier bt-pt "$PRICE" 4

for g in g1 g2; do
	if gateway_start "$g" --base bare "auth.ha1_key=$BT_HA1_KEY" XMRGATE_DATABASE_URL="$PT_URL"; then
		_xg_pass "gateway $g starts on the multi-host URL"
	else
		_xg_fail "gateway $g starts on the multi-host URL"
		exit 1
	fi
done
URL_G1=$(gw_url g1) URL_G2=$(gw_url g2) ADMIN_G1=$(gw_admin g1) ADMIN_G2=$(gw_admin g2)
free=(invoices.free_burst=1000 invoices.free_per_hour=100000 XMRGATE_DATABASE_URL="$PT_URL")
check_here "billing a starts on the multi-host URL" billing_start a "${free[@]}"
check_here "billing b starts beside it" billing_start b "${free[@]}"
one_leader() {
	local ra rb
	ra=$(bt_role a) rb=$(bt_role b)
	[[ "$ra $rb" == "leader standby" || "$ra $rb" == "standby leader" ]]
}
check "one billing instance leads" wait_until 30 one_leader

# --- a payment that waits for its confirmations throughout --------------------------------
read -r st inv <<<"$(bt_invoice a '{"tier":"bt-pt","months":1}')"
assert_eq "an invoice is created" 201 "$st"
INV=$(jq -r .id <<<"$inv")
tx=$(payer_pays "$(jq -r .address <<<"$inv")" "$PRICE")
check "the payment is seen" bt_wait_status a "$INV" seen 60
check "one block is mined" mine 1
check "the invoice is confirming (1 of 4)" bt_wait_status a "$INV" confirming 60

# --- the load and the readiness polls, all through ------------------------------------------
touch "$LIM_DIR/on"
(
	while [[ -e $LIM_DIR/on ]]; do
		lim_load 100 4 "$LIM_RPC_BODY" "$URL_G1/v1/$token/json_rpc" "$URL_G2/v1/$token/json_rpc"
		sleep 0.05
	done >"$LIM_DIR/codes"
) &
load=$!
(
	while [[ -e $LIM_DIR/on ]]; do
		for a in "$ADMIN_G1" "$ADMIN_G2"; do
			curl -s -o /dev/null --max-time 2 -w '%{http_code}\n' "$a/readyz"
		done
		sleep 0.5
	done >"$LIM_DIR/ready"
) &
polls=$!

# following — both gateways' /readyz say they follow PostgreSQL (not degraded)
following() {
	local a
	for a in "$ADMIN_G1" "$ADMIN_G2"; do
		curl -s --max-time 2 "$a/readyz" | jq -e '.degraded == false' >/dev/null || return 1
	done
}

# bought NAME — a tenant bought at billing after a failover is accepted at both gateways
# within 1 s p99 of billing's answer (billing first answers on the new primary).
bought() {
	local t1=$SECONDS out
	check "$1: billing sells again" wait_until 60 curl -sf -o /dev/null "$(billing_url a)/api/tiers"
	echo "# $1: billing answered $((SECONDS - t1)) s after the promotion was seen"
	# A gateway's listener finds the new primary on its own (its keepalives notice a dead
	# link): the bound below is for gateways that follow PostgreSQL again, and how long
	# that took is printed.
	check "$1: both gateways follow PostgreSQL again" wait_until 60 following
	echo "# $1: both gateways followed the new primary $((SECONDS - t1)) s after the promotion was seen"
	out=$("$XG_REPO/build/release/tests/tools/buy_latency" "$(billing_url a)" free 10 1000 \
		"$URL_G1" "$URL_G2" 2>&1)
	check "$1: tenants bought at billing are usable at both gateways within 1 s p99" test $? -eq 0
	echo "$out" | sed 's/^/# /'
}

# promoted OLD — a running leader other than OLD; prints it and how long it took
promoted() {
	local old=$1 start=$SECONDS l
	while ((SECONDS - start < 90)); do
		l=$(pt_leader 2>/dev/null) && [[ $l != "$old" ]] && {
			echo "$l $((SECONDS - start))"
			return 0
		}
		sleep 0.2
	done
	return 1
}

sleep 2
# (1) the primary's PostgreSQL dies
old=$(pt_leader)
pid=$(pt_psql "$old" 'SELECT pg_postmaster_pid()' 2>/dev/null || true)
[[ -z $pid ]] && pid=$(head -n 1 "$PT_DIR/$old/data/postmaster.pid")
check "(1) the primary's PostgreSQL ($old, postmaster $pid) is killed" kill -9 "$pid"
read -r new took <<<"$(promoted "$old")"
check "(1) Patroni promotes a replica" test -n "$new"
echo "# (1) $new leads, seen ${took:-?} s after the kill"
bought "(1)"
check "(1) the old primary rejoins as a replica (two stream again)" wait_until 120 pt_two_streaming

# (2) the new primary's machine goes: link cut first, so that no reset leaves it
old=$new
ns_cut "$old"
ns_kill "$old"
_xg_pass "(2) the primary's machine ($old) is cut off and its processes killed"
read -r new took <<<"$(promoted "$old")"
check "(2) Patroni promotes a replica" test -n "$new"
echo "# (2) $new leads, seen ${took:-?} s after the machine went (leader key ttl 10 s)"
bought "(2)"
sleep 3
rm -f "$LIM_DIR/on"
wait "$load" "$polls"

# --- what the tenant and the balancer saw ---------------------------------------------------
served=$(grep -c '^200$' "$LIM_DIR/codes")
other=$(grep -vc '^200$' "$LIM_DIR/codes")
echo "# gateways: $served served, $other other answers"
check "the load ran through both failovers (> 500 requests)" test "$served" -gt 500
assert_eq "0 failed requests of the known tenant" 0 "$other"
npolls=$(wc -l <"$LIM_DIR/ready")
nready=$(grep -c '^200$' "$LIM_DIR/ready")
echo "# /readyz: $nready of $npolls polls answered 200"
check "both gateways were polled throughout (> 40 polls)" test "$npolls" -gt 40
assert_eq "/readyz answered 200 in every poll of both gateways" "$npolls" "$nready"

# --- the payment, once ------------------------------------------------------------------------
check "one billing instance leads on the new primary" wait_until 40 one_leader
check "the remaining confirmations are mined" mine 4
check "the invoice is provisioned" bt_wait_status a "$INV" provisioned 120
sleep 2 # more poll cycles: nothing may be counted again
assert_eq "one payment row for the transfer" 1 "$(psql_q "SELECT count(*) FROM payments WHERE txid = '$tx'")"
assert_eq "one tenant for the invoice's credentials" 1 \
	"$(psql_q "SELECT count(*) FROM tenants WHERE token_hash = (SELECT token_hash FROM invoices WHERE id = '$INV')")"
assert_eq "valid for one month: provisioned once" 1 \
	"$(psql_q "SELECT count(*) FROM tenants t JOIN invoices i ON i.tenant_id = t.id
	          WHERE i.id = '$INV' AND t.valid_until < now() + interval '1 month'
	            AND t.valid_until > now() + interval '1 month' - interval '5 min'")"

# --- usage: never twice -------------------------------------------------------------------------
gateway_stop g1
gateway_stop g2
used=$(psql_q "SELECT coalesce(sum(used), 0) FROM usage_daily WHERE tenant_id = $tenant_id")
echo "# usage_daily $used, clients received $served ($((served - used)) lost with the killed primaries' last commits or a lost COMMIT answer)"
check "usage is never counted twice (usage_daily <= served)" test "$used" -le "$served"
check "the gateways logged the switch" grep -q '"pgsync_lost"' "$(gw_log g1)"
