#!/usr/bin/env bash
# Sets up a region that follows the primary by PostgreSQL's logical replication
# (docs/DEPLOYMENT.md, "A second region"). Run once per region, as a role that may create
# publications and subscriptions on both databases (a superuser, or the owner with the
# replication attribute).
#
#   scripts/region.sh follow REGION PRIMARY_URL REGION_URL [PRIMARY_FROM_REGION [REGION_FROM_PRIMARY]]
#   scripts/region.sh drop   REGION PRIMARY_URL REGION_URL
#
# PRIMARY_URL and REGION_URL are how this script reaches the two databases;
# PRIMARY_FROM_REGION is the conninfo the region's server uses to reach the primary, and
# REGION_FROM_PRIMARY the other way round (both default to the first two).
#
# Both databases must be at the current schema (`xmrgate-billing migrate` on each) and run
# with wal_level = logical. `follow`:
#   - on the primary: publication xmrgate_to_REGION of what the region's gateways read
#     (tiers, tenants, nodes), the primary's usage (usage_daily) and the other regions'
#     (usage_regional, without REGION's own rows, which would otherwise come back);
#   - on the region's database: ALTER DATABASE … SET xmrgate.region = REGION (its gateways
#     then count into usage_regional under REGION: sql/queries_gateway.sql gw_usage_add);
#     the followed tables emptied (a fresh schema's seeded tiers would collide with the
#     first copy); publication xmrgate_from_REGION of its own usage rows; subscription
#     xmrgate_home to the primary;
#   - on the primary: subscription xmrgate_from_REGION to the region's usage.
# The NOTIFY triggers fire on the region's database for replicated rows (they are ENABLE
# ALWAYS: sql/functions_notify.sql), so its gateways LISTEN there.
set -euo pipefail

die() {
	echo "region: $*" >&2
	exit 1
}
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$1" -c "$2"; }

(($# >= 4)) || die "usage: region.sh follow|drop REGION PRIMARY_URL REGION_URL [PRIMARY_FROM_REGION [REGION_FROM_PRIMARY]]"
cmd=$1 region=$2 primary=$3 here=$4
primary_from_region=${5:-$primary} region_from_primary=${6:-$here}
[[ $region =~ ^[a-z0-9_]{1,32}$ ]] || die "REGION must be 1-32 of a-z, 0-9, _ (it names publications)"

follow() {
	[[ $(q "$primary" 'SHOW wal_level') == logical ]] || die "the primary needs wal_level = logical"
	[[ $(q "$here" 'SHOW wal_level') == logical ]] || die "the region's database needs wal_level = logical"
	[[ $(q "$primary" 'SELECT max(version) FROM schema_migrations') == \
		$(q "$here" 'SELECT max(version) FROM schema_migrations') ]] ||
		die "the two databases are at different schema versions: migrate both"
	q "$primary" "CREATE PUBLICATION xmrgate_to_$region
		FOR TABLE tiers, tenants, nodes, usage_daily, usage_regional WHERE (region <> '$region')"
	q "$here" "ALTER DATABASE $(q "$here" 'SELECT quote_ident(current_database())') SET xmrgate.region = '$region'"
	q "$here" "TRUNCATE tiers, tenants, nodes, usage_daily, usage_regional CASCADE"
	q "$here" "CREATE PUBLICATION xmrgate_from_$region FOR TABLE usage_regional WHERE (region = '$region')"
	q "$here" "CREATE SUBSCRIPTION xmrgate_home CONNECTION '$primary_from_region'
		PUBLICATION xmrgate_to_$region"
	q "$primary" "CREATE SUBSCRIPTION xmrgate_from_$region CONNECTION '$region_from_primary'
		PUBLICATION xmrgate_from_$region"
	echo "region: $region follows the primary; its usage flows back"
}

drop() {
	q "$primary" "DROP SUBSCRIPTION IF EXISTS xmrgate_from_$region"
	q "$here" "DROP SUBSCRIPTION IF EXISTS xmrgate_home"
	q "$here" "DROP PUBLICATION IF EXISTS xmrgate_from_$region"
	q "$primary" "DROP PUBLICATION IF EXISTS xmrgate_to_$region"
	q "$here" "ALTER DATABASE $(q "$here" 'SELECT quote_ident(current_database())') RESET xmrgate.region"
	echo "region: $region no longer follows"
}

case $cmd in
follow) follow ;;
drop) drop ;;
*) die "unknown command $cmd" ;;
esac
