#!/usr/bin/env bash
# Readiness a balancer can trust: PostgreSQL stopped for 20 s with a gateway serving. The
# gateway can still serve every tenant it knows (fail-static), and every replica shares the
# outage, so its /readyz stays 200 in every poll, degraded, with the reason in the body and
# xmrgate_gateway_database_up 0; a known tenant's requests fail 0 times. Billing, which can
# sell nothing without its database, answers /readyz 503 naming the database (its
# decision: docs/DEPLOYMENT.md). /livez stays 200 on both. Once PostgreSQL is back the
# gateway is ready and not degraded again, and the wait is printed: it is how long a tenant
# provisioned as the outage ends waits at most before every replica accepts it.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/lib_limits.sh
. "$(dirname "$0")/lib_limits.sh"
defer rm -rf "$LIM_DIR"

pg_start() { "$XG_REPO/scripts/stack.sh" pg-start; }
pg_stop() { "$XG_REPO/scripts/stack.sh" pg-stop; }
pg_start_if_down() { [[ -e $XG_VAR/pg/data/postmaster.pid ]] || pg_start; }
OUTAGE_S=20

lim_setup
lim_tier ro_outage 100000 100000000
lim_tenant ro_outage
token=$LIM_TOKEN
gateway_start g1 --base bare || exit 1
URL=$(gw_url g1) ADMIN=$(gw_admin g1)
BADMIN=$BILLING_ADMIN_URL

assert_json "before: ready, not degraded" "$(curl -s "$ADMIN/readyz")" \
	'.status == "ready" and .degraded == false and .checks.database == "ok" and .checks.tenants == "ok"'
assert_eq "/livez answers 200" 200 "$(lim_status "$ADMIN" /livez)"

defer pg_start_if_down
# the load: a known tenant's requests all through the outage
touch "$LIM_DIR/load.on"
(
	while [[ -e $LIM_DIR/load.on ]]; do
		lim_load 50 4 "$LIM_RPC_BODY" "$URL/v1/$token/json_rpc"
		sleep 0.05
	done >"$LIM_DIR/codes"
) &
load=$!
sleep 1
pg_stop
check "PostgreSQL is down" bash -c "! psql -X -At '$DATABASE_URL' -c 'SELECT 1' 2>/dev/null"
down_at=$SECONDS
# Each daemon's database check runs every second: the first polls may still see the last
# good one. What counts: it notices within OUTAGE_S / 4, and says so in every poll after.
polls=0 ok=0 degraded=0 bdown=0 gw_seen='' bl_seen='' gw_relapse=0 bl_relapse=0
while ((SECONDS - down_at < OUTAGE_S)); do
	body=$(curl -s --max-time 2 -w '\n%{http_code}' "$ADMIN/readyz")
	code=${body##*$'\n'} body=${body%$'\n'*}
	polls=$((polls + 1))
	[[ $code == 200 ]] && ok=$((ok + 1))
	if xg_json_holds '.degraded == true and (.checks.database | test("unreachable"))' "$body"; then
		degraded=$((degraded + 1))
		[[ -n $gw_seen ]] || gw_seen=$((SECONDS - down_at))
	elif [[ -n $gw_seen ]]; then
		gw_relapse=$((gw_relapse + 1))
	fi
	if [[ $(lim_status "$BADMIN" /readyz) == 503 ]]; then
		bdown=$((bdown + 1))
		[[ -n $bl_seen ]] || bl_seen=$((SECONDS - down_at))
	elif [[ -n $bl_seen ]]; then
		bl_relapse=$((bl_relapse + 1))
	fi
	[[ $degraded == 1 && $code == 200 ]] && echo "# /readyz during the outage: $body"
	sleep 0.25
done
echo "# $polls polls of the gateway's /readyz over ${OUTAGE_S} s: $ok answered 200, $degraded said degraded (database) from ${gw_seen:-never} s on; billing answered 503 in $bdown from ${bl_seen:-never} s on"
check "the gateway was polled at least 10 times" test "$polls" -ge 10
assert_eq "/readyz answered 200 in every poll" "$polls" "$ok"
check "/readyz said degraded, naming the database, within $((OUTAGE_S / 4)) s" \
	test "${gw_seen:-999}" -le $((OUTAGE_S / 4))
assert_eq "... and in every poll after that" 0 "$gw_relapse"
assert_json "the body names the tenants as served from memory" "$(curl -s "$ADMIN/readyz")" \
	'.checks.tenants | test("serving the tenants loaded before")'
check "xmrgate_gateway_database_up is 0" bash -c "curl -s '$ADMIN/metrics' | grep -qx 'xmrgate_gateway_database_up 0'"
check "xmrgate_gateway_tenants_synced is 0" bash -c "curl -s '$ADMIN/metrics' | grep -qx 'xmrgate_gateway_tenants_synced 0'"
assert_eq "/livez answers 200 during the outage" 200 "$(lim_status "$ADMIN" /livez)"
check "billing's /readyz answered 503 within $((OUTAGE_S / 4)) s (it cannot sell)" \
	test "${bl_seen:-999}" -le $((OUTAGE_S / 4))
assert_eq "... and in every poll after that" 0 "$bl_relapse"
assert_json "billing's /readyz names the database" "$(curl -s "$BADMIN/readyz")" \
	'.status == "not_ready" and (.checks.database | test("unreachable"))'
assert_eq "billing's /livez answers 200" 200 "$(lim_status "$BADMIN" /livez)"

pg_start
up_at=$(date +%s.%N)
check "the gateway is ready and no longer degraded" wait_until 20 bash -c \
	"curl -s '$ADMIN/readyz' | jq -e '.status == \"ready\" and .degraded == false' >/dev/null"
back=$(echo "$(date +%s.%N) - $up_at" | bc)
echo "# following PostgreSQL again ${back} s after pg_ctl start returned (the longest a tenant provisioned then waits)"
rm -f "$LIM_DIR/load.on"
wait "$load"
served=$(grep -c '^200$' "$LIM_DIR/codes")
other=$(grep -vc '^200$' "$LIM_DIR/codes")
echo "# served $served, other answers $other"
check "the load ran through the outage (> 200 requests)" test "$served" -gt 200
assert_eq "0 failed requests of the known tenant" 0 "$other"
out=$("$XG_REPO/build/release/tests/tools/notify_latency" "$DATABASE_URL" "$URL" 5 100 2>&1)
check "a tenant created after the outage is accepted within 100 ms of its commit (the median of 5; each within 1 s)" test $? -eq 0
echo "$out" | sed 's/^/# /'
check "billing is ready again" wait_until 20 curl -sf -o /dev/null "$BADMIN/readyz"
