#!/usr/bin/env bash
# A second region: region A's PostgreSQL (the primary, billing's) and region B's, each a
# machine of its own (a network namespace), region B a logical-replication subscriber of
# what its gateways read and a publisher of its own usage (scripts/region.sh), with 80 ms
# of round-trip delay between the regions: the replication connections go through a delay
# line of 40 ms each way (tests/integration/delay_proxy.py: this machine's kernel has no
# netem), in the host, so cutting B's link cuts them too. A gateway in each region
# on its own database (B's reaches its database over a link of its own, without the
# delay). `make drill-regions` runs it.
#   - a tenant bought at billing (region A) is usable at the region-B gateway (and at A's)
#     within 1 s p99 of billing's answer;
#   - the daily quota holds across the regions: hammered in both regions at once, what is
#     served stays within quota + one batch (100) per gateway + what the regions serve
#     during one replication lag (bound printed with the measured figures), and each
#     region's usage reaches the other;
#   - region A unreachable from B for 20 s: B keeps serving its known tenants (0 failed,
#     /readyz 200 in every poll), and catches up when A is back: a tenant bought meanwhile
#     is usable at B once the link is back (time printed), and B's usage of the
#     partition reaches A. (How long the catch-up takes is printed: the apply worker notices the
#     dead connection after wal_receiver_timeout, 10 s here, and reconnects.)
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/../integration/lib.sh"
# shellcheck source=tests/integration/netns_lib.sh
. "$(dirname "$0")/../integration/netns_lib.sh"

PG_BIN=/usr/lib/postgresql/15/bin
DELAY_MS=40 # each way: 80 ms round trip
QUOTA=1000
((EUID == 0)) || {
	echo "not ok - the region drill needs root (network namespaces)"
	exit 1
}

mkdir -p /var/lib/xmrgate
R_DIR=$(mktemp -d /var/lib/xmrgate/regions.XXXXXX)
chown postgres:postgres "$R_DIR"
chmod 700 "$R_DIR"
r_cleanup() {
	ns_kill ra
	ns_kill rb
	sleep 0.5
	[[ -z ${XG_REGION_LOGS:-} ]] || cp "$R_DIR"/*.log "$XG_REGION_LOGS"/ 2>/dev/null
	rm -rf "$R_DIR"
}
ns_net_up || {
	echo "not ok - the drill's bridge is set up"
	exit 1
}
defer r_cleanup

A_ADDR=$(ns_addr 21) B_ADDR=$(ns_addr 22)
# region B's own link for its gateways: a point-to-point veth beside the bridge, no delay
# (the subnet next to the bridge's: 10.33.1.0/24 -> 10.33.101.0/30)
LAN_PREFIX=10.$((XG_PORT_BASE / 1000 % 256)).$((XG_PORT_BASE / 100 % 10 + 100))
lan_up() {
	local hv=${NS_TAG}rbl
	ip link add "$hv" type veth peer name lan0 netns "$NS_TAG-rb" || return 1
	ip addr add "$LAN_PREFIX.1/30" dev "$hv" || return 1
	ip link set "$hv" up || return 1
	ns_exec rb sh -ec "ip addr add $LAN_PREFIX.2/30 dev lan0; ip link set lan0 up"
}
B_LAN=$LAN_PREFIX.2

pg_init() { # NAME LISTEN
	(cd / && runuser -u postgres -- "$PG_BIN/initdb" -A trust -U postgres -E UTF8 --locale=C \
		--no-sync -D "$R_DIR/$1") >"$R_DIR/$1-initdb.log" 2>&1 || return 1
	install -d -o postgres "$R_DIR/$1.sock"
	cat >>"$R_DIR/$1/postgresql.conf" <<EOF
listen_addresses = '$2'
port = 5432
unix_socket_directories = '$R_DIR/$1.sock'
wal_level = logical
fsync = off
max_wal_senders = 10
max_replication_slots = 10
wal_sender_timeout = 10s
wal_receiver_timeout = 10s
tcp_keepalives_idle = 5
tcp_keepalives_interval = 2
tcp_keepalives_count = 3
wal_retrieve_retry_interval = 1s
EOF
	echo "host all all 0.0.0.0/0 trust" >>"$R_DIR/$1/pg_hba.conf"
}
pg_run() { # NAME NS
	(cd / && ns_exec "$2" runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$R_DIR/$1" -l "$R_DIR/$1.log" -w -t 60 start >/dev/null)
}

check "machine ra (region A's PostgreSQL) is up" ns_add ra 21
check "machine rb (region B's PostgreSQL) is up" ns_add rb 22
check "region B's gateways have a link of their own to it" lan_up
check "region A's PostgreSQL is created" pg_init ra "$A_ADDR"
check "region B's PostgreSQL is created" pg_init rb "$B_ADDR,$B_LAN"
check "region A's PostgreSQL starts" pg_run ra ra
check "region B's PostgreSQL starts" pg_run rb rb
psql -X -q -h "$A_ADDR" -p 5432 -U postgres -d postgres -c 'CREATE DATABASE xmrgate'
psql -X -q -h "$B_ADDR" -p 5432 -U postgres -d postgres -c 'CREATE DATABASE xmrgate'
A_URL="postgresql://postgres@$A_ADDR:5432/xmrgate?connect_timeout=3"
B_URL="postgresql://postgres@$B_LAN:5432/xmrgate?connect_timeout=3&keepalives_idle=5&keepalives_interval=2&keepalives_count=3"
DATABASE_URL=$A_URL
export DATABASE_URL

# shellcheck source=tests/integration/lib_limits.sh
. "$(dirname "$0")/../integration/lib_limits.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/../integration/billing_lib.sh"
defer rm -rf "$LIM_DIR"
bt_setup # migrates A
XMRGATE_DATABASE_URL=$B_URL XMRGATE_DATABASE_MIGRATIONS_DIR=$XG_REPO/migrations \
	XMRGATE_GATEWAY_HA1_KEY=$BT_HA1_KEY XMRGATE_BILLING_TOKEN_KEY=$BT_TOKEN_KEY \
	"${XG_BILLING_BIN:-$XG_REPO/bin/xmrgate-billing}" migrate \
	>>"$BT_DIR/migrate-b.log" 2>&1
check "region B's database is migrated" test $? -eq 0
lim_setup
lim_tier rg_load 100000 100000000
lim_tier rg_quota 100000 "$QUOTA"
lim_tenant rg_load
known=$LIM_TOKEN

# the distance: B reaches A at WAN_A, A reaches B at WAN_B, 40 ms each way
WAN=$(ns_addr 1) WAN_A=$((XG_PORT_BASE + 110)) WAN_B=$((XG_PORT_BASE + 111))
python3 "$XG_REPO/tests/integration/delay_proxy.py" "$WAN" "$WAN_A" "$A_ADDR" 5432 "$DELAY_MS" &
defer kill $!
python3 "$XG_REPO/tests/integration/delay_proxy.py" "$WAN" "$WAN_B" "$B_ADDR" 5432 "$DELAY_MS" &
defer kill $!
check "the 80 ms between the regions is in place" wait_until 10 psql -X -At -h "$WAN" -p "$WAN_B" -U postgres -d xmrgate -c 'SELECT 1'
t=$(date +%s%N)
psql -X -At -h "$WAN" -p "$WAN_B" -U postgres -d xmrgate -c 'SELECT 1' >/dev/null
echo "# connecting to region B's database across the regions and one query: $((($(date +%s%N) - t) / 1000000)) ms (a few round trips of 80 ms)"
out=$("$XG_REPO/scripts/region.sh" follow b "$A_URL" "postgresql://postgres@$B_ADDR:5432/xmrgate" \
	"host=$WAN port=$WAN_A dbname=xmrgate user=postgres connect_timeout=2 keepalives_idle=5 keepalives_interval=2 keepalives_count=3" \
	"host=$WAN port=$WAN_B dbname=xmrgate user=postgres connect_timeout=2 keepalives_idle=5 keepalives_interval=2 keepalives_count=3" 2>&1)
check "scripts/region.sh follow b sets up both directions" test $? -eq 0
echo "$out" | sed 's/^/# /'
b_has_tenant() { [[ $(psql -X -At "$B_URL" -c "SELECT count(*) FROM tenants WHERE id = $LIM_ID") == 1 ]]; }
check "the tenants reached region B (initial copy)" wait_until 60 b_has_tenant

check_here "billing starts in region A" billing_start a invoices.free_burst=1000 invoices.free_per_hour=100000
gateway_start ga --base bare "auth.ha1_key=$BT_HA1_KEY" || exit 1
GA=$(gw_url ga)
gateway_start gb --base bare "auth.ha1_key=$BT_HA1_KEY" "database.url=$B_URL" || exit 1
GB=$(gw_url gb) GB_ADMIN=$(gw_admin gb)
_xg_pass "a gateway in each region, each on its own database"

# --- a tenant bought in A, usable in B -------------------------------------------------------
out=$("$XG_REPO/build/release/tests/tools/buy_latency" "$(billing_url a)" free 20 1000 "$GB" 2>&1)
check "tenants bought at billing (region A) are usable at region B's gateway within 1 s p99" test $? -eq 0
echo "$out" | sed 's/^/# region B: /'
out=$("$XG_REPO/build/release/tests/tools/buy_latency" "$(billing_url a)" free 10 1000 "$GA" 2>&1)
echo "$out" | sed 's/^/# region A: /'

# --- the daily quota across the regions --------------------------------------------------------
lim_tenant rg_quota
qid=$LIM_ID qtok=$LIM_TOKEN
sleep 2 # the tenant reached B
check "the quota tenant is known in region B" wait_until 10 b_has_tenant
start=$(date +%s.%N) hammers=()
for side in a b; do
	url=$GA
	[[ $side == b ]] && url=$GB
	(
		for ((k = 0; k < 6; k++)); do
			lim_load 300 8 "$LIM_RPC_BODY" "$url/v1/$qtok/json_rpc"
		done >"$LIM_DIR/quota-$side"
	) &
	hammers+=($!)
done
wait "${hammers[@]}"
took=$(echo "$(date +%s.%N) - $start" | bc)
sa=$(grep -c '^200$' "$LIM_DIR/quota-a") sb=$(grep -c '^200$' "$LIM_DIR/quota-b")
served=$((sa + sb))
rate=$(echo "scale=0; $served / $took" | bc)
# Each gateway sees its own region's counts as of its batch (100) and the other region's as
# of that region's batch and the replication lag; the lag is bounded by the 1 s target
# (measured above); so: quota + 2 × 100 + the combined rate × 1 s.
bound=$(echo "$QUOTA + 2 * 100 + $rate * 1" | bc)
echo "# quota $QUOTA hammered in both regions for $took s: A served $sa, B served $sb, $served in all ($((served - QUOTA)) over); combined rate $rate a second; stated bound $bound"
check "refused beyond the quota in both regions" bash -c "grep -q '^429$' '$LIM_DIR/quota-a' && grep -q '^429$' '$LIM_DIR/quota-b'"
check "served within the cross-region bound ($served <= $bound)" test "$served" -le "$bound"
a_total() { psql -X -At "$A_URL" -c "SELECT coalesce((SELECT used FROM usage_daily WHERE tenant_id = $qid), 0) + coalesce((SELECT sum(used) FROM usage_regional WHERE tenant_id = $qid), 0)"; }
b_total() { psql -X -At "$B_URL" -c "SELECT coalesce((SELECT used FROM usage_daily WHERE tenant_id = $qid), 0) + coalesce((SELECT sum(used) FROM usage_regional WHERE tenant_id = $qid), 0)"; }
a_is() { [[ $(a_total) == "$1" ]]; }
b_is() { [[ $(b_total) == "$1" ]]; }
check "region A sees both regions' usage: what was served (within 15 s)" wait_until 15 a_is "$served"
check "region B sees the same total" wait_until 15 b_is "$served"
echo "# usage of the quota tenant: A's view $(a_total), B's view $(b_total)"

# --- region A unreachable from B ----------------------------------------------------------------
lim_tenant rg_load
known2=$LIM_TOKEN
check "a second known tenant reached B" wait_until 10 b_has_tenant
touch "$LIM_DIR/on"
(
	while [[ -e $LIM_DIR/on ]]; do
		lim_load 40 4 "$LIM_RPC_BODY" "$GB/v1/$known/json_rpc" "$GB/v1/$known2/json_rpc"
		sleep 0.05
	done >"$LIM_DIR/b-codes"
) &
load=$!
(
	while [[ -e $LIM_DIR/on ]]; do
		curl -s -o /dev/null --max-time 2 -w '%{http_code}\n' "$GB_ADMIN/readyz"
		sleep 0.5
	done >"$LIM_DIR/b-ready"
) &
polls=$!
sleep 1
ns_cut rb
_xg_pass "region A is cut off from region B (B's link down: no reset, no answer)"
sleep 2
# bought in A during the partition
resp=$(curl -s -w '\n%{http_code}' -H 'Content-Type: application/json' \
	--data-binary '{"tier":"free"}' "$(billing_url a)/api/invoices")
st=${resp##*$'\n'} body=${resp%$'\n'*}
assert_eq "a tenant is bought in region A during the partition" 201 "$st"
new_token=$(jq -r .token <<<"$body")
sleep 18
probe() { curl -s -o /dev/null -w '%{http_code}' "$GB/v1/$new_token/regions_probe"; }
assert_eq "region B cannot know it yet (401)" 401 "$(probe)"
ns_mend rb
back=$(date +%s.%N)
check "region B catches up: the tenant bought meanwhile is usable at its gateway (within 30 s of the link's return)" \
	wait_until 30 bash -c "[[ \$(curl -s -o /dev/null -w '%{http_code}' '$GB/v1/$new_token/regions_probe') == 404 ]]"
echo "# usable at region B $(echo "$(date +%s.%N) - $back" | bc) s after the link came back"
sleep 2
rm -f "$LIM_DIR/on"
wait "$load" "$polls"
bserved=$(grep -c '^200$' "$LIM_DIR/b-codes") bother=$(grep -vc '^200$' "$LIM_DIR/b-codes")
echo "# region B during the partition: $bserved served, $bother other answers"
check "region B served through the partition (> 200 requests)" test "$bserved" -gt 200
assert_eq "0 failed requests of region B's known tenants" 0 "$bother"
np=$(wc -l <"$LIM_DIR/b-ready") nr=$(grep -c '^200$' "$LIM_DIR/b-ready")
assert_eq "region B's /readyz answered 200 in every poll ($np)" "$np" "$nr"
gateway_stop gb
check "region B's usage of the partition reaches region A (within 20 s)" wait_until 20 bash -c \
	"[[ \$(psql -X -At '$A_URL' -c \"SELECT coalesce(sum(used), 0) FROM usage_regional WHERE region = 'b' AND tenant_id IN (SELECT id FROM tenants WHERE token_hash IN (sha256('$known'::bytea), sha256('$known2'::bytea)))\") == $bserved ]]"
