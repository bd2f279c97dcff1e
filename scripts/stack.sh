#!/usr/bin/env bash
# The local regtest stack: a throwaway PostgreSQL 15, three linked monerod regtest
# nodes (A and B full, C pruned), a view-only billing wallet and a funded payer
# wallet (monero-wallet-rpc), and then the xmrgate daemons. Used by developers
# (`make run`) and by the integration tests (tests/run-integration.sh).
#
#   scripts/stack.sh run            start, stay in the foreground and restart what
#                                   exits (with backoff); Ctrl-C stops all
#   scripts/stack.sh start          start in the background, return once ready
#   scripts/stack.sh stop           stop everything this var dir started
#   scripts/stack.sh status         what is running (exit 0 all, 1 partly, 3 nothing)
#   scripts/stack.sh env            print $XG_VAR/stack.env (KEY=VALUE lines)
#   scripts/stack.sh mine N [ADDR]  mine N blocks on node A (default: the miner
#                                   wallet's address), wait for B and C to follow
#   scripts/stack.sh mine-every S   mine one block on node A every S seconds until
#                                   stopped (the stack's own miner, XG_BLOCK_INTERVAL)
#   scripts/stack.sh pg-stop|pg-start  stop or start only PostgreSQL (fault tests)
#
# Environment:
#   XG_VAR        state dir (default <repo>/var); everything lives under it
#   XG_PORT_BASE  first loopback port (default 18100); the stack uses base..base+99
#   XG_FRESH=1    wipe the state under XG_VAR first (refused while running)
#   XG_BLOCK_INTERVAL  seconds between the blocks the stack mines by itself once it is
#                 up, as a real chain makes them (default 10; 0 = none: the chain moves
#                 only when someone mines, as the integration tests need). Payments then
#                 confirm with nobody mining: a 10-confirmation tier in about 2 minutes.
#   XG_MONERO_TRIXIE  the nodes (a b c) and wallet-rpcs (billing payer) that run Debian
#                 13's monero 0.18.4 instead of this machine's (Debian 12: 0.18.0), as
#                 a list separated by commas or blanks: `b` mixes the fleet, `b,payer`
#                 also pays with a 0.18.4 wallet (default: none). Their binaries come
#                 from a Debian 13 root that scripts/monero-trixie.sh builds once and
#                 caches (XG_MONERO_TRIXIE_ROOT, default /var/cache/xmrgate/trixie-monero;
#                 needs root); a 0.18.4 wallet-rpc gets --allow-mismatched-daemon-version,
#                 without which it refuses a regtest daemon's hard forks.
#
# Re-starting after `stop` reuses the database, the chain and the wallets (seconds
# instead of a fresh mine-and-fund). A start that did not finish leaves no
# $XG_VAR/state.env, so the next start wipes and begins again.
#
# Ports (all on 127.0.0.1), relative to XG_PORT_BASE:
#   +0 PostgreSQL    +10/+11 node A p2p/rpc   +20/+21 node B   +30/+31 node C
#   +12/+22/+32 node A/B/C ZMQ pub (--zmq-pub: the gateway's [nodes] zmq)
#   +13/+23/+33 node A/B/C ZMQ RPC (monerod publishes only with its ZMQ RPC server on)
#   +41 billing (view-only) wallet-rpc   +42 payer wallet-rpc
#   +50..+99 the xmrgate daemons (start_daemons)
#
# Layout under XG_VAR: pg/ (cluster, owned by postgres; as root, a symlink to
# /var/lib/xmrgate/pg-<hash> when the postgres user cannot reach XG_VAR), nodes/{a,b,c}/, wallets/,
# run/ (pidfiles), .stack.lock, log/, etc/ (daemon configs), merchant.keys.json,
# state.env (addresses; written once the first start completed), stack.env.
set -euo pipefail
set +m # spawned children must not be group leaders (see xg_spawn)

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib-stack.sh
. "$REPO/scripts/lib-stack.sh"

XG_VAR=${XG_VAR:-$REPO/var}
mkdir -p "$XG_VAR"
XG_VAR=$(cd "$XG_VAR" && pwd)
XG_PORT_BASE=${XG_PORT_BASE:-18100}
XG_BLOCK_INTERVAL=${XG_BLOCK_INTERVAL:-10}
[[ $XG_BLOCK_INTERVAL =~ ^[0-9]+$ ]] || xg_die "XG_BLOCK_INTERVAL must be a number of seconds (0 = no mining)"
if ! [[ $XG_PORT_BASE =~ ^[0-9]+$ ]] || ((XG_PORT_BASE < 1024 || XG_PORT_BASE > 65435)); then
	xg_die "XG_PORT_BASE must be a number between 1024 and 65435"
fi

PG_BIN=/usr/lib/postgresql/15/bin
PG_PORT=$((XG_PORT_BASE + 0))
NODES=(a b c)
declare -A NODE_P2P=([a]=$((XG_PORT_BASE + 10)) [b]=$((XG_PORT_BASE + 20)) [c]=$((XG_PORT_BASE + 30)))
declare -A NODE_RPC=([a]=$((XG_PORT_BASE + 11)) [b]=$((XG_PORT_BASE + 21)) [c]=$((XG_PORT_BASE + 31)))
declare -A NODE_ZMQ_PUB=([a]=$((XG_PORT_BASE + 12)) [b]=$((XG_PORT_BASE + 22)) [c]=$((XG_PORT_BASE + 32)))
declare -A NODE_ZMQ_RPC=([a]=$((XG_PORT_BASE + 13)) [b]=$((XG_PORT_BASE + 23)) [c]=$((XG_PORT_BASE + 33)))
declare -A WALLET_PORT=([billing]=$((XG_PORT_BASE + 41)) [payer]=$((XG_PORT_BASE + 42)))
RUN=$XG_VAR/run
LOG=$XG_VAR/log
WALLETS=$XG_VAR/wallets
STATE_ENV=$XG_VAR/state.env
STACK_ENV=$XG_VAR/stack.env

# Funding: coinbase unlocks after 60 blocks, and mining runs at 2-8 blocks/s here
# (less when the machine is busy). All the funding blocks pay the payer: the first
# PAYER_SPENDABLE_OUTPUTS are spendable at once (~35 XMR each), the rest unlock one
# by one as blocks are mined later.
PAYER_SPENDABLE_OUTPUTS=30
UNLOCK_BLOCKS=60

node_url() { echo "http://127.0.0.1:${NODE_RPC[$1]}"; }
node_zmq() { echo "tcp://127.0.0.1:${NODE_ZMQ_PUB[$1]}"; }
wallet_url() { echo "http://127.0.0.1:${WALLET_PORT[$1]}"; }

# --- locking and process bookkeeping ---------------------------------------------

# take_lock [WAIT_S]: the var dir's lock, waiting up to WAIT_S seconds (default: none).
take_lock() {
	exec 9>"$XG_VAR/.stack.lock"
	flock -w "${1:-0}" 9 || xg_die "another stack.sh is already starting or stopping $XG_VAR"
}
release_lock() { exec 9>&-; }

infra_pidfiles() {
	local n
	echo "$RUN/postgres.pid"
	for n in "${NODES[@]}"; do echo "$RUN/node-$n.pid"; done
	echo "$RUN/wallet-billing.pid" "$RUN/wallet-payer.pid"
}

# Pidfiles in stop order: the daemons (anything not infrastructure), the wallets,
# the nodes, PostgreSQL last.
pidfiles_in_stop_order() {
	local f
	for f in "$RUN"/*.pid; do
		[[ -e $f ]] || continue
		case ${f##*/} in postgres.pid | node-*.pid | wallet-*.pid) ;; *) echo "$f" ;; esac
	done
	for f in "$RUN"/wallet-*.pid "$RUN"/node-*.pid "$RUN"/postgres.pid; do
		[[ -e $f ]] && echo "$f"
	done
	return 0
}

count_running() {
	local f n=0
	for f in $(pidfiles_in_stop_order); do
		xg_pid_owned "$f" && n=$((n + 1))
	done
	echo "$n"
}

# --- PostgreSQL ------------------------------------------------------------------

# initdb and postgres refuse to run as root: as root, run them as `postgres`.
# The lock's descriptor stays behind (pg_ctl leaves postgres running).
as_pg_user() {
	if ((EUID == 0)); then
		(cd / && runuser -u postgres -- "$@" 9>&-)
	else
		"$@" 9>&-
	fi
}

# The cluster's directory. PostgreSQL runs as the postgres user when the stack runs as
# root, and that user must reach its data dir through every parent directory: a clone
# under /root (mode 700 on Debian) cannot hold it. Then the cluster lives in
# $PG_HOME/pg-<hash of XG_VAR> and $XG_VAR/pg is a symlink to it; otherwise (and always
# for a non-root user, whose server runs as itself) it is $XG_VAR/pg. Prints the real path.
PG_HOME=/var/lib/xmrgate
pg_dir() {
	local link=$XG_VAR/pg
	if [[ -L $link || -d $link ]] || ((EUID != 0)) || as_pg_user test -x "$XG_VAR"; then
		[[ -L $link || -d $link ]] || mkdir -p "$link"
		readlink -f "$link"
		return
	fi
	local dir
	dir=$PG_HOME/pg-$(sha256sum <<<"$XG_VAR" | cut -c1-12)
	mkdir -p "$dir"
	ln -sfn "$dir" "$link"
	echo "$dir"
}

start_postgres() {
	local pg data sock log pid
	pg=$(pg_dir)
	data=$pg/data sock=$pg/sock log=$pg/postgres.log
	mkdir -p "$sock"
	touch "$log"
	ln -sfn "$log" "$LOG/postgres.log"
	if ((EUID == 0)); then
		chown postgres:postgres "$pg" "$sock" "$log"
		chmod 700 "$pg"
	fi
	as_pg_user test -w "$pg" ||
		xg_die "the postgres user cannot write $pg: put XG_VAR where it can reach"
	if [[ ! -s $data/PG_VERSION ]]; then
		xg_log "initdb $data"
		as_pg_user "$PG_BIN/initdb" -A trust -U postgres -E UTF8 --locale=C --no-sync \
			-D "$data" >>"$log" 2>&1 || xg_die "initdb failed (see $log)"
	fi
	# A throwaway cluster: durability off for speed. pg_ctl pastes -o into a shell
	# command line, so it must stay on one line.
	local opts="-p $PG_PORT -k $sock -c listen_addresses=127.0.0.1"
	opts+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	as_pg_user "$PG_BIN/pg_ctl" -D "$data" -l "$log" -w -t 60 -o "$opts" start >/dev/null 2>&1 ||
		xg_die "PostgreSQL did not start (see $log)"
	read -r pid <"$data/postmaster.pid"
	xg_write_pidfile "$RUN/postgres.pid" "$pid" "$data"
	if [[ -z $(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = 'xmrgate'") ]]; then
		psql_admin -qc 'CREATE DATABASE xmrgate' || xg_die "could not create database xmrgate"
	fi
}

psql_admin() {
	psql -X -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres "$@"
}

stop_postgres() {
	local data
	data=$(readlink -f "$XG_VAR/pg")/data
	if [[ -e $data/postmaster.pid ]]; then
		as_pg_user "$PG_BIN/pg_ctl" -D "$data" -m fast -w -t 30 stop >/dev/null 2>&1 || true
	fi
	xg_kill_pidfiles 10 "$RUN/postgres.pid"
}

# --- monero 0.18.4 from Debian 13 (XG_MONERO_TRIXIE) ------------------------------

TRIXIE_SH=$REPO/scripts/monero-trixie.sh
declare -A TRIXIE=() # stack member (a b c billing payer) -> 1: runs 0.18.4

parse_trixie() {
	local names name
	IFS=', ' read -ra names <<<"${XG_MONERO_TRIXIE:-}"
	for name in "${names[@]}"; do
		case $name in
		a | b | c | billing | payer) TRIXIE[$name]=1 ;;
		*) xg_die "XG_MONERO_TRIXIE: '$name' is neither a node (a b c) nor a wallet-rpc (billing payer)" ;;
		esac
	done
}

in_trixie() { [[ -n ${TRIXIE[$1]:-} ]]; }

# The members that run 0.18.4, in stack order, on one line.
trixie_members() {
	local m out=()
	for m in a b c billing payer; do in_trixie "$m" && out+=("$m"); done
	echo "${out[*]}"
}

# Builds the Debian 13 root when it is not there yet (about a minute, once).
ensure_trixie_root() {
	"$TRIXIE_SH" root >/dev/null 9>&- || xg_die "no Debian 13 root with monero 0.18.4"
}

# monero_cmd MEMBER PROGRAM: sets MONERO_CMD to the words that start PROGRAM for the
# stack member: PROGRAM itself, or, for one in XG_MONERO_TRIXIE, PROGRAM from the
# Debian 13 root with XG_VAR bound inside (same pid, same command line).
monero_cmd() {
	MONERO_CMD=("$2")
	in_trixie "$1" && MONERO_CMD=("$TRIXIE_SH" exec "$XG_VAR" "$2")
	return 0
}

# --- monerod ---------------------------------------------------------------------

start_node() {
	local n=$1 dir=$XG_VAR/nodes/$1 other peers=()
	shift
	mkdir -p "$dir"
	for other in "${NODES[@]}"; do
		[[ $other == "$n" ]] || peers+=(--add-exclusive-node "127.0.0.1:${NODE_P2P[$other]}")
	done
	# --rpc-max-connections-per-private-ip: Debian's build caps RPC connections per
	# private IP at 25, and every loopback client (gateway pools, tests, wallets) is
	# one IP. --max-connections-per-ip: the three nodes' P2P links all come from
	# 127.0.0.1 too (the default of 1 would drop all but one). --keep-fakechain:
	# without it a regtest node deletes its chain on every start. 0.18.4 takes the
	# same flags. --zmq-pub: new blocks reach the gateway at once (json-minimal-chain_main);
	# monerod publishes only with its ZMQ RPC server on, so that gets a loopback port too.
	monero_cmd "$n" monerod
	xg_spawn "$RUN/node-$n.pid" "$dir" "$LOG/node-$n.out" \
		"${MONERO_CMD[@]}" --regtest --fixed-difficulty 1 --data-dir "$dir" \
		--keep-fakechain --log-file "$LOG/node-$n.log" --log-level 0 --non-interactive \
		--p2p-bind-ip 127.0.0.1 --p2p-bind-port "${NODE_P2P[$n]}" "${peers[@]}" \
		--max-connections-per-ip 10 \
		--rpc-bind-ip 127.0.0.1 --rpc-bind-port "${NODE_RPC[$n]}" \
		--disable-rpc-ban --rpc-max-connections-per-private-ip 100 \
		--zmq-rpc-bind-ip 127.0.0.1 --zmq-rpc-bind-port "${NODE_ZMQ_RPC[$n]}" \
		--zmq-pub "$(node_zmq "$n")" \
		--no-igd --check-updates disabled --disable-dns-checkpoints "$@"
}

node_info() { XG_RPC_TIMEOUT=5 xg_rpc "$(node_url "$1")" get_info; }
node_answers() { node_info "$1" 2>/dev/null | jq -e '.status == "OK"' >/dev/null 2>&1; }
node_height() { node_info "$1" | jq -r '.height'; }

# True when every node answers with the same height and top block hash, at least
# MIN_HEIGHT (default 0).
nodes_agree() {
	local min=${1:-0} n info tip first=''
	for n in "${NODES[@]}"; do
		info=$(node_info "$n" 2>/dev/null) || return 1
		tip=$(jq -er --argjson min "$min" 'select(.height >= $min) |
			"\(.height) \(.top_block_hash)"' <<<"$info") || return 1
		[[ -z $first || $tip == "$first" ]] || return 1
		first=$tip
	done
}

# spawn_node N: starts node N with its own flags (C is the pruned one).
spawn_node() {
	if [[ $1 == c ]]; then start_node c --prune-blockchain; else start_node "$1"; fi
}

spawn_nodes() {
	local n
	for n in "${NODES[@]}"; do spawn_node "$n"; done
}

wait_nodes() {
	local n
	for n in "${NODES[@]}"; do
		xg_wait_until 90 node_answers "$n" ||
			xg_die "node $n did not answer get_info (see $LOG/node-$n.log)"
	done
}

# mine_blocks N ADDRESS: generateblocks on node A; prints the new top block's height
# (get_info's `height`, a block count, is one more).
mine_blocks() {
	local n=$1 addr=$2
	XG_RPC_TIMEOUT=$((60 + n)) xg_rpc "$(node_url a)" generateblocks \
		"$(jq -cn --argjson n "$n" --arg a "$addr" '{amount_of_blocks: $n, wallet_address: $a}')" |
		jq -r '.height'
}

# The stack's own miner (XG_BLOCK_INTERVAL): `stack.sh mine-every`, one block at a time to
# the miner wallet, recorded in $RUN/miner.pid like the daemons and stopped, supervised
# and restarted with them. Nothing when the interval is 0.
spawn_miner() {
	((XG_BLOCK_INTERVAL > 0)) || return 0
	xg_spawn "$RUN/miner.pid" "mine-every $XG_BLOCK_INTERVAL" "$LOG/miner.log" \
		env XG_VAR="$XG_VAR" XG_PORT_BASE="$XG_PORT_BASE" "$REPO/scripts/stack.sh" \
		mine-every "$XG_BLOCK_INTERVAL"
}

# --- wallets ---------------------------------------------------------------------

start_wallet_rpc() {
	local w=$1 extra=()
	monero_cmd "$w" monero-wallet-rpc
	# 0.18.4 (0.18.0 has no such flag) checks the daemon's hard fork versions against
	# mainnet's heights, and regtest's are not those.
	in_trixie "$w" && extra=(--allow-mismatched-daemon-version)
	xg_spawn "$RUN/wallet-$w.pid" "$LOG/wallet-$w.log" "$LOG/wallet-$w.out" \
		"${MONERO_CMD[@]}" --daemon-address "127.0.0.1:${NODE_RPC[a]}" --trusted-daemon \
		--rpc-bind-ip 127.0.0.1 --rpc-bind-port "${WALLET_PORT[$w]}" --disable-rpc-login \
		--wallet-dir "$WALLETS" --shared-ringdb-dir "$WALLETS/ringdb" \
		--log-file "$LOG/wallet-$w.log" --log-level 0 --non-interactive "${extra[@]}"
}

wallet_rpc() { xg_rpc "$(wallet_url "$1")" "${@:2}"; }
wallet_answers() { XG_RPC_TIMEOUT=5 wallet_rpc "$1" get_version >/dev/null 2>&1; }
wallet_address() { wallet_rpc "$1" get_address '{"account_index":0}' | jq -er '.address'; }

spawn_wallets() {
	mkdir -p "$WALLETS"
	start_wallet_rpc billing
	start_wallet_rpc payer
}

wait_wallets() {
	local w
	for w in billing payer; do
		xg_wait_until 60 wallet_answers "$w" ||
			xg_die "wallet-rpc $w did not answer (see $LOG/wallet-$w.log)"
	done
}

# Creates the merchant's full wallet (keys kept in merchant.keys.json and the wallet
# files) and its view-only twin `billing`, left open on the billing wallet-rpc.
create_billing_wallets() {
	local key addr keys
	wallet_rpc billing create_wallet '{"filename":"merchant","password":"","language":"English"}' >/dev/null
	addr=$(wallet_address billing)
	keys=$(jq -cn --arg a "$addr" '{address: $a}')
	for key in view_key spend_key mnemonic; do
		keys=$(jq -c --arg k "$key" --arg v "$(wallet_rpc billing query_key \
			"{\"key_type\":\"$key\"}" | jq -r '.key')" '.[$k] = $v' <<<"$keys")
	done
	(umask 077 && jq . <<<"$keys" >"$XG_VAR/merchant.keys.json")
	wallet_rpc billing close_wallet >/dev/null
	wallet_rpc billing generate_from_keys "$(jq -c '{filename: "billing", password: "",
		address: .address, viewkey: .view_key, restore_height: 0, autosave_current: true}' \
		<<<"$keys")" >/dev/null
	[[ $(wallet_address billing) == "$addr" ]] || xg_die "view-only wallet has another address"
}

# Creates a `miner` wallet, whose address receives the blocks mined for nobody in
# particular, and the `payer` wallet, left open on the payer wallet-rpc.
create_payer_wallets() {
	wallet_rpc payer create_wallet '{"filename":"miner","password":"","language":"English"}' >/dev/null
	MINER_ADDRESS=$(wallet_address payer)
	wallet_rpc payer close_wallet >/dev/null
	wallet_rpc payer create_wallet '{"filename":"payer","password":"","language":"English"}' >/dev/null
	PAYER_ADDRESS=$(wallet_address payer)
}

open_wallets() {
	local billing_job
	# Opening takes seconds (the wallet derives its ring database key): both at once.
	wallet_rpc billing open_wallet '{"filename":"billing","password":""}' >/dev/null &
	billing_job=$!
	wallet_rpc payer open_wallet '{"filename":"payer","password":""}' >/dev/null
	wait "$billing_job" || xg_die "could not open the billing wallet"
	# shellcheck source=/dev/null
	. "$STATE_ENV"
	[[ $(wallet_address billing) == "$MERCHANT_ADDRESS" && $(wallet_address payer) == "$PAYER_ADDRESS" ]] ||
		xg_die "wallet files in $WALLETS do not match $STATE_ENV: start with XG_FRESH=1"
}

payer_unlocked() {
	wallet_rpc payer refresh >/dev/null &&
		wallet_rpc payer get_balance '{"account_index":0}' | jq -e '.unlocked_balance > 0' >/dev/null
}

# Mines coinbase to the payer, then enough blocks on top for it to unlock.
fund_payer() {
	local n=$((PAYER_SPENDABLE_OUTPUTS + UNLOCK_BLOCKS)) top
	xg_log "funding the payer: mining $n blocks"
	top=$(mine_blocks "$n" "$PAYER_ADDRESS") || xg_die "generateblocks failed (see $LOG/node-a.log)"
	xg_log "mined to height $top"
}

ensure_payer_funded() {
	payer_unlocked 2>/dev/null && return 0
	fund_payer
	xg_wait_until 60 payer_unlocked || xg_die "the payer has no unlocked balance after funding"
}

# --- the xmrgate daemons -----------------------------------------------------------

# start_daemons, daemons_env, daemons_banner: scripts/lib-daemons.sh.
# shellcheck source=scripts/lib-daemons.sh
. "$REPO/scripts/lib-daemons.sh"

# --- stack.env and the banner ----------------------------------------------------

write_stack_env() {
	local tmp=$STACK_ENV.tmp
	cat >"$tmp" <<EOF
XG_VAR=$XG_VAR
XG_PORT_BASE=$XG_PORT_BASE
BLOCK_INTERVAL=$XG_BLOCK_INTERVAL
DATABASE_URL=postgresql://postgres@127.0.0.1:$PG_PORT/xmrgate
PGHOST=127.0.0.1
PGPORT=$PG_PORT
PGUSER=postgres
PGDATABASE=xmrgate
NODE_URLS=$(node_url a),$(node_url b),$(node_url c)
NODE_A_URL=$(node_url a)
NODE_B_URL=$(node_url b)
NODE_C_URL=$(node_url c)
NODE_A_ZMQ=$(node_zmq a)
NODE_B_ZMQ=$(node_zmq b)
NODE_C_ZMQ=$(node_zmq c)
BILLING_WALLET_URL=$(wallet_url billing)
PAYER_WALLET_URL=$(wallet_url payer)
MERCHANT_ADDRESS=$MERCHANT_ADDRESS
PAYER_ADDRESS=$PAYER_ADDRESS
MINER_ADDRESS=$MINER_ADDRESS
EOF
	daemons_env >>"$tmp"
	mv "$tmp" "$STACK_ENV"
}

# What each node reports (get_info) and which monero each wallet-rpc runs.
versions_line() {
	local n w out=() line
	for n in "${NODES[@]}"; do
		out+=("${n^^} $(xg_monerod_version "$(node_url "$n")" 2>/dev/null || echo '?')")
	done
	for w in billing payer; do
		monero_cmd "$w" monero-wallet-rpc
		out+=("$w $("${MONERO_CMD[@]}" --version 2>/dev/null | sed -n 's/.*(v\(.*\)).*/\1/p')")
	done
	line=$(printf '%s, ' "${out[@]}")
	echo "${line%, }"
}

miner_line() {
	if ((XG_BLOCK_INTERVAL > 0)); then
		echo "a block every ${XG_BLOCK_INTERVAL}s, mined by the stack (XG_BLOCK_INTERVAL=0 make run: none)"
	else
		echo "no blocks unless mined ('$0 mine N'): XG_BLOCK_INTERVAL=0"
	fi
}

print_banner() {
	local height balance
	height=$(node_height a)
	balance=$(wallet_rpc payer get_balance '{"account_index":0}' | jq -r '.unlocked_balance')
	cat <<EOF

xmrgate regtest stack is up (ready in ${1}s), state in $XG_VAR
  PostgreSQL  postgresql://postgres@127.0.0.1:$PG_PORT/xmrgate
  monerod     A $(node_url a)  B $(node_url b)  C (pruned) $(node_url c)  height $height
              $(miner_line)
  wallets     billing (view-only) $(wallet_url billing)  payer $(wallet_url payer)
              payer unlocked: $balance piconero
  versions    $(versions_line)
  logs        $LOG/
$(daemons_banner)

What next:
  set -a; . $STACK_ENV; set +a   # DATABASE_URL, NODE_URLS, wallet URLs, addresses
  psql                          # (once sourced) the xmrgate database
  $0 mine 10           # mine 10 blocks on node A
  $0 status            # what is running
  $0 stop              # stop it all; the next start reuses chain and wallets
EOF
}

# --- subcommands -------------------------------------------------------------------

wipe_state() {
	xg_log "wiping the stack state under $XG_VAR"
	# Named subdirs only: the default var dir also holds the tests' var/test.
	local pg
	pg=$(readlink -f "$XG_VAR/pg")
	[[ $pg == "$XG_VAR/pg" || $pg == "$PG_HOME"/pg-* ]] && rm -rf "$pg"
	rm -rf "${XG_VAR:?}/pg" "${XG_VAR:?}/nodes" "$WALLETS" "$RUN" "$LOG" "${XG_VAR:?}/etc" \
		"$XG_VAR/merchant.keys.json" "$STATE_ENV" "$STACK_ENV"
}

check_ports_free() {
	local p
	for p in "$PG_PORT" "${NODE_P2P[@]}" "${NODE_RPC[@]}" "${WALLET_PORT[@]}" \
		"$GATEWAY_PORT" "$GATEWAY_ADMIN_PORT" "$BILLING_PORT" "$BILLING_ADMIN_PORT" "$RATE_PORT"; do
		xg_port_free "$p" || xg_die "port $p is in use: pick another XG_PORT_BASE"
	done
}

START_COMPLETE=0
on_start_exit() {
	((START_COMPLETE)) && return 0
	xg_log "start failed; stopping what was started (logs in $LOG)"
	stop_all
}

# Starts everything; returns once the stack is ready. Sets ALREADY_RUNNING=1 and
# starts nothing when this var dir's stack is already up.
ALREADY_RUNNING=0
start_stack() {
	local fresh=0 started=$SECONDS
	take_lock
	if (($(count_running) > 0)); then
		[[ ${XG_FRESH:-0} != 1 ]] || xg_die "the stack in $XG_VAR is running: stop it before XG_FRESH=1"
		if [[ -e $STACK_ENV ]]; then
			xg_log "already running ($XG_VAR): see '$0 status'"
			ALREADY_RUNNING=1
			return 0
		fi
		xg_die "partly running ($XG_VAR): run '$0 stop' first"
	fi
	if [[ ${XG_FRESH:-0} == 1 ]] || [[ ! -e $STATE_ENV && -e $XG_VAR/nodes ]]; then
		wipe_state
	fi
	[[ -e $STATE_ENV ]] || fresh=1
	mkdir -p "$RUN" "$LOG"
	check_ports_free
	trap on_start_exit EXIT
	trap 'exit 130' INT TERM HUP

	step() { xg_log "[$((SECONDS - started))s] $*"; }
	step "ports $XG_PORT_BASE+, $( ((fresh)) && echo 'fresh state' || echo 'reusing state')"
	parse_trixie
	if ((${#TRIXIE[@]} > 0)); then
		ensure_trixie_root
		step "monero 0.18.4 from Debian 13 for: $(trixie_members)"
	fi
	# Independent steps run side by side: PostgreSQL, the nodes and the wallet-rpcs
	# start together; the billing wallets are made while the payer is funded.
	local pg_job billing_job
	start_postgres &
	pg_job=$!
	spawn_nodes
	spawn_wallets
	wait_nodes
	step "monerod A, B, C up"
	wait_wallets
	step "wallet-rpc up"
	wait "$pg_job" || xg_die "PostgreSQL did not start"
	step "PostgreSQL up"
	if ((fresh)); then
		create_billing_wallets &
		billing_job=$!
		create_payer_wallets
		fund_payer
		xg_wait_until 60 payer_unlocked || xg_die "the payer has no unlocked balance after funding"
		wait "$billing_job" || xg_die "could not create the billing wallets"
		MERCHANT_ADDRESS=$(jq -er '.address' "$XG_VAR/merchant.keys.json")
		printf 'MERCHANT_ADDRESS=%s\nPAYER_ADDRESS=%s\nMINER_ADDRESS=%s\n' \
			"$MERCHANT_ADDRESS" "$PAYER_ADDRESS" "$MINER_ADDRESS" >"$STATE_ENV"
	else
		[[ $(node_height a) -gt $((PAYER_SPENDABLE_OUTPUTS + UNLOCK_BLOCKS)) ]] ||
			xg_die "the chain in $XG_VAR/nodes is gone: start with XG_FRESH=1"
		open_wallets
		ensure_payer_funded
	fi
	step "payer funded"
	xg_wait_until 60 nodes_agree || xg_die "nodes A, B and C do not agree on the tip"

	start_daemons
	spawn_miner
	write_stack_env
	START_COMPLETE=1
	trap - EXIT INT TERM HUP
	release_lock
	print_banner $((SECONDS - started))
}

stop_all() {
	local files=() f
	trap '' INT TERM # finish stopping even on a second Ctrl-C
	mapfile -t files < <(pidfiles_in_stop_order)
	rm -f "$STACK_ENV"
	local daemons=() wallets=() nodes=()
	for f in "${files[@]}"; do
		case ${f##*/} in
		wallet-*) wallets+=("$f") ;;
		node-*) nodes+=("$f") ;;
		postgres.pid) ;;
		*) daemons+=("$f") ;;
		esac
	done
	xg_kill_pidfiles 20 "${daemons[@]}"
	xg_kill_pidfiles 20 "${wallets[@]}" # wallet-rpc stores its wallet on TERM
	xg_kill_pidfiles 30 "${nodes[@]}"
	stop_postgres
	trap - INT TERM
}

cmd_stop() {
	take_lock 90 # a restart in progress finishes first
	if (($(count_running) == 0)) && [[ ! -e $XG_VAR/pg/data/postmaster.pid ]]; then
		rm -f "$STACK_ENV" "$RUN"/*.pid
		xg_log "not running ($XG_VAR)"
		return 0
	fi
	stop_all
	xg_log "stopped ($XG_VAR)"
}

cmd_status() {
	local f name pid running=0 total=0
	local -A seen=()
	for f in $(infra_pidfiles) $(pidfiles_in_stop_order); do
		name=${f##*/}
		name=${name%.pid}
		[[ -z ${seen[$name]:-} ]] || continue
		seen[$name]=1
		total=$((total + 1))
		if xg_pid_owned "$f"; then
			read -r pid <"$f"
			running=$((running + 1))
			case $name in
			node-*) printf '%-16s running (pid %s, height %s)\n' "$name" "$pid" \
				"$(node_height "${name#node-}" 2>/dev/null || echo '?')" ;;
			*) printf '%-16s running (pid %s)\n' "$name" "$pid" ;;
			esac
		else
			printf '%-16s stopped\n' "$name"
		fi
	done
	((running == total)) && return 0
	((running == 0)) && return 3
	return 1
}

# Ctrl-C, kill, or the terminal closing: stop everything. Without errexit, since
# after a hangup every write to the terminal fails.
on_run_signal() {
	set +e
	echo >&2
	xg_log "stopping"
	stop_all
	exit 0
}

# respawn NAME: starts the process of $RUN/NAME.pid again, the way start_stack did.
respawn() {
	local name=$1 w
	case $name in
	postgres) start_postgres ;;
	node-*) spawn_node "${name#node-}" ;;
	wallet-*)
		w=${name#wallet-}
		start_wallet_rpc "$w"
		xg_wait_until 60 wallet_answers "$w" &&
			wallet_rpc "$w" open_wallet "{\"filename\":\"$w\",\"password\":\"\"}" >/dev/null
		;;
	miner) spawn_miner ;;
	*) daemon_spawn "$name" ;;
	esac
}

# The foreground stack supervises, as an operator's supervisor would: a process that
# exits while the stack runs is started again after a delay that doubles while it keeps
# exiting (1 s, 2, 4 … up to SUPERVISE_MAX_DELAY) and starts over once it has run for
# SUPERVISE_STABLE seconds; the rest keeps running. A restart takes the var dir's lock,
# and a stop (which removes stack.env first) is never undone by one.
SUPERVISE_MAX_DELAY=30
SUPERVISE_STABLE=60
supervise() {
	local -A delay=() due=() started=()
	local files f name d
	while true; do
		sleep 1 &
		wait $! || true
		mapfile -t files < <(pidfiles_in_stop_order)
		((${#files[@]} > 0)) || exit 0 # stopped from elsewhere
		for f in "${files[@]}"; do
			[[ -e $STACK_ENV ]] || continue # being stopped
			xg_pid_owned "$f" && continue
			name=${f##*/}
			name=${name%.pid}
			if [[ -z ${due[$name]:-} ]]; then
				d=${delay[$name]:-0}
				if ((d == 0 || SECONDS - ${started[$name]:-0} >= SUPERVISE_STABLE)); then
					d=1
				else
					d=$((d * 2 > SUPERVISE_MAX_DELAY ? SUPERVISE_MAX_DELAY : d * 2))
				fi
				delay[$name]=$d
				due[$name]=$((SECONDS + d))
				xg_log "$name exited unexpectedly; restarting it in ${d}s (last log line:" \
					"$(tail -n 1 "$LOG/$name.log" 2>/dev/null | cut -c1-160))"
				continue
			fi
			((SECONDS >= due[$name])) || continue
			exec 9>"$XG_VAR/.stack.lock"
			if flock -n 9 && [[ -e $STACK_ENV ]]; then
				if (respawn "$name"); then
					xg_log "$name restarted"
				else
					xg_log "$name: restart failed"
				fi
				started[$name]=$SECONDS
				unset "due[$name]"
			fi
			release_lock
		done
	done
}

cmd_run() {
	start_stack
	((!ALREADY_RUNNING)) || xg_die "already running: use '$0 stop' first, or '$0 status'"
	trap on_run_signal INT TERM HUP
	xg_log "running in the foreground, restarting what exits; Ctrl-C stops everything"
	supervise
}

cmd_mine() {
	local n=${1:-} addr=${2:-} h
	[[ $n =~ ^[1-9][0-9]*$ ]] || xg_die "usage: $0 mine N [ADDRESS]"
	[[ -r $STACK_ENV ]] || xg_die "the stack in $XG_VAR is not running"
	# shellcheck source=/dev/null
	. "$STACK_ENV"
	h=$(mine_blocks "$n" "${addr:-$MINER_ADDRESS}") || xg_die "generateblocks failed"
	xg_wait_until 30 nodes_agree $((h + 1)) || xg_die "mined to height $h, but the nodes do not agree"
	echo "$h"
}

# The miner's loop: a block every S seconds on node A, to the miner wallet. A failed
# generateblocks (node A restarting) is logged and tried again at the next tick.
cmd_mine_every() {
	local s=${1:-} h
	[[ $s =~ ^[1-9][0-9]*$ ]] || xg_die "usage: $0 mine-every SECONDS"
	[[ -r $STATE_ENV ]] || xg_die "the stack in $XG_VAR has no miner address yet"
	# shellcheck source=/dev/null
	. "$STATE_ENV"
	# A stop ends the wait at once; its sleep goes too (else it outlives the stack by up to S).
	local tick=''
	trap '[[ -z $tick ]] || kill "$tick" 2>/dev/null; exit 0' TERM INT
	xg_log "mining a block on node A every ${s}s"
	while true; do
		sleep "$s" &
		tick=$!
		wait "$tick"
		tick=
		if h=$(mine_blocks 1 "$MINER_ADDRESS" 2>&1); then
			xg_log "mined block $h"
		else
			xg_log "generateblocks failed: $h"
		fi
	done
}

main() {
	local cmd=${1:-}
	shift || true
	case $cmd in
	run) cmd_run ;;
	start) start_stack ;;
	stop) cmd_stop ;;
	status) cmd_status ;;
	env)
		[[ -r $STACK_ENV ]] || xg_die "the stack in $XG_VAR is not running (no $STACK_ENV)"
		cat "$STACK_ENV"
		;;
	mine) cmd_mine "$@" ;;
	mine-every) cmd_mine_every "$@" ;;
	pg-stop) stop_postgres ;;
	pg-start) start_postgres ;;
	*)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		[[ $cmd == -h || $cmd == --help || $cmd == help ]]
		;;
	esac
}

main "$@"
