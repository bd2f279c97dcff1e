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

native_port=$((XG_PORT_BASE + 70)) native_admin=$((XG_PORT_BASE + 71))
mhd_port=$((XG_PORT_BASE + 72)) mhd_admin=$((XG_PORT_BASE + 73))
cap=6
slow=(XMRGATE_SERVER_HEADER_TIMEOUT=3s XMRGATE_SERVER_BODY_GRACE=2s
	XMRGATE_SERVER_BODY_MIN_RATE=1k XMRGATE_SERVER_CONNECTION_TIMEOUT=60s
	XMRGATE_SERVER_MAX_CONNECTIONS_PER_ADDRESS=$cap)

check_here "grant a tenant" grant_tenant wallet 1
check_here "a gateway on the own front end starts" start_gateway slow-native "$native_port" \
	"$native_admin" XMRGATE_SERVER_FRONT_END=native "${slow[@]}"
check_here "a gateway on libmicrohttpd starts" start_gateway slow-mhd "$mhd_port" "$mhd_admin" \
	XMRGATE_SERVER_FRONT_END=libmicrohttpd "${slow[@]}"
P=/v1/$TOKEN

for front in native mhd; do
	port_var=${front}_port
	port=${!port_var}
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

closes() { curl -s "http://127.0.0.1:$1/metrics" | awk -v r="reason=\"$2\"" 'index($0, "client_closes_total{" r "}") { print $2 }'; }
for front in native mhd; do
	admin_var=${front}_admin
	for reason in header_timeout slow_body over_address_cap; do
		n=$(closes "${!admin_var}" "$reason")
		check "$front: counted in xmrgate_gateway_client_closes_total{reason=\"$reason\"} ($n)" \
			test "${n:-0}" -ge 1
	done
done

# ---- billing's API -----------------------------------------------------------------------------
bt_setup
bt_config slow 3 "[server]" "header_timeout = 3s" "body_grace = 2s" "body_min_rate = 1k" \
	"max_connections_per_address = $cap"
check_here "billing starts" bt_start slow
bport=$(bt_api slow)
bport=${bport##*:}
assert_eq "billing: a head trickled one byte every 0.4 s is closed at the header timeout" \
	closed "$(probe slow-head "$bport" 127.0.0.2)"
assert_eq "billing: a body one byte every 0.4 s is closed under the minimum rate" \
	closed "$(probe slow-body "$bport" 127.0.0.2 /api/invoices 8000)"
assert_eq "billing: the ${cap}+1th connection from 127.0.0.4 is refused, 127.0.0.5 is served" \
	"refused 200 200" "$(probe cap "$bport" 127.0.0.4 127.0.0.5 "$cap" /api/tiers)"
for reason in header_timeout slow_body over_address_cap; do
	n=$(curl -s "$(bt_admin slow)/metrics" | awk -v r="reason=\"$reason\"" 'index($0, "client_closes_total{" r "}") { print $2 }')
	check "billing: counted in xmrgate_billing_client_closes_total{reason=\"$reason\"} ($n)" \
		test "${n:-0}" -ge 1
done
