#!/usr/bin/env bash
# Migrations and NOTIFY triggers against a real PostgreSQL: a fresh database migrates,
# a second run is a no-op, a changed applied migration is refused with a clear error,
# and every insert, update and delete of a tenant (and a node) is announced with its id.
. "$(dirname "$0")/lib.sh"

db=xmrgate_schema_test
base_url=${DATABASE_URL%/*}
url=$base_url/$db
psql -X -q "$base_url/postgres" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
defer psql -X -q "$base_url/postgres" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"
migrate() { XMRGATE_DATABASE_URL=$url "$XG_REPO/bin/xmrgate-billing" --config "$XG_VAR/etc/billing.ini" migrate "$@"; }
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$url" -c "$1"; }
fails_early() { ! q "$1" >/dev/null 2>&1; }

check "migrations apply to a fresh database" migrate
latest=$(ls "$XG_REPO"/migrations/*.sql | sed 's#.*/0*\([0-9]*\)_.*#\1#' | sort -n | tail -1)
assert_eq "schema_migrations records the latest migration" "$latest" "$(q 'SELECT max(version) FROM schema_migrations')"
assert_eq "every migration has a SHA-256 checksum" 0 \
	"$(q "SELECT count(*) FROM schema_migrations WHERE checksum !~ '^[0-9a-f]{64}$'")"
history="SELECT string_agg(version || ' ' || applied_at::text, ',') FROM schema_migrations"
before=$(q "$history")
check "a second run succeeds" migrate
assert_eq "a second run applies nothing" "$before" "$(q "$history")"
assert_eq "tiers are seeded (free and paid)" "t" \
	"$(q "SELECT bool_and(x) FROM (SELECT count(*) FILTER (WHERE price_minor = 0) = 1 AS x FROM tiers UNION ALL SELECT count(*) FILTER (WHERE price_minor > 0) >= 2 FROM tiers) s")"
assert_eq "each seeded tier has its burst size (0002)" "free:2:40 wallet:20:100 merchant:100:300 sovereign:500:1000" \
	"$(q "SELECT string_agg(id || ':' || burst_rps || ':' || burst_size, ' ' ORDER BY sort_order) FROM tiers")"
q "INSERT INTO tiers (id, name, burst_rps, daily_quota, price_currency, price_minor, confirmations)
	VALUES ('t_small', 's', 3, 10, 'USD', 1, 1), ('t_big', 'b', 50, 10, 'USD', 1, 1),
	       ('t_huge', 'h', 2000000000, 10, 'USD', 1, 1)"
assert_eq "a tier inserted without a burst size gets greatest(2 × burst_rps, 30), capped at 2^31 - 1" \
	"t_big:100 t_huge:2147483647 t_small:30" \
	"$(q "SELECT string_agg(id || ':' || burst_size, ' ' ORDER BY id) FROM tiers WHERE id LIKE 't\_%'")"
check "a burst size of 0 is rejected" fails_early "UPDATE tiers SET burst_size = 0 WHERE id = 't_small'"
q "DELETE FROM tiers WHERE id IN ('t_small', 't_big', 't_huge')"

# A changed applied migration is refused, naming the file.
changed=$(mktemp -d)
defer rm -rf "$changed"
cp "$XG_REPO"/migrations/*.sql "$changed/"
first=$(ls "$changed" | head -1)
echo "-- an edit after release" >>"$changed/$first"
out=$(XMRGATE_DATABASE_MIGRATIONS_DIR=$changed migrate 2>&1)
rc=$?
check "a changed applied migration is refused" test "$rc" -ne 0
check "the refusal names the file and says it changed" grep -q "$first.*changed" <<<"$out"

# Impossible states are impossible.
fails() { ! q "$1" >/dev/null 2>&1; }
check "a negative payment amount is rejected" fails "INSERT INTO payments (txid, subaddress_index, amount, state, source) VALUES (repeat('a',64), 1, -5, 'pool', 'poller')"
check "an unknown payment state is rejected" fails "INSERT INTO payments (txid, subaddress_index, amount, state, source) VALUES (repeat('a',64), 1, 5, 'bogus', 'poller')"
check "an unknown tenant state is rejected" fails "INSERT INTO tenants (handle, token_hash, digest_ha1, tier_id, valid_until, state) VALUES ('t_cccccccccccc', decode(repeat('22',32),'hex'), decode(repeat('00',45),'hex'), 'free', now(), 'bogus')"
q "INSERT INTO payments (txid, subaddress_index, amount, state, source) VALUES (repeat('b',64), 3, 5, 'pool', 'poller')"
check "a payment is unique by (txid, subaddress index)" fails "INSERT INTO payments (txid, subaddress_index, amount, state, source) VALUES (repeat('b',64), 3, 7, 'pool', 'poller')"

# NOTIFY: a listener sees the id of every inserted, updated and deleted tenant and node.
listen_log=$(mktemp)
defer rm -f "$listen_log"
psql -X "$url" -c "LISTEN xmrgate_tenants" -c "LISTEN xmrgate_nodes" -c "SELECT pg_sleep(3)" \
	-c "SELECT 1" >"$listen_log" 2>&1 &
listener=$!
sleep 0.7
id=$(q "INSERT INTO tenants (handle, token_hash, digest_ha1, tier_id, valid_until) VALUES ('t_bbbbbbbbbbbb', decode(repeat('11',32),'hex'), decode(repeat('00',45),'hex'), 'free', now() + interval '1 day') RETURNING id")
q "UPDATE tenants SET tier_id = 'wallet' WHERE id = $id"
q "DELETE FROM tenants WHERE id = $id"
node=$(q "INSERT INTO nodes (name, url) VALUES ('n1', 'http://127.0.0.1:1') RETURNING id")
wait "$listener"
notified=$(grep -c "notification \"xmrgate_tenants\" with payload \"$id\"" "$listen_log")
assert_eq "insert, update and delete of a tenant each notify its id" 3 "$notified"
check "inserting a node notifies its id" grep -q "notification \"xmrgate_nodes\" with payload \"$node\"" "$listen_log"
