#!/usr/bin/env bash
# The gateway's authentication schemes and monerod-compatible answers: path token,
# Basic, Bearer and X-Api-Key reach the node; wrong, unknown and missing credentials get
# 401 with both challenges; denied methods and paths get what restricted monerod
# answers; .bin answers are passed through byte for byte.
. "$(dirname "$0")/lib.sh"

GW=$GATEWAY_URL
check_here "grant a tenant" grant_tenant wallet 30
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
height_direct=$(curl -sf "$NODE_A_URL/get_height" | jq .height)

body=$(curl -sf "$GW/v1/$TOKEN/get_height")
assert_json "path token: /v1/<token>/get_height answers the chain height" "$body" \
	".status == \"OK\" and .height >= $height_direct"
body=$(curl -sf -u "$HANDLE:$TOKEN" "$GW/get_height")
assert_json "Basic handle:token" "$body" '.status == "OK"'
body=$(curl -sf -u ":$TOKEN" "$GW/get_height")
assert_json "Basic with an empty user name" "$body" '.status == "OK"'
body=$(curl -sf -H "Authorization: Bearer $TOKEN" "$GW/get_info")
assert_json "Bearer" "$body" '.status == "OK" and .nettype == "fakechain"'
body=$(curl -sf -H "X-Api-Key: $TOKEN" "$GW/json_rpc" \
	-d '{"jsonrpc":"2.0","id":{"any":["json"]},"method":"get_block_count"}')
assert_json "X-Api-Key; a JSON-RPC id of any type is echoed" "$body" \
	'.id == {"any":["json"]} and .result.count > 0'
body=$(curl -s --digest -u "$HANDLE:$TOKEN" "$GW/json_rpc" \
	-d '{"jsonrpc":"2.0","id":1,"method":"get_info"}')
assert_json "Digest (curl)" "$body" '.result.status == "OK"'

# Refusals: 401 with the Digest challenge first, then Basic; nothing says which part was wrong.
headers=$(curl -s -D - -o /dev/null "$GW/get_height")
assert_json "no credential: 401" "$(jq -Rn --arg h "$headers" '$h')" \
	'test("^HTTP/1.1 401")'
check "the 401 carries a Digest challenge with qop=auth and MD5" \
	grep -qE '^WWW-Authenticate: Digest realm="[^"]+", qop="auth", algorithm=MD5, nonce="[^"]+", opaque="[^"]+"' <<<"$(tr -d '\r' <<<"$headers")"
check "the 401 carries a Basic challenge after it" \
	grep -qE '^WWW-Authenticate: Basic realm=' <<<"$(tr -d '\r' <<<"$headers")"
wrong=xg_$(head -c 32 /dev/urandom | basenc --base64url | tr -d '=\n')
assert_eq "unknown token in the path: 401" 401 "$(status "$GW/v1/$wrong/get_height")"
assert_eq "unknown Bearer token: 401" 401 "$(status -H "Authorization: Bearer $wrong" "$GW/get_height")"
assert_eq "wrong Basic password: 401" 401 "$(status -u "$HANDLE:$wrong" "$GW/get_height")"
assert_eq "Basic with another tenant's handle: 401" 401 \
	"$(status -u "t_aaaaaaaaaaaa:$TOKEN" "$GW/get_height")"
assert_eq "wrong Digest password: 401" 401 \
	"$(status --digest -u "$HANDLE:$wrong" "$GW/get_height")"
assert_eq "unknown Digest user: 401" 401 \
	"$(status --digest -u "t_aaaaaaaaaaaa:$TOKEN" "$GW/get_height")"
assert_eq "malformed Basic: 400" 400 \
	"$(status -H 'Authorization: Basic !!!notbase64' "$GW/get_height")"
body=$(curl -s "$GW/json_rpc" -d '{"jsonrpc":"2.0","id":5,"method":"get_info"}')
assert_json "a 401 on /json_rpc is a JSON-RPC error with the id" "$body" '.id == 5 and .error.code != null'

# An expired or suspended tenant is refused with a message saying why.
psql_q "UPDATE tenants SET valid_until = now() - interval '1 day' WHERE handle = '$HANDLE'"
expired() { curl -s "$GW/v1/$TOKEN/get_height" | jq -e '.status | test("expired")' >/dev/null; }
check "an expired tenant is told to renew" wait_until 5 expired
psql_q "UPDATE tenants SET valid_until = now() + interval '1 day', state = 'suspended' WHERE handle = '$HANDLE'"
suspended() { [[ $(status "$GW/v1/$TOKEN/get_height") == 403 ]]; }
check "a suspended tenant gets 403" wait_until 5 suspended
psql_q "UPDATE tenants SET state = 'active' WHERE handle = '$HANDLE'"
check "a resumed tenant is served again" wait_until 5 curl -sf -o /dev/null "$GW/v1/$TOKEN/get_height"

# What restricted monerod refuses is refused the same way.
P=$GW/v1/$TOKEN
for method in start_mining generateblocks stop_daemon set_bans flush_txpool relay_tx sync_info no_such_method; do
	body=$(curl -s -w '\n%{http_code}' "$P/json_rpc" \
		-d "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"$method\"}")
	assert_json "JSON-RPC $method: 200 with -32601 Method not found" \
		"$(head -n1 <<<"$body")" '.error.code == -32601 and .error.message == "Method not found" and .id == "x"'
	assert_eq "JSON-RPC $method: HTTP 200" 200 "$(tail -n1 <<<"$body")"
done
for path in /start_mining /stop_daemon /set_log_level /mining_status /out_peers /no_such_path; do
	assert_eq "path $path: 404 as restricted monerod" 404 "$(status -X POST "$P$path" -d '{}')"
done

# JSON-RPC as monerod speaks it.
body=$(curl -s "$P/json_rpc" -d 'not json')
assert_json "unparsable body: -32700 Parse error, id 0" "$body" '.error.code == -32700 and .id == 0'
body=$(curl -s "$P/json_rpc" -d '{"jsonrpc":"2.0","id":9}')
assert_json "no method: -32600 Invalid Request with the id" "$body" '.error.code == -32600 and .id == 9'
body=$(curl -s "$P/json_rpc" -d '[{"jsonrpc":"2.0","id":1,"method":"get_info"}]')
assert_json "a batch: -32600, batches unsupported" "$body" \
	'.error.code == -32600 and (.error.message | test("batch"))'
assert_eq "unparsable body on a JSON endpoint: 400" 400 "$(status "$P/get_transactions" -d '{bad')"
assert_eq "a body over the limit: 413" 413 \
	"$(head -c 1100000 /dev/zero | tr '\0' ' ' | status --data-binary @- "$P/json_rpc")"
assert_eq "a verb monerod clients never use: 405" 405 "$(status -X DELETE "$P/get_height")"

# Binary endpoints pass through byte for byte (heights [1], epee portable storage).
printf '\x01\x11\x01\x01\x01\x01\x02\x01\x01\x04\x07heights\x85\x04\x01\x00\x00\x00\x00\x00\x00\x00' >"$XG_VAR/heights.bin"
curl -sf --data-binary @"$XG_VAR/heights.bin" "$P/get_blocks_by_height.bin" -o "$XG_VAR/via.bin"
curl -sf --data-binary @"$XG_VAR/heights.bin" "$NODE_A_URL/get_blocks_by_height.bin" -o "$XG_VAR/direct.bin"
check "get_blocks_by_height.bin is byte-for-byte the node's answer" cmp "$XG_VAR/via.bin" "$XG_VAR/direct.bin"
check "and is a real answer (not empty)" test -s "$XG_VAR/via.bin"
