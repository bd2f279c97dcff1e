#!/usr/bin/env bash
# The gateway's authentication schemes and monerod-compatible answers: path token,
# Basic, Bearer and X-Api-Key reach the node; Digest as curl, Python requests and a naive
# client library speak it; wrong, unknown and missing credentials get 401 with monerod's
# two Digest challenges (Basic third on /v1/ paths only); denied methods and paths get
# what restricted monerod answers; .bin answers are passed through byte for byte.
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

# ---- the 401 challenges --------------------------------------------------------------
# challenges URL [CURL_ARGS...]: the WWW-Authenticate lines of URL's answer, as sent.
challenges() {
	local url=$1
	shift
	curl -s -D - -o /dev/null "$@" "$url" | tr -d '\r' | grep -i '^www-authenticate:'
}
# monerod_pair NONCE STALE: the two lines monerod sends, with our realm.
monerod_pair() {
	printf 'WWW-authenticate: Digest qop="auth",algorithm=%s,realm="xmrgate",nonce="%s",stale=%s\n' \
		MD5 "$1" "$2" MD5-sess "$1" "$2"
}
nonce_of() { sed -n -E '1s/.*nonce="([^"]+)".*/\1/p' <<<"$1"; }

headers=$(curl -s -D - -o /dev/null "$GW/get_height")
assert_json "no credential: 401" "$(jq -Rn --arg h "$headers" '$h')" \
	'test("^HTTP/1.1 401")'
for path in /get_height /json_rpc /getblocks.bin /get_transactions; do
	got=$(challenges "$GW$path" --data '{}')
	assert_eq "root $path: exactly monerod's two Digest challenges (MD5, then MD5-sess, one nonce, no blanks, no Basic)" \
		"$(monerod_pair "$(nonce_of "$got")" false)" "$got"
done
got=$(challenges "$GW/get_height")
check "the nonce is one of ours (48 base64url characters)" \
	grep -Eq '^[A-Za-z0-9_-]{48}$' <<<"$(nonce_of "$got")"
wrong=xg_$(head -c 32 /dev/urandom | basenc --base64url | tr -d '=\n')
got=$(challenges "$GW/v1/$wrong/get_height")
assert_eq "a /v1/ path: the same two Digest challenges, then Basic" \
	"$(monerod_pair "$(nonce_of "$got")" false)
WWW-authenticate: Basic realm=\"xmrgate\", charset=\"UTF-8\"" "$got"

# ---- Digest logins, as three kinds of client do it -------------------------------------
get_info='{"jsonrpc":"2.0","id":1,"method":"get_info"}'
real_get_info='.result.status == "OK" and .result.nettype == "fakechain" and .result.height > 0'

# (1) curl --digest: takes the first challenge (MD5), answers with a cnonce
body=$(curl -s --digest -u "$HANDLE:$TOKEN" "$GW/json_rpc" -d "$get_info")
assert_json "Digest (curl --digest): get_info answered" "$body" "$real_get_info"
sent=$(curl -s -v -o /dev/null --digest -u "$HANDLE:$TOKEN" "$GW/get_height" 2>&1 |
	tr -d '\r' | sed -n 's/^> Authorization: //p')
check "curl answered the MD5 challenge" grep -q 'algorithm=MD5$' <<<"$sent"
# monerod compares the uri with the whole request target: a query string is part of it
body=$(curl -s --digest -u "$HANDLE:$TOKEN" "$GW/get_height?a=1&b=x%2Fy")
assert_json "Digest over a target with a query string: answered" "$body" '.status == "OK"'

# (2) Python requests' HTTPDigestAuth: joins both challenges into one dict, so the later
# algorithm=MD5-sess wins; two calls in one session (nc 1, then 2 on the same nonce).
py_digest() {
	/usr/bin/python3 - "$GW/json_rpc" "$HANDLE" "$TOKEN" <<'PY'
import json, sys
import requests
from requests.auth import HTTPDigestAuth

url, user, token = sys.argv[1:4]
session = requests.Session()
session.auth = HTTPDigestAuth(user, token)
calls = []
for _ in range(2):
    r = session.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "get_info"}, timeout=30)
    calls.append({"status": r.status_code, "authorization": r.request.headers.get("Authorization", ""),
                  "body": r.json() if r.status_code == 200 else r.text})
print(json.dumps(calls))
PY
}
calls=$(py_digest 2>&1)
assert_json "Digest (Python requests): both calls 200 with a real get_info answer" "$calls" \
	"length == 2 and all(.[]; .status == 200 and (.body | .result.status == \"OK\" and .result.nettype == \"fakechain\"))"
assert_json "Python requests answered MD5-sess with a cnonce, nc 1 then 2" "$calls" \
	'(.[0].authorization | test("algorithm=\"MD5-sess\"") and test("cnonce=\"[0-9a-f]+\"") and test("nc=00000001")) and
	(.[1].authorization | test("nc=00000002"))'

# (3) a naive client, as some libraries are: joins the WWW-Authenticate values with ", ",
# cuts from ", Digest" on, splits on ',' without trimming, sends uri as the absolute URL,
# opaque="null" (there was none), qop unquoted, a cnonce, and a lower-case header name.
naive_md5() { printf '%s' "$1" | openssl dgst -md5 -r | cut -d' ' -f1; }
# naive_auth PATH: sets NAIVE_AUTH from a fresh challenge of $GW/PATH
naive_auth() {
	local path=$1 joined challenge part key value realm='' nonce='' qop='' opaque=null
	joined=$(challenges "$GW$path" --data '{}' | cut -d: -f2- | sed 's/^ //' |
		awk 'NR > 1 { printf ", " } { printf "%s", $0 }')
	challenge=${joined%%, Digest*}
	challenge=${challenge#Digest }
	IFS=, read -ra parts <<<"$challenge"
	for part in "${parts[@]}"; do
		key=${part%%=*} value=${part#*=}
		value=${value#\"} value=${value%\"}
		case $key in
		realm) realm=$value ;;
		nonce) nonce=$value ;;
		qop) qop=$value ;;
		opaque) opaque=$value ;;
		esac
	done
	local uri=$GW$path nc=00000001 cnonce ha1 ha2 response
	cnonce=$(openssl rand -hex 8)
	ha1=$(naive_md5 "$HANDLE:$realm:$TOKEN") ha2=$(naive_md5 "POST:$uri")
	response=$(naive_md5 "$ha1:$nonce:$nc:$cnonce:$qop:$ha2")
	NAIVE_AUTH="Digest username=\"$HANDLE\", realm=\"$realm\", nonce=\"$nonce\", uri=\"$uri\""
	NAIVE_AUTH+=", algorithm=MD5, response=\"$response\", opaque=\"$opaque\", qop=$qop, nc=$nc"
	NAIVE_AUTH+=", cnonce=\"$cnonce\""
}
naive_auth /json_rpc
check "the naive client found realm, nonce and qop" \
	grep -Eq 'realm="xmrgate", nonce="[A-Za-z0-9_-]{48}", uri="http://[^"]+/json_rpc".*qop=auth,' <<<"$NAIVE_AUTH"
body=$(curl -s -H "authorization: $NAIVE_AUTH" "$GW/json_rpc" -d "$get_info")
assert_json "Digest (naive client): get_info answered" "$body" "$real_get_info"
# The same request again is a replay: 401 stale=true, both challenges, a new nonce.
got=$(challenges "$GW/json_rpc" -H "authorization: $NAIVE_AUTH" -d "$get_info")
assert_eq "a replayed nc: 401 with both challenges and stale=true" \
	"$(monerod_pair "$(nonce_of "$got")" true)" "$got"
naive_auth /get_info
assert_eq "the naive client's absolute uri for another path: 400" 400 \
	"$(status -H "authorization: $NAIVE_AUTH" "$GW/get_height" -d '{}')"

# ---- refusals: nothing says which part was wrong ----------------------------------------
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
