#!/usr/bin/env bash
# Nothing of the client reaches a node but the body it needs: a capture server stands
# in for the node and records every header and body. No client address, no
# X-Forwarded-For, no Authorization, no cookie, no User-Agent, and no wallet "client"
# field, whether in a JSON body or in a .bin (epee) body, whose other fields arrive as they
# were sent. The gateway runs as it would behind a balancer (trusted_proxies, PROXY
# protocol), and the first request comes with a PROXY header and X-Forwarded-For it
# believes: neither reaches the node either.
. "$(dirname "$0")/lib.sh"

capture_port=$((XG_PORT_BASE + 90))
log=$XG_VAR/capture.jsonl
rm -f "$log"

check_here "migrate a database for the capture gateway" scratch_db xmrgate_capture \
	capture="http://127.0.0.1:$capture_port"
export XMRGATE_DATABASE_URL=$SCRATCH_DB_URL # for grant_tenant
"$XG_REPO/build/release/tests/tools/capture_server" "$capture_port" "$log" &
capture_pid=$!
defer stop_pid "$capture_pid"
check_here "grant a tenant" grant_tenant wallet 1
check_here "a gateway in front of the capture server starts" gateway_start capture \
	database.url="$SCRATCH_DB_URL" server.trusted_proxies=127.0.0.1 server.proxy_protocol=true
GW=$GW_URL

curl -sf --haproxy-protocol -u "$HANDLE:$TOKEN" -H 'X-Forwarded-For: 203.0.113.9' -H 'X-Real-IP: 203.0.113.9' \
	-H 'Forwarded: for=203.0.113.9' -H 'Cookie: session=secret' -A 'SecretAgent/1.0' \
	-H 'Referer: https://example.org/' -H 'Accept-Language: de' -H 'Via: 1.1 proxy' \
	"$GW/json_rpc" -o /dev/null \
	-d '{"jsonrpc":"2.0","id":"0","method":"get_block_count","params":{"client":"c2lnbmF0dXJl"},"client":"top"}'
curl -sf -H "Authorization: Bearer $TOKEN" -H 'Cookie: a=b' "$GW/get_transactions" -o /dev/null \
	-d '{"txs_hashes":[],"client":"c2lnbmF0dXJl"}'
# Portable storage: a client string (8 bytes) and start_height (a uint8); the node must get
# the same body with one entry, start_height.
printf '\x01\x11\x01\x01\x01\x01\x02\x01\x01\x08\x06client\x0a\x20abcdefgh\x0cstart_height\x08\x05' \
	>"$XG_VAR/bin-body"
printf '\x01\x11\x01\x01\x01\x01\x02\x01\x01\x04\x0cstart_height\x08\x05' >"$XG_VAR/bin-forwarded"
curl -sf "$GW/v1/$TOKEN/get_hashes.bin" --data-binary @"$XG_VAR/bin-body" -o /dev/null
# A body that is not portable storage (that body cut short) is refused by the gateway itself
# with monerod's status for it, 400, and never forwarded: its client field cannot be
# stripped from bytes the gateway cannot read.
head -c 30 "$XG_VAR/bin-body" >"$XG_VAR/bin-short"
assert_eq "a .bin body with the client field that is not portable storage (short): 400" 400 \
	"$(curl -s -o /dev/null -w '%{http_code}' "$GW/v1/$TOKEN/get_hashes.bin" \
		--data-binary @"$XG_VAR/bin-short")"
# That body with a byte after its root section, which monerod ignores, is answered as
# monerod answers it; the byte, like the client field, never reaches the node.
{ cat "$XG_VAR/bin-body"; printf 'x'; } >"$XG_VAR/bin-trailing"
assert_eq "the .bin body with a byte after it: answered (200)" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' "$GW/v1/$TOKEN/get_hashes.bin" \
		--data-binary @"$XG_VAR/bin-trailing")"

# The gateway's own health probes reach the capture server too: every request counts
# for the header checks; the three client requests are picked out for the body checks.
all=$(jq -s . "$log")
mine=$(jq -c '[.[] | select(.url != "/json_rpc" or (.body | fromjson | .method) == "get_block_count")]' <<<"$all")
assert_json "the capture server saw the four client requests" "$mine" 'length == 4'
assert_json "no body that reaches the node has a client field" "$all" \
	'[.[].body | select(test("client"))] == []'
for h in X-Forwarded-For X-Real-IP Forwarded Cookie User-Agent Authorization Referer \
	Accept-Language Via X-Api-Key; do
	assert_json "no $h reaches the node" "$all" \
		"[.[].headers | keys[] | ascii_downcase] | index(\"$(tr 'A-Z' 'a-z' <<<"$h")\") == null"
done
assert_json "only Host, Content-Type and Content-Length reach the node" "$all" \
	'[.[].headers | keys[] | ascii_downcase] | unique - ["host","content-type","content-length"] == []'
assert_json "no client field in JSON-RPC params or at the top" "$mine" \
	'.[0].body | fromjson | (has("client") | not) and (.params | has("client") | not)'
assert_json "no client field in a plain JSON endpoint body" "$mine" \
	'.[1].body | fromjson | has("client") | not'
assert_json "the JSON-RPC method and id still reach the node" "$mine" \
	'.[0].body | fromjson | .method == "get_block_count" and .id == "0"'
assert_json "the node is asked for the monerod path, not the token path" "$mine" \
	'.[2].url == "/get_hashes.bin"'
check "a .bin body reaches the node without its client field, the rest unchanged" \
	test "$(jq -j '.[2].body' <<<"$mine" | od -An -c | tr -d ' \n')" = \
	"$(od -An -c "$XG_VAR/bin-forwarded" | tr -d ' \n')"
check "… and with a byte after it, without the byte either" \
	test "$(jq -j '.[3].body' <<<"$mine" | od -An -c | tr -d ' \n')" = \
	"$(od -An -c "$XG_VAR/bin-forwarded" | tr -d ' \n')"

# Nor does anything of the node reach the client: with the node gone, the 502 names it by
# its opaque id at most, never by its name, address or the node client's error text.
stop_pid "$capture_pid"
gone=$(curl -s -w '\n%{http_code}' -H "Authorization: Bearer $TOKEN" "$GW/get_limit")
assert_eq "with the node gone: 502" 502 "$(tail -n 1 <<<"$gone")"
assert_json "the 502 names no node address, port or name" "$(sed '$d' <<<"$gone")" \
	'.status | test("127\\.0\\.0\\.1|'"$capture_port"'|capture|refused") | not'
