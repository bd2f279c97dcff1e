#!/usr/bin/env bash
# The PROXY-protocol reader (common/xg_mhd_proxy.c, xg_proxy_admit.h) against hostile
# peers, on billing's listener ([server] proxy_protocol = true, trusted_proxies =
# 127.0.0.1: the balancer); the gateway's TLS front end runs the same reader. Clients
# come from loopback addresses 127.0.0.N (every one but 127.0.0.1 untrusted).
#
# Asserted:
#   - one untrusted network holds at most max_connections_per_address connections
#     waiting for their header: one more is closed at accept;
#   - untrusted peers from many addresses fill their share (proxy_max_pending -
#     proxy_reserve), one more is closed at accept, and the balancer still gets in and
#     is answered; both refusals are counted (over_address_cap, proxy_full);
#   - a PROXY header not complete within proxy_header_timeout (2 s here, the default) is
#     closed then, well before header_timeout (10 s);
#   - out of descriptors (the daemon run with a low `ulimit -n`, the balancer opening
#     connections until accept fails), the daemon's CPU stays low (utime + stime from
#     /proc/PID/stat over 3 s), and it serves again once the connections close.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/billing_lib.sh"

PROBE=$(dirname "$0")/proxy_reader_probe.py
PER_NETWORK=4 MAX_PENDING=40 RESERVE=8
ROOM=$((MAX_PENDING - RESERVE))

bt_setup
closes() { # NAME REASON: billing NAME's client_closes_total{reason}
	curl -s "$(billing_admin "$1")/metrics" |
		awk -v r="reason=\"$2\"" 'index($0, "xmrgate_billing_client_closes_total{") == 1 && index($0, r) {print $2 + 0; f = 1} END {if (!f) print 0}'
}

# ---- places: one network's cap, the untrusted share, the balancer's reserve ----------------
check_here "billing with proxy_protocol and a small reader starts" billing_start prcap \
	server.trusted_proxies=127.0.0.1 server.proxy_protocol=true \
	"server.max_connections_per_address=$PER_NETWORK" "server.proxy_max_pending=$MAX_PENDING" \
	"server.proxy_reserve=$RESERVE" server.proxy_header_timeout=5s
port=$(billing_port prcap)
out=$(python3 "$PROBE" cap "$port" "$PER_NETWORK" "$ROOM")
echo "# $out"
assert_json "one network's connection past max_connections_per_address is closed at accept" \
	"$out" '.over_network_closed == true'
assert_json "its first $PER_NETWORK wait for their header" "$out" ".in_network_open == $PER_NETWORK"
assert_json "untrusted peers from many addresses hold the $ROOM untrusted places" "$out" \
	".untrusted_held == $ROOM and .still_open == $ROOM and .addresses > 5"
assert_json "one more untrusted connection (another address) is closed at accept" "$out" \
	'.over_room_closed == true'
assert_json "the balancer still gets in (the reserve) and is answered" "$out" \
	'.balancer | startswith("HTTP/1.1 200")'
check "the network refusal is counted as over_address_cap" test "$(closes prcap over_address_cap)" -ge 1
check "the full share is counted as proxy_full" test "$(closes prcap proxy_full)" -ge 1

# ---- the header's deadline ---------------------------------------------------------------------
check_here "billing with the default proxy_header_timeout starts" billing_start prdl \
	server.trusted_proxies=127.0.0.1 server.proxy_protocol=true server.header_timeout=10s
out=$(python3 "$PROBE" deadline "$(billing_port prdl)")
echo "# $out"
assert_json "half a PROXY header is closed at proxy_header_timeout (2 s), not header_timeout" \
	"$out" '.closed == true and .after_ms >= 1500 and .after_ms < 4000'
check "and counted as a header timeout" test "$(closes prdl header_timeout)" -ge 1

# ---- out of descriptors -------------------------------------------------------------------
NOFILE=128
check_here "billing with proxy_protocol and ulimit -n $NOFILE starts" billing_start prfd \
	--nofile "$NOFILE" server.trusted_proxies=127.0.0.1 server.proxy_protocol=true \
	server.max_connections_per_address=0 server.header_timeout=60s
port=$(billing_port prfd) pid=$BL_PID url=$(billing_url prfd)
fifo=$XG_VAR/proxy-reader-hold.fifo
rm -f "$fifo" && mkfifo "$fifo"
exec {hold_in}<>"$fifo"
python3 "$PROBE" hold "$port" 300 <&"$hold_in" >"$XG_VAR/proxy-reader-hold.out" &
hold_pid=$!
stop_hold() { kill "$hold_pid" 2>/dev/null || true; }
defer stop_hold
wait_until 20 grep -q open "$XG_VAR/proxy-reader-hold.out"
echo "# $(cat "$XG_VAR/proxy-reader-hold.out")"
fds() { find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
full() { (($(fds) >= NOFILE - 2)); }
check "the daemon runs out of descriptors ($NOFILE)" wait_until 20 full
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
t0=$(cpu_ticks)
sleep 3 # a measuring window, not a wait for a condition
t1=$(cpu_ticks)
hz=$(getconf CLK_TCK)
echo "# CPU over 3 s out of descriptors: $((t1 - t0)) ticks of $hz/s (fds: $(fds))"
check "its CPU stays low while accept fails (under 10% of a core: $((t1 - t0)) ticks in 3 s)" \
	test $((t1 - t0)) -lt $((3 * hz / 10))
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 --haproxy-protocol "$url/api/tiers")
assert_eq "meanwhile a new connection is not served" 000 "$code"
exec {hold_in}>&-
stop_hold
wait "$hold_pid" 2>/dev/null
served() { [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 --haproxy-protocol "$url/api/tiers") == 200 ]]; }
check "service resumes once the connections close" wait_until 20 served
check "the daemon is alive" kill -0 "$pid"
