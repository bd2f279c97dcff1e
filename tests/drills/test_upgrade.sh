#!/usr/bin/env bash
# The rolling upgrade (docs/OPERATIONS.md, "Rolling upgrades"), run as the procedure says,
# from the previous release to this checkout. `make drill-upgrade` runs it.
#
# The previous release is XG_UPGRADE_FROM (a tag or commit; default 36dd3ab, the last
# landed state at schema 9 that reads migration floors: v0.2.0 compares schema versions
# for equality and cannot be the base. Once v0.3.0 is tagged it becomes the default),
# built in a worktree of its own under $XG_VAR. On a database of its own on the stack's
# PostgreSQL, migrated by that build's `migrate` with its own migrations:
#   - two billing instances (leader and standby) and two gateway replicas of the previous
#     release, each pair behind HAProxy (health checks on each one's admin /readyz,
#     retries and redispatch), under a load of a known tenant's requests and of billing's
#     API through HAProxy for the whole upgrade;
#   - a payment in flight: an invoice bought at the old billing, paid, one confirmation
#     before the upgrade and the rest after it;
#   - the upgrade: the new packages installed (the migrations directory the
#     configuration names now holds the new files), this build's `migrate` once (every
#     running old process stays ready and notes the schema ahead), then each process
#     replaced in turn, billing standby, billing leader, gateway 1, gateway 2: taken out
#     at HAProxy first (drain), SIGTERM, the new build started on the old one's
#     configuration file unchanged, put back once its health check passes;
#   - 0 failed requests; each process reports the build it is (xmrgate_build_info); the
#     invoice is provisioned once (one payment row for its transaction, one tenant).
# The figures (requests, failures, each step's time) are printed.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/../integration/lib.sh"

FROM=${XG_UPGRADE_FROM:-36dd3ab}
UP=$XG_VAR/upgrade
OLD=$XG_VAR/upgrade-from
UP_DB_NAME=xmrgate_upgrade
UP_DB=${DATABASE_URL%/*}/$UP_DB_NAME
B=$XG_PORT_BASE
LB_PORT=$((B + 70)) LBB_PORT=$((B + 71)) STATS_PORT=$((B + 72))
LB=http://127.0.0.1:$LB_PORT LBB=http://127.0.0.1:$LBB_PORT
command -v haproxy >/dev/null || {
	echo "not ok - haproxy is installed (scripts/deps.sh)"
	exit 1
}
rm -rf "$UP"
mkdir -p "$UP/share" "$UP/saved"
defer rm -rf "$UP"

# ms_since T0 [DECIMALS]: seconds (one decimal) since T0, an $EPOCHREALTIME
ms_since() { awk -v a="$1" -v b="$EPOCHREALTIME" -v d="${2:-1}" 'BEGIN { printf "%.*f", d, b - a }'; }

# --- the previous release, built ------------------------------------------------------------
from_sha=$(git -C "$XG_REPO" rev-parse --verify --quiet "$FROM^{commit}") || {
	echo "not ok - XG_UPGRADE_FROM=$FROM names a commit of this repository"
	exit 1
}
git -C "$XG_REPO" worktree remove --force "$OLD" >/dev/null 2>&1
rm -rf "$OLD"
git -C "$XG_REPO" worktree prune
t=$EPOCHREALTIME
check "a worktree of $FROM ($from_sha)" git -C "$XG_REPO" worktree add --detach "$OLD" "$from_sha" ||
	exit 1
defer git -C "$XG_REPO" worktree prune
defer rm -rf "$OLD"
defer git -C "$XG_REPO" worktree remove --force "$OLD"
check "the previous release builds (its gateway and billing)" \
	make -C "$OLD" -s -j"$(nproc)" bin/xmrgate-gateway bin/xmrgate-billing || exit 1
echo "# $FROM built in $(ms_since "$t") s"
OLD_GW=$OLD/bin/xmrgate-gateway OLD_BL=$OLD/bin/xmrgate-billing
NEW_GW=$XG_REPO/bin/xmrgate-gateway NEW_BL=$XG_REPO/bin/xmrgate-billing
commit_of() { "$1" --version | sed -n 's/.*(commit \([0-9a-f]*\)).*/\1/p'; }
old_commit=$(commit_of "$OLD_GW") new_commit=$(commit_of "$NEW_GW")
echo "# from $("$OLD_GW" --version) to $("$NEW_GW" --version)"
check "the two builds differ ($old_commit, $new_commit)" test -n "$old_commit" -a -n "$new_commit" -a "$old_commit" != "$new_commit"
assert_eq "both daemons of the old build are the same commit" "$old_commit" "$(commit_of "$OLD_BL")"
assert_eq "both daemons of the new build are the same commit" "$new_commit" "$(commit_of "$NEW_BL")"

# Schemas: the highest migration of each tree; every migration the old build lacks must
# be an expand migration it fits (-- compatible-with: N, N <= its schema).
top_migration() { find "$1" -name '[0-9][0-9][0-9][0-9]_*.sql' -printf '%f\n' | sort | tail -n 1 | sed 's/_.*//'; }
OLD_V=$((10#$(top_migration "$OLD/migrations"))) NEW_V=$((10#$(top_migration "$XG_REPO/migrations")))
echo "# schema $OLD_V -> $NEW_V"
expand_only() {
	local f n h
	for f in "$XG_REPO"/migrations/[0-9][0-9][0-9][0-9]_*.sql; do
		n=${f##*/} n=$((10#${n%%_*}))
		((n > OLD_V)) || continue
		h=$(sed -n 's/^-- compatible-with: *\([0-9]*\).*/\1/p' "$f")
		if [[ -z $h ]] || ((h > OLD_V)); then
			echo "${f##*/} is not an expand migration for schema $OLD_V"
			return 1
		fi
	done
}
check "the new build is ahead ($NEW_V > $OLD_V)" test "$NEW_V" -gt "$OLD_V"
check "every migration after $OLD_V is an expand migration for $OLD_V: a rolling upgrade applies" expand_only

# --- the database of the previous release -----------------------------------------------------
# The configuration names an installed migrations directory, as a package's does: it holds
# the old release's files until the new packages are installed.
ln -sfn "$OLD/migrations" "$UP/share/migrations"
PGOPTIONS='-c client_min_messages=warning' psql -X -q "${DATABASE_URL%/*}/postgres" \
	-c "DROP DATABASE IF EXISTS $UP_DB_NAME WITH (FORCE)" -c "CREATE DATABASE $UP_DB_NAME" || exit 1
defer psql -X -q "${DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS $UP_DB_NAME WITH (FORCE)"
updb() { psql -X -q -At -v ON_ERROR_STOP=1 "$UP_DB" -c "$1"; }

UP_ADMIN_TOKEN=upgrade-admin-$$
UP_TOKEN_KEY=7e3c1f0a9b8d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f
# The configuration files of the previous release, written once; the new build gets the
# same files (the check after each start compares them).
gateway_base_upgrade() {
	cat <<EOF
[database]
url = $UP_DB
[auth]
ha1_key = $XG_TEST_HA1_KEY
[admin]
token = $XG_TEST_ADMIN_TOKEN
[limits]
max_delay = 0
[log]
level = info
EOF
}
billing_base_upgrade() {
	cat <<EOF
[server]
threads = 4
[admin]
token = $UP_ADMIN_TOKEN
[database]
url = $UP_DB
migrations_dir = $UP/share/migrations
[wallet]
url = $BILLING_WALLET_URL
poll_interval = 500ms
timeout = 5s
max_backoff = 2s
daemon_url = $NODE_A_URL
[gateway]
url = $LB
ha1_key = $XG_TEST_HA1_KEY
[billing]
token_key = $UP_TOKEN_KEY
[invoices]
create_burst = 1000
free_network_per_hour = 100000
free_network_per_day = 100000
free_global_per_hour = 100000
[log]
level = info
EOF
}
# Ports: gateways gw1, gw2 at +60..+63, billing b1, b2 at +80..+83 (pairs: server, admin).
port_of() { case $1 in gw1) echo $((B + 60)) ;; gw2) echo $((B + 62)) ;; b1) echo $((B + 80)) ;; b2) echo $((B + 82)) ;; esac }
ports() { echo "server.port=$(port_of "$1")" "admin.port=$(($(port_of "$1") + 1))"; }
admin_of() { echo "http://127.0.0.1:$(($(port_of "$1") + 1))"; }
kind_of() { [[ $1 == gw* ]] && echo gateway || echo billing; }
# start NAME BIN: NAME (gw1, gw2, b1, b2) on the upgrade base with BIN
start() {
	local p
	read -ra p <<<"$(ports "$1")"
	if [[ $(kind_of "$1") == gateway ]]; then
		XG_GATEWAY_BIN=$2 gateway_start "$1" --base upgrade "${p[@]}"
	else
		XG_BILLING_BIN=$2 billing_start "$1" --base upgrade "${p[@]}"
	fi
}
conf_of() { echo "$XG_TEST_ETC/$(kind_of "$1")-$1.ini"; }

# The stack's billing rests meanwhile (it shares the wallet-rpc; it is started again at the end).
check_here "the stack's billing rests for the drill" stack_billing_pause
check_here "old billing b1 starts (its migrate creates the schema)" start b1 "$OLD_BL" || exit 1
assert_eq "the old build migrated the database to its schema, $OLD_V" "$OLD_V" "$(updb 'SELECT max(version) FROM schema_migrations')"
updb "INSERT INTO nodes (name, url) VALUES ('a', '$NODE_A_URL')" >/dev/null
PRICE=10000000000 # 0.01 XMR
updb "INSERT INTO tiers (id, name, burst_rps, daily_quota, price_currency, price_minor,
          confirmations, max_months, sort_order)
      VALUES ('up-pay', 'Upgrade drill', 5, 1000, 'XMR', $PRICE, 3, 12, 90)" >/dev/null
# The load's tenant: a private tier whose limits the load stays far below.
updb "INSERT INTO tiers (id, name, burst_rps, burst_size, daily_quota, price_currency,
          price_minor, confirmations, max_months, public, sort_order)
      VALUES ('up-load', 'Upgrade load', 20000, 20000, 1000000000, 'XMR', 1, 1, 12, false, 91)" >/dev/null
check_here "old billing b2 starts" start b2 "$OLD_BL" || exit 1
check_here "old gateway gw1 starts" start gw1 "$OLD_GW" || exit 1
check_here "old gateway gw2 starts" start gw2 "$OLD_GW" || exit 1
for n in gw1 gw2 b1 b2; do cp "$(conf_of "$n")" "$UP/saved/$n.ini"; done
bl_role() { curl -s -H "Authorization: Bearer $UP_ADMIN_TOKEN" "$(admin_of "$1")/status" | jq -r '.role'; }
check "b1 leads, b2 stands by" wait_until 15 bash -c "[[ \$(curl -s -H 'Authorization: Bearer $UP_ADMIN_TOKEN' '$(admin_of b1)/status' | jq -r .role) == leader && \$(curl -s -H 'Authorization: Bearer $UP_ADMIN_TOKEN' '$(admin_of b2)/status' | jq -r .role) == standby ]]"

mapfile -t unset < <(_xg_unset_env) # the files alone say what the builds run with
# build_of NAME: the commit its xmrgate_build_info names
build_of() {
	local tok=$XG_TEST_ADMIN_TOKEN
	[[ $(kind_of "$1") == billing ]] && tok=$UP_ADMIN_TOKEN
	curl -s --max-time 5 -H "Authorization: Bearer $tok" "$(admin_of "$1")/metrics" |
		sed -n 's/^xmrgate_build_info{.*commit="\([0-9a-f]*\)".*} 1$/\1/p'
}
for n in b1 b2 gw1 gw2; do assert_eq "$n runs the old build" "$old_commit" "$(build_of "$n")"; done

out=$(env "${unset[@]}" "$OLD_BL" --config "$(conf_of b1)" grant --tier up-load --days 30 2>/dev/null)
TOKEN=$(sed -n 's/^TOKEN=//p' <<<"$out")
check "a tenant is granted with the old build" test -n "$TOKEN"

# --- HAProxy in front of each pair ---------------------------------------------------------------
cat >"$UP/haproxy.cfg" <<EOF
global
  maxconn 4096
  stats socket ipv4@127.0.0.1:$STATS_PORT level admin
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  retries 3
  option redispatch
  retry-on conn-failure empty-response
frontend gateways
  bind 127.0.0.1:$LB_PORT
  default_backend gateways
frontend billing
  bind 127.0.0.1:$LBB_PORT
  default_backend billing
backend gateways
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  server gw1 127.0.0.1:$(port_of gw1) check port $(($(port_of gw1) + 1)) inter 500ms fall 2 rise 2
  server gw2 127.0.0.1:$(port_of gw2) check port $(($(port_of gw2) + 1)) inter 500ms fall 2 rise 2
backend billing
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  server b1 127.0.0.1:$(port_of b1) check port $(($(port_of b1) + 1)) inter 500ms fall 2 rise 2
  server b2 127.0.0.1:$(port_of b2) check port $(($(port_of b2) + 1)) inter 500ms fall 2 rise 2
EOF
haproxy -f "$UP/haproxy.cfg" -db >"$UP/haproxy.log" 2>&1 &
hap_pid=$!
defer stop_pid "$hap_pid"
# hap COMMAND: one command on HAProxy's runtime API
hap() {
	local fd
	exec {fd}<>"/dev/tcp/127.0.0.1/$STATS_PORT" || return 1
	printf '%s\n' "$1" >&"$fd"
	timeout 5 cat <&"$fd"
	exec {fd}>&-
}
backend_of() { [[ $1 == gw* ]] && echo gateways || echo billing; }
# hstat NAME FIELD: the server's field in `show stat` (status, scur, stot)
hstat() {
	local col
	case $2 in status) col=18 ;; scur) col=5 ;; stot) col=8 ;; esac
	hap "show stat" | awk -F, -v b="$(backend_of "$1")" -v s="$1" -v c="$col" '$1 == b && $2 == s { print $c }'
}
status_is() { [[ $(hstat "$1" status) == "$2" ]]; }
all_up() {
	local n
	for n in gw1 gw2 b1 b2; do status_is "$n" UP || return 1; done
}
check "HAProxy sees all four up" wait_until 20 all_up
code() { curl -s -o /dev/null --max-time 10 -w '%{http_code}' "$1"; }
check "the tenant is served through HAProxy" test "$(code "$LB/v1/$TOKEN/get_height")" = 200

# --- the load: for the whole upgrade --------------------------------------------------------------
STOP=$UP/stop
# load OUT PAUSE URL...: requests URL... (one curl, keep-alive to HAProxy) until told to
# stop; one status line per request
load() {
	local out=$1 pause=$2 args=() u
	shift 2
	for u in "$@"; do args+=(-o /dev/null "$u"); done
	while [[ ! -e $STOP ]]; do
		curl -s --max-time 10 -w '%{http_code}\n' "${args[@]}" >>"$out"
		sleep "$pause"
	done
}
gw_urls=()
for ((i = 0; i < 10; i++)); do gw_urls+=("$LB/v1/$TOKEN/get_height"); done
load_pids=()
for i in 1 2 3; do
	load "$UP/load-gw$i" 0 "${gw_urls[@]}" &
	load_pids+=($!)
done
load "$UP/load-billing" 0.05 "$LBB/api/tiers" "$LBB/api/tiers" "$LBB/api/tiers" "$LBB/api/tiers" &
load_pids+=($!)
stop_load() {
	touch "$STOP"
	local p
	for p in "${load_pids[@]}"; do wait "$p" 2>/dev/null; done
}
defer stop_load
requests() { cat "$UP"/load-* 2>/dev/null | wc -l; }
check "the load runs" wait_until 20 bash -c "(( \$(cat '$UP'/load-* 2>/dev/null | wc -l) >= 50 ))"
drill_t0=$EPOCHREALTIME

# --- a payment in flight ----------------------------------------------------------------------------
inv=$(curl -s --max-time 10 -H 'Content-Type: application/json' --data-binary '{"tier":"up-pay","months":1}' "$LBB/api/invoices")
INV=$(jq -r '.id // empty' <<<"$inv") INV_TOKEN=$(jq -r '.token // empty' <<<"$inv")
check "an invoice is bought at the old billing (3 confirmations)" test -n "$INV" -a -n "$INV_TOKEN" || echo "# $inv"
txid=$(payer_pays "$(jq -r '.address' <<<"$inv")" "$PRICE")
check "it is paid" test -n "$txid"
check "the old billing sees the payment" wait_until 30 bash -c "[[ \$(curl -s '$LBB/api/invoices/$INV' | jq -r .status) == seen ]]"
check "one block is mined" mine 1
check "the old billing counts 1 confirmation of 3" wait_until 30 bash -c "[[ \$(curl -s '$LBB/api/invoices/$INV' | jq -r '\"\(.status) \(.confirmations)\"') == 'confirming 1' ]]"

# --- 1. the new packages installed: the configuration's migrations directory is the new one --------
ln -sfn "$XG_REPO/migrations" "$UP/share/migrations"

# --- 2. this build's migrate, once; the old processes stay ready ------------------------------------
POLLS=$UP/polls POLL_STOP=$UP/poll-stop
poller() {
	local n line
	while [[ ! -e $POLL_STOP ]]; do
		line=''
		for n in gw1 gw2 b1 b2; do line+="$(code "$(admin_of "$n")/readyz") "; done
		echo "$line" >>"$POLLS"
		sleep 0.2
	done
}
poller &
poller_pid=$!
t=$EPOCHREALTIME
mig=$(env "${unset[@]}" "$NEW_BL" --config "$(conf_of b1)" migrate 2>&1)
rc=$?
t_migrate=$(ms_since "$t" 3)
check "this build's migrate applies on the old build's configuration" test "$rc" -eq 0 || {
	mapfile -t lines <<<"$mig"
	printf '#   %s\n' "${lines[@]}"
}
check "it applies each new migration as an expand one for builds from $OLD_V on" \
	grep -q "expand (builds from schema $OLD_V on keep working)" <<<"$mig"
assert_eq "the database is at the new schema, $NEW_V" "$NEW_V" "$(updb 'SELECT max(version) FROM schema_migrations')"
ahead="ahead of this build.s $OLD_V but compatible"
notes_ahead() { curl -s --max-time 5 "$(admin_of "$1")/readyz" | jq -e --arg re "$ahead" '.status == "ready" and .degraded == false and (.checks.schema | test($re))' >/dev/null; }
for n in gw1 gw2 b1 b2; do check "old $n stays ready and notes the schema ahead" wait_until 10 notes_ahead "$n"; done
sleep 2
touch "$POLL_STOP"
wait "$poller_pid" 2>/dev/null
bad=$(awk '$0 != "200 200 200 200 "' "$POLLS" | sort | uniq -c)
assert_eq "every /readyz poll of the four old processes ($(wc -l <"$POLLS")) answered 200 across the migrate" "" "$bad"

# --- 3. each process replaced in turn ---------------------------------------------------------------
idle() { [[ $(hstat "$1" scur) == 0 ]]; }
routed_since() { (($(hstat "$1" stot) > $2)); }
declare -A took=()
# replace NAME: out of HAProxy (drain), SIGTERM, the new build on the same file, back in
replace() {
	local n=$1 kind be t0 stot rc=0 p
	kind=$(kind_of "$n") be=$(backend_of "$n")
	t0=$EPOCHREALTIME
	hap "set server $be/$n state drain" >/dev/null
	check "$n: drained at HAProxy, no session left on it" wait_until 15 idle "$n"
	"${kind}_stop" "$n"
	check "$n: the old build exits cleanly on SIGTERM (status $EXIT_STATUS)" test "$EXIT_STATUS" -eq 0
	check_here "$n: the new build starts and is ready" start "$n" "$(if [[ $kind == gateway ]]; then echo "$NEW_GW"; else echo "$NEW_BL"; fi)" || rc=1
	check "$n: on the old build's configuration file, unchanged" cmp "$UP/saved/$n.ini" "$(conf_of "$n")"
	assert_eq "$n: runs the new build" "$new_commit" "$(build_of "$n")"
	check "$n: its health check passes at HAProxy" wait_until 15 status_is "$n" DRAIN
	stot=$(hstat "$n" stot)
	hap "set server $be/$n state ready" >/dev/null
	check "$n: back in HAProxy's rotation" wait_until 5 status_is "$n" UP
	check "$n: HAProxy routes requests to it" wait_until 15 routed_since "$n" "$stot"
	took[$n]=$(ms_since "$t0")
	echo "# $n replaced in ${took[$n]} s; $(requests) requests so far"
	sleep 3 # old and new serve side by side for a while, under the load
	return $rc
}
# Billing: the standby first, then the leader (the standby takes over).
replace b2
check "b1 (old) still leads" test "$(bl_role b1)" = leader
replace b1
# The lock goes to whichever new instance asks first: one leads, the other stands by.
one_leader() { [[ "$(bl_role b1) $(bl_role b2)" == "leader standby" || "$(bl_role b1) $(bl_role b2)" == "standby leader" ]]; }
check "one new billing instance leads, the other stands by" wait_until 15 one_leader
echo "# leader now: b1 $(bl_role b1), b2 $(bl_role b2)"
replace gw1
assert_eq "gw2 still runs the old build meanwhile" "$old_commit" "$(build_of gw2)"
replace gw2
for n in gw1 gw2 b1 b2; do
	check "$n (new) notes nothing about the schema" bash -c "curl -s '$(admin_of "$n")/readyz' | jq -e '.status == \"ready\" and .checks.schema == \"ok\"' >/dev/null"
done
t_drill=$(ms_since "$drill_t0")

# --- the payment, after the upgrade ----------------------------------------------------------------
check "two more blocks are mined" mine 2
check "the invoice is provisioned by the new billing" wait_until 30 bash -c "[[ \$(curl -s '$LBB/api/invoices/$INV' | jq -r .status) == provisioned ]]"
assert_eq "one payment row for its transaction" 1 "$(updb "SELECT count(*) FROM payments WHERE txid = '$txid'")"
assert_eq "one tenant for it (the invoice's, with its token)" 1 \
	"$(updb "SELECT count(*) FROM tenants WHERE token_hash = sha256('$INV_TOKEN'::bytea)")"
assert_eq "the invoice names that tenant" 1 \
	"$(updb "SELECT count(*) FROM invoices i JOIN tenants t ON t.id = i.tenant_id WHERE i.id = '$INV' AND t.token_hash = sha256('$INV_TOKEN'::bytea)")"
inv_ok() { [[ $(code "$LB/v1/$INV_TOKEN/get_height") == 200 ]]; }
check "its token works through HAProxy at the new gateways" wait_until 10 inv_ok

sleep 1
stop_load
total=$(requests)
gw_total=$(cat "$UP"/load-gw* | wc -l) bl_total=$(wc -l <"$UP/load-billing")
failed=$(cat "$UP"/load-* | grep -vc '^200$')
echo "# the load: $total requests ($gw_total to the gateways, $bl_total to billing's API) over $(ms_since "$drill_t0") s, $failed failed"
cat "$UP"/load-* | sort | uniq -c | sed 's/^/#   /'
echo "# HAProxy per server (sessions, retries, redispatches):"
hap "show stat" | awk -F, '$1 !~ /^#/ && $2 != "FRONTEND" && $2 != "BACKEND" && NF > 17 { printf "#   %s/%s: %s sessions, %s retries, %s redispatches\n", $1, $2, $8, $16, $17 }'
echo "# migrate ${t_migrate} s; replaced: b2 ${took[b2]:-?} s, b1 ${took[b1]:-?} s, gw1 ${took[gw1]:-?} s, gw2 ${took[gw2]:-?} s; the whole roll ${t_drill} s"
check "the load made at least 1000 requests" test "$total" -ge 1000
assert_eq "0 failed requests across the upgrade" 0 "$failed"
