#!/usr/bin/env bash
# A gateway with several event loops on one port (SO_REUSEPORT): connections land on
# different loops, each with its own node connections, and nothing a client sees depends on
# which: every request is answered, a Digest nonce issued on one connection is accepted on
# another, and .bin answers stay byte for byte what the node sends.
. "$(dirname "$0")/lib.sh"

check_here "a gateway with three event loops starts" gateway_start loops server.loops=3
GW=$GW_URL
check_here "grant a tenant" grant_tenant sovereign 1

# 90 requests, 30 at a time, each on its own connection: spread over the loops.
seq 90 | xargs -P 30 -I{} curl -s -o /dev/null -w '%{http_code}\n' \
	"$GW/v1/$TOKEN/get_height" >"$XG_VAR/loops_codes"
assert_eq "90 parallel connections: every request answered 200" 90 \
	"$(grep -c '^200$' "$XG_VAR/loops_codes")"

# Digest: the challenge comes on one connection, the answer on new ones (curl processes of
# their own), so the nonce crosses loops; each nc is used once.
md5() { printf '%s' "$1" | md5sum | cut -d' ' -f1; }
body='{"jsonrpc":"2.0","id":1,"method":"get_block_count"}'
ok=0
for i in $(seq 10); do
	challenge=$(curl -s -D - -o /dev/null "$GW/json_rpc" -d "$body" | tr -d '\r' |
		grep -i -m1 '^WWW-Authenticate: Digest qop="auth",algorithm=MD5,')
	realm=$(sed -E 's/.*realm="([^"]+)".*/\1/' <<<"$challenge")
	nonce=$(sed -E 's/.*nonce="([^"]+)".*/\1/' <<<"$challenge")
	ha1=$(md5 "$HANDLE:$realm:$TOKEN") ha2=$(md5 "POST:/json_rpc")
	for nc in 00000001 00000002; do
		response=$(md5 "$ha1:$nonce:$nc:c$i:auth:$ha2")
		auth="Digest username=\"$HANDLE\", realm=\"$realm\", nonce=\"$nonce\", uri=\"/json_rpc\""
		auth+=", response=\"$response\", qop=auth, nc=$nc, cnonce=\"c$i\""
		answer=$(curl -s -H "Authorization: $auth" "$GW/json_rpc" -d "$body")
		jq -e '.result.count > 0' >/dev/null 2>&1 <<<"$answer" && ok=$((ok + 1))
	done
done
assert_eq "Digest nonces answered on other connections: 20 of 20 accepted" 20 "$ok"

# .bin through every loop: the node's bytes, unchanged.
printf '\x01\x11\x01\x01\x01\x01\x02\x01\x01\x04\x07heights\x85\x04\x01\x00\x00\x00\x00\x00\x00\x00' \
	>"$XG_VAR/heights.bin"
curl -sf --data-binary @"$XG_VAR/heights.bin" "$NODE_A_URL/get_blocks_by_height.bin" \
	-o "$XG_VAR/direct.bin"
same=0
for i in $(seq 12); do
	curl -sf --data-binary @"$XG_VAR/heights.bin" \
		"$GW/v1/$TOKEN/get_blocks_by_height.bin" -o "$XG_VAR/via.bin" &&
		cmp -s "$XG_VAR/direct.bin" "$XG_VAR/via.bin" && same=$((same + 1))
done
assert_eq ".bin answers through the loops are byte for byte the node's (12 of 12)" 12 "$same"

