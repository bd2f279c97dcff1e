#!/usr/bin/env bash
# Rolling upgrades (expand/contract migrations) against a real PostgreSQL, on a scratch
# database so that the stack's own stays at this build's schema:
#   - a gateway and a billing of this build, serving a tenant, stay ready (200 on every
#     poll, no failed request) while an expand migration (`-- compatible-with: V`, V the
#     build's schema) is
#     applied by `xmrgate-billing migrate`, which says it is one; /readyz notes the schema
#     ahead (still 200, not degraded) and each daemon logs it once;
#   - a contract migration (no header) makes both unready with "run a newer build", and
#     neither starts again on it;
#   - a database behind the build (at schema V - 1) refuses both with "run the migrations".
# The migrator wants numbers without gaps, so the scratch migrations are the next free
# numbers, V + 1 (expand) and V + 2 (contract).
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"

work=$XG_VAR/schema-upgrade
rm -rf "$work"
mkdir -p "$work/expand" "$work/contract" "$work/old"
defer rm -rf "$work"

check_here "a scratch database at this build's schema, with the stack's node A" \
	scratch_db xmrgate_schema_upgrade a="$NODE_A_URL"
DB=$SCRATCH_DB_URL
dbq() { psql -X -q -At -v ON_ERROR_STOP=1 "$DB" -c "$1"; }
# V: this build's schema, the highest migration file's number; E and C the scratch ones
V=$(find "$XG_REPO/migrations" -name '[0-9][0-9][0-9][0-9]_*.sql' -printf '%f\n' | sort | tail -n 1)
V=$((10#${V%%_*})) E=$((V + 1)) C=$((V + 2))
EN=$(printf '%04d' "$E") CN=$(printf '%04d' "$C")
# each applied row's floor as schema_migrations should hold it: none before 0007, then the
# file's header (its own version without one)
floors() {
	local f n h out=()
	for f in "$XG_REPO"/migrations/[0-9][0-9][0-9][0-9]_*.sql; do
		n=${f##*/} n=$((10#${n%%_*}))
		h=$(sed -n 's/^-- compatible-with: *\([0-9]*\).*/\1/p' "$f")
		if ((n < 7)); then out+=("$n:-"); else out+=("$n:${h:-$n}"); fi
	done
	local IFS=,
	echo "${out[*]}"
}
migrate_with() { # DIR: xmrgate-billing migrate on the scratch database with DIR's files
	XMRGATE_DATABASE_URL=$DB XMRGATE_DATABASE_MIGRATIONS_DIR=$1 "$XG_REPO/bin/xmrgate-billing" \
		--config "$XG_VAR/etc/billing.ini" migrate 2>&1
}
assert_eq "the scratch database is at this build's schema, $V" "$V" "$(dbq 'SELECT max(version) FROM schema_migrations')"
assert_eq "0007 on recorded their floors (0007: compatible with 6); the rows before it have none" \
	"$(floors)" \
	"$(dbq "SELECT string_agg(version || ':' || coalesce(compatible_with::text, '-'), ',' ORDER BY version) FROM schema_migrations")"

cp "$XG_REPO"/migrations/*.sql "$work/expand/"
cat >"$work/expand/${EN}_test_expand.sql" <<EOF
-- $EN: a column and a table the running builds do not know.
-- compatible-with: $V
ALTER TABLE tenants ADD COLUMN upgrade_note text;
CREATE TABLE upgrade_test_expand (id int PRIMARY KEY);
EOF
cp "$work/expand/"*.sql "$work/contract/"
cat >"$work/contract/${CN}_test_contract.sql" <<EOF
-- $CN: a change the builds before it cannot run on (no compatible-with header).
CREATE TABLE upgrade_test_contract (id int PRIMARY KEY);
EOF

# --- a gateway and a billing of this build, serving -------------------------------------------
export XMRGATE_DATABASE_URL=$DB # for grant_tenant
check_here "a tenant is granted on the scratch database" grant_tenant sovereign 1
check_here "the gateway starts on the scratch database and is ready" \
	gateway_start up database.url="$DB"
check_here "the billing starts on the scratch database and is ready" \
	billing_start up database.url="$DB"
GW=$GW_URL GW_ADM=$GW_ADMIN
BL=$BL_URL BL_ADM=$BL_ADMIN
gw_body() { curl -s --max-time 5 "$GW_ADM/readyz"; }
bl_body() { curl -s --max-time 5 "$BL_ADM/readyz"; }
code() { curl -s -o /dev/null --max-time 5 -w '%{http_code}' "$1"; }
check "the tenant is served" test "$(code "$GW/v1/$TOKEN/get_height")" = 200
assert_json "the gateway's /readyz has nothing to note about the schema" "$(gw_body)" \
	'.status == "ready" and .checks.schema == "ok"'

# Polls both daemons' /readyz, a tenant's request and billing's API until told to stop;
# each poll is one line: gateway readyz, billing readyz, tenant request, billing API.
polls=$work/polls
stop_flag=$work/stop
poller() {
	while [[ ! -e $stop_flag ]]; do
		echo "$(code "$GW_ADM/readyz") $(code "$BL_ADM/readyz") $(code "$GW/v1/$TOKEN/get_height") $(code "$BL/api/tiers")" >>"$polls"
		sleep 0.1
	done
}
poll_count() { [[ -e $polls ]] && wc -l <"$polls" || echo 0; }
polled_since() { (($(poll_count) >= $1)); }
poller &
poller_pid=$!
defer stop_pid "$poller_pid"
check "the poller runs" wait_until 10 polled_since 5

# --- expand: the running builds stay ready ----------------------------------------------------
out=$(migrate_with "$work/expand")
rc=$?
check "the expand migration applies" test "$rc" -eq 0
check "migrate says $EN is an expand migration for builds from $V on" \
	grep -q "${EN}_test_expand.sql: expand (builds from schema $V on keep working)" <<<"$out"
assert_eq "its floor is recorded" "$V" "$(dbq "SELECT compatible_with FROM schema_migrations WHERE version = $E")"
ahead="ahead of this build.s $V but compatible"
gw_notes() { gw_body | jq -e --arg re "$ahead" '.status == "ready" and .degraded == false and (.checks.schema | test($re))' >/dev/null; }
bl_notes() { bl_body | jq -e --arg re "$ahead" '.status == "ready" and .degraded == false and (.checks.schema | test($re))' >/dev/null; }
check "the gateway's /readyz notes the schema ahead (200, not degraded)" wait_until 10 gw_notes
check "the billing's /readyz notes the schema ahead (200, not degraded)" wait_until 10 bl_notes
# Both watchers check once a second: several more checks pass while the polls go on.
seen=$(poll_count)
check "the polls go on for three more seconds' worth of checks" wait_until 30 polled_since $((seen + 15))
touch "$stop_flag"
wait "$poller_pid" 2>/dev/null
total=$(poll_count)
bad=$(awk '$0 != "200 200 200 200"' "$polls" | sort | uniq -c)
assert_eq "every poll ($total) of both /readyz, the tenant and billing's API answered 200" "" "$bad"
check "at least 20 polls were made" test "$total" -ge 20
gw_ahead_logs=$(grep -c '"event":"schema_ahead"' "$GW_LOG")
bl_ahead_logs=$(grep -c '"event":"schema_ahead"' "$BL_LOG")
assert_eq "the gateway logs the schema ahead once" 1 "$gw_ahead_logs"
assert_eq "the billing logs the schema ahead once" 1 "$bl_ahead_logs"
check "the gateway never logged db_not_ready" bash -c "! grep -q '\"event\":\"db_not_ready\"' '$GW_LOG'"
check_here "a restarted gateway starts on the expanded schema" gateway_restart up
GW_ADM=$(gw_admin up) GW=$(gw_url up)
check "and serves the tenant" test "$(code "$GW/v1/$TOKEN/get_height")" = 200

# --- contract: the builds before it stop -------------------------------------------------------
out=$(migrate_with "$work/contract")
rc=$?
check "the contract migration applies" test "$rc" -eq 0
check "migrate says $CN is a contract migration" \
	grep -q "${CN}_test_contract.sql: contract (builds before schema $C stop)" <<<"$out"
newer='run a newer build'
gw_refused() { gw_body | jq -e --arg re "$newer" '.status == "not_ready" and (.checks.database | test($re))' >/dev/null; }
bl_refused() { bl_body | jq -e --arg re "$newer" '.status == "not_ready" and (.checks.database | test($re))' >/dev/null; }
check "the gateway turns unready: run a newer build" wait_until 10 gw_refused
check "the billing turns unready: run a newer build" wait_until 10 bl_refused
assert_eq "the gateway's /readyz answers 503" 503 "$(code "$GW_ADM/readyz")"
assert_eq "the billing's /readyz answers 503" 503 "$(code "$BL_ADM/readyz")"
gateway_stop up
billing_stop up
out=$(gateway_exit up database.url="$DB")
rc=$?
check "a restarted gateway refuses to start on the contracted schema" test "$rc" -ne 0 -a "$rc" -ne 124
check "naming the versions and saying: run a newer build" \
	grep -q "schema is at version $C, this build expects $V and a migration after it no longer works for builds before $C: run a newer build" <<<"$out"
out=$(billing_exit up database.url="$DB")
rc=$?
check "a restarted billing refuses to start on the contracted schema" test "$rc" -ne 0 -a "$rc" -ne 124
check "saying: run a newer build" grep -q "$newer" <<<"$out"

# --- behind: a database at schema V - 1 ----------------------------------------------------------
for f in "$XG_REPO"/migrations/[0-9][0-9][0-9][0-9]_*.sql; do
	n=${f##*/}
	((10#${n%%_*} < V)) && cp "$f" "$work/old/"
done
OLD_DB=${DATABASE_URL%/*}/xmrgate_schema_upgrade_old
psql -X -q "${DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS xmrgate_schema_upgrade_old" \
	-c "CREATE DATABASE xmrgate_schema_upgrade_old"
defer psql -X -q "${DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS xmrgate_schema_upgrade_old WITH (FORCE)"
DB=$OLD_DB
check "it is migrated to schema $((V - 1)) only" migrate_with "$work/old"
assert_eq "it is at $((V - 1))" $((V - 1)) "$(dbq 'SELECT max(version) FROM schema_migrations')"
out=$(gateway_exit behind database.url="$OLD_DB")
rc=$?
check "a gateway refuses to start on a database behind it" test "$rc" -ne 0 -a "$rc" -ne 124
check "saying: run the migrations" \
	grep -q "schema is at version $((V - 1)), this build expects $V: run the migrations" <<<"$out"
out=$(billing_exit behind database.url="$OLD_DB")
rc=$?
check "a billing refuses to start on a database behind it" test "$rc" -ne 0 -a "$rc" -ne 124
check "saying: run the migrations" grep -q 'run the migrations' <<<"$out"
check "migrating it with this build's files brings it to $V" migrate_with "$XG_REPO/migrations"
assert_eq "0007 records its floor on an upgraded database" 6 \
	"$(dbq 'SELECT compatible_with FROM schema_migrations WHERE version = 7')"
