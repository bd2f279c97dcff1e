#!/usr/bin/env bash
# Billing poll-cycle benchmark: one cycle's time and database work with 10,000 open
# invoices and 100,000 stored payments (synthetic rows) against the stack's real
# view-only wallet. Runs against a scratch database (xmrgate_bench) on the stack's
# PostgreSQL and prints a Markdown table for docs/BENCHMARKS.md.
#
#   XG_VAR=… tests/bench/bench_billing_poll.sh [OPEN_INVOICES] [PAYMENTS]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/scripts/lib-stack.sh"
XG_VAR=${XG_VAR:-$REPO/var}
set -a
. "$XG_VAR/stack.env"
set +a
OPEN=${1:-10000}
PAYMENTS=${2:-100000}
DB=xmrgate_bench
BENCH_URL=postgresql://$PGUSER@$PGHOST:$PGPORT/$DB
DIR=$XG_VAR/bench-billing
PORT=$((XG_PORT_BASE + 96))
mkdir -p "$DIR"
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$BENCH_URL" -c "$1"; }

psql -X -q "postgresql://$PGUSER@$PGHOST:$PGPORT/postgres" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" 2>/dev/null
cat >"$DIR/billing.ini" <<EOF2
[server]
port = $PORT
[admin]
port = $((PORT + 1))
token = bench-admin
[database]
url = $BENCH_URL
migrations_dir = $REPO/migrations
[wallet]
url = $BILLING_WALLET_URL
poll_interval = 1s
[gateway]
ha1_key = 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
[billing]
token_key = ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100
[log]
level = warn
EOF2
"$REPO/bin/xmrgate-billing" --config "$DIR/billing.ini" migrate 2>/dev/null
HEIGHT=$(xg_rpc "$BILLING_WALLET_URL" get_height | jq -r .height)

# Synthetic history: provisioned invoices with two old confirmed payments each, far below
# the poll window; and OPEN pending invoices on subaddresses nobody pays.
q "INSERT INTO tiers (id, name, burst_rps, daily_quota, price_currency, price_minor, confirmations)
   VALUES ('bench', 'Bench', 1, 1, 'XMR', 1000000, 10)"
q "INSERT INTO invoices (kind, channel, tier_id, months, token_hash, digest_ha1, handle, amount,
                         subaddress_index, subaddress, confirmations_required, price_currency,
                         price_minor, expires_at, state, provisioned_at, paid)
   SELECT 'purchase', 'api', 'bench', 1, sha256(('old' || g)::bytea),
          decode(repeat('00', 45), 'hex'), 't_aaaaaaaaaaaa', 1000000, 1000000 + g, 'synthetic',
          10, 'XMR', 1000000, now() - interval '1 day', 'provisioned', now() - interval '1 day',
          1000000
     FROM generate_series(1, $PAYMENTS / 2) g"
q "INSERT INTO payments (txid, subaddress_index, invoice_id, amount, height, confirmations, state, source)
   SELECT encode(sha256((i.subaddress_index || '-' || k)::bytea), 'hex'), i.subaddress_index, i.id,
          500000, 1 + (i.subaddress_index % 50), 100, 'confirmed', 'poller'
     FROM invoices i, generate_series(1, 2) k WHERE i.tier_id = 'bench'"
q "INSERT INTO invoices (kind, channel, tier_id, months, token_hash, digest_ha1, handle, amount,
                         subaddress_index, subaddress, confirmations_required, price_currency,
                         price_minor, expires_at)
   SELECT 'purchase', 'api', 'bench', 1, sha256(('open' || g)::bytea),
          decode(repeat('00', 45), 'hex'), 't_aaaaaaaaaaaa', 1000000, 2000000 + g, 'synthetic',
          10, 'XMR', 1000000, now() + interval '1 day'
     FROM generate_series(1, $OPEN) g"
q "UPDATE billing_cursor SET height = greatest($HEIGHT - 20, 0)"
q "ANALYZE"

"$REPO/bin/xmrgate-billing" --config "$DIR/billing.ini" >"$DIR/billing.log" 2>&1 &
BPID=$!
trap 'kill $BPID 2>/dev/null; wait $BPID 2>/dev/null || true; [[ ${XG_BENCH_KEEP:-0} == 1 ]] || psql -X -q "postgresql://$PGUSER@$PGHOST:$PGPORT/postgres" -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true' EXIT
status() { curl -s -H 'Authorization: Bearer bench-admin' "http://127.0.0.1:$((PORT + 1))/status"; }
enough_cycles() { status | jq -e '.cycles >= 3' >/dev/null; }
xg_wait_until 20 enough_cycles

tup() { q "SELECT coalesce(sum(seq_tup_read), 0) + coalesce(sum(idx_tup_fetch), 0) FROM pg_stat_user_tables"; }
sample() { # N: prints the durations (µs) of N successive cycles
	local n=$1 last c
	last=$(status | jq .cycles)
	for ((i = 0; i < n; )); do
		sleep 0.2
		c=$(status | jq .cycles)
		if ((c > last)); then
			status | jq -r '.last_cycle_us'
			last=$c
			i=$((i + 1))
		fi
	done
}
sleep 1
rows0=$(tup)
c0=$(status | jq .cycles)
idle=$(sample 10 | sort -n)
sleep 1.5 # statistics are flushed when a backend goes idle
rows1=$(tup)
c1=$(status | jq .cycles)
median() {
	local s
	s=$(cat)
	sed -n "$((($(wc -l <<<"$s") + 1) / 2))p" <<<"$s"
}
max() { tail -n1; }
# A cycle with fresh work: a real payment to one of the open invoices' real subaddress.
sub=$(xg_rpc "$BILLING_WALLET_URL" create_address '{"account_index":0}')
q "UPDATE invoices SET subaddress_index = $(jq .address_index <<<"$sub"),
       subaddress = '$(jq -r .address <<<"$sub")', amount = 1000000
     WHERE subaddress_index = 2000001"
xg_rpc "$PAYER_WALLET_URL" transfer "$(jq -cn --arg a "$(jq -r .address <<<"$sub")" \
	'{destinations: [{address: $a, amount: 1000000}]}')" >/dev/null
seen() { [[ $(q "SELECT state FROM invoices WHERE subaddress_index = $(jq .address_index <<<"$sub")") == seen ]]; }
xg_wait_until 30 seen
work=$(status | jq -r '"\(.last_cycle_us) \(.last_transfers) \(.last_changed) \(.last_settled)"')

cat <<EOF3
| measure | value |
| --- | --- |
| open invoices / stored payments | $OPEN / $(q "SELECT count(*) FROM payments") |
| idle cycle, median of 10 (refresh + get_transfers + get_height + SQL) | $(($(median <<<"$idle") / 1000)) ms |
| idle cycle, slowest of 10 | $(($(max <<<"$idle") / 1000)) ms |
| rows read per idle cycle (pg_stat_user_tables, all tables) | $(((rows1 - rows0) / (c1 - c0 > 0 ? c1 - c0 : 1))) |
| cycle that stored a new pool payment and settled its invoice (µs, transfers in window, rows written, invoices settled) | $work |
EOF3
