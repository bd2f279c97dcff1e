# shellcheck shell=bash
# Helpers for the billing integration tests (test_billing_*.sh), sourced after lib.sh.
#
# Each test runs its own xmrgate-billing instances (lib.sh's billing_start) on the `test`
# base below: the stack's PostgreSQL and view-only wallet, a fast poll, and free-tier bounds
# per network and over all out of the way (every test client is on 127.0.0.0/24, and the
# grants of earlier tests count in the shared windows for an hour: a test that measures
# those bounds sets them itself). Billing instances
# share one leader lock, so bt_setup pauses the billing that the stack itself runs for the
# test (lib.sh's stack_billing_pause: it is started again when the test ends).
#
#   bt_setup                       once per test script: the schema, and the stack's billing
#                                  paused
#   billing_start NAME [SECTION.KEY=VALUE...]   (lib.sh) starts NAME on the `test` base;
#                                  billing_url NAME, billing_admin NAME, billing_stop NAME
#                                  [SIGNAL], billing_restart NAME
#   bt_status NAME                 GET /status on NAME's admin API (role, last cycle)
#   bt_role NAME                   its role: leader or standby
#   bt_tier ID PRICE_PICONERO CONFIRMATIONS
#                                  creates or resets an XMR-priced public test tier
#   bt_invoice NAME JSON [HEADER]  POST /api/invoices; prints "STATUS BODY"
#   bt_new_invoice NAME JSON       the same; prints the invoice (the body), and a
#                                  diagnostic when the status is not 201
#   bt_get NAME ID                 GET /api/invoices/ID body
#   bt_wait_status NAME ID STATUS [TIMEOUT]   waits for the invoice to reach STATUS
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

bt_setup() {
	mkdir -p "$BT_DIR"
	[[ -x ${XG_BILLING_BIN:-$XG_REPO/bin/xmrgate-billing} ]] || {
		echo "not ok - bin/xmrgate-billing is built (run make)"
		exit 1
	}
	XMRGATE_DATABASE_URL=$DATABASE_URL XMRGATE_DATABASE_MIGRATIONS_DIR=$XG_REPO/migrations \
		XMRGATE_GATEWAY_HA1_KEY=$BT_HA1_KEY XMRGATE_BILLING_TOKEN_KEY=$BT_TOKEN_KEY \
		"${XG_BILLING_BIN:-$XG_REPO/bin/xmrgate-billing}" migrate >>"$BT_DIR/migrate.log" 2>&1 || {
		echo "not ok - the schema is migrated (see $BT_DIR/migrate.log)"
		exit 1
	}
	stack_billing_pause
}

billing_base_test() {
	cat <<EOF
[server]
threads = 4
[admin]
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
[xmr402]
challenge_share = 100
verify_share = 100
[invoices]
free_network_per_hour = 100000
free_network_per_day = 100000
free_global_per_hour = 100000
[log]
level = info
EOF
}

bt_status() { curl -s -H "Authorization: Bearer $BT_ADMIN_TOKEN" "$(billing_admin "$1")/status"; }

bt_role() { bt_status "$1" | jq -r '.role'; }

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
		--data-binary "$body" "$(billing_url "$name")/api/invoices")
	status=${out##*$'\n'}
	echo "$status ${out%$'\n'*}"
}

bt_new_invoice() {
	local st body
	read -r st body <<<"$(bt_invoice "$1" "$2")"
	[[ $st == 201 ]] || echo "# POST /api/invoices answered $st: $body" >&2
	echo "$body"
}

bt_get() { curl -s "$(billing_url "$1")/api/invoices/$2"; }

bt_status_is() { [[ $(bt_get "$1" "$2" | jq -r '.status') == "$3" ]]; }

bt_wait_status() { xg_wait_until "${4:-30}" bt_status_is "$1" "$2" "$3"; }

bt_db() { psql_q "$1"; }
