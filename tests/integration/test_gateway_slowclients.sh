#!/usr/bin/env bash
# Slow and many clients (#19): a request head that trickles in is closed at the header
# timeout although bytes keep coming (the idle timeout alone never fired for it), a body
# under the minimum rate is closed, one client address holds at most
# max_connections_per_address connections while another address still connects, and a
# request without a credential is refused on its head, before a byte of its 1 MB body is
# read (Expect: 100-continue gets the refusal instead of the go-ahead). Asserted on the
# gateway's own front end (408 answers), its libmicrohttpd front end (the one HTTPS uses:
# closed, libmicrohttpd cannot answer from outside its callbacks) and billing's API, and
# counted in their metrics. Timing bounds are generous (20 s for a 3 s timeout).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/billing_lib.sh"

probe() { python3 "$XG_REPO/tests/integration/slowclients_probe.py" "$@"; }

cap=6
slow=(server.header_timeout=3s server.body_grace=2s server.body_min_rate=1k
	server.connection_timeout=60s "server.max_connections_per_address=$cap")

check_here "grant a tenant" grant_tenant wallet 1
check_here "a gateway on the own front end starts" gateway_start slow-native \
	server.front_end=native "${slow[@]}"
check_here "a gateway on libmicrohttpd starts" gateway_start slow-mhd \
	server.front_end=libmicrohttpd "${slow[@]}"
P=/v1/$TOKEN

for front in native mhd; do
	port=$(gw_port "slow-$front")
	want_slow=408
	[[ $front == mhd ]] && want_slow=closed

	assert_eq "$front: a head trickled one byte every 0.4 s is closed at the header timeout" \
		"$want_slow" "$(probe slow-head "$port" 127.0.0.2)"
	assert_eq "$front: a body one byte every 0.4 s is closed under the minimum rate" \
		"$want_slow" "$(probe slow-body "$port" 127.0.0.2 "$P/json_rpc")"
	assert_eq "$front: the ${cap}+1th connection from 127.0.0.4 is refused, 127.0.0.5 is served, a freed place is taken again" \
		"refused 200 200" "$(probe cap "$port" 127.0.0.4 127.0.0.5 "$cap" "$P/get_height")"
	assert_eq "$front: a 1 MB POST without a credential: 401 on its head, no byte of the body sent" \
		401 "$(probe head-only "$port" /json_rpc)"
	assert_eq "$front: a 1 MB .bin POST with a wrong token: 401 on its head" \
		401 "$(probe head-only "$port" /v1/not-a-token/get_blocks.bin)"
	assert_eq "$front: Expect: 100-continue without a credential: the 401 instead of the go-ahead" \
		401 "$(probe head-only "$port" /json_rpc 'Expect: 100-continue')"
	assert_eq "$front: Expect: 100-continue with the token: the go-ahead" \
		100 "$(probe head-only "$port" "$P/json_rpc" 'Expect: 100-continue')"
	body=$(curl -s "http://127.0.0.1:$port/json_rpc" -d '{"jsonrpc":"2.0","id":5,"method":"get_info"}')
	assert_json "$front: a small body without a credential is still read: the 401 echoes its id" \
		"$body" '.id == 5 and .error.code != null'
	assert_eq "$front: a paying tenant is served meanwhile" 200 \
		"$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$P/get_height")"
done

closes() { curl -s "$1/metrics" | awk -v r="reason=\"$2\"" 'index($0, "client_closes_total{" r "}") { print $2 }'; }
for front in native mhd; do
	for reason in header_timeout slow_body over_address_cap; do
		n=$(closes "$(gw_admin "slow-$front")" "$reason")
		check "$front: counted in xmrgate_gateway_client_closes_total{reason=\"$reason\"} ($n)" \
			test "${n:-0}" -ge 1
	done
done

# ---- billing's API -----------------------------------------------------------------------------
bt_setup
check_here "billing starts" billing_start slow server.header_timeout=3s server.body_grace=2s \
	server.body_min_rate=1k server.max_connections_per_address=$cap
bport=$(billing_port slow)
assert_eq "billing: a head trickled one byte every 0.4 s is closed at the header timeout" \
	closed "$(probe slow-head "$bport" 127.0.0.2)"
assert_eq "billing: a body one byte every 0.4 s is closed under the minimum rate" \
	closed "$(probe slow-body "$bport" 127.0.0.2 /api/invoices 8000)"
assert_eq "billing: the ${cap}+1th connection from 127.0.0.4 is refused, 127.0.0.5 is served" \
	"refused 200 200" "$(probe cap "$bport" 127.0.0.4 127.0.0.5 "$cap" /api/tiers)"
for reason in header_timeout slow_body over_address_cap; do
	n=$(curl -s "$(billing_admin slow)/metrics" | awk -v r="reason=\"$reason\"" 'index($0, "client_closes_total{" r "}") { print $2 }')
	check "billing: counted in xmrgate_billing_client_closes_total{reason=\"$reason\"} ($n)" \
		test "${n:-0}" -ge 1
done
