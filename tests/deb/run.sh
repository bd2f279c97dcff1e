#!/usr/bin/env bash
# make deb-test: the Debian packages (build/deb, `make deb`) installed in a fresh Debian 12
# root and run there as an operator would run them. The root is built by mmdebstrap with
# PostgreSQL, monero and the three packages (apt resolves their dependencies from the
# archive; their maintainer scripts run). Then, inside it:
#   - the packages' promises: --version, the xmrgate user, /etc/xmrgate mode 0640, units
#     installed disabled, no migration in any maintainer script or unit;
#   - Debian's PostgreSQL cluster, a role and database for xmrgate (peer authentication),
#     two linked regtest nodes of Debian's monerod;
#   - each daemon run the way its installed unit says: its ExecStartPre, ExecStart and
#     ExecStartPost lines (${VAR} from its EnvironmentFile=), as its User=/Group=, with its
#     LimitNOFILE= (there is no systemd in a root: this file reads the unit and does what
#     systemd would; it refuses unit syntax it does not handle);
#   - the gateway started before the schema refuses to serve, the package having migrated
#     nothing; `xmrgate-billing migrate`, by hand; the nodes added with xmrgate-admin;
#   - a real monero-wallet-rpc syncs through the installed gateway with a tenant's Digest
#     login, receives mined coins, and pays an invoice of the installed billing (whose
#     view-only wallet-rpc runs from its own unit) through the gateway; the invoice is
#     provisioned and its token served.
#
# Ports: XG_TEST_PORT_BASE+200 .. +299 (default base 28100). XG_KEEP_ROOT=1 keeps the root
# (build/deb-test/root) and its logs. Prints `ok`/`not ok` lines, then `N passed, N failed`.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lib-stack.sh
. "$REPO/scripts/lib-stack.sh"
WORK=$REPO/build/deb-test
ROOT=$WORK/root
LOGS=$WORK/log
BASE=$((${XG_TEST_PORT_BASE:-28100} + 200))

# --- outside: the packages, the root, a mount namespace ----------------------------------
outside() {
	local debs=() d started=$SECONDS rc=0
	((EUID == 0)) || { echo "deb-test: needs root (mmdebstrap, chroot)" >&2; exit 2; }
	for d in "$REPO"/build/deb/xmrgate-{gateway,billing,admin}_*.deb; do
		[[ -e $d ]] && debs+=("$d")
	done
	((${#debs[@]} == 3)) || { echo "deb-test: build/deb has no packages: run make deb" >&2; exit 2; }
	remove_root
	mkdir -p "$WORK"
	echo "# building a Debian 12 root with PostgreSQL, monero and ${debs[*]##*/}"
	# The packages go in as an operator installs them, `apt-get install ./x.deb` in the root
	# (apt resolves their dependencies from the archive), after what the test itself runs.
	local include=ca-certificates,postgresql,monero,procps,curl,jq
	# shellcheck disable=SC2016 # $1 is the root, for mmdebstrap's hooks to expand
	if ! mmdebstrap --mode=root --variant=apt "--include=$include" \
		--customize-hook='mkdir -p "$1/tmp/xmrgate-debs"' \
		--customize-hook="copy-in ${debs[*]} /tmp/xmrgate-debs" \
		--customize-hook='chroot "$1" sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y /tmp/xmrgate-debs/*.deb"' \
		--customize-hook='rm -rf "$1/tmp/xmrgate-debs"' \
		bookworm "$ROOT" >"$WORK/mmdebstrap.log" 2>&1; then
		tail -n 20 "$WORK/mmdebstrap.log" | sed 's/^/#   /'
		echo "not ok - mmdebstrap builds the root with the packages installed"
		echo "0 passed, 1 failed"
		exit 1
	fi
	echo "# root built in $((SECONDS - started))s"
	# Mounts in a namespace of their own: they go when the last process inside ends. In a
	# chroot, / is no mount point and cannot be made private (as in scripts/monero-trixie.sh).
	local propagation=private
	mountpoint -q / || propagation=unchanged
	unshare --mount --propagation "$propagation" -- "$BASH" "${BASH_SOURCE[0]}" _inside || rc=$?
	echo "# deb-test took $((SECONDS - started))s"
	if [[ ${XG_KEEP_ROOT:-0} == 1 ]]; then echo "# kept $ROOT"; else remove_root; fi
	exit "$rc"
}

remove_root() {
	[[ -e $ROOT ]] || return 0
	awk -v d="$ROOT/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m" || true; done
	rm -rf --one-file-system "$ROOT"
}

# --- inside: TAP ------------------------------------------------------------------------
PASSED=0 FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "ok - $1"; }
not_ok() {
	FAILED=$((FAILED + 1))
	echo "not ok - $1"
	# shellcheck disable=SC2001 # every line of a multi-line text
	[[ -z ${2:-} ]] || sed 's/^/#   /' <<<"$2"
}
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$(tail -n 8 <<<"$out")"; fi
}
# check_here NAME CMD...: as check, in this shell (CMD may set variables, start processes)
check_here() {
	local name=$1
	shift
	if "$@" >"$LOGS/check.out" 2>&1; then ok "$name"; else not_ok "$name" "$(tail -n 8 "$LOGS/check.out")"; fi
}
assert_eq() { if [[ $2 == "$3" ]]; then ok "$1"; else not_ok "$1" "expected: $2"$'\n'"     got: $3"; fi; }

in_root() { chroot "$ROOT" "$@"; }
PIDS=()
# spawn NAME CMD...: in the background, its own session, output to $LOGS/NAME.log
spawn() {
	local name=$1
	shift
	setsid "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
	PIDS+=("$!")
	LAST_PID=$!
}
stop_all() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		xg_wait_until 30 bash -c "! kill -0 $p 2>/dev/null" || kill -KILL "$p" 2>/dev/null
	done
	in_root pg_ctlcluster 15 main stop -m fast >/dev/null 2>&1 || true
}

# --- reading a unit as systemd would (the subset the packages use) ---------------------
# unit_values FILE KEY: each value of KEY in [Service], continuation lines joined.
unit_values() {
	awk -v key="$2" '
		/^\[/ { section = $0; next }
		{ line = line $0 }
		/\\$/ { sub(/\\$/, "", line); next }
		{ if (section == "[Service]" && index(line, key "=") == 1) print substr(line, length(key) + 2)
		  line = "" }' "$1" | sed 's/  */ /g'
}
# env_file FILE: KEY=VALUE lines of an EnvironmentFile (comments and blanks skipped).
env_file() { grep -E '^[A-Za-z_][A-Za-z0-9_]*=' "$1" || true; }

# run_unit NAME: runs NAME.service as installed: ExecStartPre lines (each must succeed),
# ExecStart in the background (UNIT_PID), ExecStartPost lines. False on a refused unit or
# a failing Pre/Post line.
run_unit() {
	local name=$1 file=$ROOT/lib/systemd/system/$1.service
	[[ -r $file ]] || { echo "no unit $file"; return 1; }
	local user group limit envs=() f line uid gid home
	UNIT_PID=0
	user=$(unit_values "$file" User)
	group=$(unit_values "$file" Group)
	limit=$(unit_values "$file" LimitNOFILE)
	[[ -n $user && -n $group && $limit =~ ^[0-9]+$ ]] || { echo "$name: User, Group and LimitNOFILE"; return 1; }
	uid=$(in_root id -u "$user") && gid=$(in_root getent group "$group" | cut -d: -f3) || return 1
	home=$(in_root getent passwd "$user" | cut -d: -f6)
	while read -r f; do
		[[ -n $f ]] || continue
		if [[ $f == -* ]]; then
			f=${f#-}
			[[ -e $ROOT$f ]] || continue
		fi
		mapfile -t -O "${#envs[@]}" envs < <(env_file "$ROOT$f")
	done < <(unit_values "$file" EnvironmentFile)
	UNIT_ENV=("${envs[@]}")
	# systemd (pid 1) may raise the hard limit; a root without CAP_SYS_RESOURCE (a
	# container) may not go past its own: then the unit's limit is applied up to that.
	UNIT_LIMIT=$limit
	if ! prlimit "--nofile=$limit:$limit" true 2>/dev/null; then
		UNIT_LIMIT=$(ulimit -Hn)
		echo "# $name: this machine caps open files at $UNIT_LIMIT; LimitNOFILE=$limit applied as $UNIT_LIMIT" >&2
	fi
	UNIT_LAUNCH=(prlimit "--nofile=$UNIT_LIMIT:$UNIT_LIMIT" -- chroot "--userspec=$uid:$gid" "$ROOT"
		/usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" USER="$user"
		LOGNAME="$user" "${envs[@]}")
	while read -r line; do
		[[ -z $line ]] || exec_line "$name" "$line" || { echo "$name: ExecStartPre=$line failed"; return 1; }
	done < <(unit_values "$file" ExecStartPre)
	line=$(unit_values "$file" ExecStart)
	[[ $(wc -l <<<"$line") == 1 ]] || { echo "$name: one ExecStart"; return 1; }
	expand_words "$line" || return 1
	echo "# $name: ${WORDS[*]} (as $user, LimitNOFILE=$limit)" >&2
	spawn "$name" "${UNIT_LAUNCH[@]}" "${WORDS[@]}"
	UNIT_PID=$LAST_PID
	while read -r line; do
		[[ -z $line ]] || exec_line "$name" "$line" || { echo "$name: ExecStartPost=$line failed"; return 1; }
	done < <(unit_values "$file" ExecStartPost)
}
# expand_words LINE: WORDS = LINE split on blanks, ${VAR} replaced from UNIT_ENV. Quotes
# and specifiers (%) are refused: the packages' units use neither.
expand_words() {
	local line=$1 kv
	[[ $line != *[\'\"%]* && $line != [-@:+!]* ]] || { echo "unit syntax not handled: $line"; return 1; }
	for kv in "${UNIT_ENV[@]}"; do line=${line//"\${${kv%%=*}}"/${kv#*=}}; done
	# shellcheck disable=SC2016 # a literal ${: a variable the file did not set
	[[ $line != *'${'* ]] || { echo "unset variable in: $line"; return 1; }
	read -ra WORDS <<<"$line"
}
exec_line() {
	expand_words "$2" || return 1
	"${UNIT_LAUNCH[@]}" "${WORDS[@]}" >>"$LOGS/$1.log" 2>&1
}
# The process runs as the unit's user with its limit (as far as this machine allows it:
# UNIT_LIMIT, see run_unit).
check_process() {
	local name=$1 pid=$2 user=$3 limit=$4
	assert_eq "$name runs as $user" "$(in_root id -u "$user")" "$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)"
	assert_eq "$name's unit says LimitNOFILE=$limit" "$limit" \
		"$(unit_values "$ROOT/lib/systemd/system/$name.service" LimitNOFILE)"
	local applied=$((limit < UNIT_LIMIT ? limit : UNIT_LIMIT))
	assert_eq "... and the process has it ($applied)" "$applied $applied" \
		"$(awk '/^Max open files/ { print $4, $5 }' "/proc/$pid/limits" 2>/dev/null)"
}

# ini_set FILE SECTION KEY VALUE: the installed file's own KEY line in SECTION gets VALUE
# (fails when the file has none: the test edits what the package ships, as an operator).
ini_set() {
	local tmp
	tmp=$(mktemp)
	awk -v s="[$2]" -v k="$3" -v v="$4" '
		/^\[/ { in_s = ($0 == s) }
		in_s && $0 ~ "^" k " *=" { print k " = " v; done = 1; next }
		{ print }
		END { exit done ? 0 : 1 }' "$ROOT$1" >"$tmp" || { rm -f "$tmp"; return 1; }
	cat "$tmp" >"$ROOT$1" && rm -f "$tmp"
}

rpc() { xg_rpc "$@"; }
psql_root() { in_root runuser -u postgres -- psql -X -q -At -p "$PG_PORT" -d "${2:-xmrgate}" -c "$1"; }
http_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@"; }

inside() {
	trap stop_all EXIT
	mkdir -p "$LOGS"
	mount --bind /proc "$ROOT/proc"
	mount --bind /dev "$ROOT/dev"
	mount -t tmpfs tmpfs "$ROOT/dev/shm"
	PG_PORT=$BASE
	local node_a=$((BASE + 11)) node_b=$((BASE + 21)) gw=$((BASE + 50)) gw_admin=$((BASE + 51))
	local bl=$((BASE + 55)) bl_admin=$((BASE + 56)) bl_wallet=$((BASE + 41)) client=$((BASE + 42))
	local version p
	version=$(cat "$REPO/VERSION")

	# --- what the packages promise ------------------------------------------------------
	for p in xmrgate-gateway xmrgate-billing xmrgate-admin; do
		assert_eq "$p --version names $version" "$p $version" "$(in_root "$p" --version | cut -d' ' -f1-2)"
	done
	check "the packages made the system user xmrgate" in_root getent passwd xmrgate
	for p in gateway.ini billing.ini billing-wallet.env; do
		assert_eq "/etc/xmrgate/$p is 0640 root:xmrgate" "640 root:xmrgate" \
			"$(in_root stat -c '%a %U:%G' "/etc/xmrgate/$p")"
	done
	not_enabled() { ! compgen -G "$ROOT/etc/systemd/system/*.wants/$1.service" >/dev/null; }
	for p in xmrgate-gateway xmrgate-billing xmrgate-billing-wallet; do
		check "$p.service is installed" test -s "$ROOT/lib/systemd/system/$p.service"
		check "... disabled (nothing runs before it is configured)" not_enabled "$p"
	done
	# a line that is not a comment and names migrate
	no_migration() {
		local f
		for f in "$ROOT"/var/lib/dpkg/info/xmrgate-*.{preinst,postinst,prerm,postrm} \
			"$ROOT"/lib/systemd/system/xmrgate-*.service; do
			[[ -e $f ]] || continue
			! grep -v '^[[:space:]]*#' "$f" | grep -q migrate || { echo "$f runs a migration"; return 1; }
		done
	}
	check "no maintainer script and no unit runs a migration" no_migration

	# --- PostgreSQL and the nodes ----------------------------------------------------
	[[ -d $ROOT/etc/postgresql/15/main ]] || in_root pg_createcluster 15 main >/dev/null
	in_root pg_conftool 15 main set port "$PG_PORT"
	in_root pg_conftool 15 main set listen_addresses ''
	check "Debian's PostgreSQL cluster starts in the root" in_root pg_ctlcluster 15 main start
	psql_root "CREATE ROLE xmrgate LOGIN" postgres
	psql_root "CREATE DATABASE xmrgate OWNER xmrgate" postgres
	local -A p2p=([a]=$((BASE + 10)) [b]=$((BASE + 20))) rpc_port=([a]=$node_a [b]=$node_b)
	local n other
	for n in a b; do
		other=$([[ $n == a ]] && echo b || echo a)
		mkdir -p "$ROOT/var/lib/deb-test/$n"
		spawn "monerod-$n" chroot "$ROOT" monerod --regtest --fixed-difficulty 1 \
			--data-dir "/var/lib/deb-test/$n" --log-file "/var/lib/deb-test/$n.log" --non-interactive \
			--p2p-bind-ip 127.0.0.1 --p2p-bind-port "${p2p[$n]}" \
			--add-exclusive-node "127.0.0.1:${p2p[$other]}" --max-connections-per-ip 10 \
			--rpc-bind-ip 127.0.0.1 --rpc-bind-port "${rpc_port[$n]}" \
			--disable-rpc-ban --rpc-max-connections-per-private-ip 100 --no-zmq --no-igd \
			--check-updates disabled --disable-dns-checkpoints
	done
	node_up() { XG_RPC_TIMEOUT=5 rpc "http://127.0.0.1:$1" get_info >/dev/null 2>&1; }
	nodes_up() { node_up "$node_a" && node_up "$node_b"; }
	check "two regtest nodes of Debian's monerod answer" xg_wait_until 120 nodes_up

	# --- configuration, as an operator fills it in ------------------------------------
	local ha1 token_key nonce gw_token bl_token db
	ha1=$(openssl rand -hex 32) token_key=$(openssl rand -hex 32) nonce=$(openssl rand -hex 32)
	gw_token=$(openssl rand -hex 24) bl_token=$(openssl rand -hex 24)
	db="postgresql:///xmrgate?host=/var/run/postgresql&port=$PG_PORT"
	configure() {
		ini_set /etc/xmrgate/gateway.ini server bind 127.0.0.1 &&
			ini_set /etc/xmrgate/gateway.ini server port "$gw" &&
			ini_set /etc/xmrgate/gateway.ini auth ha1_key "$ha1" &&
			ini_set /etc/xmrgate/gateway.ini auth nonce_secret "$nonce" &&
			ini_set /etc/xmrgate/gateway.ini admin port "$gw_admin" &&
			ini_set /etc/xmrgate/gateway.ini admin token "$gw_token" &&
			ini_set /etc/xmrgate/gateway.ini database url "$db" &&
			ini_set /etc/xmrgate/gateway.ini nodes network regtest &&
			ini_set /etc/xmrgate/billing.ini server port "$bl" &&
			ini_set /etc/xmrgate/billing.ini admin port "$bl_admin" &&
			ini_set /etc/xmrgate/billing.ini admin token "$bl_token" &&
			ini_set /etc/xmrgate/billing.ini database url "$db" &&
			ini_set /etc/xmrgate/billing.ini wallet url "http://127.0.0.1:$bl_wallet" &&
			ini_set /etc/xmrgate/billing.ini wallet daemon_url "http://127.0.0.1:$node_a" &&
			ini_set /etc/xmrgate/billing.ini gateway url "http://127.0.0.1:$gw" &&
			ini_set /etc/xmrgate/billing.ini gateway ha1_key "$ha1" &&
			ini_set /etc/xmrgate/billing.ini billing token_key "$token_key"
	}
	check "the installed gateway.ini and billing.ini take the settings" configure
	# the units' optional EnvironmentFile: a quicker poll for the test
	echo "XMRGATE_WALLET_POLL_INTERVAL=1s" >"$ROOT/etc/xmrgate/billing.env"
	printf 'XMRGATE_ADMIN_URL=http://127.0.0.1:%s\nXMRGATE_ADMIN_TOKEN_FILE=/etc/xmrgate/admin.token\n' \
		"$gw_admin" >"$ROOT/etc/xmrgate/admin.env"
	(umask 077 && echo "$gw_token" >"$ROOT/etc/xmrgate/admin.token")

	# --- the schema: never by the packages, by hand -------------------------------------
	assert_eq "the installed packages created no table" "" \
		"$(psql_root "SELECT to_regclass('schema_migrations')")"
	run_unit xmrgate-gateway >"$LOGS/run-gateway-early.out" 2>&1
	local early=${UNIT_PID:-0}
	exited() { ! kill -0 "$1" 2>/dev/null; }
	check "the gateway started before the schema exists refuses to serve (it exits)" \
		xg_wait_until 60 exited "$early"
	check "... and says why" grep -q '"startup_refused"' "$LOGS/xmrgate-gateway.log"
	check "xmrgate-billing migrate, run by hand as xmrgate" in_root runuser -u xmrgate -- \
		xmrgate-billing --config /etc/xmrgate/billing.ini migrate

	# --- the gateway, as its unit says --------------------------------------------------
	check_here "xmrgate-gateway.service runs (ExecStartPre --check-config, ExecStart)" run_unit xmrgate-gateway
	local gw_pid=$UNIT_PID
	check "xmrgate-admin node-add a (defaults from /etc/xmrgate/admin.env)" \
		in_root xmrgate-admin node-add a "http://127.0.0.1:$node_a"
	check "xmrgate-admin node-add b" in_root xmrgate-admin node-add b "http://127.0.0.1:$node_b"
	ready() { [[ $(http_code "http://127.0.0.1:$1/readyz") == 200 ]]; }
	check "the gateway becomes ready" xg_wait_until 90 ready "$gw_admin"
	check_process xmrgate-gateway "$gw_pid" xmrgate 65536
	lists_b() { in_root xmrgate-admin nodes | grep -q '^b'; }
	check "xmrgate-admin nodes lists both" lists_b
	assert_eq "the gateway exports xmrgate_build_info" 1 \
		"$(curl -s "http://127.0.0.1:$gw_admin/metrics" | awk -v v="$version" \
			'index($0, "xmrgate_build_info{version=\"" v "\"") == 1 { print $2 }')"

	# --- a tenant, and a real wallet through the gateway --------------------------------
	local out handle token
	out=$(in_root runuser -u xmrgate -- xmrgate-billing --config /etc/xmrgate/billing.ini \
		grant --tier free --days 1 2>>"$LOGS/grant.log")
	handle=$(sed -n 's/^HANDLE=//p' <<<"$out") token=$(sed -n 's/^TOKEN=//p' <<<"$out")
	check "a free tenant is granted" test -n "$token"
	mkdir -p "$ROOT/root/wallets"
	spawn wallet-client chroot "$ROOT" monero-wallet-rpc --daemon-address "127.0.0.1:$gw" \
		--daemon-login "$handle:$token" --rpc-bind-ip 127.0.0.1 --rpc-bind-port "$client" \
		--disable-rpc-login --wallet-dir /root/wallets --log-file /root/wallets/rpc.log --non-interactive
	local W=http://127.0.0.1:$client
	wallet_up() { XG_RPC_TIMEOUT=5 rpc "$1" get_version >/dev/null 2>&1; }
	check "a monero-wallet-rpc starts against the gateway" xg_wait_until 60 wallet_up "$W"
	rpc "$W" create_wallet '{"filename":"merchant","password":"","language":"English"}' >/dev/null
	local merchant view customer
	merchant=$(rpc "$W" get_address '{"account_index":0}' | jq -r .address)
	view=$(rpc "$W" query_key '{"key_type":"view_key"}' | jq -r .key)
	rpc "$W" close_wallet >/dev/null
	rpc "$W" create_wallet '{"filename":"customer","password":"","language":"English"}' >/dev/null
	customer=$(rpc "$W" get_address '{"account_index":0}' | jq -r .address)
	# 100: 40 coinbase outputs unlocked (60 blocks), enough decoys for a ring of 16
	check "100 blocks are mined to the wallet" rpc "http://127.0.0.1:$node_a" generateblocks \
		"$(jq -cn --arg a "$customer" '{amount_of_blocks: 100, wallet_address: $a}')"
	local top
	top=$(rpc "http://127.0.0.1:$node_a" get_info | jq .height)
	synced() {
		rpc "$W" refresh >/dev/null 2>&1 &&
			[[ $(rpc "$W" get_height | jq .height) -ge $top ]] &&
			rpc "$W" get_balance '{"account_index":0}' | jq -e '.unlocked_balance > 0' >/dev/null
	}
	check "the wallet syncs through the gateway (Digest login) to height $top, money unlocked" \
		xg_wait_until 180 synced

	# --- billing and its wallet, as their units say -------------------------------------
	ini_env() { sed -i "s|^$1=.*|$1=$2|" "$ROOT/etc/xmrgate/billing-wallet.env"; }
	ini_env DAEMON_ADDRESS "127.0.0.1:$node_a"
	ini_env WALLET_RPC_PORT "$bl_wallet"
	ini_env MERCHANT_ADDRESS "$merchant"
	ini_env MERCHANT_VIEW_KEY "$view"
	check_here "xmrgate-billing-wallet.service runs (monero-wallet-rpc, then xmrgate-wallet-init)" \
		run_unit xmrgate-billing-wallet
	check_process xmrgate-billing-wallet "$UNIT_PID" xmrgate 4096
	check "... which made the view-only wallet from the keys" \
		grep -q 'made the view-only wallet billing from the keys' "$LOGS/xmrgate-billing-wallet.log"
	check_here "xmrgate-billing.service runs" run_unit xmrgate-billing
	local bl_pid=$UNIT_PID
	check "billing becomes ready" xg_wait_until 90 ready "$bl_admin"
	check_process xmrgate-billing "$bl_pid" xmrgate 16384

	# --- a purchase paid through the gateway --------------------------------------------
	psql_root "INSERT INTO tiers (id, name, burst_rps, daily_quota, price_currency, price_minor,
	           confirmations, max_months, sort_order)
	           VALUES ('debtest', 'Deb test', 5, 1000, 'XMR', 1000000000, 2, 1, 90)"
	local inv id txid
	inv=$(curl -s -H 'Content-Type: application/json' --data-binary '{"tier":"debtest","months":1}' \
		"http://127.0.0.1:$bl/api/invoices")
	id=$(jq -r '.id // empty' <<<"$inv")
	check "billing's API sells an invoice on its wallet's subaddress" test -n "$id"
	txid=$(rpc "$W" transfer "$(jq -c '{destinations: [{address: .address, amount: (.amount | tonumber)}],
		account_index: 0, priority: 0}' <<<"$inv")" | jq -r '.tx_hash // empty')
	check "the wallet pays it through the gateway" test -n "$txid"
	status_is() { [[ $(curl -s "http://127.0.0.1:$bl/api/invoices/$id" | jq -r .status) == "$1" ]]; }
	check "billing sees the payment in the pool" xg_wait_until 90 status_is seen
	rpc "http://127.0.0.1:$node_a" generateblocks \
		"$(jq -cn --arg a "$customer" '{amount_of_blocks: 3, wallet_address: $a}')" >/dev/null
	check "... provisions the invoice after its confirmations" xg_wait_until 90 status_is provisioned
	served() { [[ $(http_code "http://127.0.0.1:$gw/v1/$1/get_height") == 200 ]]; }
	check "... and the gateway serves its token" xg_wait_until 30 served "$(jq -r .token <<<"$inv")"

	stop_all
	trap - EXIT
	echo "$PASSED passed, $FAILED failed"
	((FAILED == 0))
}

case ${1:-} in
_inside) inside ;;
*) outside ;;
esac
