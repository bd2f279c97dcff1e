#!/usr/bin/env bash
# HTTP Digest clients on the free tier (a fresh tenant of the README's demo tier): curl
# --digest and Python requests' HTTPDigestAuth (their challenge handling in detail is
# test_gateway_auth.sh's), and a Node client.
#
# The Node client logs in through the gateway on the free tier with HTTP Digest, as Node
# programs log in to monerod: the npm "request" library (Debian's node-request, loaded
# from /usr/share/nodejs: nothing is fetched from npm), auth {user, pass,
# sendImmediately: false}, in tests/integration/node_digest_client.js. It answers the 401's
# two challenges, joined into one header value by Node, with MD5-sess (the later one wins
# in its parser), and gets a JSON-RPC answer (get_info on /json_rpc) and a plain-JSON one
# (/get_height) that agree with the node's own.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

CLIENT=$XG_REPO/tests/integration/node_digest_client.js
check "node runs" node --version
check "Debian's node-request is installed (scripts/deps.sh)" test -r /usr/share/nodejs/request/package.json
check_here "a free-tier tenant is granted" grant_tenant free 1

height_direct=$(curl -sf "$NODE_A_URL/get_height" | jq .height)
out=$(NODE_PATH=/usr/share/nodejs timeout 120 node "$CLIENT" "$GATEWAY_URL" "$HANDLE" "$TOKEN" 2>&1)
echo "# node $(node --version), request $(jq -r .version <<<"$out" 2>/dev/null)"
assert_json "the client ran both calls" "$out" '.calls | length == 2 and all(.[]; has("status"))'
assert_json "json_rpc get_info through Digest: 200 with the node's answer" "$out" \
	'.calls[0] | .status == 200 and .body.id == 1 and .body.result.status == "OK" and
	 .body.result.nettype == "fakechain" and .body.result.height > 0'
assert_json "plain JSON /get_height through Digest: 200 with the chain height" "$out" \
	".calls[1] | .status == 200 and .body.status == \"OK\" and .body.height >= $height_direct"
assert_json "it answered the challenge with Digest MD5-sess, qop=auth, a cnonce and the path as uri" "$out" \
	"all(.calls[]; .authorization | startswith(\"Digest \") and test(\"username=\\\"$HANDLE\\\"\") and
	 test(\"algorithm=MD5-sess\") and test(\"qop=auth\") and test(\"cnonce=\\\"[0-9a-f]+\\\"\")) and
	 (.calls[0].authorization | test(\"uri=\\\"/json_rpc\\\"\")) and
	 (.calls[1].authorization | test(\"uri=\\\"/get_height\\\"\"))"
assert_eq "the tenant is on the free tier" free \
	"$(psql_q "SELECT tier_id FROM tenants WHERE handle = '$HANDLE'")"
status=$(NODE_PATH=/usr/share/nodejs timeout 60 node "$CLIENT" "$GATEWAY_URL" "$HANDLE" "xg_wrong" 2>&1 |
	jq -c '[.calls[].status]')
assert_eq "a wrong token: 401 on both calls" "[401,401]" "$status"

# curl --digest and Python requests on the same free-tier login.
body=$(curl -s --digest -u "$HANDLE:$TOKEN" "$GATEWAY_URL/json_rpc" \
	-d '{"jsonrpc":"2.0","id":1,"method":"get_info"}')
assert_json "curl $(curl --version | awk 'NR == 1 { print $2 }') --digest, free tier: json_rpc get_info answered" \
	"$body" '.result.status == "OK" and .result.nettype == "fakechain"'
body=$(curl -s --digest -u "$HANDLE:$TOKEN" "$GATEWAY_URL/get_height")
assert_json "curl --digest, free tier: /get_height answered" "$body" '.status == "OK" and .height > 0'
py=$(/usr/bin/python3 - "$GATEWAY_URL" "$HANDLE" "$TOKEN" <<'PY'
import json, sys
import requests
from requests.auth import HTTPDigestAuth

base, user, token = sys.argv[1:4]
s = requests.Session()
s.auth = HTTPDigestAuth(user, token)
a = s.post(base + "/json_rpc", json={"jsonrpc": "2.0", "id": 1, "method": "get_info"}, timeout=30)
b = s.post(base + "/get_height", json={}, timeout=30)
print(json.dumps({"version": requests.__version__, "status": [a.status_code, b.status_code],
                  "info": a.json() if a.ok else a.text, "height": b.json() if b.ok else b.text}))
PY
)
assert_json "Python requests $(jq -r .version <<<"$py" 2>/dev/null) HTTPDigestAuth, free tier: json_rpc and plain JSON answered" \
	"$py" '.status == [200, 200] and .info.result.status == "OK" and .height.status == "OK"'

# A deliberately naive client on the same free-tier login, written here apart from
# test_gateway_auth.sh's shell one: joins the WWW-Authenticate values with ", ", cuts from
# ", Digest" on, splits on ',' without trimming, sends uri as the absolute URL,
# opaque="null" (there was none) and qop unquoted.
naive=$(/usr/bin/python3 - "$GATEWAY_URL" "$HANDLE" "$TOKEN" <<'PY'
import hashlib, http.client, json, os, sys, urllib.parse

base, user, token = sys.argv[1:4]
u = urllib.parse.urlsplit(base)
md5 = lambda s: hashlib.md5(s.encode()).hexdigest()
out = []
for path, body in (("/json_rpc", '{"jsonrpc":"2.0","id":1,"method":"get_info"}'), ("/get_height", "{}")):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("POST", path, body, {"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    first = r.status
    joined = ", ".join(r.headers.get_all("WWW-Authenticate") or [])
    challenge = joined.split(", Digest")[0][len("Digest "):]
    f = {}
    for part in challenge.split(","):
        k, _, v = part.partition("=")
        f[k] = v.strip('"')
    uri, nc, cnonce = base + path, "00000001", os.urandom(8).hex()
    resp = md5(":".join([md5(f"{user}:{f.get('realm')}:{token}"), f.get("nonce", ""), nc, cnonce,
                         f.get("qop", ""), md5("POST:" + uri)]))
    auth = (f'Digest username="{user}", realm="{f.get("realm")}", nonce="{f.get("nonce")}", '
            f'uri="{uri}", algorithm=MD5, response="{resp}", opaque="{f.get("opaque", "null")}", '
            f'qop={f.get("qop")}, nc={nc}, cnonce="{cnonce}"')
    c.request("POST", path, body, {"Content-Type": "application/json", "authorization": auth})
    r = c.getresponse()
    text = r.read().decode()
    out.append({"first": first, "found": sorted(k for k in f if k in ("realm", "nonce", "qop")),
                "status": r.status, "body": json.loads(text) if r.status == 200 else text})
print(json.dumps(out))
PY
)
assert_json "the naive client got 401 first and found realm, nonce and qop in the joined challenges" \
	"$naive" 'all(.[]; .first == 401 and .found == ["nonce", "qop", "realm"])'
assert_json "the naive client, free tier: json_rpc get_info and plain-JSON /get_height answered" \
	"$naive" '.[0].status == 200 and .[0].body.result.status == "OK" and
	 .[1].status == 200 and .[1].body.height > 0'
