# shellcheck shell=bash
# Helpers for the node tests (tests/integration/test_nodes_*.sh and the others that run a
# gateway of their own over chosen nodes): the nodes table, the `nodes` gateway base (a
# short probe interval a test can reason about), calls through that gateway, .bin answers
# compared with the nodes', freezing nodes and cutting their peers, and extra regtest
# nodes. Source after lib.sh.
#
#   nodes_table "a:primary b:standby c:standby"   the nodes table holds A, B, C so
#                                                 (C pruned); every other row removed
#   gateway_start NAME --base nodes [...]         lib.sh's, on the `bare` base with probes
#                                                 every 2 s (1.5 s timeout), node calls
#                                                 timed out at 2 s, no tenant limits
#   gw_call PATH [BODY]                           POST through the gateway (GW_URL, with
#                                                 the path token TOKEN); prints the body
#   gw_rpc METHOD [PARAMS]                        JSON-RPC through it; prints `result`
#   gw_headers PATH BODY                          the answer's headers only
#   gw_status                                     the gateway's GET /nodes (admin API)
#   gw_node_status NAME                           its entry for one node (compact JSON)
#   gw_quorum_at HEIGHT                           its quorum tip is HEIGHT, not degraded
#   epee_heights_body, epee_outs_body, epee_u64   .bin request bodies (tests/epee_bodies.sh)
#   bin_post URL PATH BODY_FILE OUT_FILE          POSTs BODY_FILE; the answer into OUT_FILE,
#                                                 its headers printed
#   cache_header < HEADERS                        the X-Xmrgate-Cache value (hit, miss…)
#   same_bin FILE1 FILE2                          the same .bin answer (but for daemon_time)
#   bin_ask_nodes PATH BODY_FILE PREFIX           A's and B's answers into PREFIX-a, PREFIX-b
#   bin_whose PREFIX FILE                         which of them (a or b) FILE is; fails
#                                                 when it is neither
#   node_pid a|b|c                                monerod's pid (stack pidfile)
#   node_p2p_port a|b|c                           its P2P port
#   freeze a|b|c / thaw a|b|c                     kill -STOP / -CONT, thawed at exit
#   node_peers_cut a|b|c                          the node takes no peers (out_peers and
#                                                 in_peers 0); given them back at exit
#   node_peers_restore a|b|c                      gives them back now
#   node_isolated a|b|c                           it has no peer connection left
#   same_top a|b|c a|b|c                          two nodes report the same top block
#   node_start NAME P2P RPC [--trixie] [--peers "a b c"] [MONEROD_ARG...]
#                                                 an extra regtest monerod (0.18.4 from the
#                                                 Debian 13 root with --trixie) linked to
#                                                 the stack's nodes (default: a), data in
#                                                 $XG_VAR/nodes/NAME; returns once its RPC
#                                                 port answers HTTP; stopped at exit
#   log_event_ms EVENT NODE                       ms timestamp of the first EVENT line
#                                                 naming NODE in GW_LOG (after GW_MARK)
#   now_ms                                        wall clock in milliseconds
#   payer_tx_hex                                  a signed payer transaction, not relayed:
#                                                 prints "TXHASH TXHEX"
# The nodes table as it was when the test began is put back when it ends.

# shellcheck source=tests/epee_bodies.sh
. "$XG_REPO/tests/epee_bodies.sh"

now_ms() { date +%s%3N; }

nodes_url_of() {
	case $1 in
	a) echo "$NODE_A_URL" ;;
	b) echo "$NODE_B_URL" ;;
	c) echo "$NODE_C_URL" ;;
	esac
}

# The stack's P2P ports (scripts/stack.sh: +10, +20, +30).
node_p2p_port() {
	case $1 in
	a) echo $((XG_PORT_BASE + 10)) ;;
	b) echo $((XG_PORT_BASE + 20)) ;;
	c) echo $((XG_PORT_BASE + 30)) ;;
	esac
}

nodes_migrate() {
	XMRGATE_DATABASE_URL=$DATABASE_URL XMRGATE_GATEWAY_HA1_KEY=$XG_TEST_HA1_KEY \
		"$XG_REPO/bin/xmrgate-billing" migrate >/dev/null 2>&1
}

# Other tests (and the stack's own gateway) expect the nodes table they set up.
nodes_restore() {
	psql_q "BEGIN; DELETE FROM nodes; $1 COMMIT;" >/dev/null 2>&1 || true
}
NODES_SAVED=$(psql_q "SELECT format('INSERT INTO nodes (name, url, priority, pruned, enabled)
	VALUES (%L, %L, %L, %L, %L);', name, url, priority, pruned, enabled) FROM nodes ORDER BY id" \
	2>/dev/null | tr '\n' ' ') && defer nodes_restore "$NODES_SAVED"

gateway_base_nodes() {
	gateway_base_bare
	cat <<EOF
[nodes]
probe_interval = 2s
probe_timeout = 1500ms
timeout = 2s
[limits]
enabled = false
EOF
}

# The gateway's GET /nodes (admin API: node health, quorum, cache counters).
gw_status() { curl -s -H "Authorization: Bearer $XG_TEST_ADMIN_TOKEN" "$GW_ADMIN/nodes"; }

gw_node_status() { gw_status | jq -c --arg n "$1" '.nodes[] | select(.name == $n)'; }

# The gateway's own quorum (a tip answer may come from a node already past it).
gw_quorum_at() {
	curl -s -H "Authorization: Bearer $XG_TEST_ADMIN_TOKEN" "$GW_ADMIN/v1/quorum" |
		jq -e --argjson h "$1" '.height == $h and .degraded == false' >/dev/null
}

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

gw_call() {
	curl -sS --max-time 30 -H 'Content-Type: application/json' --data-binary "${2:-}" \
		"$GW_URL/v1/$TOKEN$1"
}

gw_rpc() { xg_rpc "$GW_URL/v1/$TOKEN" "$@"; }

gw_headers() {
	curl -sS --max-time 30 -o /dev/null -D - -H 'Content-Type: application/json' \
		--data-binary "$2" "$GW_URL/v1/$TOKEN$1" | tr -d '\r'
}

bin_post() {
	curl -sS --max-time 30 -D - -o "$4" --data-binary @"$3" "$1$2" | tr -d '\r'
}

cache_header() { sed -n 's/^X-Xmrgate-Cache: //Ip'; }

# same_bin FILE1 FILE2: two .bin answers are the same bytes, but for daemon_time: monerod
# 0.18.3 and newer put its clock (seconds) in every get_blocks.bin answer, so two asks a
# second apart differ there and nowhere else.
same_bin() {
	# shellcheck disable=SC2016 # $1 is perl's
	local mask='s/(\x0bdaemon_time\x05).{8}/$1\0\0\0\0\0\0\0\0/s'
	cmp -s <(perl -0777 -pe "$mask" "$1") <(perl -0777 -pe "$mask" "$2")
}

bin_ask_nodes() {
	bin_post "$NODE_A_URL" "$1" "$2" "$3-a" >/dev/null
	bin_post "$NODE_B_URL" "$1" "$2" "$3-b" >/dev/null
}

# Either node may serve a gateway over A and B (it picks by load), and their monerod
# versions differ (A 0.18.0, B 0.18.4), and so may their bytes.
bin_whose() {
	local n
	for n in a b; do
		if same_bin "$1-$n" "$2"; then
			echo "$n"
			return 0
		fi
	done
	return 1
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

_node_peers() { # NODE OUT IN
	curl -s -H 'Content-Type: application/json' -d "{\"set\":true,\"out_peers\":$2}" \
		"$(nodes_url_of "$1")/out_peers" >/dev/null
	curl -s -H 'Content-Type: application/json' -d "{\"set\":true,\"in_peers\":$3}" \
		"$(nodes_url_of "$1")/in_peers" >/dev/null
}

node_peers_cut() {
	_node_peers "$1" 0 0
	defer node_peers_restore "$1"
}

node_peers_restore() { _node_peers "$1" 8 64; }

node_isolated() {
	rpc "$(nodes_url_of "$1")" get_info |
		jq -e '.outgoing_connections_count + .incoming_connections_count == 0' >/dev/null
}

same_top() {
	[[ $(rpc "$(nodes_url_of "$1")" get_info | jq -r .top_block_hash) == \
		$(rpc "$(nodes_url_of "$2")" get_info | jq -r .top_block_hash) ]]
}

# Its ports may sit in the ephemeral range, where a closed outgoing connection (to
# PostgreSQL, say) holds one in TIME-WAIT for a minute and monerod cannot bind it: a node
# that cannot bind is started again, for up to two minutes.
node_start() {
	local name=$1 p2p=$2 rpc=$3 dir=$XG_VAR/nodes/$1 cmd=(monerod) peers=a peer links=()
	local pid attempt
	shift 3
	while (($#)); do
		case $1 in
		--trixie) cmd=("$XG_REPO/scripts/monero-trixie.sh" exec "$XG_VAR" monerod) && shift ;;
		--peers) peers=$2 && shift 2 ;;
		*) break ;;
		esac
	done
	for peer in $peers; do links+=(--add-exclusive-node "127.0.0.1:$(node_p2p_port "$peer")"); done
	defer rm -rf "$dir"
	for ((attempt = 1; attempt <= 40; attempt++)); do
		rm -rf "$dir"
		mkdir -p "$dir"
		setsid "${cmd[@]}" --regtest --fixed-difficulty 1 --data-dir "$dir" --keep-fakechain \
			--log-file "$dir/monerod.log" --log-level 0 --non-interactive \
			--p2p-bind-ip 127.0.0.1 --p2p-bind-port "$p2p" "${links[@]}" \
			--max-connections-per-ip 10 --rpc-bind-ip 127.0.0.1 --rpc-bind-port "$rpc" \
			--disable-rpc-ban --rpc-max-connections-per-private-ip 100 --no-zmq --no-igd \
			--check-updates disabled --disable-dns-checkpoints "$@" \
			>"$dir/monerod.out" 2>&1 </dev/null &
		pid=$!
		defer stop_pid "$pid"
		# Up when its RPC port answers HTTP (401 with --rpc-login), failed when it exits.
		while kill -0 "$pid" 2>/dev/null; do
			[[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 \
				"http://127.0.0.1:$rpc/get_height") != 000 ]] && return 0
			sleep 0.5
		done
		((attempt % 10 == 1)) &&
			echo "# node $name did not start (attempt $attempt): $(grep -m1 -o 'Failed to bind[^.]*' "$dir/monerod.out")"
		sleep 3
	done
	return 1
}

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
