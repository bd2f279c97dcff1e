#!/usr/bin/env bash
# The HTTP/1.1 a client speaks to the gateway, byte by byte: pipelining, chunked bodies
# with extensions and trailers, Expect: 100-continue, HTTP/1.0 with and without
# keep-alive, and every malformed or oversized head refused with its status. The own front
# end runs under ASan+UBSan; a libmicrohttpd front end ([server] front_end) is held to
# the same answers for what both speak. A client whose request is refused before it is
# all sent (a 200 kB body after the refused head) can send the rest and read the refusal:
# the connection closes lingering, not with a reset. Clients that leave while their
# request waits on a slow node cost nothing: the gateway goes on serving and exits
# without a leak. XMR402 challenges offer the v2.1 event stream on the own front end only,
# and a stream whose client leaves is ended, under ASan.
. "$(dirname "$0")/lib.sh"

check "the ASan+UBSan gateway is built" asan_gateway_built

slow_port=$((XG_PORT_BASE + 91))

# start_asan NAME DB_URL: the ASan gateway (own front end) on the database at DB_URL.
start_asan() {
	gateway_start "$1" --asan database.url="$2" server.connection_timeout=2s \
		server.front_end=native
}

check_here "a database with node A" scratch_db xmrgate_front n="$NODE_A_URL"
FRONT_DB=$SCRATCH_DB_URL
export XMRGATE_DATABASE_URL=$FRONT_DB # for grant_tenant
check_here "grant a tenant" grant_tenant wallet 1
check_here "the ASan gateway (own front end) becomes ready" start_asan front "$FRONT_DB"
check_here "a libmicrohttpd gateway starts" gateway_start front-mhd database.url="$FRONT_DB" \
	server.front_end=libmicrohttpd server.connection_timeout=2s
native_port=$(gw_port front) mhd_port=$(gw_port front-mhd)

P=/v1/$TOKEN
count_rpc='{"jsonrpc":"2.0","id":1,"method":"get_block_count"}'

# statuses < OUTPUT: the status code of each answer in OUTPUT, in order (an answer may
# follow the previous body on the same line).
statuses() { grep -ao 'HTTP/1\.[01] [0-9][0-9][0-9] ' | awk '{printf "%s%s", sep, $2; sep=" "}'; }

# sent_then_read PORT HEAD BYTES: a client that sends HEAD (printf %b escapes), then BYTES
# bytes the server will not read, all before it reads, as most HTTP clients do. Prints
# "sent" when all of it went out ("cut off" when the connection failed first), then the
# answer (all of it until the server closes, within 8 s).
sent_then_read() {
	local fd sent='cut off'
	exec {fd}<>"/dev/tcp/127.0.0.1/$1" || return 1
	if (
		trap '' PIPE # a reset connection fails the write instead of killing the shell
		printf '%b' "$2" && head -c "$3" /dev/zero | timeout 8 tr '\0' x
	) 1>&"$fd" 2>/dev/null; then
		sent=sent
	fi
	echo "$sent"
	timeout 8 cat <&"$fd"
	exec {fd}>&-
}

# sent_and_statuses < OUTPUT of sent_then_read: "sent 431", say.
sent_and_statuses() {
	local first
	IFS= read -r first
	echo "$first $(statuses)"
}

big_header=$(head -c 20000 /dev/zero | tr '\0' a)

# Chunked: the count request in chunks of 7 bytes, one with an extension, and a trailer.
chunked_count() {
	local body=$count_rpc out='' i
	for ((i = 0; i < ${#body}; i += 7)); do
		local part=${body:i:7}
		out+=$(printf '%x' "${#part}")
		((i == 7)) && out+=';name=value'
		out+="\\r\\n$part\\r\\n"
	done
	printf '%s' "${out}0\\r\\nX-Trailer: yes\\r\\n\\r\\n"
}

for front in native mhd; do
	if [[ $front == native ]]; then port=$native_port; else port=$mhd_port; fi
	out=$(raw "$port" "GET $P/get_height HTTP/1.1\r\nHost: x\r\n\r\nPOST $P/json_rpc HTTP/1.1\r\nHost: x\r\nContent-Length: ${#count_rpc}\r\nConnection: close\r\n\r\n$count_rpc")
	assert_eq "$front: two pipelined requests get two answers" "200 200" "$(statuses <<<"$out")"
	assert_eq "$front: … in the order asked" "height count" \
		"$(grep -ao '"height"\|"count"' <<<"$out" | tr -d '"' | paste -sd' ')"
	out=$(raw "$port" "POST $P/json_rpc HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n$(chunked_count)")
	assert_eq "$front: a chunked body with an extension and a trailer is read" "200" \
		"$(statuses <<<"$out")"
	check "$front: … and forwarded whole" grep -aq '"count"' <<<"$out"
	out=$(raw "$port" "GET $P/get_height HTTP/1.0\r\n\r\n")
	assert_eq "$front: HTTP/1.0 is answered, then the connection closes" "200" \
		"$(statuses <<<"$out")"
	out=$(raw "$port" "GET $P/get_height HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET $P/get_height HTTP/1.0\r\n\r\n")
	assert_eq "$front: HTTP/1.0 keep-alive carries a second request" "200 200" \
		"$(statuses <<<"$out")"
	out=$(raw "$port" "GET $P/get_height HTTP/1.1\r\nHost: x\r\nX-Big: $big_header\r\n\r\n")
	assert_eq "$front: a 20 kB header: 431" "431" "$(statuses <<<"$out")"
	out=$(sent_then_read "$port" "GET $P/get_height HTTP/1.1\r\nHost: x\r\nX-Big: $big_header\r\n\r\n" 200000)
	assert_eq "$front: a 20 kB header, then 200 kB: all of it is sent, then 431 is read" \
		"sent 431" "$(sent_and_statuses <<<"$out")"
	out=$(raw "$port" "GET $P/get_height HTTP/1.1\r\nConnection: close\r\n\r\n")
	assert_eq "$front: HTTP/1.1 without Host is served (as monerod does)" "200" \
		"$(statuses <<<"$out")"
	out=$(raw "$port" "GET $P/get_height HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello")
	assert_eq "$front: two different Content-Lengths: 400" "400" "$(statuses <<<"$out")"
	# Expect: 100-continue: the interim answer comes before the body is sent.
	exec {fd}<>"/dev/tcp/127.0.0.1/$port"
	printf '%b' "POST $P/json_rpc HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: ${#count_rpc}\r\nConnection: close\r\n\r\n" >&"$fd"
	read -r -t 5 -u "$fd" interim || interim=''
	assert_eq "$front: Expect: 100-continue gets 100 Continue before the body" \
		"HTTP/1.1 100 Continue" "${interim%$'\r'}"
	printf '%s' "$count_rpc" >&"$fd"
	out=$(timeout 8 cat <&"$fd")
	exec {fd}>&-
	check "$front: … and then the answer" grep -aq '"count"' <<<"$out"
	# monerod compares a Digest uri with the whole request target, query included
	assert_eq "$front: Digest over a target with a query string (uri = path?query)" 200 \
		"$(curl -s -o /dev/null -w '%{http_code}' --digest -u "$HANDLE:$TOKEN" \
			"http://127.0.0.1:$port/get_height?a=1&b=x%2Fy&c")"
done

# Refusals of the own front end (strict parsing: no guessing at framing).
N=$native_port
out=$(raw "$N" "GET http://gateway.example$P/get_height HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
assert_eq "an absolute-form target is served by its path" "200" "$(statuses <<<"$out")"
refused() { # NAME STATUS REQUEST
	local out
	out=$(raw "$N" "$3")
	assert_eq "$1: $2, then the connection closes" "$2" "$(statuses <<<"$out")"
}
refused "a request line that is no request line" 400 "GARBAGE\r\n\r\n"
# A stock wallet tries TLS first on every new connection and falls back to plain HTTP
# when that fails: the ClientHello must be refused at once, not wait for a blank line.
refused "a TLS ClientHello on the plain port" 400 "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"
refused "HTTP/2.0 in the request line" 505 "GET $P/get_height HTTP/2.0\r\nHost: x\r\n\r\n"
refused "Content-Length with Transfer-Encoding" 400 \
	"POST $P/json_rpc HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
refused "a transfer coding other than chunked" 501 \
	"POST $P/json_rpc HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"
refused "obsolete header folding" 400 "GET $P/get_height HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n"
refused "white space before the colon" 400 "GET $P/get_height HTTP/1.1\r\nHost : x\r\n\r\n"
refused "a bad chunk size" 400 \
	"POST $P/json_rpc HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"
# The same refusals with 200 kB after them that the gateway never reads: the client can
# send it all (the connection lingers) and then read why.
refused_then_body() { # NAME STATUS HEAD
	local out
	out=$(sent_then_read "$N" "$3" 200000)
	assert_eq "$1, then 200 kB: all of it is sent, then $2 is read" "sent $2" \
		"$(sent_and_statuses <<<"$out")"
}
refused_then_body "HTTP/2.0 in the request line" 505 "GET $P/get_height HTTP/2.0\r\nHost: x\r\n\r\n"
refused_then_body "Content-Length with Transfer-Encoding" 400 \
	"POST $P/json_rpc HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
refused_then_body "a bad chunk size" 400 \
	"POST $P/json_rpc HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
refused "two Host headers" 400 "GET $P/get_height HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"
refused "an unknown expectation" 417 "GET $P/get_height HTTP/1.1\r\nHost: x\r\nExpect: magic\r\n\r\n"
out=$(raw "$N" "GET $P/get_height HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n")
assert_eq "a declared body over the limit: 413 before it is sent" "413" "$(statuses <<<"$out")"
check "… in the JSON shape" grep -aq '"status"' <<<"$out"

# An idle keep-alive connection is closed by the connection timeout (2 s here).
check "an idle keep-alive connection is closed by the connection timeout" \
	raw "$N" "GET $P/get_height HTTP/1.1\r\nHost: x\r\n\r\n"

# XMR402: the own front end's challenge offers the v2.1 event stream, libmicrohttpd's does
# not (it cannot stream); a stream whose client leaves after event: accepted is ended by
# the gateway, here under ASan+UBSan (its stop below finds no leak).
# shellcheck source=tests/integration/xmr402_lib.sh
. "$(dirname "$0")/xmr402_lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"
X4_FROM=127.0.99.7
challenge_at() {
	curl -s -D - -o /dev/null --max-time 30 --interface "$X4_FROM" \
		-H 'Content-Type: application/json' --data-binary "$count_rpc" \
		"$(gw_url "$1")/v1/json_rpc" | tr -d '\r' | grep -i '^WWW-Authenticate: XMR402 '
}
ch=$(challenge_at front-mhd)
check "libmicrohttpd's 402 carries an XMR402 challenge" grep -q 'address="' <<<"$ch"
no_features() { ! grep -q features <<<"$1"; }
check "without features (it serves no event stream)" no_features "$ch"
ch=$(challenge_at front)
check "the own front end's challenge offers the event stream" grep -q ', features="sse"$' <<<"$ch"
param() { grep -o "$1=\"[^\"]*\"" <<<"$ch" | head -n 1 | cut -d'"' -f2; }
s_addr=$(param address) s_msg=$(param message)
s_tx=$(payer_pays "$s_addr" "$(param amount)")
s_auth=$(x4_auth "$s_tx" "$(x4_proof "$s_tx" "$s_addr" "$s_msg")")
S_FILE=$(mktemp)
defer rm -f "$S_FILE"
# open_stream: a stream on the proof, until event: accepted (false when it ended first: the
# wallet may not have seen the transaction yet, 503)
open_stream() {
	curl -sN --max-time 60 --interface "$X4_FROM" -H 'Content-Type: application/json' \
		-H 'Accept: text/event-stream' -H "Authorization: $s_auth" --data-binary "$count_rpc" \
		"$(gw_url front)/v1/json_rpc" >"$S_FILE" 2>&1 &
	S_PID=$!
	defer stop_pid "$S_PID"
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q '^event: accepted' "$S_FILE" && return 0
		kill -0 "$S_PID" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}
check_here "a paid proof sent with Accept: text/event-stream: event: accepted" \
	wait_until 60 open_stream
N_ADMIN=$(gw_admin front)
assert_eq "one stream open" 1 "$(metric "$N_ADMIN" xmrgate_gateway_xmr402_streams_open)"
stop_pid "$S_PID"
check_here "its client left: the gateway ends the stream" \
	wait_until 20 metric_is "$N_ADMIN" xmrgate_gateway_xmr402_streams_open 0
assert_eq "and goes on serving" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$(gw_url front)$P/get_height")"

asan_gateway_stop front "requests and refusals"

# Clients that leave while their requests wait on a slow node (1.5 s an answer).
"$XG_REPO/build/release/tests/tools/slow_node" "$slow_port" 1500 &
defer stop_pid $!
check_here "a database with only the slow node" scratch_db xmrgate_front_slow \
	n="http://127.0.0.1:$slow_port"
export XMRGATE_DATABASE_URL=$SCRATCH_DB_URL
check_here "grant a tenant there" grant_tenant wallet 1
P=/v1/$TOKEN
check_here "an ASan gateway in front of the slow node becomes ready" start_asan front-slow \
	"$SCRATCH_DB_URL"
N=$(gw_port front-slow)
# leave N: N clients ask at once and give up after 0.3 s.
leave() {
	local pids=() i
	for ((i = 0; i < $1; i++)); do
		curl -s -o /dev/null --max-time 0.3 "http://127.0.0.1:$N$P/get_height" &
		pids+=($!)
	done
	wait "${pids[@]}"
}
leave 30
assert_eq "after 30 clients left mid-request, the next one is answered" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$N$P/get_height")"
leave 10
asan_gateway_stop front-slow "clients that left" # with those ten still waiting on the node

# Out of descriptors: connections beyond the process's limit wait in the backlog; the
# gateway does not spin on its listener meanwhile, and serves again once some close. (No
# per-address cap here: all 150 come from 127.0.0.1, and the descriptors must run out.)
export XMRGATE_DATABASE_URL=$FRONT_DB
check_here "grant a tenant for the descriptor test" grant_tenant wallet 1
P=/v1/$TOKEN
check_here "a gateway limited to 96 descriptors becomes ready" gateway_start front-fds --nofile 96 \
	database.url="$FRONT_DB" server.loops=1 server.max_connections_per_address=0
fd_port=$(gw_port front-fds) fd_pid=$GW_PID
held=()
for _ in $(seq 150); do
	exec {fd}<>"/dev/tcp/127.0.0.1/$fd_port" && held+=("$fd")
done
cpu_ticks() { awk '{print $14 + $15}' "/proc/$fd_pid/stat"; }
before=$(cpu_ticks)
sleep 2
spent=$(($(cpu_ticks) - before))
check "out of descriptors, it does not spin (used $spent of 200 ticks in 2 s)" test "$spent" -lt 100
for fd in "${held[@]}"; do exec {fd}>&-; done
assert_eq "once the connections close, it serves again" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$fd_port$P/get_height")"
