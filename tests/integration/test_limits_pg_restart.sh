#!/usr/bin/env bash
# Usage counts survive PostgreSQL going away during load: two gateways keep serving and
# counting while it is stopped, flush what they held once it is back, and usage_daily
# ends equal to what the clients received. A flush is a transaction: one the restart
# broke before COMMIT is sent again on a new connection; one whose COMMIT answer was lost
# (a crash, not this clean stop) is dropped and logged, never counted twice. The bounds
# below stay as they were (at most one batch per replica off).
# Billing, whose pooled connections all went stale with the restart, answers every
# request from the moment PostgreSQL is back: it once answered 503 database_unavailable
# once per stale pooled connection.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/lib_limits.sh
. "$(dirname "$0")/lib_limits.sh"
defer rm -rf "$LIM_DIR"

# PostgreSQL is stopped and started the way the stack does it (same cluster, options and
# pidfile), so `stack.sh stop` still works.
pg_start() { "$XG_REPO/scripts/stack.sh" pg-start; }
pg_stop() { "$XG_REPO/scripts/stack.sh" pg-stop; }

lim_setup
lim_tier lt_restart 100000 100000000
lim_tenant lt_restart
id=$LIM_ID token=$LIM_TOKEN
gateway_start g1 --base bare || exit 1
gateway_start g2 --base bare || exit 1
# every pooled connection of the stack's billing in use once, so that all go stale below
warm=$(lim_get_load 64 16 "$BILLING_URL/api/tiers" | grep -vc '^200$')
assert_eq "billing answers GET /api/tiers before the restart" 0 "$warm"
defer pg_start_if_down
pg_start_if_down() { [[ -e $XG_VAR/pg/data/postmaster.pid ]] || pg_start; }

# Steady load over both replicas for ~12 s; PostgreSQL is down from ~3 s to ~7 s.
(
	end=$((SECONDS + 12))
	while ((SECONDS < end)); do
		lim_load 200 4 "$LIM_RPC_BODY" "$(gw_url g1)/v1/$token/json_rpc" "$(gw_url g2)/v1/$token/json_rpc"
		sleep 0.1
	done >"$LIM_DIR/codes"
) &
load=$!
sleep 3
pg_stop
check "PostgreSQL is down" bash -c "! psql -X -At '$DATABASE_URL' -c 'SELECT 1' 2>/dev/null"
sleep 4
during=$(grep -c '^200$' "$LIM_DIR/codes")
pg_start
after=$(lim_get_load 64 16 "$BILLING_URL/api/tiers")
assert_eq "billing: 64 GET /api/tiers (16 at once) right after PostgreSQL is back: 64 ok, 0 failed" \
	"64 0" "$(grep -c '^200$' <<<"$after") $(grep -vc '^200$' <<<"$after")"
check "billing replaced its stale pooled connections" grep -q pg_reconnected "$XG_VAR/log/billing.log"
wait "$load"
served=$(grep -c '^200$' "$LIM_DIR/codes")
other=$(grep -vc '^200$' "$LIM_DIR/codes")
echo "# served $served (of which $during before PostgreSQL came back), other answers $other"
assert_eq "every request was served while PostgreSQL was down and back" 0 "$other"
check "the gateways logged the failed flushes" grep -q usage_flush_failed "$(gw_log g1)"
# the first flush after PostgreSQL is back may come up to one flush interval (5 s) later
check_here "... and the resumed ones" \
	wait_until 15 grep -q usage_flush_resumed "$(gw_log g1)"

# The counts held during the outage reach PostgreSQL with the next flushes (at least every
# 5 s: this tenant's batch, 1 % of 100,000,000, never fills), before any shutdown.
check "usage_daily catches up within 8 s of the load's end (flushes every 5 s)" \
	wait_until 8 bash -c "[[ \$(psql -X -At '$DATABASE_URL' -c \"SELECT used FROM usage_daily WHERE tenant_id = $id\") == $served ]]"
gateway_stop g1
gateway_stop g2
used=$(lim_used "$id")
echo "# usage_daily $used, clients received $served"
check "usage_daily ($used) >= served ($served): no count lost" test "$used" -ge "$served"
check "usage_daily ($used) <= served + 2 batches: no count doubled beyond the bound" \
	test "$used" -le $((served + 200))
