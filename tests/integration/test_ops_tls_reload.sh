#!/usr/bin/env bash
# SIGHUP reloads the gateway's TLS certificate and key without dropping a connection: a
# keep-alive connection opened on certificate A answers before and after the reload on the
# same socket, with A; a new connection sees B (openssl s_client's fingerprint); the
# xmrgate_gateway_tls_cert_not_after_seconds metric moves from A's notAfter to B's. Then a
# broken certificate file and a key that is not the certificate's are each rejected
# (tls_reload_rejected) with B still served and the metric unchanged. The gateway is the
# ASan+UBSan build: the replaced pairs are freed at its exit, and nothing leaks.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"

work=$XG_VAR/ops-tls-reload
rm -rf "$work"
mkdir -p "$work"

mint() { # NAME DAYS: a self-signed pair NAME.crt, NAME.key
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$2" \
		-subj "/CN=127.0.0.1" -keyout "$work/$1.key" -out "$work/$1.crt" >/dev/null 2>&1
}
fp_of_file() { openssl x509 -in "$1" -noout -fingerprint -sha256 | sed 's/.*=//; s/://g' | tr 'A-F' 'a-f'; }
not_after_of() { date -u -d "$(openssl x509 -in "$1" -noout -enddate | sed 's/notAfter=//')" +%s; }
served_fp() { # the certificate a new connection gets
	openssl s_client -connect "127.0.0.1:$port" </dev/null 2>/dev/null |
		openssl x509 -noout -fingerprint -sha256 | sed 's/.*=//; s/://g' | tr 'A-F' 'a-f'
}
install_pair() { cp "$work/$1.crt" "$work/served.crt" && cp "$work/$2.key" "$work/served.key"; }

mint a 2 && mint b 30 && mint c 30
fp_a=$(fp_of_file "$work/a.crt") fp_b=$(fp_of_file "$work/b.crt")
install_pair a a

check_here "a tenant is granted" grant_tenant sovereign 1
check "the ASan+UBSan gateway is built" asan_gateway_built
check_here "a TLS gateway starts with certificate A" gateway_start tlsreload --asan \
	server.tls_cert="$work/served.crt" server.tls_key="$work/served.key"
port=$(gw_port tlsreload) pid=$GW_PID ADM=$GW_ADMIN LOG=$GW_LOG
assert_eq "a new connection gets A" "$fp_a" "$(served_fp)"
assert_eq "the expiry metric is A's notAfter" "$(not_after_of "$work/a.crt")" \
	"$(metric "$ADM" xmrgate_gateway_tls_cert_not_after_seconds)"
check "the start is logged with A's fingerprint (tls_loaded)" \
	bash -c "grep '\"event\":\"tls_loaded\"' '$LOG' | grep -q '$fp_a'"

# --- a keep-alive connection across the reload --------------------------------------------
python3 "$XG_REPO/tests/integration/tls_keepalive.py" 127.0.0.1 "$port" "/v1/$TOKEN/get_height" \
	"$work/go" >"$work/keepalive.out" 2>&1 &
ka_pid=$!
defer stop_pid "$ka_pid"
check "the keep-alive connection is answered on A" \
	wait_until 20 grep -q "^before 200 $fp_a " "$work/keepalive.out"
install_pair b b
kill -HUP "$pid"
check "the reload is logged with B's fingerprint (tls_reloaded)" \
	wait_until 10 bash -c "grep '\"event\":\"tls_reloaded\"' '$LOG' | grep -q '$fp_b'"
assert_eq "a new connection gets B" "$fp_b" "$(served_fp)"
touch "$work/go"
wait "$ka_pid"
assert_eq "the keep-alive client ends well (same socket, not reconnected)" 0 "$?"
before_port=$(awk '$1 == "before" { print $4 }' "$work/keepalive.out")
check "the old connection is answered after the reload, on the same socket, still with A" \
	grep -q "^after 200 $fp_a $before_port\$" "$work/keepalive.out"
assert_eq "the expiry metric is now B's notAfter" "$(not_after_of "$work/b.crt")" \
	"$(metric "$ADM" xmrgate_gateway_tls_cert_not_after_seconds)"

# --- pairs that must not replace B ----------------------------------------------------------
rejections() { grep -c '"event":"tls_reload_rejected"' "$LOG"; }
printf -- '-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n' \
	>"$work/served.crt"
cp "$work/b.key" "$work/served.key"
kill -HUP "$pid"
check "a broken certificate file is rejected (tls_reload_rejected)" \
	wait_until 10 bash -c "[[ \$(grep -c '\"event\":\"tls_reload_rejected\"' '$LOG') -ge 1 ]]"
assert_eq "… and B is still served" "$fp_b" "$(served_fp)"
install_pair c b
kill -HUP "$pid"
check "a key that is not the certificate's is rejected, named so" \
	wait_until 10 bash -c "grep '\"event\":\"tls_reload_rejected\"' '$LOG' | grep -q 'is not the key'"
assert_eq "… and B is still served" "$fp_b" "$(served_fp)"
assert_eq "the expiry metric still says B's notAfter" "$(not_after_of "$work/b.crt")" \
	"$(metric "$ADM" xmrgate_gateway_tls_cert_not_after_seconds)"
assert_eq "two rejections, no further reload" "2 1" \
	"$(rejections) $(grep -c '"event":"tls_reloaded"' "$LOG")"
check "the gateway still serves the tenant over TLS" \
	curl -skf --max-time 10 -o /dev/null "https://127.0.0.1:$port/v1/$TOKEN/get_height"
check "the gateway is still running" kill -0 "$pid"
asan_gateway_stop tlsreload "after three reloads"
