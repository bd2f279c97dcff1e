#!/usr/bin/env bash
# Behind a load balancer, per-client limits still count each client apart. Two gateways
# ([server] proxy_protocol = true, trusted_proxies = 127.0.0.1) sit behind Debian's HAProxy
# (send-proxy-v2) and behind nginx (X-Forwarded-For, no PROXY header: the trusted peer may
# omit it); a billing (trusted_proxies = 127.0.0.1) sits behind nginx, another one
# (proxy_protocol = true) behind HAProxy (send-proxy-v2). Clients come from
# loopback aliases (curl --interface 127.0.0.N), so each balancer sees a different peer.
#
# Asserted: the XMR402 challenge limit (billing's, keyed by the address the gateway
# vouches for) gives each client its own bucket through HAProxy and through nginx, across
# both gateways; billing's invoice and free-tier limits do the same through nginx and
# through HAProxy's PROXY header on billing's libmicrohttpd listener; an
# X-Forwarded-For a client sends itself is ignored, through a balancer and directly; a
# direct connection to a proxy_protocol listener from an untrusted peer without a PROXY
# header is refused (on billing's too, where an untrusted peer's own header is read past
# and its addresses ignored, and the balancer's health check may omit it). A third gateway
# speaks TLS with proxy_protocol on: a PROXY v1 header sent by hand before the handshake
# names the client its challenge limit counts, and curl --haproxy-protocol gets through.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/billing_lib.sh"

for bin in /usr/sbin/haproxy /usr/sbin/nginx; do
	[[ -x $bin ]] || {
		echo "not ok - $bin is installed (scripts/deps.sh)"
		exit 1
	}
done

BURST=3
TIER=lbtest
work=$XG_VAR/balancer
rm -rf "$work"
mkdir -p "$work"
ha_port=$((XG_PORT_BASE + 94))
ng_billing=$((XG_PORT_BASE + 95)) ng_gateway=$((XG_PORT_BASE + 96))
ha_billing=$((XG_PORT_BASE + 97))

bt_setup
bt_tier "$TIER" 1000000000 1
defer psql_q "UPDATE tiers SET public = false WHERE id = '$TIER'"
limits=(invoices.create_per_hour=1 "invoices.create_burst=$BURST" invoices.free_per_hour=1
	invoices.free_burst=1)
check_here "billing with trusted_proxies starts" billing_start lb \
	server.trusted_proxies=127.0.0.1 "${limits[@]}"
billing=$(billing_url lb)
billing_port=$(billing_port lb)
check_here "billing with proxy_protocol starts" billing_start lbp \
	server.trusted_proxies=127.0.0.1 server.proxy_protocol=true "${limits[@]}"
billing_pp=$(billing_url lbp)

gw_keys=(server.trusted_proxies=127.0.0.1 server.proxy_protocol=true
	xmr402.billing_url="$billing")
check_here "gateway 1 with proxy_protocol starts" gateway_start lb1 "${gw_keys[@]}"
check_here "gateway 2 with proxy_protocol starts" gateway_start lb2 "${gw_keys[@]}"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
	-keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1
check_here "a TLS gateway with proxy_protocol starts" gateway_start lb3 \
	"${gw_keys[@]}" server.tls_cert="$work/cert.pem" server.tls_key="$work/key.pem"
g1_port=$(gw_port lb1) g2_port=$(gw_port lb2) g3_port=$(gw_port lb3)

cat >"$work/haproxy.cfg" <<CFG
global
    maxconn 256
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
frontend gateways
    bind 127.0.0.1:$ha_port
    default_backend gateways
backend gateways
    balance roundrobin
    server g1 127.0.0.1:$g1_port send-proxy-v2
    server g2 127.0.0.1:$g2_port send-proxy-v2
frontend billing
    bind 127.0.0.1:$ha_billing
    default_backend billing
backend billing
    server b1 127.0.0.1:${billing_pp##*:} send-proxy-v2
CFG
/usr/sbin/haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
defer stop_pid "$!"

mkdir -p "$work/nginx-tmp"
chmod 777 "$work/nginx-tmp"
user_line=""
[[ $(id -u) == 0 ]] && user_line="user root;"
cat >"$work/nginx.conf" <<CFG
$user_line
worker_processes 1;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 128; }
http {
    access_log off;
    client_body_temp_path $work/nginx-tmp/body;
    proxy_temp_path $work/nginx-tmp/proxy;
    fastcgi_temp_path $work/nginx-tmp/fastcgi;
    uwsgi_temp_path $work/nginx-tmp/uwsgi;
    scgi_temp_path $work/nginx-tmp/scgi;
    upstream billing { server 127.0.0.1:$billing_port; }
    upstream gateways { server 127.0.0.1:$g1_port; server 127.0.0.1:$g2_port; }
    server {
        listen 127.0.0.1:$ng_billing;
        location / {
            proxy_pass http://billing;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
        }
    }
    server {
        listen 127.0.0.1:$ng_gateway;
        location / {
            proxy_pass http://gateways;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
        }
    }
}
CFG
/usr/sbin/nginx -p "$work" -c "$work/nginx.conf" >"$work/nginx.log" 2>&1 &
defer stop_pid "$!"
balancers_up() {
	curl -s -o /dev/null "http://127.0.0.1:$ha_port/v1/json_rpc" -d '{}' &&
		curl -sf -o /dev/null "http://127.0.0.1:$ng_billing/api/tiers" &&
		curl -sf -o /dev/null "http://127.0.0.1:$ha_billing/api/tiers" &&
		curl -s -o /dev/null "http://127.0.0.1:$ng_gateway/v1/json_rpc" -d '{}'
}
check "HAProxy and nginx listen" wait_until 20 balancers_up ||
	sed 's/^/# /' "$work/haproxy.log" "$work/nginx.log" "$work/nginx-error.log" 2>/dev/null

# An XMR402 challenge for the test tier from FROM through URL; prints the status.
challenge() {
	local url=$1 from=$2
	shift 2
	curl -s -o /dev/null -w '%{http_code}' --max-time 30 --interface "$from" \
		-H 'Content-Type: application/json' -H "X-XMR402-Tier: $TIER" "$@" \
		--data-binary '{"jsonrpc":"2.0","id":"t","method":"get_info"}' "$url/v1/json_rpc"
}

# An invoice for TIER from FROM through URL; prints the status.
invoice() {
	local url=$1 from=$2 tier=$3
	shift 3
	curl -s -o /dev/null -w '%{http_code}' --max-time 30 --interface "$from" \
		-H 'Content-Type: application/json' "$@" \
		--data-binary "{\"tier\":\"$tier\"}" "$url/api/invoices"
}

# BURST answers of WANT from one client, then 429.
burst_then_429() {
	local what=$1 want=$2 i got=()
	shift 2
	for ((i = 0; i <= BURST; i++)); do got+=("$("$@")"); done
	local expect=()
	for ((i = 0; i < BURST; i++)); do expect+=("$want"); done
	expect+=(429)
	assert_eq "$what" "${expect[*]}" "${got[*]}"
}

# Unique loopback sources for this run, so billing's hourly buckets start full.
base=$(($$ % 40 * 6 + 2))
src() { echo "127.0.$(($1 + 1)).$base"; }

# ---- HAProxy, send-proxy-v2, in front of both gateways -------------------------------------
HA=http://127.0.0.1:$ha_port
burst_then_429 "through HAProxy one client gets its burst of challenges, then 429" 402 \
	challenge "$HA" "$(src 1)"
assert_eq "through HAProxy another client still gets its challenge" 402 "$(challenge "$HA" "$(src 2)")"
assert_eq "through HAProxy the first client's own X-Forwarded-For is ignored: still 429" 429 \
	"$(challenge "$HA" "$(src 1)" -H "X-Forwarded-For: $(src 9)")"
assert_eq "and the address it named was not charged" 402 "$(challenge "$HA" "$(src 9)")"

# ---- nginx, X-Forwarded-For, in front of both gateways -------------------------------------
NG=http://127.0.0.1:$ng_gateway
burst_then_429 "through nginx one client gets its burst of challenges, then 429" 402 \
	challenge "$NG" "$(src 3)"
assert_eq "through nginx another client still gets its challenge" 402 "$(challenge "$NG" "$(src 4)")"
assert_eq "through nginx a client's own X-Forwarded-For is ignored (the rightmost untrusted hop counts)" \
	429 "$(challenge "$NG" "$(src 3)" -H "X-Forwarded-For: $(src 10)")"

# ---- the gateway's proxy_protocol listener, directly ---------------------------------------
direct=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --interface "$(src 5)" \
	-d '{}' "http://127.0.0.1:$g1_port/v1/json_rpc")
assert_eq "an untrusted peer without a PROXY header is refused (no answer)" 000 "$direct"
assert_eq "the trusted peer (the balancer's address) may omit the header" 402 \
	"$(challenge "http://127.0.0.1:$g1_port" 127.0.0.1)"

# ---- the gateway's TLS listener with proxy_protocol -----------------------------------------
# A challenge over TLS to the third gateway from 127.0.0.1 (trusted), whose PROXY v1 header,
# sent by hand before the handshake, names NAMED; prints the status (000: refused).
tls_challenge() {
	python3 - "$g3_port" "$1" "$TIER" <<'PY'
import socket, ssl, sys
port, named, tier = int(sys.argv[1]), sys.argv[2], sys.argv[3]
body = b'{"jsonrpc":"2.0","id":"t","method":"get_info"}'
try:
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
    raw.sendall(("PROXY TCP4 %s 127.0.0.1 40000 %d\r\n" % (named, port)).encode())
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    s = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
    s.sendall(b"POST /v1/json_rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
              b"Content-Type: application/json\r\nX-XMR402-Tier: " + tier.encode() +
              b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    print(s.recv(64).decode(errors="replace").split(" ")[1])
except (OSError, IndexError):
    print("000")
PY
}
TLS=https://127.0.0.1:$g3_port
burst_then_429 "over TLS, the client a PROXY v1 header names gets its burst of challenges, then 429" \
	402 tls_challenge "$(src 20)"
assert_eq "over TLS, another client named by the same balancer still gets its challenge" 402 \
	"$(tls_challenge "$(src 21)")"
assert_eq "over TLS, curl --haproxy-protocol (v1) from an untrusted peer is answered" 402 \
	"$(challenge "$TLS" "$(src 22)" -k --haproxy-protocol)"
assert_eq "over TLS, an untrusted peer without a PROXY header is refused (no answer)" 000 \
	"$(challenge "$TLS" "$(src 22)" -k)"

# ---- nginx in front of billing ---------------------------------------------------------------
NB=http://127.0.0.1:$ng_billing
burst_then_429 "through nginx one buyer gets its burst of invoices, then 429" 201 \
	invoice "$NB" "$(src 6)" "$TIER"
assert_eq "through nginx another buyer still gets an invoice" 201 "$(invoice "$NB" "$(src 7)" "$TIER")"
assert_eq "a buyer's own X-Forwarded-For is ignored: still 429" 429 \
	"$(invoice "$NB" "$(src 6)" "$TIER" -H "X-Forwarded-For: $(src 11)")"
assert_eq "free tier through nginx: one grant per buyer" "201 429" \
	"$(invoice "$NB" "$(src 8)" free) $(invoice "$NB" "$(src 8)" free)"
assert_eq "free tier through nginx: another buyer gets its own" 201 "$(invoice "$NB" "$(src 12)" free)"

# An untrusted peer straight at billing cannot pick a fresh bucket per request.
got=()
for ((i = 0; i <= BURST; i++)); do
	got+=("$(invoice "$billing" "$(src 13)" "$TIER" -H "X-Forwarded-For: 127.0.250.$i")")
done
expect=()
for ((i = 0; i < BURST; i++)); do expect+=(201); done
assert_eq "directly, a spoofed X-Forwarded-For per request still ends in 429" "${expect[*]} 429" \
	"${got[*]}"

# ---- HAProxy, send-proxy-v2, in front of billing's libmicrohttpd listener -------------------
HB=http://127.0.0.1:$ha_billing
burst_then_429 "through HAProxy one buyer gets its burst of invoices, then 429" 201 \
	invoice "$HB" "$(src 14)" "$TIER"
assert_eq "through HAProxy another buyer still gets an invoice" 201 "$(invoice "$HB" "$(src 15)" "$TIER")"
assert_eq "through HAProxy a buyer's own X-Forwarded-For is ignored: still 429" 429 \
	"$(invoice "$HB" "$(src 14)" "$TIER" -H "X-Forwarded-For: $(src 16)")"
assert_eq "and the address it named was not charged" 201 "$(invoice "$HB" "$(src 16)" "$TIER")"
assert_eq "free tier through HAProxy: one grant per buyer" "201 429" \
	"$(invoice "$HB" "$(src 17)" free) $(invoice "$HB" "$(src 17)" free)"
assert_eq "free tier through HAProxy: another buyer gets its own" 201 "$(invoice "$HB" "$(src 18)" free)"
direct=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --interface "$(src 19)" \
	"$billing_pp/api/tiers")
assert_eq "billing: an untrusted peer without a PROXY header is refused (no answer)" 000 "$direct"
assert_eq "billing: the trusted peer (the balancer's health check) may omit the header" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --interface 127.0.0.1 "$billing_pp/api/tiers")"
assert_eq "billing: an untrusted peer's own PROXY v1 header is read past" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --interface "$(src 19)" \
		--haproxy-protocol "$billing_pp/api/tiers")"
malformed=$(python3 - "${billing_pp##*:}" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"PROXY TCP4 nonsense\r\nGET /api/tiers HTTP/1.0\r\n\r\n")
try:
    print(s.recv(64).decode(errors="replace")[:12])
except OSError:
    print("")
PY
)
assert_eq "billing: a malformed PROXY header is refused, even from the trusted peer" "" "$malformed"

# Both gateways took challenges: the balancers spread them.
for g in lb1 lb2; do
	n=$(curl -s "$(gw_admin "$g")/metrics" | awk '/^xmrgate_gateway_requests_total/ {s += $2} END {print s + 0}')
	check "gateway $g served requests through the balancers ($n)" test "${n:-0}" -gt 2
done
