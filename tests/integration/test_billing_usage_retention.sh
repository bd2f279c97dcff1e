#!/usr/bin/env bash
# Usage counts are not kept for ever (issue #29, retention): the billing leader deletes the
# usage_daily and usage_regional rows older than [usage] retention (400 days by default),
# oldest first, in batches, and keeps the rest; a retention of 0 keeps every row. The
# invoices and payments are the operator's accounts and are never touched.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"
# shellcheck source=tests/integration/lib_limits.sh
. "$(dirname "$0")/lib_limits.sh"
defer rm -rf "$LIM_DIR"

bt_setup
lim_tier ur_tier 10 1000
lim_tenant ur_tier
tid=$LIM_ID
defer psql_q "DELETE FROM tenants WHERE id = $tid"
today="(now() AT TIME ZONE 'UTC')::date"
# rows AGE...: a usage_daily and a usage_regional (region 'far') row AGE days old each
rows() {
	local age
	for age in "$@"; do
		psql_q "INSERT INTO usage_daily (tenant_id, day, used) VALUES ($tid, $today - $age, 7)
		        ON CONFLICT DO NOTHING" >/dev/null
		psql_q "INSERT INTO usage_regional (region, tenant_id, day, used)
		        VALUES ('far', $tid, $today - $age, 3) ON CONFLICT DO NOTHING" >/dev/null
	done
}
ages() { # TABLE: the ages of the tenant's rows, oldest first
	psql_q "SELECT string_agg(($today - day)::text, ',' ORDER BY day) FROM $1 WHERE tenant_id = $tid"
}
cycles() { bt_status a | jq -r '.cycles // 0'; }
# cycled N: billing a's leader completed N more poll cycles (its prunes ran) than when asked
cycled() {
	local from
	from=$(cycles)
	wait_until 60 bash -c "(( \$(curl -s -H 'Authorization: Bearer $BT_ADMIN_TOKEN' \
		'$(billing_admin a)/status' | jq -r '.cycles // 0') >= $from + $1 ))"
}

rows 900 500 401 400 399 30 0
assert_eq "usage_daily holds the seven days" "900,500,401,400,399,30,0" "$(ages usage_daily)"
invoices_before=$(psql_q "SELECT count(*) FROM invoices")

check_here "billing starts with the default retention (400 days)" billing_start a
check "it leads" wait_until 30 bash -c "[[ \$(curl -s -H 'Authorization: Bearer $BT_ADMIN_TOKEN' '$(billing_admin a)/status' | jq -r .role) == leader ]]"
pruned() { [[ $(ages usage_daily) == "400,399,30,0" && $(ages usage_regional) == "400,399,30,0" ]]; }
check "the rows older than 400 days are deleted from both tables" wait_until 60 pruned
echo "# usage_daily ages now: $(ages usage_daily); usage_regional: $(ages usage_regional)"
check "billing logged it" grep -q '"event":"usage_pruned"' "$(billing_log a)"
assert_eq "no invoice was deleted" "$invoices_before" "$(psql_q "SELECT count(*) FROM invoices")"

check_here "billing restarts with [usage] retention = 0 (for ever)" billing_start a usage.retention=0
rows 900
check "three poll cycles pass" cycled 3
assert_eq "with 0 every row stays" "900,400,399,30,0" "$(ages usage_daily)"

check_here "billing restarts with a retention of 30 days" billing_start a usage.retention=30d
thirty() { [[ $(ages usage_daily) == "30,0" && $(ages usage_regional) == "30,0" ]]; }
check "everything older than 30 days goes" wait_until 60 thirty
bad_rc=0
bad_out=$(billing_exit bad usage.retention=often) || bad_rc=$?
check "a retention that is no duration is refused at start (exit $bad_rc)" \
	bash -c "(($bad_rc != 0 && $bad_rc != 124)) && grep -q 'retention' <<<\"\$1\"" _ "$bad_out"

# The accounts' pruning docs/OPERATIONS.md gives ("Retention") runs as written.
prune_sql=$(awk '/^## Retention/ { on = 1 } on && /^```sql/ { grab = 1; next } grab && /^```/ { exit } grab' \
	"$XG_REPO/docs/OPERATIONS.md")
check "docs/OPERATIONS.md has the accounts' pruning" grep -q 'DELETE FROM invoices' <<<"$prune_sql"
check "... and it runs on this schema" psql -X -q -v ON_ERROR_STOP=1 "$DATABASE_URL" -c "$prune_sql"
