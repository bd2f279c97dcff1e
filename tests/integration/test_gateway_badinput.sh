#!/usr/bin/env bash
# Bad input against a gateway built with ASan+UBSan: malformed JSON and epee, oversized and
# chunked bodies, broken credentials, odd paths and verbs, slow clients. Every request
# gets a clear answer in its client's shape, the gateway keeps serving, and at exit
# AddressSanitizer, LeakSanitizer and UBSan have nothing to report.
. "$(dirname "$0")/lib.sh"

check "the ASan+UBSan gateway is built" asan_gateway_built
check_here "the ASan gateway becomes ready" gateway_start badinput --asan \
	server.connection_timeout=2s
check_here "grant a tenant" grant_tenant wallet 1
GW=$GW_URL
P=$GW/v1/$TOKEN
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@"; }
# The grant reaches this gateway by NOTIFY; under ASan on a busy machine that can take a
# while, and a request before it gets 401.
check "the ASan gateway knows the new tenant" wait_until 30 curl -sf -o /dev/null "$P/get_height"

assert_eq "deeply nested JSON: a JSON-RPC answer, HTTP 200" 200 \
	"$(printf '%0.s[' $(seq 5000) | code "$P/json_rpc" --data-binary @-)"
assert_eq "invalid UTF-8 in JSON: 200 with an error" 200 \
	"$(printf '{"jsonrpc":"2.0","id":"\xff\xfe","method":"get_info"}' | code "$P/json_rpc" --data-binary @-)"
assert_eq "a chunked body over the limit: 413" 413 \
	"$(head -c 2000000 /dev/zero | tr '\0' 'a' | code -H 'Transfer-Encoding: chunked' "$P/json_rpc" --data-binary @-)"
assert_eq "Content-Length over the limit: 413" 413 \
	"$(head -c 1100000 /dev/zero | tr '\0' ' ' | code "$P/get_transactions" --data-binary @-)"
assert_eq "an empty /json_rpc body: 200 with a parse error" 200 "$(code -X POST "$P/json_rpc")"
assert_eq "garbage Digest: 400" 400 "$(code -H 'Authorization: Digest ,,,=,"' "$GW/get_height")"
assert_eq "Digest with unbalanced quotes: 400" 400 \
	"$(code -H 'Authorization: Digest username="t_aaaaaaaaaaaa, realm="x' "$GW/get_height")"
assert_eq "Digest missing fields: 400" 400 "$(code -H 'Authorization: Digest username="x"' "$GW/get_height")"
assert_eq "a huge Bearer token: 400 or 401" 1 \
	"$(c=$(code -H "Authorization: Bearer $(head -c 6000 /dev/zero | tr '\0' 'x')" "$GW/get_height"); [[ $c == 400 || $c == 401 || $c == 431 ]] && echo 1)"
assert_eq "an unknown scheme: 401" 401 "$(code -H 'Authorization: Negotiate abc' "$GW/get_height")"
assert_eq "two Authorization headers: 400" 400 \
	"$(code -H "Authorization: Bearer $TOKEN" -H "Authorization: Bearer $TOKEN" "$GW/get_height" 2>/dev/null || true)"
assert_eq "path token and header at once: 400" 400 "$(code -H "Authorization: Bearer $TOKEN" "$P/get_height")"
assert_eq "a token-shaped path segment that is no tenant: 401" 401 \
	"$(code "$GW/v1/xg_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/get_height")"
assert_eq "an encoded NUL in the path: 404" 404 "$(code "$P/get_height%00")"
assert_eq "a very long path: 404 or 414" 1 \
	"$(c=$(code "$P/$(head -c 3000 /dev/zero | tr '\0' 'a')"); [[ $c == 404 || $c == 414 ]] && echo 1)"
assert_eq "PUT: 405" 405 "$(code -X PUT "$P/get_height")"
assert_eq "OPTIONS: 405" 405 "$(code -X OPTIONS "$P/get_height")"

# .bin bodies, which the gateway reads (to strip the wallet's client field, to cache settled
# answers): whatever their bytes, the client gets node A's own status for them (for a body
# that is not portable storage, the gateway gives that status itself).
. "$XG_REPO/tests/epee_bodies.sh"
bin=$XG_VAR/badinput-bin
bin_same() {
	assert_eq "$1: the node's own status" \
		"$(code "$NODE_A_URL/get_blocks_by_height.bin" --data-binary @"$bin")" \
		"$(code "$P/get_blocks_by_height.bin" --data-binary @"$bin")"
}
printf '%b' "$EPEE_HEADER\\x04\\x07heights" >"$bin"
bin_same "an epee body cut short"
: >"$bin"
bin_same "an empty body"
printf 'not epee' >"$bin"
bin_same "not portable storage"
{
	printf '%b' "$EPEE_HEADER"
	for _ in $(seq 200); do printf '%b' '\x04\x01o\x0c'; done
	printf '%b' '\x00'
} >"$bin"
bin_same "200 nested objects"
printf '%b' "$EPEE_HEADER\\x04\\x01s\\x0a\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff" >"$bin"
bin_same "a string length of 2^62"
{ printf '%b' "$EPEE_HEADER"; head -c 400 /dev/urandom; } >"$bin"
bin_same "random bytes after the header"
one=$(epee_u64 1)
{
	printf '%b' "$EPEE_HEADER\\x04\\x07heights\\x85\\x42\\x9c\\x00\\x00"
	for _ in $(seq 10000); do printf '%b' "$one"; done
} >"$bin"
bin_same "10,000 heights"
printf '%b' "$EPEE_HEADER\\x08\\x06client\\x0a\\x00\\x07heights\\x85\\x04$(epee_u64 1)" >"$bin"
bin_same "an empty client field"

# A client that sends half a request and waits is cut off by the connection timeout.
check "a slow client is disconnected by the connection timeout" \
	raw "$(gw_port badinput)" 'POST /json_rpc HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"a"'
check "the gateway still serves after all that" curl -sf -o /dev/null "$P/get_height"

asan_gateway_stop badinput
