#!/usr/bin/env bash
# The gateway follows the tenants table through LISTEN/NOTIFY: a tenant committed in
# PostgreSQL is accepted, and a deleted one refused, within 100 ms (the median of 20; each
# within 1 s, as one round on a loaded machine waits for the scheduler); while PostgreSQL
# restarts under a steady load, known tenants see no failed request (fail-static), and
# the gateway reloads everything once PostgreSQL is back.
. "$(dirname "$0")/lib.sh"

tools=$XG_REPO/build/release/tests/tools
out=$("$tools/notify_latency" "$DATABASE_URL" "$GATEWAY_URL" 20 100 2>&1)
check "20 inserted tenants accepted and deleted ones refused, within 100 ms (the median; each within 1 s)" \
	test $? -eq 0
echo "$out" | sed 's/^/# /'

# A tier whose limits the load below cannot reach: this test is about PostgreSQL.
psql_q "INSERT INTO tiers (id, name, burst_rps, daily_quota, price_currency, price_minor,
        confirmations) VALUES ('loadtest', 'Load test', 1000000, 1000000000000, 'XMR', 1, 1)
        ON CONFLICT (id) DO NOTHING"
check_here "grant a tenant" grant_tenant loadtest 1
P=$GATEWAY_URL/v1/$TOKEN
check "the tenant is served" curl -sf -o /dev/null "$P/get_height"

# A steady load while PostgreSQL restarts: every request must succeed.
load=$XG_VAR/load.txt
wrk -t1 -c4 -d12s --latency "$P/get_height" >"$load" 2>&1 &
wrk_pid=$!
sleep 3
"$XG_REPO/scripts/stack.sh" pg-stop
check "PostgreSQL is down" bash -c "! psql -X -q '$DATABASE_URL' -c 'select 1' >/dev/null 2>&1"
sleep 3
check "a request during the outage is served" curl -sf -o /dev/null "$P/get_height"
gw_admin=${GATEWAY_ADMIN_URL:-$ADMIN_URL}
ready=$(curl -s "$gw_admin/readyz")
# A database outage leaves the gateway ready (it serves its known tenants, and every
# replica shares the outage), degraded, naming the database.
assert_json "readiness reports the database down during the outage, ready and degraded" "$ready" \
	'.status == "ready" and .degraded == true and .checks.database != "ok"'
"$XG_REPO/scripts/stack.sh" pg-start
wait "$wrk_pid"
cat "$load" | sed 's/^/# /'
requests=$(awk '/requests in/ {print $1}' "$load")
check "the load made requests ($requests)" test "${requests:-0}" -gt 100
check "no failed request during the restart" bash -c "! grep -qE 'Non-2xx|Socket errors' '$load'"
check "readiness recovers after PostgreSQL returns (no longer degraded)" \
	wait_until 20 bash -c "curl -s '$gw_admin/readyz' | jq -e '.degraded == false and .checks.database == \"ok\"' >/dev/null"

# NOTIFYs sent while the gateway was away are lost: a full reload must catch up.
check_here "grant another tenant" grant_tenant wallet 1
check "the new tenant is accepted after the reconnect" \
	wait_until 5 curl -sf -o /dev/null "$GATEWAY_URL/v1/$TOKEN/get_height"

# pgsync tells its observer what it applied, and the daemon counts it: NOTIFYs per channel
# (the 20 tenants inserted and deleted above), and a full reload at the start and one more
# after the reconnect.
metrics=$(curl -s "$gw_admin/metrics")
applied=$(awk '/^xmrgate_gateway_notify_applied_total\{channel="xmrgate_tenants"\}/ {print $2}' <<<"$metrics")
check "the NOTIFYs applied are counted (${applied:-none})" test "${applied:-0}" -ge 20
reloads=$(awk '/^xmrgate_gateway_full_reloads_total / {print $2}' <<<"$metrics")
check "the full reloads are counted (${reloads:-none}: the start and the reconnect)" \
	test "${reloads:-0}" -ge 2
