#!/usr/bin/env bash
# A fleet of gateways: eight replicas behind HAProxy (roundrobin, health-checked on each
# replica's /readyz), fed by the stack's one PostgreSQL. `make drill-fleet` runs it.
#   - PostgreSQL's connections and transactions at 1, 4 and 8 replicas (printed);
#   - a new tenant (bought at billing, free tier) is usable at all eight within 1 s p99;
#   - the burst a plan promises holds for the fleet: through HAProxy the tenant gets its
#     tier's rate within 10 % ([limits] share_burst, the default; with it off, the same
#     load gets about eight times the rate, printed);
#   - the daily quota holds within its bound: served <= quota + replicas × batch (100) + what
#     is served during one flush, and usage_daily equals what was served;
#   - the count follows the fleet: a replica stopped (SIGTERM) or killed (SIGKILL) is
#     counted out by the others (times printed).
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/../integration/lib.sh"
# shellcheck source=tests/integration/lib_limits.sh
. "$(dirname "$0")/../integration/lib_limits.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/../integration/billing_lib.sh"
defer rm -rf "$LIM_DIR"

N=8
RATE=20 # the burst tier: 20 requests a second, bursts of 20
HAPROXY_PORT=$((XG_PORT_BASE + 100))
command -v haproxy >/dev/null || {
	echo "not ok - haproxy is installed (scripts/deps.sh)"
	exit 1
}

# The stack's own gateway would count in the fleet (it shares bursts by default) without
# getting any of the balancer's traffic: it stops for the drill.
# It is started again, with its own command line and environment, when the drill exits.
GW_PIDFILE=$XG_VAR/run/gateway.pid
if xg_pid_owned "$GW_PIDFILE"; then
	read -r gwpid <"$GW_PIDFILE"
	gw_marker=$(sed -n 2p "$GW_PIDFILE")
	mapfile -d '' -t gw_cmd <"/proc/$gwpid/cmdline"
	mapfile -d '' -t gw_env <"/proc/$gwpid/environ"
	xg_kill_pidfiles 10 "$GW_PIDFILE"
	stack_gateway_back() {
		xg_spawn "$GW_PIDFILE" "$gw_marker" "$XG_VAR/log/gateway.log" env -i "${gw_env[@]}" "${gw_cmd[@]}"
	}
	defer stack_gateway_back
fi
bt_setup
check_here "billing starts" billing_start a invoices.free_burst=1000 invoices.free_per_hour=100000
lim_setup
lim_tier fl_burst "$RATE" 100000000 "$RATE"
lim_tier fl_quota 100000 2000

# conns — client connections to the xmrgate database; xacts — transactions committed so far
conns() { psql_q "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()"; }
xacts() { psql_q "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"; }
# measure LABEL — connections and transactions a second over 10 idle seconds
measure() {
	local c x0 x1
	sleep 3 # every replica's threads have connected
	c=$(conns) x0=$(xacts)
	sleep 10
	x1=$(xacts)
	echo "# $1: $c client connections to PostgreSQL, $(((x1 - x0) / 10)) transactions a second (idle; each psql of this measure is one)"
}
measure "billing alone (baseline)"

# replica NAME I [SECTION.KEY=VALUE...] — gateway NAME as the fleet's Ith replica: the
# Ith port pair from +120 (more replicas than lib.sh's range holds; a replica started
# again as the Ith has the same ports, as HAProxy's Ith server), on the bare base.
replica() {
	local name=$1 port=$((XG_PORT_BASE + 120 + 2 * ($2 - 1)))
	shift 2
	gateway_start "$name" --base bare "server.port=$port" "admin.port=$((port + 1))" \
		limits.max_delay=0 "$@"
}
G=()
start_replicas() {
	local i
	for ((i = ${#G[@]} + 1; i <= $1; i++)); do
		replica "r$i" "$i" limits.share_burst=true "auth.ha1_key=$BT_HA1_KEY" || return 1
		G+=("r$i")
	done
}
fleet_of() { curl -s "$(gw_admin "$1")/metrics" | awk '$1 == "xmrgate_gateway_fleet_replicas" {print $2}'; }
all_count() { local g; for g in "${G[@]}"; do [[ $(fleet_of "$g") == "$1" ]] || return 1; done; }

check_here "one replica starts" start_replicas 1
measure "1 replica"
check_here "four replicas run" start_replicas 4
check "each of the four counts four" wait_until 10 all_count 4
measure "4 replicas"
check_here "eight replicas run" start_replicas "$N"
check "each of the eight counts eight" wait_until 10 all_count "$N"
measure "8 replicas"

# --- HAProxy in front, health-checking /readyz ------------------------------------------
{
	cat <<EOF
global
  maxconn 4096
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
frontend fleet
  bind 127.0.0.1:$HAPROXY_PORT
  default_backend gateways
backend gateways
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
EOF
	for g in "${G[@]}"; do
		p=$(gw_port "$g")
		echo "  server $g 127.0.0.1:$p check port $((p + 1)) inter 1s fall 2 rise 1"
	done
} >"$LIM_DIR/haproxy.cfg"
haproxy -f "$LIM_DIR/haproxy.cfg" -db >"$LIM_DIR/haproxy.log" 2>&1 &
hap=$!
defer kill "$hap"
LB=http://127.0.0.1:$HAPROXY_PORT
lim_tenant fl_quota
probe_token=$LIM_TOKEN
check "HAProxy serves through the fleet" wait_until 20 bash -c \
	"[[ \$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary '$LIM_RPC_BODY' '$LB/v1/$probe_token/json_rpc') == 200 ]]"

# --- a new tenant is usable at all eight within 1 s p99 ------------------------------------
urls=()
for g in "${G[@]}"; do urls+=("$(gw_url "$g")"); done
out=$("$XG_REPO/build/release/tests/tools/buy_latency" "$(billing_url a)" free 20 1000 "${urls[@]}" 2>&1)
check "tenants bought at billing are usable at all eight replicas within 1 s p99" test $? -eq 0
echo "$out" | sed 's/^/# /'

# --- the burst, over the fleet --------------------------------------------------------------
# burst_run SECONDS URL TOKEN — a load far over the rate for SECONDS; prints "served elapsed"
burst_run() {
	local secs=$1 url=$2 tok=$3 start end
	start=$(date +%s.%N)
	end=$((SECONDS + secs))
	while ((SECONDS < end)); do
		lim_load 400 16 "$LIM_RPC_BODY" "$url/v1/$tok/json_rpc"
	done >"$LIM_DIR/burst.codes"
	echo "$(grep -c '^200$' "$LIM_DIR/burst.codes") $(echo "$(date +%s.%N) - $start" | bc)"
}
lim_tenant fl_burst
read -r served took <<<"$(burst_run 15 "$LB" "$LIM_TOKEN")"
rate=$(echo "scale=2; ($served - $RATE) / $took" | bc)
refused=$(grep -c '^429$' "$LIM_DIR/burst.codes")
echo "# shared burst: $served served ($refused refused 429) in $took s through HAProxy: $rate requests a second beyond the first burst (the plan: $RATE)"
check "the fleet gives the plan's rate within 10 % ($rate vs $RATE)" \
	bash -c "(( \$(echo '$rate >= $RATE * 0.9 && $rate <= $RATE * 1.1' | bc) == 1 ))"

# the same load with every replica giving the whole burst, as before share_burst: 8 × rate
for g in "${G[@]}"; do gateway_stop "$g"; done
G2=()
for ((i = 1; i <= N; i++)); do # the same ports, in the same order: HAProxy's servers
	replica "w$i" "$i" limits.share_burst=false || break
	G2+=("w$i")
done
check "eight replicas without sharing take the same ports" test "${#G2[@]}" -eq "$N"
check "HAProxy sees them ready" wait_until 20 bash -c \
	"[[ \$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary '$LIM_RPC_BODY' '$LB/v1/$probe_token/json_rpc') == 200 ]]"
sleep 2 # every server back in HAProxy's rotation (rise 1, checks every second)
lim_tenant fl_burst
read -r served took <<<"$(burst_run 15 "$LB" "$LIM_TOKEN")"
rate_off=$(echo "scale=2; ($served - $N * $RATE) / $took" | bc)
echo "# whole burst per replica: $served served in $took s: $rate_off requests a second (the plan: $RATE; $N replicas)"
check "without sharing the fleet gives more than twice the rate (the bug share_burst fixes)" \
	bash -c "(( \$(echo '$rate_off > 2 * $RATE' | bc) == 1 ))"
for g in "${G2[@]}"; do gateway_stop "$g"; done
G=()
check_here "eight sharing replicas again" start_replicas "$N"
check "each counts eight" wait_until 10 all_count "$N"

# --- the daily quota over the fleet --------------------------------------------------------
sleep 2
lim_tenant fl_quota
qid=$LIM_ID qtok=$LIM_TOKEN
: >"$LIM_DIR/quota.codes"
for ((k = 0; k < 12; k++)); do
	lim_load 400 16 "$LIM_RPC_BODY" "$LB/v1/$qtok/json_rpc" >>"$LIM_DIR/quota.codes"
done
qserved=$(grep -c '^200$' "$LIM_DIR/quota.codes")
qrefused=$(grep -c '^429$' "$LIM_DIR/quota.codes")
bound=$((2000 + N * 100))
echo "# quota 2000 over $N replicas: $qserved served, $qrefused refused; stated bound: 2000 + $N × 100 = $bound plus what is served during one flush"
check "the quota refused the rest" test "$qrefused" -gt 0
check "served within quota + replicas × batch + one flush's requests (<= $((bound + 200)))" test "$qserved" -le $((bound + 200))
check "usage_daily equals what was served (within 15 s: flushes every 5 s)" \
	wait_until 15 bash -c "[[ \$(psql -X -At '$DATABASE_URL' -c \"SELECT used FROM usage_daily WHERE tenant_id = $qid\") == $qserved ]]"

# --- the count follows the fleet ------------------------------------------------------------
# first_count K WANT — the first K replicas each count WANT
first_count() { local g; for g in "${G[@]:0:$1}"; do [[ $(fleet_of "$g") == "$2" ]] || return 1; done; }
t=$(date +%s.%N)
gateway_stop r8
check "a replica stopped (SIGTERM) is counted out by the others" wait_until 10 first_count 7 7
echo "# 8 -> 7 after a SIGTERM: $(echo "$(date +%s.%N) - $t" | bc) s"
t=$(date +%s.%N)
kill -9 "$(gw_pid r7)"
check "a replica killed (SIGKILL) is counted out once its beat is older than the TTL (3.5 s)" \
	wait_until 15 first_count 6 6
echo "# 7 -> 6 after a SIGKILL: $(echo "$(date +%s.%N) - $t" | bc) s"
