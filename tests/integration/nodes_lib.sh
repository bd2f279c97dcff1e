# shellcheck shell=bash
# Helpers for the node tests (tests/integration/test_nodes_*.sh): each test starts its own
# xmrgate-gateway against the stack's nodes, with a short probe interval it can reason
# about, and stops it when the test ends. Source after lib.sh.
#
#   nodes_table "a:primary b:standby c:standby"   the nodes table holds A, B, C so
#                                                 (C pruned); every other row removed
#   nodes_tenant                                  sets TOKEN (a fresh sovereign tenant)
#   gw_start NAME [ENV=VALUE...]                  starts a gateway ($XG_GATEWAY_BIN, default
#                                                 bin/xmrgate-gateway); sets GW_URL (with the
#                                                 path token), GW_ADMIN, GW_LOG; waits
#                                                 until /readyz says ready
#   gw_call PATH [BODY]                           POST through the gateway; prints body
#   gw_rpc METHOD [PARAMS]                        JSON-RPC through the gateway; `result`
#   gw_headers PATH BODY                          the answer's headers only
#   epee_heights_body, epee_outs_body, epee_u64   .bin request bodies (tests/epee_bodies.sh)
#   bin_post URL PATH BODY_FILE OUT_FILE          POSTs BODY_FILE; the answer into OUT_FILE,
#                                                 its headers printed
#   gw_status                                     the gateway's GET /nodes (admin API)
#   node_pid a|b|c                                monerod's pid (stack pidfile)
#   freeze a|b|c / thaw a|b|c                     kill -STOP / -CONT, thawed at exit
#   log_event_ms EVENT NODE                       ms timestamp of the first EVENT line
#                                                 naming NODE in GW_LOG (after GW_MARK)
#   now_ms                                        wall clock in milliseconds
# The nodes table as it was when the test began is put back when it ends.
#   payer_tx_hex                                  a signed payer transaction, not relayed:
#                                                 prints "TXHASH TXHEX"

# shellcheck source=tests/epee_bodies.sh
. "$XG_REPO/tests/epee_bodies.sh"

NODES_PORT_BASE=$((XG_PORT_BASE + 90))
NODES_GW_INDEX=0

now_ms() { date +%s%3N; }

nodes_url_of() {
	case $1 in
	a) echo "$NODE_A_URL" ;;
	b) echo "$NODE_B_URL" ;;
	c) echo "$NODE_C_URL" ;;
	esac
}

nodes_migrate() {
	XMRGATE_DATABASE_URL=$DATABASE_URL XMRGATE_GATEWAY_HA1_KEY=$NODES_HA1_KEY \
		"$XG_REPO/bin/xmrgate-billing" migrate >/dev/null 2>&1
}

NODES_HA1_KEY=$(printf '%064d' 0)

# Other tests (and the stack's own gateway) expect the nodes table they set up.
nodes_restore() {
	psql_q "BEGIN; DELETE FROM nodes; $1 COMMIT;" >/dev/null 2>&1 || true
}
NODES_SAVED=$(psql_q "SELECT format('INSERT INTO nodes (name, url, priority, pruned, enabled)
	VALUES (%L, %L, %L, %L, %L);', name, url, priority, pruned, enabled) FROM nodes ORDER BY id" \
	2>/dev/null | tr '\n' ' ') && defer nodes_restore "$NODES_SAVED"
NODES_ADMIN_TOKEN=nodes-test-admin-token

# The gateway's GET /nodes (admin API: node health, quorum, cache counters).
gw_status() { curl -s -H "Authorization: Bearer $NODES_ADMIN_TOKEN" "$GW_ADMIN/nodes"; }

nodes_table() {
	local spec=$1 item name prio pruned sql="BEGIN; DELETE FROM nodes;"
	# The stack may not have applied the schema yet; a schema already there is fine.
	nodes_migrate || psql_q "SELECT 1 FROM nodes LIMIT 1" >/dev/null || return 1
	for item in $spec; do
		name=${item%%:*}
		prio=${item#*:}
		pruned=false
		[[ $name == c ]] && pruned=true
		sql+=" INSERT INTO nodes (name, url, priority, pruned) VALUES
			('$name', '$(nodes_url_of "$name")', '$prio', $pruned);"
	done
	psql_q "$sql COMMIT;" >/dev/null
}

nodes_tenant() {
	local out
	out=$(XMRGATE_DATABASE_URL=$DATABASE_URL XMRGATE_GATEWAY_HA1_KEY=$NODES_HA1_KEY \
		"$XG_REPO/bin/xmrgate-billing" grant --tier sovereign --days 1 2>/dev/null) || return 1
	TOKEN=$(sed -n 's/^TOKEN=//p' <<<"$out")
	[[ -n $TOKEN ]]
}

nodes_kill() { kill "$@" 2>/dev/null || true; }

gw_ready() { curl -sf --max-time 2 "$GW_ADMIN/readyz" >/dev/null; }

gw_start() {
	local name=$1 port admin pid
	shift
	port=$((NODES_PORT_BASE + 2 * NODES_GW_INDEX))
	admin=$((port + 1))
	NODES_GW_INDEX=$((NODES_GW_INDEX + 1))
	GW_LOG=$XG_VAR/log/gateway-$name.log
	: >"$GW_LOG"
	env XMRGATE_DATABASE_URL="$DATABASE_URL" XMRGATE_AUTH_HA1_KEY="$NODES_HA1_KEY" \
		XMRGATE_SERVER_PORT="$port" XMRGATE_ADMIN_PORT="$admin" \
		XMRGATE_NODES_PROBE_INTERVAL=2s XMRGATE_NODES_PROBE_TIMEOUT=1500ms \
		XMRGATE_NODES_TIMEOUT=2s XMRGATE_LIMITS_ENABLED=false \
		XMRGATE_ADMIN_TOKEN="$NODES_ADMIN_TOKEN" "$@" \
		"${XG_GATEWAY_BIN:-$XG_REPO/bin/xmrgate-gateway}" >>"$GW_LOG" 2>&1 &
	pid=$!
	defer nodes_kill "$pid"
	GW_PID=$pid # for tests that stop it early
	export GW_PID
	GW_URL=http://127.0.0.1:$port/v1/$TOKEN
	GW_ADMIN=http://127.0.0.1:$admin
	wait_until 30 gw_ready
}

gw_call() {
	curl -sS --max-time 30 -H 'Content-Type: application/json' --data-binary "${2:-}" \
		"$GW_URL$1"
}

gw_rpc() { xg_rpc "$GW_URL" "$@"; }

gw_headers() {
	curl -sS --max-time 30 -o /dev/null -D - -H 'Content-Type: application/json' \
		--data-binary "$2" "$GW_URL$1" | tr -d '\r'
}

bin_post() {
	curl -sS --max-time 30 -D - -o "$4" --data-binary @"$3" "$1$2" | tr -d '\r'
}

# same_bin FILE1 FILE2: two .bin answers are the same bytes, but for daemon_time: monerod
# 0.18.3 and newer put its clock (seconds) in every get_blocks.bin answer, so two asks a
# second apart differ there and nowhere else.
same_bin() {
	local mask='s/(\x0bdaemon_time\x05).{8}/$1\0\0\0\0\0\0\0\0/s'
	cmp -s <(perl -0777 -pe "$mask" "$1") <(perl -0777 -pe "$mask" "$2")
}

node_pid() {
	local pid
	read -r pid _ <"$XG_VAR/run/node-$1.pid"
	echo "$pid"
}

freeze() {
	kill -STOP "$(node_pid "$1")"
	defer kill -CONT "$(node_pid "$1")"
}

thaw() { kill -CONT "$(node_pid "$1")"; }

GW_MARK=0
log_event_ms() {
	local event=$1 node=$2 ts
	ts=$(jq -r --arg e "$event" --arg n "^node ${node}[ :]" '
		select(.event == $e and (.msg | test($n))) | .ts' "$GW_LOG" 2>/dev/null |
		while read -r t; do
			ms=$(date -d "$t" +%s%3N)
			((ms >= GW_MARK)) && echo "$ms" && break
		done)
	[[ -n $ts ]] && echo "$ts"
}

payer_tx_hex() {
	local reply
	XG_RPC_TIMEOUT=60 xg_rpc "$PAYER_WALLET_URL" refresh >/dev/null || return 1
	reply=$(XG_RPC_TIMEOUT=60 xg_rpc "$PAYER_WALLET_URL" transfer "$(jq -cn --arg a "$MERCHANT_ADDRESS" \
		'{destinations: [{amount: 1000000000, address: $a}], do_not_relay: true,
		  get_tx_hex: true, priority: 0, ring_size: 16}')") || return 1
	jq -r '"\(.tx_hash) \(.tx_blob)"' <<<"$reply"
}
