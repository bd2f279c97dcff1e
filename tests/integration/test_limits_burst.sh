#!/usr/bin/env bash
# Burst limit: a tenant over its tier's burst bucket is delayed, not refused, while the
# wait fits [limits] max_delay (2 s): a burst over the bucket, sequential or at once, is
# served in full, shaped to the tier's rate (all 200, in at least (N - burst_size) / rate).
# Beyond the bound it gets 429 with Retry-After, in the shape of its endpoint (JSON-RPC
# -32005 echoing the id, {"status"} for the JSON paths, a bare 429 for .bin), and is
# served again once Retry-After has passed. A client that disconnects while held costs
# no node call, and the ASan gateway (both front ends) stays healthy and clean, a SIGTERM
# while requests are held included. Every answer to the tenant carries X-RateLimit-*;
# GET /v1/usage answers the plan and today's usage with the path token and with each
# header scheme.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/lib_limits.sh
. "$(dirname "$0")/lib_limits.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"
# shellcheck source=tests/epee_bodies.sh
. "$XG_REPO/tests/epee_bodies.sh"
defer rm -rf "$LIM_DIR"

lim_setup
lim_tier lt_burst 2 100000 4 # bucket of 4, refilled at 2/s; up to 4 more held (2 s)
lim_tier lt_slow 1 100000 2  # bucket of 2 at 1/s: 2 held at most
lim_tenant lt_burst
id=$LIM_ID token=$LIM_TOKEN handle=$LIM_HANDLE
gateway_start g1 --base bare || exit 1
gw=$GW_URL

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

epee_heights_body 1 >"$LIM_DIR/heights.bin"
now_ms() { date +%s%3N; }
# burst_args TOKEN N: curl arguments for N JSON-RPC get_block_count calls (id req-1…), a
# JSON endpoint call (h<N+1>) and a .bin call (h<N+2>), answers in $LIM_DIR/h* and b*.
burst_args() {
	local i
	args=()
	for ((i = 1; i <= $2; i++)); do
		args+=(-D "$LIM_DIR/h$i" -o "$LIM_DIR/b$i" -H 'Content-Type: application/json'
			--data-binary "{\"jsonrpc\":\"2.0\",\"id\":\"req-$i\",\"method\":\"get_block_count\"}"
			"$gw/v1/$1/json_rpc" --next)
	done
	args+=(-D "$LIM_DIR/h$(($2 + 1))" -o "$LIM_DIR/b$(($2 + 1))" -d '{}' "$gw/v1/$1/get_height" --next)
	args+=(-D "$LIM_DIR/h$(($2 + 2))" -o "$LIM_DIR/b$(($2 + 2))" --data-binary @"$LIM_DIR/heights.bin"
		"$gw/v1/$1/get_blocks_by_height.bin")
}
answers_of() { # N: the answers h1…hN as a JSON array
	local i
	for ((i = 1; i <= $1; i++)); do answer "$LIM_DIR/h$i" "$LIM_DIR/b$i"; done | jq -sc .
}

# One curl process sends, back to back (each as soon as the last is answered): six
# JSON-RPC calls, a JSON endpoint call and a .bin call. Four fit in the bucket; the
# other four are held, each until the rate earned its token: 4 / 2 = 2 s in all. (Until
# the limiter shaped, requests 5-8 got 429 here.)
burst_args "$token" 6
t0=$(now_ms)
curl -s "${args[@]}"
took=$(($(now_ms) - t0))
answers=$(answers_of 8)
for i in 0 1 2 3 4 5; do
	assert_json "request $((i + 1)) of a burst of 8 (bucket 4) is served, with the quota headers" \
		"$(jq -c ".[$i]" <<<"$answers")" '.status == 200 and .body.result.count > 0 and
			.limit == "100000" and (.remaining | tonumber) < 100000 and .retry == null'
done
assert_json "… the JSON endpoint call over the bucket is served too" "$(jq -c '.[6]' <<<"$answers")" \
	'.status == 200 and .body.height > 0 and .retry == null'
assert_json "… and the .bin call (held, then answered by a node)" "$(jq -c '.[7]' <<<"$answers")" \
	'.status == 200 and .size > 0 and .limit == "100000"'
echo "# 8 sequential requests over a bucket of 4 at 2/s took $took ms"
check "… shaped to the rate: at least (8 - 4) / 2 s less the refill while they ran (1.9 s)" \
	test "$took" -ge 1900
check "… and not held longer than that needs (under 3 s)" test "$took" -lt 3000

# At once: twelve in parallel once the bucket is full again (after 4 s). Four are served
# at once, four held (0.5, 1, 1.5, 2 s), and the four beyond the 2 s bound refused. One curl
# opens all twelve (twelve curl processes would trickle in on a loaded machine, and the
# bucket refill meanwhile).
sleep 4
par_args=(-s -Z --parallel-immediate --parallel-max 12)
for i in $(seq 12); do
	((i == 1)) || par_args+=(--next)
	par_args+=(-s -D "$LIM_DIR/ph$i" -o "$LIM_DIR/pb$i" -H 'Content-Type: application/json'
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":\"par-$i\",\"method\":\"get_block_count\"}"
		"$gw/v1/$token/json_rpc")
done
t0=$(now_ms)
curl "${par_args[@]}"
took=$(($(now_ms) - t0))
par=$(for i in $(seq 12); do answer "$LIM_DIR/ph$i" "$LIM_DIR/pb$i"; done | jq -sc .)
assert_eq "12 at once over a bucket of 4 at 2/s, 2 s bound: 8 served (4 of them held), 4 refused" \
	"200:8 429:4" "$(jq -r 'group_by(.status) | map("\(.[0].status):\(length)") | join(" ")' <<<"$par")"
echo "# 12 parallel requests: answered in $took ms"
check "… the last one held was served after its 2 s (>= 1.9 s in all)" test "$took" -ge 1900
assert_json "each refusal: 429, Retry-After, -32005 naming the limit, its own id echoed" "$par" \
	'map(select(.status == 429)) | length == 4 and all(.[];
		(.retry | tonumber) >= 1 and .body.error.code == -32005 and
		(.body.error.message | test("burst")) and (.body.id | startswith("par-")) and
		.body.jsonrpc == "2.0")'

# The shapes of a refusal: a tenant of lt_slow holds 2 at most. Four at once in the
# background fill the bucket and the wait (2 now, 2 held up to 2 s); the three calls
# right after, within the second before the rate earns a place, are refused.
lim_tenant lt_slow
slow=$LIM_TOKEN
xg_wait_until 5 curl -sf -o /dev/null -d '{}' "$gw/v1/$slow/get_height"
sleep 4
lim_load 4 4 "$LIM_RPC_BODY" "$gw/v1/$slow/json_rpc" >"$LIM_DIR/slow-bg" &
bg=$!
sleep 0.3
burst_args "$slow" 1
curl -s "${args[@]}"
answers=$(answers_of 3)
wait "$bg"
assert_eq "… the four at once: all served (two held)" "200 200 200 200" "$(sort "$LIM_DIR/slow-bg" | xargs)"
assert_json "over the bound: 429, Retry-After, -32005 naming the limit, id echoed" \
	"$(jq -c '.[0]' <<<"$answers")" '.status == 429 and (.retry | tonumber) >= 1 and
		.body.error.code == -32005 and (.body.error.message | test("burst")) and
		.body.id == "req-1" and .body.jsonrpc == "2.0"'
assert_json "a 429 carries the quota headers too" "$(jq -c '.[0]' <<<"$answers")" \
	'.status == 429 and .limit == "100000" and .remaining != null and
	 (.reset | tonumber) > now and (.reset | tonumber) % 86400 == 0'
assert_json "a JSON endpoint over the bound: 429 with {\"status\": …}" "$(jq -c '.[1]' <<<"$answers")" \
	'.status == 429 and (.body.status | test("burst")) and .retry != null'
assert_json "a .bin endpoint over the bound: a bare 429" "$(jq -c '.[2]' <<<"$answers")" \
	'.status == 429 and .size == 0 and .retry != null and .limit == "100000"'
retry=$(jq -r '.[0].retry' <<<"$answers")

sleep "$retry"
assert_json "served again after Retry-After" "$(rpc_call "$slow" again)" \
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
	 .burst_size == 4 and
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

gateway_stop g1
assert_eq "usage_daily holds every served request after the last flush (weight 1 each)" \
	"$used" "$(lim_used "$id")"

# Held requests on the ASan gateway, with each front end: clients that give up while
# held (curl --max-time 0.3) cost no node call and no memory once their time comes, the
# gateway goes on serving, and a SIGTERM while requests are held drains them (served).
check "the ASan+UBSan gateway is built" asan_gateway_built
pool_body() { printf 'url = "%s"\noutput = "/dev/null"\n' "$@"; }
held_round() { # NAME FRONT_END
	local name=$1 front=$2 url am i
	check_here "$name: the ASan gateway ($front front end) becomes ready" gateway_start \
		"burst-$front" --asan server.front_end="$front" || return 1
	url=$GW_URL am=$GW_ADMIN
	lim_tenant lt_burst
	local tok=$LIM_TOKEN
	xg_wait_until 5 curl -sf -o /dev/null -d '{}' "$url/v1/$tok/get_height"
	sleep 3 # the probe above took a token: full again
	local nodes_before delayed_before
	nodes_before=$(metric_sum "$am" xmrgate_gateway_node_requests_total)
	delayed_before=$(metric "$am" xmrgate_gateway_burst_delay_seconds_count)
	# Ten at once of a call that always goes to a node (the pool, passthrough): 4 served,
	# 4 held (0.5 to 2 s) whose clients leave after 0.3 s, 2 refused.
	for i in $(seq 10); do pool_body "$url/v1/$tok/get_transaction_pool_hashes"; done >"$LIM_DIR/gone"
	curl -s -Z --parallel-immediate --parallel-max 10 --max-time 0.3 -d '{}' \
		-w '%{http_code}\n' -K "$LIM_DIR/gone" >"$LIM_DIR/gone-status" 2>/dev/null
	assert_eq "$name: ten at once, clients giving up after 0.3 s: 4 served, 4 held and left, 2 refused" \
		"000:4 200:4 429:2" "$(sort "$LIM_DIR/gone-status" | uniq -c | awk '{ printf "%s%s:%s", (NR > 1 ? " " : ""), $2, $1 }')"
	sleep 2.5 # every held request came due meanwhile
	assert_eq "$name: the held requests whose client left never reached a node (node calls: the 4 served)" \
		$((nodes_before + 4)) "$(metric_sum "$am" xmrgate_gateway_node_requests_total)"
	assert_eq "$name: … and were counted as delayed (xmrgate_gateway_burst_delay_seconds)" \
		$((delayed_before + 4)) "$(metric "$am" xmrgate_gateway_burst_delay_seconds_count)"
	check "$name: the gateway serves on" curl -sf -o /dev/null -d '{}' "$url/v1/$tok/get_height"
	check "$name: … and is healthy" curl -sf -o /dev/null "$am/healthz"
	# SIGTERM while held: the drain lets them come due and answers them.
	sleep 3
	local answered_before
	answered_before=$(metric_sum "$am" xmrgate_gateway_requests_total)
	lim_load 8 8 "$LIM_RPC_BODY" "$url/v1/$tok/json_rpc" >"$LIM_DIR/drain-status" &
	local bg=$!
	# SIGTERM once the four served at once are answered, so every client has connected (on
	# a loaded machine its curl may take longer than a fixed pause) and four are held
	four_answered() {
		(($(metric_sum "$am" xmrgate_gateway_requests_total) >= answered_before + 4))
	}
	xg_wait_until 10 four_answered
	asan_gateway_stop "burst-$front" "$name"
	wait "$bg"
	assert_eq "$name: SIGTERM with requests held: all 8 of the burst answered 200" \
		"200:8" "$(sort "$LIM_DIR/drain-status" | uniq -c | awk '{ printf "%s:%s", $2, $1 }')"
}
held_round native native
held_round libmicrohttpd libmicrohttpd
