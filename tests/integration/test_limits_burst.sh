#!/usr/bin/env bash
# Burst limit: a tenant over its tier's burst rate gets 429 with Retry-After, in the
# shape of its endpoint (JSON-RPC -32005 echoing the id, {"status"} for the JSON paths, a
# bare 429 for .bin), and is served again once Retry-After has passed. Every answer to
# the tenant carries X-RateLimit-*; GET /v1/usage answers the plan and today's usage with
# the path token and with each header scheme.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/lib_limits.sh
. "$(dirname "$0")/lib_limits.sh"
defer rm -rf "$LIM_DIR"

lim_setup
lim_tier lt_burst 2 100000 # bucket of 4, refilled at 2/s
lim_tenant lt_burst
id=$LIM_ID token=$LIM_TOKEN handle=$LIM_HANDLE
lim_gateway g1 || exit 1
defer lim_gateway_stop g1
gw=$LIM_URL_g1

# rpc_call TOKEN ID: status, headers and body of one get_block_count as one JSON object.
rpc_call() {
	curl -s -D "$LIM_DIR/h" -o "$LIM_DIR/b" -H 'Content-Type: application/json' \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":\"$2\",\"method\":\"get_block_count\"}" \
		"$gw/v1/$1/json_rpc"
	answer "$LIM_DIR/h" "$LIM_DIR/b"
}
answer() { # HEADER_FILE BODY_FILE
	jq -cn --rawfile h "$1" --rawfile b "$2" '{
		status: ($h | capture("^HTTP/1.1 (?<s>[0-9]+)").s | tonumber),
		retry: ($h | capture("(?i)retry-after: (?<r>[0-9]+)").r? // null),
		limit: ($h | capture("(?i)x-ratelimit-limit: (?<v>[0-9]+)").v? // null),
		remaining: ($h | capture("(?i)x-ratelimit-remaining: (?<v>[0-9]+)").v? // null),
		reset: ($h | capture("(?i)x-ratelimit-reset: (?<v>[0-9]+)").v? // null),
		size: ($b | length),
		body: ($b | fromjson? // $b)}'
}

# One curl process sends, back to back (a few ms): six JSON-RPC calls, a JSON endpoint
# call and a .bin call. Four fit in the bucket (2 x 2); the rest are over the burst.
args=()
for i in 1 2 3 4 5 6; do
	args+=(-D "$LIM_DIR/h$i" -o "$LIM_DIR/b$i" -H 'Content-Type: application/json'
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":\"req-$i\",\"method\":\"get_block_count\"}"
		"$gw/v1/$token/json_rpc" --next)
done
args+=(-D "$LIM_DIR/h7" -o "$LIM_DIR/b7" -d '{}' "$gw/v1/$token/get_height" --next)
args+=(-D "$LIM_DIR/h8" -o "$LIM_DIR/b8" --data-binary @/dev/null "$gw/v1/$token/get_hashes.bin")
curl -s "${args[@]}"
answers=()
for i in 1 2 3 4 5 6 7 8; do answers+=("$(answer "$LIM_DIR/h$i" "$LIM_DIR/b$i")"); done
for i in 0 1 2 3; do
	assert_json "request $((i + 1)) within the burst is served, with the quota headers" \
		"${answers[i]}" '.status == 200 and .body.result.count > 0 and .limit == "100000"
			and (.remaining | tonumber) < 100000 and .retry == null'
done
assert_json "request 5 over the burst: 429, Retry-After, -32005 naming the limit, id echoed" \
	"${answers[4]}" '.status == 429 and (.retry | tonumber) >= 1 and
		.body.error.code == -32005 and (.body.error.message | test("burst")) and
		.body.id == "req-5" and .body.jsonrpc == "2.0"'
assert_json "a 429 carries the quota headers too" "${answers[5]}" \
	'.status == 429 and .limit == "100000" and .remaining != null and
	 (.reset | tonumber) > now and (.reset | tonumber) % 86400 == 0'
assert_json "a JSON endpoint over the burst: 429 with {\"status\": …}" "${answers[6]}" \
	'.status == 429 and (.body.status | test("burst")) and .retry != null'
assert_json "a .bin endpoint over the burst: a bare 429" "${answers[7]}" \
	'.status == 429 and .size == 0 and .retry != null and .limit == "100000"'
retry=$(jq -r '.retry' <<<"${answers[4]}")

sleep "$retry"
assert_json "served again after Retry-After" "$(rpc_call "$token" again)" \
	'.status == 200 and .body.id == "again"'

# Another tenant of the same tier has its own bucket.
lim_tenant lt_burst
other=$LIM_TOKEN
xg_wait_until 5 curl -sf -o /dev/null -d '{}' "$gw/v1/$other/get_height"
assert_json "another tenant is not limited by the first one's burst" \
	"$(rpc_call "$other" x)" '.status == 200'

# GET /v1/usage, by path token and by every header scheme (Digest needs a wrapped HA1
# from billing: see test_gateway_digest for Digest itself).
sleep 2
usage_get() { curl -s -D "$LIM_DIR/h" "$@"; }
u=$(usage_get "$gw/v1/$token/usage")
assert_json "/v1/<token>/usage answers tier, usage, remaining, burst and valid_until" "$u" \
	'.status == "OK" and .tier == "lt_burst" and .daily_quota == 100000 and
	 .used_today >= 5 and .remaining_today == .daily_quota - .used_today and .burst_rps == 2 and
	 (.valid_until | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")) and
	 (.resets_at | endswith("T00:00:00Z"))'
used=$(jq -r '.used_today' <<<"$u")
check "the usage answer carries X-RateLimit-Remaining = remaining_today" \
	grep -qi "^x-ratelimit-remaining: $((100000 - used))" "$LIM_DIR/h"
assert_json "/v1/usage with Bearer" "$(usage_get -H "Authorization: Bearer $token" "$gw/v1/usage")" \
	".tier == \"lt_burst\" and .used_today == $used"
sleep 1
assert_json "/v1/usage with X-Api-Key" "$(usage_get -H "X-Api-Key: $token" "$gw/v1/usage")" \
	".tier == \"lt_burst\" and .used_today == $used"
assert_json "/v1/usage with Basic" "$(usage_get -u "$handle:$token" "$gw/v1/usage")" \
	".tier == \"lt_burst\" and .used_today == $used"
st=$(lim_status "$gw" /v1/usage -H "Authorization: Bearer xg_$(printf 'A%.0s' {1..43})")
assert_eq "/v1/usage with an unknown token: 401" 401 "$st"
check "no quota headers on a 401" bash -c "! curl -s -D - -o /dev/null '$gw/v1/usage' | grep -qi x-ratelimit"

lim_gateway_stop g1
assert_eq "usage_daily holds every served request after the last flush (weight 1 each)" \
	"$used" "$(lim_used "$id")"
