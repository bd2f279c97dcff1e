#!/usr/bin/env bash
# Metrics: both daemons' /metrics parse (promtool check metrics) and the right series move —
# a client request by class, method and status; a cache hit; a 429; a node going down on
# kill -STOP and back on kill -CONT; an invoice going from pending to seen when it is paid,
# with the payment and its piconero.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"

GW=$GATEWAY_URL
GA=$GATEWAY_ADMIN_URL

# --- the exposition ----------------------------------------------------------------------
parses() { curl -sf --max-time 10 "$1/metrics" | promtool check metrics; }
check "the gateway's /metrics parses (promtool check metrics)" parses "$GA"
check "billing's /metrics parses (promtool check metrics)" parses "$BILLING_ADMIN_URL"
assert_eq "/metrics is served as text format 0.0.4" "text/plain; version=0.0.4; charset=utf-8" \
	"$(curl -s -o /dev/null -w '%{content_type}' "$GA/metrics")"
# xmrgate_build_info: the release and commit --version prints, on both daemons.
build_line() {
	local v
	v=$("$XG_REPO/bin/$1" --version) || return 1
	# "xmrgate-gateway 0.3.0 (commit 3f2a9c1d0b7e)" -> version="0.3.0",commit="3f2a9c1d0b7e"
	sed -E 's/^[^ ]+ ([^ ]+) \(commit ([^)]+)\)$/xmrgate_build_info{version="\1",commit="\2"} 1/' <<<"$v"
}
assert_eq "--version names the release in the VERSION file" "$(cat "$XG_REPO/VERSION")" \
	"$("$XG_REPO/bin/xmrgate-gateway" --version | cut -d' ' -f2)"
assert_eq "the gateway exports xmrgate_build_info with the release and commit of --version" \
	"$(build_line xmrgate-gateway)" "$(curl -sf "$GA/metrics" | grep '^xmrgate_build_info{')"
assert_eq "billing exports xmrgate_build_info with the release and commit of --version" \
	"$(build_line xmrgate-billing)" "$(curl -sf "$BILLING_ADMIN_URL/metrics" | grep '^xmrgate_build_info{')"
no_customer_labels() { ! curl -sf "$GA/metrics" | grep -Eiq '(tenant|token|handle|client|address|ip)="'; }
check "no series is labelled by tenant, token, handle or client address" no_customer_labels

# --- requests, the cache ------------------------------------------------------------------
check_here "a tenant is granted (sovereign tier)" grant_tenant sovereign 1
GET_INFO='xmrgate_gateway_requests_total{class="tip",method="get_info",status="200"}'
req_before=$(metric "$GA" "$GET_INFO")
hits_before=$(metric "$GA" xmrgate_gateway_cache_hits_total)
cache_before=$(metric "$GA" 'xmrgate_gateway_request_outcomes_total{class="tip",outcome="cache"}')
for _ in 1 2 3; do
	rpc "$GW/v1/$TOKEN" get_info >/dev/null
done
assert_eq "three get_info requests are counted under their class, method and status" \
	$((req_before + 3)) "$(metric "$GA" "$GET_INFO")"
check "a repeated get_info is a cache hit (xmrgate_gateway_cache_hits_total moves)" \
	metric_at_least "$GA" xmrgate_gateway_cache_hits_total $((hits_before + 1))
check "… and its outcome is counted as cache" \
	metric_at_least "$GA" 'xmrgate_gateway_request_outcomes_total{class="tip",outcome="cache"}' \
	$((cache_before + 1))
check "the client latency histogram has the requests" \
	metric_at_least "$GA" 'xmrgate_gateway_request_duration_seconds_count{class="tip",outcome="cache"}' 1

request_id() { curl -s -D - -o /dev/null "$GW/v1/$TOKEN/get_height" | tr -d '\r' |
	sed -n 's/^X-Request-Id: //Ip'; }
id1=$(request_id)
id2=$(request_id)
check "every answer carries an X-Request-Id (the id error lines in the log carry)" \
	bash -c "[[ '$id1' =~ ^[0-9a-f]{16}\$ && '$id2' =~ ^[0-9a-f]{16}\$ && '$id1' != '$id2' ]]"

# --- a 429 --------------------------------------------------------------------------------
check_here "a free-tier tenant is granted (2 rps, bucket of 40)" grant_tenant free 1
limited_before=$(metric "$GA" 'xmrgate_gateway_rate_limited_total{limit="burst"}')
s429_before=$(metric_sum "$GA" xmrgate_gateway_requests_total 'status="429"')
delayed_before=$(metric "$GA" xmrgate_gateway_burst_delay_seconds_count)
# Sixty at once: past the bucket (40) and the 2 s of the rate it may wait for (4), so
# some are held and the rest refused. (Sequential calls no longer get a 429: they wait.)
for _ in $(seq 60); do printf 'url = "%s"\noutput = "/dev/null"\n' "$GW/v1/$TOKEN/get_height"; done >"$XG_VAR/ops-burst.cfg"
defer rm -f "$XG_VAR/ops-burst.cfg"
got429=$(curl -s -Z --parallel-immediate --parallel-max 60 -w '%{http_code}\n' -K "$XG_VAR/ops-burst.cfg" | grep -c '^429$')
check "a burst over the free tier's bucket and wait bound gets 429s" test "$got429" -gt 0
check "… and the requests it held are counted (xmrgate_gateway_burst_delay_seconds)" \
	metric_at_least "$GA" xmrgate_gateway_burst_delay_seconds_count $((delayed_before + 1))
assert_eq "each 429 is counted as limit=burst" $((limited_before + got429)) \
	"$(metric "$GA" 'xmrgate_gateway_rate_limited_total{limit="burst"}')"
assert_eq "… and as status 429 in the request series" $((s429_before + got429)) \
	"$(metric_sum "$GA" xmrgate_gateway_requests_total 'status="429"')"

# --- a node down and back -----------------------------------------------------------------
NODE_C_PID=$(head -n 1 "$XG_VAR/run/node-c.pid")
check "node c is up in the metrics" metric_is "$GA" 'xmrgate_gateway_node_up{node="c"}' 1
kill -STOP "$NODE_C_PID"
defer kill -CONT "$NODE_C_PID"
t0=$(date +%s)
check "kill -STOP: xmrgate_gateway_node_up{node=\"c\"} goes to 0" \
	wait_until 30 metric_is "$GA" 'xmrgate_gateway_node_up{node="c"}' 0
echo "# node c marked down after $(($(date +%s) - t0)) s"
check "… and the quorum still has two healthy nodes" \
	metric_is "$GA" xmrgate_gateway_quorum_healthy_nodes 2
assert_eq "the quorum is not degraded" 0 "$(metric "$GA" xmrgate_gateway_quorum_degraded)"
kill -CONT "$NODE_C_PID"
check "kill -CONT: node c comes back up" \
	wait_until 40 metric_is "$GA" 'xmrgate_gateway_node_up{node="c"}' 1
check "… and its lag is 0" metric_is "$GA" 'xmrgate_gateway_node_lag_blocks{node="c"}' 0

# --- an invoice changes state -------------------------------------------------------------
bt_setup
bt_tier ops-metrics 10000000000 3
check_here "a billing instance starts" billing_start ops invoices.create_burst=100
BA=$BL_ADMIN
check "it leads (xmrgate_billing_leader 1)" wait_until 15 metric_is "$BA" xmrgate_billing_leader 1
pending0=$(metric "$BA" 'xmrgate_billing_invoices{state="pending"}')
seen0=$(metric "$BA" 'xmrgate_billing_invoices{state="seen"}')
pool0=$(metric "$BA" 'xmrgate_billing_payments{state="pool"}')
pico0=$(metric "$BA" 'xmrgate_billing_received_piconero{state="pool"}')
read -r st inv <<<"$(bt_invoice ops '{"tier":"ops-metrics","months":1}')"
assert_eq "an invoice is created" 201 "$st"
assert_eq "xmrgate_billing_invoices{state=\"pending\"} counts it" $((pending0 + 1)) \
	"$(metric "$BA" 'xmrgate_billing_invoices{state="pending"}')"
check "the payer pays it" payer_pays "$(jq -r .address <<<"$inv")" "$(jq -r .amount <<<"$inv")"
check "the invoice moves to seen in the metrics" \
	wait_until 60 metric_is "$BA" 'xmrgate_billing_invoices{state="seen"}' $((seen0 + 1))
assert_eq "… and leaves pending" "$pending0" \
	"$(metric "$BA" 'xmrgate_billing_invoices{state="pending"}')"
assert_eq "the payment is counted in the pool" $((pool0 + 1)) \
	"$(metric "$BA" 'xmrgate_billing_payments{state="pool"}')"
assert_eq "its piconero are counted" "$(jq -r .amount <<<"$inv")" \
	"$(awk -v a="$(metric "$BA" 'xmrgate_billing_received_piconero{state="pool"}')" -v b="$pico0" \
		'BEGIN { printf "%.0f", a - b }')"
check "the poll cycles are counted" metric_at_least "$BA" xmrgate_billing_poll_cycles_total 1
check "the wallet is reported up" metric_is "$BA" xmrgate_billing_wallet_up 1
