#!/usr/bin/env bash
# The backup drill (docs/OPERATIONS.md, "Backups"), with pgBackRest and the configuration
# shipped in deploy/pgbackrest/ (its paths pointed at the test cluster): WAL archiving on,
# a full backup, then tenants provisioned and payments taken while WAL is archived; the
# cluster destroyed (stopped as by a crash, its data directory deleted) and restored to
# the latest archived point, then destroyed again and restored to a point in time. After
# the point-in-time restore billing loses nothing: a payment received after the restore
# point is found again by the poller (it rescans from the restored cursor) and provisions
# its invoice once, with the token the buyer was shown. Last, the view-only wallet is lost
# too and made again from the keys: billing re-creates its subaddresses up to the highest
# index the database holds, and a new invoice never reuses one.
#
# Also `make drill-backup` (this test alone, on a stack of its own). The test stack's
# PostgreSQL gets archive_mode back off at the end; its database is the one restored.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"

STACK=$XG_REPO/scripts/stack.sh
PG_BIN=/usr/lib/postgresql/15/bin
command -v pgbackrest >/dev/null || {
	echo "not ok - pgbackrest is installed (scripts/deps.sh)"
	exit 1
}
PG_DIR=$(readlink -f "$XG_VAR/pg")
DATA=$PG_DIR/data
BR=$PG_DIR/backrest # repository, logs, locks: the postgres user's, beside the cluster
CONF=$BR/pgbackrest.conf

as_pg() {
	if ((EUID == 0)); then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}
br() { as_pg pgbackrest --config="$CONF" --stanza=xmrgate "$@"; }

# --- the shipped configuration, installed as an operator would ---------------------------
rm -rf "$BR"
mkdir -p "$BR/repo" "$BR/log" "$BR/lock"
# set_key KEY VALUE: the shipped file's KEY=… line gets VALUE; fails when it has none.
set_key() {
	grep -q "^$1=" "$CONF" || return 1
	sed -i "s|^$1=.*|$1=$2|" "$CONF"
}
cp "$XG_REPO/deploy/pgbackrest/pgbackrest.conf" "$CONF"
configured() {
	set_key repo1-path "$BR/repo" && set_key log-path "$BR/log" && set_key lock-path "$BR/lock" &&
		set_key pg1-path "$DATA" && set_key pg1-port "$PGPORT" && set_key pg1-socket-path "$PG_DIR/sock"
}
check "the shipped pgbackrest.conf names the repository, logs, locks and cluster" configured
((EUID == 0)) && chown -R postgres:postgres "$BR"

archive_command="pgbackrest --config=$CONF --stanza=xmrgate archive-push %p"
archiving_off() {
	local setting
	for setting in archive_mode archive_command archive_timeout restore_command; do
		psql_q "ALTER SYSTEM RESET $setting" >/dev/null # one statement: never in a transaction
	done
	"$STACK" pg-stop 8>&- && "$STACK" pg-start 8>&-
	rm -rf "$BR"
}
psql_q "ALTER SYSTEM SET archive_mode = on" >/dev/null
psql_q "ALTER SYSTEM SET archive_command = '$archive_command'" >/dev/null
psql_q "ALTER SYSTEM SET archive_timeout = '60s'" >/dev/null
defer archiving_off
"$STACK" pg-stop 8>&- && "$STACK" pg-start 8>&-
assert_eq "PostgreSQL restarted with WAL archiving on" on "$(psql_q 'SHOW archive_mode')"
check "pgbackrest stanza-create" br stanza-create
check "pgbackrest check (a WAL segment reaches the repository)" br check

# --- tenants and payments around a full backup --------------------------------------------
check_here "the stack's billing makes way for the drill's" bt_setup
bt_tier drill 1000000000 2 # 0.001 XMR, 2 confirmations
check_here "billing starts" billing_start drill || exit 1

# buy NAME: an invoice of the drill tier; sets <NAME>_ID, _TOKEN, _ADDRESS, _AMOUNT, _INDEX.
buy() {
	local out body
	out=$(bt_invoice drill '{"tier":"drill","months":1}')
	[[ ${out%% *} == 201 ]] || return 1
	body=${out#* }
	printf -v "$1_ID" '%s' "$(jq -r '.id' <<<"$body")"
	printf -v "$1_TOKEN" '%s' "$(jq -r '.token' <<<"$body")"
	printf -v "$1_ADDRESS" '%s' "$(jq -r '.address' <<<"$body")"
	printf -v "$1_AMOUNT" '%s' "$(jq -r '.amount' <<<"$body")"
	local id_var=$1_ID
	printf -v "$1_INDEX" '%s' "$(bt_db "SELECT subaddress_index FROM invoices WHERE id = '${!id_var}'")"
}
# pay_and_settle NAME: pays the invoice, mines its confirmations, waits until provisioned.
pay_and_settle() {
	local id=$1_ID address=$1_ADDRESS amount=$1_AMOUNT txid=$1_TXID
	printf -v "$txid" '%s' "$(payer_pays "${!address}" "${!amount}")" || return 1
	bt_wait_status drill "${!id}" seen 60 && mine 3 >/dev/null && bt_wait_status drill "${!id}" provisioned 60
}
served() { [[ $(curl -s -o /dev/null -w '%{http_code}' "$GATEWAY_URL/v1/$1/get_height") == 200 ]]; }

check_here "invoice A is bought" buy A
check_here "... paid and provisioned" pay_and_settle A
check "pgbackrest backup --type=full" br --type=full backup
assert_eq "the repository holds one full backup" 1 \
	"$(br --output=json info | jq '[.[0].backup[] | select(.type == "full")] | length')"

# After the backup, in WAL only: B provisioned; C bought, then the restore point T1,
# then C paid and provisioned; D bought.
check_here "invoice B is bought" buy B
check_here "... paid and provisioned (after the backup)" pay_and_settle B
check_here "invoice C is bought" buy C
T1=$(psql_q "SELECT clock_timestamp()")
echo "# the restore point T1: $T1"
check_here "... paid after T1 and provisioned" pay_and_settle C
check_here "invoice D is bought after T1" buy D
check "C's token is served" served "$C_TOKEN"

snapshot() {
	bt_db "SELECT string_agg(id || ':' || state, ',' ORDER BY created_at) FROM invoices
	        WHERE tier_id = 'drill'"
	bt_db "SELECT string_agg(id || ':' || handle || ':' || valid_until, ',' ORDER BY id) FROM tenants"
	bt_db "SELECT string_agg(txid || ':' || subaddress_index || ':' || state, ',' ORDER BY id) FROM payments"
}
before=$(snapshot)

# destroy: an immediate stop (a crash: no checkpoint, no last WAL archived) once the
# archive has everything committed so far, then the data directory goes.
destroy() {
	as_pg "$PG_BIN/pg_ctl" -D "$DATA" -m immediate -w -t 60 stop >/dev/null 2>&1 || return 1
	rm -rf "$DATA" && mkdir -m 700 "$DATA" && { ((EUID != 0)) || chown postgres:postgres "$DATA"; }
}
# promoted: the restored server left recovery (pg_ctl -w returns once it accepts
# connections, which a hot standby does before it reaches its target).
promoted() { [[ $(psql_q "SELECT pg_is_in_recovery()" 2>/dev/null) == f ]]; }

# --- restore to the latest point ------------------------------------------------------------
check "pgbackrest check (everything committed is archived)" br check
check "the cluster is destroyed" destroy
check "the gateway serves A's token with PostgreSQL gone (tenants in memory)" served "$A_TOKEN"
check "pgbackrest restore (the latest archived point)" br restore
check "PostgreSQL starts on the restored data" "$STACK" pg-start 8>&-
check_here "... and leaves recovery" wait_until 120 promoted
assert_eq "every invoice, tenant and payment is back as it was" "$before" "$(snapshot)"
check_here "the gateway serves C's token again" wait_until 30 served "$C_TOKEN"

# --- restore to a point in time: T1, before C's payment ------------------------------------
check_here "billing is stopped to see the restored state first" billing_stop drill
check "pgbackrest check" br check
check "the cluster is destroyed again" destroy
check "pgbackrest restore --type=time --target=T1" \
	br restore --type=time "--target=$T1" --target-action=promote
check "PostgreSQL starts on the data of T1" "$STACK" pg-start 8>&-
check_here "... and leaves recovery" wait_until 120 promoted
assert_eq "at T1, A and B are provisioned and C waits for its payment" \
	"$A_ID:provisioned,$B_ID:provisioned,$C_ID:pending" \
	"$(bt_db "SELECT string_agg(id || ':' || state, ',' ORDER BY created_at) FROM invoices
	          WHERE tier_id = 'drill'")"
assert_eq "... C has no tenant and no payment yet" "t|0" \
	"$(bt_db "SELECT (SELECT tenant_id IS NULL FROM invoices WHERE id = '$C_ID'),
	                 (SELECT count(*) FROM payments WHERE txid = '$C_TXID')")"
cursor=$(bt_db "SELECT height FROM billing_cursor")
echo "# the restored poll cursor: height $cursor; the chain: $(rpc "$NODE_A_URL" get_info | jq .height)"

check_here "billing starts on the restored database" billing_restart drill
check_here "the poller finds C's payment again and provisions C" bt_wait_status drill "$C_ID" provisioned 90
assert_eq "... once: one tenant for C, one payment row for its transaction" "1 1" \
	"$(bt_db "SELECT (SELECT count(*) FROM tenants t JOIN invoices i ON i.tenant_id = t.id
	                   WHERE i.id = '$C_ID'),
	                 (SELECT count(*) FROM payments WHERE txid = '$C_TXID')" | tr '|' ' ')"
check_here "... and the token shown at C's purchase is served" wait_until 30 served "$C_TOKEN"
assert_eq "D, bought after T1, is gone with the restore" 0 \
	"$(bt_db "SELECT count(*) FROM invoices WHERE id = '$D_ID'")"
check_here "a new invoice E is bought" buy E
check "... on a subaddress past D's (the wallet kept D's: none is handed out twice)" \
	test "$E_INDEX" -gt "$D_INDEX"

# --- the wallet is lost too: made again from the keys ---------------------------------------
WPID=$XG_VAR/run/wallet-billing.pid
WDIR=$XG_VAR/wallets
read -r wallet_pid <"$WPID"
mapfile -d '' -t wallet_cmd <"/proc/$wallet_pid/cmdline"
# a 0.18.4 wallet-rpc runs from the Debian 13 root, as the stack starts it
[[ ,${XG_MONERO_TRIXIE// /,}, != *,billing,* ]] ||
	wallet_cmd=("$XG_REPO/scripts/monero-trixie.sh" exec "$XG_VAR" "${wallet_cmd[@]}")
wallet_marker=$(sed -n 2p "$WPID")
check_here "billing is stopped" billing_stop drill
xg_kill_pidfiles 20 "$WPID"
mkdir -p "$WDIR/lost"
mv "$WDIR"/billing "$WDIR"/billing.keys "$WDIR/lost/" 2>/dev/null
rm -f "$WDIR/billing.address.txt"
xg_spawn "$WPID" "$wallet_marker" "$XG_VAR/log/wallet-billing.log" "${wallet_cmd[@]}"
wallet_up() { XG_RPC_TIMEOUT=5 rpc "$BILLING_WALLET_URL" get_version >/dev/null 2>&1; }
check_here "the billing wallet-rpc starts without its wallet" wait_until 60 wallet_up
keys=$XG_VAR/merchant.keys.json
check "a view-only wallet is made again from the address and view key" \
	rpc "$BILLING_WALLET_URL" generate_from_keys "$(jq -c '{filename: "billing", password: "",
		address: .address, viewkey: .view_key, restore_height: 0, autosave_current: true}' "$keys")"
knows() { rpc "$BILLING_WALLET_URL" get_address "{\"account_index\":0,\"address_index\":[$1]}" >/dev/null 2>&1; }
unknown() { ! knows "$1"; }
check "... it does not know E's subaddress" unknown "$E_INDEX"
gone_before=$(bt_db "SELECT count(*) FROM payments WHERE state = 'gone'")

check_here "billing starts" billing_restart drill
check_here "it re-creates the subaddresses up to the database's highest (E's)" \
	wait_until 60 knows "$E_INDEX"
check "... and says so in its log" grep -q '"subaddresses_recreated"' "$(billing_log drill)"
lists_c() {
	rpc "$BILLING_WALLET_URL" get_transfers '{"in":true}' | jq -e --arg t "$C_TXID" \
		'[.in[]? | select(.txid == $t)] | length == 1' >/dev/null
}
check_here "after its rescan the wallet lists C's payment again" wait_until 120 lists_c
buy_f() { buy F; }
check_here "a new invoice F is bought" wait_until 60 buy_f
check "... on a subaddress past every one the database holds" test "$F_INDEX" -gt "$E_INDEX"
assert_eq "no payment was taken for gone meanwhile" "$gone_before" \
	"$(bt_db "SELECT count(*) FROM payments WHERE state = 'gone'")"
check "C's token is still served" served "$C_TOKEN"
