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
# Bodies and answers (#30): a body sent in one burst and then trickled is closed within
# body_window of the burst (the average since the start would hold it for minutes), an
# honest slow-but-steady body over the minimum is served, a client reading a large answer
# under send_min_rate is closed (own front end), and 200 connections each declaring a
# 64 MiB body and sending 1 KiB leave the gateway's memory bounded by what they sent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/billing_lib.sh"

probe() { python3 "$XG_REPO/tests/integration/slowclients_probe.py" "$@"; }

cap=6
slow=(server.header_timeout=3s server.body_grace=2s server.body_min_rate=1k
	server.connection_timeout=60s "server.max_connections_per_address=$cap")

check_here "grant a tenant" grant_tenant wallet 1
check_here "a gateway on the own front end starts" gateway_start slow-native \
	server.front_end=native server.max_body=64m server.send_min_rate=1k server.send_buffer=16k "${slow[@]}"
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

	got=$(probe burst-trickle "$port" 127.0.0.6 "$P/json_rpc")
	echo "# $front: burst then trickle: $got (s after the burst; body_window 10s)"
	secs=${got#* }
	check "$front: 1 MB less 100 bytes at once, then a byte every 2 s: closed within the window ($got)" \
		awk -v s="$secs" -v w="$want_slow" -v g="${got%% *}" 'BEGIN { exit !(g == w && s + 0 >= 8 && s + 0 <= 16) }'
	assert_eq "$front: an honest body at 3 KB/s for 12 s (over the 1 KiB/s minimum) is served" \
		200 "$(probe steady "$port" 127.0.0.7 "$P/json_rpc" 12)"
done

# A slow reader of a large answer (own front end, send_buffer 16k: the kernel's autotuning
# would take the whole answer): a 4 KiB receive buffer read 100 bytes a
# second is under send_min_rate (1 KiB/s over body_window), closed after the grace and the
# window; a reader at full speed gets all of it.
nport=$(gw_port slow-native)
height=$(rpc "$(gw_url slow-native)$P" get_block_count | jq -r .count)
big=$(printf '{"jsonrpc":"2.0","id":1,"method":"get_block_headers_range","params":{"start_height":0,"end_height":%d}}' $((height - 1)))
size=$(curl -s "http://127.0.0.1:$nport$P/json_rpc" -d "$big" | wc -c)
echo "# the large answer: $size bytes ($height headers)"
check "the large answer is large (${size} bytes > 50000)" test "$size" -gt 50000
got=$(probe slow-reader "$nport" "$P/json_rpc" "$big")
echo "# slow reader: $got (s, bytes taken/answer)"
check "native: a reader at 100 bytes/s of a ${size}-byte answer is closed ($got)" \
	awk -v g="$got" 'BEGIN { split(g, a, " "); exit !(a[1] == "closed" && a[2] + 0 <= 40) }'

# 200 connections declaring 64 MiB each and sending 1 KiB: the gateway holds about what
# they sent (a 16 KiB first buffer each), not 200 x 64 MiB of reservations.
gpid=$(gw_pid slow-native)
vm() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$gpid/status"; }
rss0=$(vm VmRSS) size0=$(vm VmSize)
held=$(mktemp)
defer rm -f "$held"
probe hold "$nport" "$P/json_rpc" 200 6 >"$held" &
holder=$!
wait_until 20 grep -q "held 200" "$held"
rss1=$(vm VmRSS) size1=$(vm VmSize)
wait "$holder"
echo "# 200 x (64 MiB declared, 1 KiB sent): VmRSS ${rss0} -> ${rss1} kB, VmSize ${size0} -> ${size1} kB"
check "200 bodies declaring 64 MiB: VmRSS grew under 32 MiB ($(((rss1 - rss0) / 1024)) MiB)" \
	test $((rss1 - rss0)) -lt 32768
check "200 bodies declaring 64 MiB: VmSize grew under 256 MiB, not 12.5 GiB ($(((size1 - size0) / 1024)) MiB)" \
	test $((size1 - size0)) -lt 262144

closes() { curl -s "$1/metrics" | awk -v r="reason=\"$2\"" 'index($0, "client_closes_total{" r "}") { print $2 }'; }
for front in native mhd; do
	reasons=(header_timeout slow_body over_address_cap)
	[[ $front == native ]] && reasons+=(slow_reader)
	for reason in "${reasons[@]}"; do
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
