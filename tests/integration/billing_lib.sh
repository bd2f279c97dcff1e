# shellcheck shell=bash
# Helpers for the billing integration tests (test_billing_*.sh), sourced after lib.sh.
#
# Each test runs its own xmrgate-billing instances (bin/xmrgate-billing) against the
# stack's PostgreSQL and view-only wallet, with configs written under $XG_VAR/billing-test
# and API/admin ports from XG_PORT_BASE+80. Billing instances share one leader lock, so a
# billing that the stack itself runs ($XG_VAR/run/billing.pid) is stopped for the test and
# started again, with the same command line, when the test exits.
#
#   bt_setup                       once per test script (also registers the teardown)
#   bt_config NAME SLOT [LINE...]  writes NAME's config; SLOT 0..9 picks its ports;
#                                  extra INI lines (e.g. "[invoices]" "ttl = 20s") append
#   bt_start NAME                  starts NAME and waits for its /healthz and API
#   bt_kill NAME [SIGNAL]          signals NAME (default TERM) and waits for it to exit
#   bt_api NAME                    prints NAME's API base URL
#   bt_admin NAME                  prints NAME's admin base URL
#   bt_status NAME                 GET /status on NAME's admin API (role, last cycle)
#   bt_tier ID PRICE_PICONERO CONFIRMATIONS
#                                  creates or resets an XMR-priced public test tier
#   bt_invoice NAME JSON [HEADER]  POST /api/invoices; prints "STATUS BODY"
#   bt_get NAME ID                 GET /api/invoices/ID body
#   bt_wait_status NAME ID STATUS [TIMEOUT]   waits for the invoice to reach STATUS
#   bt_pay ADDRESS PICONERO        pays from the payer wallet; prints the txid
#   bt_db SQL                      psql_q shortcut

BT_DIR=$XG_VAR/billing-test
BT_ADMIN_TOKEN=bt-admin-$$-$RANDOM
# The stack's HA1 wrapping key when it runs the daemons, so that tokens sold by the test
# instances work at the stack's gateway; a fixed test key otherwise.
BT_HA1_KEY=$(sed -n 's/^ha1_key *= *//p' "$XG_VAR/etc/billing.ini" 2>/dev/null || true)
BT_HA1_KEY=${BT_HA1_KEY:-${XG_HA1_KEY:-5f0c1d9a7b3e4c2a8d6f0e1b2c3d4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f}}
# Billing's own token key, the stack's too (an invoice one instance created is derived
# again by another); never given to a gateway.
BT_TOKEN_KEY=$(sed -n 's/^token_key *= *//p' "$XG_VAR/etc/billing.ini" 2>/dev/null || true)
BT_TOKEN_KEY=${BT_TOKEN_KEY:-${XG_TOKEN_KEY:-a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90}}
BT_STACK_PIDFILE=$XG_VAR/run/billing.pid
BT_BIN=${XG_BILLING_BIN:-$XG_REPO/bin/xmrgate-billing} # e.g. build/asan/bin/xmrgate-billing
declare -A BT_SLOT=()

bt_setup() {
	mkdir -p "$BT_DIR"
	defer bt_teardown
	[[ -x $BT_BIN ]] || {
		echo "not ok - bin/xmrgate-billing is built (run make)"
		exit 1
	}
	XMRGATE_DATABASE_URL=$DATABASE_URL XMRGATE_DATABASE_MIGRATIONS_DIR=$XG_REPO/migrations \
		XMRGATE_GATEWAY_HA1_KEY=$BT_HA1_KEY XMRGATE_BILLING_TOKEN_KEY=$BT_TOKEN_KEY "$BT_BIN" migrate >>"$BT_DIR/migrate.log" 2>&1 || {
		echo "not ok - the schema is migrated (see $BT_DIR/migrate.log)"
		exit 1
	}
	if xg_pid_owned "$BT_STACK_PIDFILE"; then
		local pid
		read -r pid <"$BT_STACK_PIDFILE"
		cp "$BT_STACK_PIDFILE" "$BT_DIR/stack-billing.pidfile"
		cp "/proc/$pid/cmdline" "$BT_DIR/stack-billing.cmdline"
		cp "/proc/$pid/environ" "$BT_DIR/stack-billing.environ"
		xg_kill_pidfiles 10 "$BT_STACK_PIDFILE"
	fi
}

bt_teardown() {
	local f
	for f in "$BT_DIR"/*.pid; do
		[[ -e $f ]] && xg_kill_pidfiles 10 "$f"
	done
	if [[ -e $BT_DIR/stack-billing.cmdline ]]; then
		local marker cmd=() envs=()
		marker=$(sed -n 2p "$BT_DIR/stack-billing.pidfile")
		mapfile -d '' -t cmd <"$BT_DIR/stack-billing.cmdline"
		mapfile -d '' -t envs <"$BT_DIR/stack-billing.environ"
		# Its own environment, not the test's: a test's XMRGATE_* overrides (a scratch
		# database, say) must not follow the stack's billing into the next test.
		xg_spawn "$BT_STACK_PIDFILE" "$marker" "$XG_VAR/log/billing.log" \
			env -i "${envs[@]}" "${cmd[@]}"
		rm -f "$BT_DIR/stack-billing.cmdline" "$BT_DIR/stack-billing.pidfile" \
			"$BT_DIR/stack-billing.environ"
	fi
}

bt_api() { echo "http://127.0.0.1:$((XG_PORT_BASE + 80 + 2 * BT_SLOT[$1]))"; }
bt_admin() { echo "http://127.0.0.1:$((XG_PORT_BASE + 81 + 2 * BT_SLOT[$1]))"; }

bt_config() {
	local name=$1 slot=$2 line
	shift 2
	BT_SLOT[$name]=$slot
	{
		cat <<EOF2
[server]
port = $((XG_PORT_BASE + 80 + 2 * slot))
threads = 4
[admin]
port = $((XG_PORT_BASE + 81 + 2 * slot))
token = $BT_ADMIN_TOKEN
[database]
url = $DATABASE_URL
migrations_dir = $XG_REPO/migrations
[wallet]
url = $BILLING_WALLET_URL
poll_interval = 500ms
timeout = 5s
max_backoff = 2s
daemon_url = $NODE_A_URL
[gateway]
url = ${GATEWAY_URL:-http://127.0.0.1:18089}
ha1_key = $BT_HA1_KEY
[billing]
token_key = $BT_TOKEN_KEY
[log]
level = info
EOF2
		for line in "$@"; do echo "$line"; done
	} >"$BT_DIR/$name.ini"
}

bt_status() { curl -s -H "Authorization: Bearer $BT_ADMIN_TOKEN" "$(bt_admin "$1")/status"; }

bt_healthy() { curl -sf "$(bt_admin "$1")/healthz" >/dev/null && curl -sf "$(bt_api "$1")/api/tiers" >/dev/null; }

bt_start() {
	local name=$1
	"$BT_BIN" --config "$BT_DIR/$name.ini" migrate >>"$BT_DIR/$name.log" 2>&1 || return 1
	xg_spawn "$BT_DIR/$name.pid" "$BT_DIR/$name.ini" "$BT_DIR/$name.log" \
		"$BT_BIN" --config "$BT_DIR/$name.ini"
	xg_wait_until 20 bt_healthy "$name"
}

bt_kill() {
	local name=$1 sig=${2:-TERM} pid
	read -r pid <"$BT_DIR/$name.pid"
	kill -"$sig" "$pid" 2>/dev/null
	xg_wait_until 15 bash -c "! kill -0 $pid 2>/dev/null"
	rm -f "$BT_DIR/$name.pid"
}

bt_tier() {
	psql_q "INSERT INTO tiers (id, name, burst_rps, daily_quota, price_currency, price_minor,
	            confirmations, max_months, sort_order)
	        VALUES ('$1', 'Test $1', 5, 1000, 'XMR', $2, $3, 12, 90)
	        ON CONFLICT (id) DO UPDATE SET price_currency = 'XMR', price_minor = $2,
	            confirmations = $3, public = true" >/dev/null
}

bt_invoice() {
	local name=$1 body=$2 header=${3:-X-None: 1} out status
	out=$(curl -s -w '\n%{http_code}' -H 'Content-Type: application/json' -H "$header" \
		--data-binary "$body" "$(bt_api "$name")/api/invoices")
	status=${out##*$'\n'}
	echo "$status ${out%$'\n'*}"
}

bt_get() { curl -s "$(bt_api "$1")/api/invoices/$2"; }

bt_status_is() { [[ $(bt_get "$1" "$2" | jq -r '.status') == "$3" ]]; }

bt_wait_status() { xg_wait_until "${4:-30}" bt_status_is "$1" "$2" "$3"; }

bt_pay() {
	rpc "$PAYER_WALLET_URL" transfer "$(jq -cn --arg a "$1" --argjson n "$2" \
		'{destinations: [{address: $a, amount: $n}], account_index: 0, priority: 0}')" |
		jq -er '.tx_hash'
}

bt_db() { psql_q "$1"; }
