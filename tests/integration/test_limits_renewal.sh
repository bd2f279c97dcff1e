#!/usr/bin/env bash
# A renewal or tier change that raises the quota lets a tenant refused at its quota
# through again, without a gateway restart: the UPDATE's NOTIFY replaces the tenant's
# snapshot and the next request is judged under the new quota, with the counts kept.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/lib_limits.sh
. "$(dirname "$0")/lib_limits.sh"
defer rm -rf "$LIM_DIR"

lim_setup
lim_tier lt_small 1000 20
lim_tier lt_bigger 1000 60
lim_tenant lt_small
id=$LIM_ID token=$LIM_TOKEN
gateway_start g1 --base bare || exit 1
url="$(gw_url g1)/v1/$token/json_rpc"

codes=$(lim_load 30 1 "$LIM_RPC_BODY" "$url" | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')
assert_eq "a quota of 20: 20 served, then refused" "200:20 429:10 " "$codes"
pid_before=$(gw_pid g1)

# Renewal onto a bigger tier (what billing commits): the tenant's row changes.
psql_q "UPDATE tenants SET tier_id = 'lt_bigger', valid_until = valid_until + interval '30 days'
	WHERE id = $id" >/dev/null
check "served again within 2 s of the renewal" \
	wait_until 2 bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' --data-binary '$LIM_RPC_BODY' '$url') == 200 ]]"
assert_json "/v1/usage shows the new tier, the usage kept and 60 - used remaining" \
	"$(curl -s "$(gw_url g1)/v1/$token/usage")" \
	'.tier == "lt_bigger" and .daily_quota == 60 and .used_today == 21 and .remaining_today == 39'
codes=$(lim_load 45 1 "$LIM_RPC_BODY" "$url" | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')
assert_eq "the rest of the new quota (39) is served, then refused" "200:39 429:6 " "$codes"

# A tier change (the operator raises the tier's quota): the tiers NOTIFY reloads its tenants.
psql_q "UPDATE tiers SET daily_quota = 100 WHERE id = 'lt_bigger'" >/dev/null
check "served again within 2 s of the tier change" \
	wait_until 2 bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' --data-binary '$LIM_RPC_BODY' '$url') == 200 ]]"
assert_eq "no gateway restart happened" "$pid_before" "$(gw_pid g1)"
check "the gateway process is still the same one" kill -0 "$pid_before"
gateway_stop g1
assert_eq "usage_daily counts every served request" 61 "$(lim_used "$id")"
