#!/usr/bin/env bash
# Daily quota shared by replicas: two gateway processes on one PostgreSQL, load spread
# over both. The tenant is served at least its quota and refused (429, -32005, naming the
# daily quota and its reset) beyond it within the documented overshoot (docs/LIMITS.md):
# per replica, one batch (100 requests of weight 1) plus what it served while one flush
# statement ran (each replica logs that number at exit). usage_daily ends equal to what
# the clients received.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/lib_limits.sh
. "$(dirname "$0")/lib_limits.sh"
defer rm -rf "$LIM_DIR"

QUOTA=500
BATCH=100
REPLICAS=2
lim_setup
lim_tier lt_quota 100000 "$QUOTA"
lim_tenant lt_quota
id=$LIM_ID token=$LIM_TOKEN
lim_gateway g1 || exit 1
defer lim_gateway_stop g1
lim_gateway g2 || exit 1
defer lim_gateway_stop g2
u1="$LIM_URL_g1/v1/$token/json_rpc"
u2="$LIM_URL_g2/v1/$token/json_rpc"

# Two clients, each alternating between the replicas, 8 requests in flight each.
lim_load 800 8 "$LIM_RPC_BODY" "$u1" "$u2" >"$LIM_DIR/c1" &
c1=$!
lim_load 800 8 "$LIM_RPC_BODY" "$u2" "$u1" >"$LIM_DIR/c2" &
c2=$!
wait "$c1" "$c2"
served=$(cat "$LIM_DIR/c1" "$LIM_DIR/c2" | grep -c '^200$')
refused=$(cat "$LIM_DIR/c1" "$LIM_DIR/c2" | grep -c '^429$')
assert_eq "every request was answered 200 or 429" 1600 $((served + refused))
check "the tenant got at least its quota ($served >= $QUOTA)" test "$served" -ge "$QUOTA"

# Once the counts are flushed, both replicas refuse, saying which limit and when it resets.
sleep 1.5
for g in "$LIM_URL_g1" "$LIM_URL_g2"; do
	reply=$(curl -s -D "$LIM_DIR/h" --data-binary '{"jsonrpc":"2.0","id":[1,2],"method":"get_info"}' \
		"$g/v1/$token/json_rpc")
	assert_json "$g refuses: -32005 naming the daily quota and its reset, id echoed" "$reply" \
		'.error.code == -32005 and (.error.message | test("daily quota.*resets at [0-9-]+T00:00:00Z"))
		 and .id == [1,2]'
	check "$g: 429 with Retry-After up to midnight and X-RateLimit-Remaining: 0" bash -c "
		grep -q '^HTTP/1.1 429' '$LIM_DIR/h' && grep -qi '^x-ratelimit-remaining: 0' '$LIM_DIR/h' &&
		r=\$(grep -i '^retry-after:' '$LIM_DIR/h' | tr -dc 0-9) && ((r >= 1 && r <= 86400))"
done
st=$(curl -s -o "$LIM_DIR/b" -w '%{http_code}' -d '{}' "$LIM_URL_g1/v1/$token/get_height")
assert_eq "a JSON endpoint over the quota: 429 with {\"status\"}" "429 true" \
	"$st $(jq '.status | test("daily quota")' "$LIM_DIR/b")"
usage=$(curl -s "$LIM_URL_g2/v1/$token/usage")
assert_json "/v1/usage on the other replica shows the quota used up" "$usage" \
	".remaining_today == 0 and .used_today >= $QUOTA"

lim_gateway_stop g1
lim_gateway_stop g2
assert_eq "usage_daily equals what the clients received" "$served" "$(lim_used "$id")"
d1=$(lim_during_flush g1) d2=$(lim_during_flush g2)
bound=$((REPLICAS * BATCH + d1 + d2))
echo "# quota $QUOTA: served $served, refused $refused, overshoot $((served - QUOTA));" \
	"bound $REPLICAS x $BATCH + served during a flush ($d1 + $d2) = $bound"
check "overshoot $((served - QUOTA)) within the bound $bound" test $((served - QUOTA)) -le "$bound"
check "overshoot within replicas x batch when flushes are quick (d1 + d2 <= 50: $((d1 + d2)))" \
	bash -c "(( $d1 + $d2 > 50 || $served - $QUOTA <= $REPLICAS * $BATCH ))"
