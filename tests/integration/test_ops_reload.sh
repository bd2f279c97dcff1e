#!/usr/bin/env bash
# SIGHUP and SIGTERM on a gateway with its own configuration file and its own database,
# in front of a deliberately slow node (tests/tools/slow_node):
#   - a bad file is rejected whole: the gateway keeps serving with the old configuration
#     (the old admin token still works, the new one in the bad file does not);
#   - a good file applies the reloadable keys at once (a new admin token) and names the
#     others as needing a restart;
#   - SIGTERM while requests are in flight: new connections are refused, every request in
#     flight is answered, the usage counts are flushed, and the process exits;
#   - billing: the same reload rules (bad file refused, new admin token applied at once).
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"

node_port=$((XG_PORT_BASE + 76))
SLOW_MS=1500
work=$XG_VAR/ops-reload
rm -rf "$work"
mkdir -p "$work"

check_here "a database for this gateway is migrated" scratch_db xmrgate_ops_reload \
	slow="http://127.0.0.1:$node_port"
DB=$SCRATCH_DB_URL
export XMRGATE_DATABASE_URL=$DB # for grant_tenant
"$XG_REPO/build/release/tests/tools/slow_node" "$node_port" "$SLOW_MS" &
node_pid=$!
defer stop_pid "$node_pid"
psql_q_db() { psql -X -q -At -v ON_ERROR_STOP=1 "$DB" -c "$1"; }
check_here "a tenant is granted" grant_tenant sovereign 1

# The configuration file under test: the stack's, with our own admin token.
OLD_TOKEN=old-$RANDOM$RANDOM
NEW_TOKEN=new-$RANDOM$RANDOM
write_conf() { # TOKEN LOG_LEVEL [SECTION.KEY=VALUE...]
	gateway_config reload database.url="$DB" admin.token="$1" log.level="$2" "${@:3}"
}
check_here "the gateway starts and is ready" gateway_start reload database.url="$DB" \
	admin.token="$OLD_TOKEN" log.level=info
gw_pid=$GW_PID LOG=$GW_LOG GW=$GW_URL ADM=$GW_ADMIN

admin_status() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" "$ADM/v1/quorum"; }
serves() { [[ $(gw_status_of "$GW" "/v1/$TOKEN/get_height") == 200 ]]; }
check "it serves the tenant" serves
assert_eq "the admin API takes the old token" 200 "$(admin_status "$OLD_TOKEN")"

# --- a bad file ---------------------------------------------------------------------------
write_conf "$NEW_TOKEN" loud
kill -HUP "$gw_pid"
check "a bad file is rejected (reload_rejected, naming the key)" \
	wait_until 10 bash -c "grep '\"event\":\"reload_rejected\"' '$LOG' | grep -q 'log\\] level'"
check "the gateway is still running" kill -0 "$gw_pid"
check "it still serves the tenant" serves
assert_eq "the old admin token still works" 200 "$(admin_status "$OLD_TOKEN")"
assert_eq "the token from the rejected file does not" 401 "$(admin_status "$NEW_TOKEN")"

# --- a good file --------------------------------------------------------------------------
write_conf "$NEW_TOKEN" debug nodes.probe_interval=3s
kill -HUP "$gw_pid"
check "a good file is reloaded" wait_until 10 gw_logged reloaded
assert_eq "the new admin token works at once" 200 "$(admin_status "$NEW_TOKEN")"
assert_eq "the old one is refused" 401 "$(admin_status "$OLD_TOKEN")"
check "a changed key that needs a restart is named" bash -c \
	"grep '\"event\":\"reload_needs_restart\"' '$LOG' | grep -q 'probe_interval'"
check "it still serves the tenant" serves

# --- SIGTERM with requests in flight ------------------------------------------------------
# The counts of the requests above reach PostgreSQL at the next flush (at least every 5 s,
# docs/LIMITS.md): wait until the sum has held still for longer than one interval.
used_before=$(psql_q_db "SELECT coalesce(sum(used), 0) FROM usage_daily") still=0
for _ in $(seq 40); do
	sleep 1
	now=$(psql_q_db "SELECT coalesce(sum(used), 0) FROM usage_daily")
	if [[ $now == "$used_before" ]]; then
		still=$((still + 1))
		((still < 7)) || break
	else
		used_before=$now still=0
	fi
done
weight=$(curl -s -H "Authorization: Bearer $NEW_TOKEN" -d '{"path":"/get_transaction_pool_hashes"}' \
	"$ADM/v1/route" | jq -r '.quota_weight')
N=12
for i in $(seq "$N"); do
	curl -s --max-time 20 -o "$work/answer-$i" -w '%{http_code}' \
		"$GW/v1/$TOKEN/get_transaction_pool_hashes" >"$work/status-$i" 2>/dev/null &
	echo $! >"$work/curl-$i.pid"
done
sleep 0.5 # every request reached the slow node and waits for it
t0=$(date +%s%N)
kill -TERM "$gw_pid"
check "the drain starts with the requests in flight" wait_until 5 bash -c \
	"grep '\"event\":\"draining\"' '$LOG' | jq -e '.inflight >= $N' >/dev/null"
refused() { ! curl -s --max-time 2 -o /dev/null "$GW/v1/$TOKEN/get_height"; }
check "a new connection is refused while draining" refused
for i in $(seq "$N"); do
	wait "$(cat "$work/curl-$i.pid")" 2>/dev/null
done
answered=0
for i in $(seq "$N"); do
	[[ $(cat "$work/status-$i") == 200 ]] && jq -e '.status == "OK"' "$work/answer-$i" >/dev/null &&
		answered=$((answered + 1))
done
assert_eq "every request in flight got its whole answer (HTTP 200)" "$N" "$answered"
exited() { ! kill -0 "$gw_pid" 2>/dev/null; }
check "the gateway exits" wait_until 15 exited
echo "# exited $((($(date +%s%N) - t0) / 1000000)) ms after SIGTERM (the node answers after ${SLOW_MS} ms)"
check "it logged that every request in flight was answered" gw_logged drained
check "… and stopped cleanly" gw_logged stopped
check "the slow requests are summed up per method in one line, none logged one by one" \
	bash -c "grep '\"event\":\"slow_requests\"' '$LOG' |
		jq -e --argjson n $N '.methods[\"/get_transaction_pool_hashes\"].count >= \$n' >/dev/null &&
		! grep -q 'get_transaction_pool_hashes' <(grep -v '\"slow_requests\"' '$LOG')"
used_after=$(psql_q_db "SELECT coalesce(sum(used), 0) FROM usage_daily")
assert_eq "the usage of the drained requests is in PostgreSQL after exit" $((N * weight)) \
	$((used_after - used_before))

# --- billing reloads the same way ---------------------------------------------------------
bt_setup
check_here "a billing instance starts" billing_start ops-reload
BLOG=$BL_LOG bpid=$BL_PID
bl_status() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" "$BL_ADMIN/status"; }
assert_eq "billing's admin API takes its token" 200 "$(bl_status "$BT_ADMIN_TOKEN")"
billing_config ops-reload admin.token="$NEW_TOKEN" wallet.poll_interval=0s
kill -HUP "$bpid"
check "billing rejects a bad file (poll_interval out of range)" wait_until 10 bash -c \
	"grep '\"event\":\"reload_rejected\"' '$BLOG' | grep -q poll_interval"
assert_eq "… and keeps its old token" 200 "$(bl_status "$BT_ADMIN_TOKEN")"
billing_config ops-reload admin.token="$NEW_TOKEN"
kill -HUP "$bpid"
new_token_works() { [[ $(bl_status "$NEW_TOKEN") == 200 ]]; }
check "a good file gives billing its new token at once" wait_until 10 new_token_works
assert_eq "… and the old one is refused" 401 "$(bl_status "$BT_ADMIN_TOKEN")"
check "billing is still serving its API" curl -sf -o /dev/null "$BL_URL/api/tiers"
