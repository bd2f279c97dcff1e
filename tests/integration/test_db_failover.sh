#!/usr/bin/env bash
# PostgreSQL HA: a scratch primary and a streaming standby (pg_basebackup -R, PostgreSQL
# 15, loopback ports XG_PORT_BASE+3 and +4), a gateway and two billing instances on the
# multi-host URL "postgresql://…:P1,…:P2/xmrgate?target_session_attrs=read-write", a steady
# client load on the gateway and a payment waiting for its confirmations throughout. The
# primary is restarted, stopped for 10 s and started, then stopped for good and the
# standby promoted. Then:
#   - no request of the known tenant failed at the gateway (fail-static);
#   - billing's API answers without a 5xx from the moment a primary is back (bound: the
#     first request after `pg_ctl start -w` / `pg_ctl promote -w` returned, BILLING_BOUND_S
#     to see the first answer on a loaded machine, then every answer);
#   - the leader lock is held by exactly one billing instance on the new primary;
#   - the payment is provisioned exactly once, on the new primary;
#   - the usage served during the switch is in usage_daily on the new primary within 8 s
#     of the load's end (one flush interval, 5 s, and room for a loaded machine), and
#     nothing is counted twice;
#   - a tenant created on the new primary is accepted at the gateway within 100 ms of its
#     commit (the median of 10; each within 1 s), once the gateway follows the new primary
#     again.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

PG_BIN=/usr/lib/postgresql/15/bin
P1=$((XG_PORT_BASE + 3)) P2=$((XG_PORT_BASE + 4))
BILLING_BOUND_S=5
PRICE=10000000000

# The clusters run as the postgres user, who cannot enter a clone under /root: they live
# in a directory of their own that user owns.
if ((EUID == 0)); then
	mkdir -p /var/lib/xmrgate
	HA_DIR=$(mktemp -d /var/lib/xmrgate/ha-test.XXXXXX)
	chown postgres:postgres "$HA_DIR"
	as_pg() { (cd / && runuser -u postgres -- "$@"); }
else
	HA_DIR=$(mktemp -d "${TMPDIR:-/tmp}/xg-ha.XXXXXX")
	as_pg() { "$@"; }
fi
chmod 700 "$HA_DIR"
LIM_DIR=$HA_DIR/daemons
mkdir -p "$LIM_DIR"

# The standby retries its primary every second (default 5 s), as a Patroni member would.
pg_opts() { echo "-p $1 -k $HA_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c wal_keep_size=256MB -c wal_retrieve_retry_interval=1s"; }
pg_up() { as_pg "$PG_BIN/pg_ctl" -D "$HA_DIR/$1" -l "$HA_DIR/$1.log" -w -t 60 -o "$(pg_opts "$2")" start >/dev/null; }
pg_down() { as_pg "$PG_BIN/pg_ctl" -D "$HA_DIR/$1" -m fast -w -t 60 stop >/dev/null; }
ha_cleanup() {
	local c
	# the daemons' and servers' logs, for a failed run (XG_HA_LOGS=DIR keeps them there)
	[[ -z ${XG_HA_LOGS:-} ]] || cp -r "$HA_DIR"/*.log "$LIM_DIR" "$(gw_log g1)" "$(billing_log a)" \
		"$(billing_log b)" "$XG_HA_LOGS"/ 2>/dev/null
	for c in primary standby; do
		[[ -e $HA_DIR/$c/postmaster.pid ]] &&
			as_pg "$PG_BIN/pg_ctl" -D "$HA_DIR/$c" -m immediate -w -t 30 stop >/dev/null 2>&1
	done
	rm -rf "$HA_DIR"
}
defer ha_cleanup

# --- the clusters ---------------------------------------------------------------------
as_pg "$PG_BIN/initdb" -A trust -U postgres -E UTF8 --locale=C --no-sync -D "$HA_DIR/primary" \
	>"$HA_DIR/initdb.log" 2>&1 || {
	echo "not ok - initdb of the scratch primary"
	exit 1
}
check "the scratch primary starts on port $P1" pg_up primary "$P1"
psql -X -q -h 127.0.0.1 -p "$P1" -U postgres -d postgres -c 'CREATE DATABASE xmrgate'
DATABASE_URL="postgresql://postgres@127.0.0.1:$P1,127.0.0.1:$P2/xmrgate?target_session_attrs=read-write&connect_timeout=3"
export DATABASE_URL

# After DATABASE_URL: the helpers' psql and daemons all use the multi-host URL.
# shellcheck source=tests/integration/lib_limits.sh
. "$(dirname "$0")/lib_limits.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"
bt_setup # migrates the scratch database; the stack's billing pauses meanwhile
lim_setup
lim_tier ha_load 100000 100000000
lim_tenant ha_load
tenant_id=$LIM_ID token=$LIM_TOKEN
bt_tier bt-ha "$PRICE" 4

as_pg "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$P1" -U postgres -D "$HA_DIR/standby" -R \
	-X stream --no-sync >"$HA_DIR/basebackup.log" 2>&1
check "a standby is built with pg_basebackup -R" test -e "$HA_DIR/standby/standby.signal"
check "the standby starts on port $P2" pg_up standby "$P2"
in_recovery() { psql -X -At -h 127.0.0.1 -p "$P2" -U postgres -d xmrgate -c 'SELECT pg_is_in_recovery()'; }
assert_eq "it is in recovery (streaming from the primary)" t "$(in_recovery)"
check "the tenant reached the standby" wait_until 20 bash -c \
	"[[ \$(psql -X -At -h 127.0.0.1 -p $P2 -U postgres -d xmrgate -c 'SELECT count(*) FROM tenants WHERE id = $tenant_id') == 1 ]]"

# --- the daemons -----------------------------------------------------------------------
check_here "a gateway starts on the multi-host URL" gateway_start g1 --base bare || exit 1
check_here "billing a starts on the multi-host URL" billing_start a invoices.create_burst=100
check_here "billing b starts beside it" billing_start b
one_leader() {
	local ra rb
	ra=$(bt_role a) rb=$(bt_role b)
	[[ "$ra $rb" == "leader standby" || "$ra $rb" == "standby leader" ]]
}
check "one billing instance leads" wait_until 20 one_leader

# --- a payment that waits for confirmations throughout ----------------------------------
read -r st inv <<<"$(bt_invoice a '{"tier":"bt-ha","months":1}')"
assert_eq "an invoice is created" 201 "$st"
INV=$(jq -r .id <<<"$inv")
tx=$(payer_pays "$(jq -r .address <<<"$inv")" "$PRICE")
check "the payment is seen" bt_wait_status a "$INV" seen 60
check "one block is mined" mine 1
check "the invoice is confirming (1 of 4)" bt_wait_status a "$INV" confirming 60

# --- steady load on the gateway ----------------------------------------------------------
touch "$HA_DIR/load.on"
(
	while [[ -e $HA_DIR/load.on ]]; do
		lim_load 100 4 "$LIM_RPC_BODY" "$(gw_url g1)/v1/$token/json_rpc"
		sleep 0.05
	done >"$LIM_DIR/codes"
) &
load=$!

# tiers_burst — 40 GET /api/tiers on each instance, 8 at once (every pooled connection
# in use); prints the answers that were not 200, one status a line.
tiers_burst() {
	{
		lim_get_load 40 8 "$(billing_url a)/api/tiers"
		lim_get_load 40 8 "$(billing_url b)/api/tiers"
	} | grep -v '^200$'
}
# billing_back NAME — from the moment a primary is back: the first answer within the
# bound, then 80 more over both instances, none of them other than 200.
billing_back() {
	local t0=$SECONDS first bad
	check "$1: billing answers within ${BILLING_BOUND_S} s" \
		wait_until "$BILLING_BOUND_S" curl -sf -o /dev/null "$(billing_url a)/api/tiers"
	first=$((SECONDS - t0))
	bad=$(tiers_burst)
	assert_eq "$1: 80 more GET /api/tiers, 8 at once on each instance, none failed (first answer after ${first} s)" "" "$bad"
}

sleep 2
# (1) restart; stop for 10 s; start
as_pg "$PG_BIN/pg_ctl" -D "$HA_DIR/primary" -m fast -w -t 60 -o "$(pg_opts "$P1")" restart >/dev/null
billing_back "after a primary restart"
check "the primary stops" pg_down primary
sleep 10
check "the primary starts again after 10 s" pg_up primary "$P1"
billing_back "after 10 s without a primary"
sleep 3

# (2) the primary goes for good; the standby is promoted. Replication is asynchronous: as
# Patroni does (maximum_lag_on_failover), only a standby that streams again is promoted,
# and a fast stop then hands it every committed transaction (docs/DEPLOYMENT.md).
streaming() {
	[[ $(psql -X -At -h 127.0.0.1 -p "$P1" -U postgres -d postgres -c \
		"SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'") == 1 ]]
}
check "the standby streams from the restarted primary" wait_until 30 streaming
check "the primary stops for good" pg_down primary
sleep 3
check "the standby is promoted" as_pg "$PG_BIN/pg_ctl" -D "$HA_DIR/standby" -w -t 60 promote
assert_eq "the new primary is out of recovery" f "$(in_recovery)"
billing_back "after the promotion"
sleep 3
rm -f "$HA_DIR/load.on"
wait "$load"

# (3) no failed request for the known tenant
served=$(grep -c '^200$' "$LIM_DIR/codes")
other=$(grep -vc '^200$' "$LIM_DIR/codes")
echo "# gateway: $served served, $other other answers"
check "the load ran through the switch (> 500 requests)" test "$served" -gt 500
assert_eq "0 failed requests for the known tenant" 0 "$other"

# (7) a tenant created on the new primary is accepted within 100 ms of its commit: the
# running gateway LISTENs there again (its readiness says it reloaded from PostgreSQL)
# (readiness stays 200 through an outage, degraded: following again is "degraded": false)
check "the gateway follows the new primary" wait_until 20 bash -c \
	"curl -s '$GW_ADMIN/readyz' | jq -e '.status == \"ready\" and .degraded == false' >/dev/null"
out=$("$XG_REPO/build/release/tests/tools/notify_latency" "$DATABASE_URL" "$(gw_url g1)" 10 100 2>&1)
check "tenants created on the new primary are accepted within 100 ms of their commit (the median; each within 1 s)" test $? -eq 0
echo "$out" | sed 's/^/# /'
check "the gateway re-subscribed after the switch" grep -q '"pgsync_lost"' "$(gw_log g1)"

# (6) the usage counted during the outage lands on the new primary, once
check "usage_daily on the new primary reaches what was served within 8 s (flushes every 5 s)" \
	wait_until 8 bash -c "[[ \$(psql -X -At '$DATABASE_URL' -c \"SELECT coalesce(sum(used), 0) FROM usage_daily WHERE tenant_id = $tenant_id\") -ge $served ]]"
gateway_stop g1
used=$(psql_q "SELECT coalesce(sum(used), 0) FROM usage_daily WHERE tenant_id = $tenant_id")
echo "# usage_daily $used, clients received $served"
assert_eq "usage_daily equals what was served: nothing lost, nothing counted twice" "$served" "$used"

# the leader lock moved to the new primary
check "one billing instance leads on the new primary" wait_until 20 one_leader
assert_eq "the lock is held on the new primary" 1 \
	"$(psql_q "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")"

# (5) the payment is provisioned exactly once, on the new primary
check "the remaining confirmations are mined" mine 4
check "the invoice is provisioned" bt_wait_status a "$INV" provisioned 90
sleep 2 # more poll cycles: nothing may be counted again
assert_eq "one payment row for the transfer" 1 "$(psql_q "SELECT count(*) FROM payments WHERE txid = '$tx'")"
assert_eq "one tenant for the invoice's credentials" 1 \
	"$(psql_q "SELECT count(*) FROM tenants WHERE token_hash = (SELECT token_hash FROM invoices WHERE id = '$INV')")"
assert_eq "valid for one month: provisioned once" 1 \
	"$(psql_q "SELECT count(*) FROM tenants t JOIN invoices i ON i.tenant_id = t.id
	          WHERE i.id = '$INV' AND t.valid_until < now() + interval '1 month'
	            AND t.valid_until > now() + interval '1 month' - interval '5 min'")"

check "the billing logs show the stale connections replaced" \
	grep -q pg_reconnected "$(billing_log a)" "$(billing_log b)"
