#!/usr/bin/env bash
# The prober's own liveness: can a hung probe stall a round? A frozen node (kill -STOP:
# the kernel still accepts its connections, nothing answers) is the hung probe. Every
# probe call has a hard deadline ([nodes] probe_timeout) and a round waits for nothing
# else, so a round with a frozen node still ends, about one probe timeout after it
# starts: the rounds counter goes on moving, the last round's age stays under the stall
# limit (3 x the longer of probe_interval and probe_timeout: 6 s here) and /readyz has no
# "prober" reason — with one node frozen and with every node frozen (then the replica is
# not ready for its quorum, not for a stalled prober). The rule that would call a prober
# stalled (health_prober_stalled) is table-tested in tests/unit/gateway/nodes/test_health.c.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

LIMIT_S=6

check "the nodes agree on one chain" wait_until 120 nodes_agree
nodes_table "a:primary b:standby"
check_here "a gateway over A and B starts" gateway_start liveness --base nodes
ADM=$GW_ADMIN

rounds() { metric "$ADM" xmrgate_gateway_prober_rounds_total; }
age() { metric "$ADM" xmrgate_gateway_prober_last_round_age_seconds; }
check "the liveness series are exported" bash -c \
	"curl -sf '$ADM/metrics' | grep -q '^xmrgate_gateway_prober_stalled 0$'"
assert_json "/readyz lists the prober check, passing" "$(curl -s "$ADM/readyz")" \
	'.checks.prober == "ok"'

# Samples the age for SECONDS, every 0.25 s: prints the largest seen.
max_age_over() {
	local until=$(($(date +%s) + $1)) max=0 a
	while (($(date +%s) < until)); do
		a=$(age)
		max=$(awk -v a="$a" -v m="$max" 'BEGIN { print (a + 0 > m + 0 ? a : m) }')
		sleep 0.25
	done
	echo "$max"
}
rounds_move_by() { # N SECONDS: the counter moves by at least N within SECONDS
	local from
	from=$(rounds)
	wait_until "$2" metric_at_least "$ADM" xmrgate_gateway_prober_rounds_total $((from + $1))
}
not_stalled() {
	[[ $(metric "$ADM" xmrgate_gateway_prober_stalled) == 0 ]] &&
		! curl -s "$ADM/readyz" | grep -q 'prober stalled'
}

check "rounds go on with every node answering (3 within 10 s)" rounds_move_by 3 10
max=$(max_age_over 6)
echo "# largest last-round age, every node answering: ${max} s"
check "… and the last round is never older than the interval and a round" \
	awk -v m="$max" 'BEGIN { exit !(m < 4) }'

freeze b
defer thaw b
check "rounds go on with B frozen (its probes hang: 3 rounds within 15 s)" rounds_move_by 3 15
took=$(metric "$ADM" xmrgate_gateway_prober_last_round_duration_seconds)
echo "# a round with B frozen took ${took} s (probe_timeout 1.5 s)"
check "… each round ending after about the probe timeout (>= 1.4 s, < 3 s)" \
	awk -v t="$took" 'BEGIN { exit !(t >= 1.4 && t < 3) }'
max=$(max_age_over 10)
echo "# largest last-round age with B frozen: ${max} s (stall limit ${LIMIT_S} s)"
check "… the last round's age stays under the stall limit" \
	awk -v m="$max" -v l="$LIMIT_S" 'BEGIN { exit !(m < l) }'
check "… and the prober is not called stalled" not_stalled

freeze a
defer thaw a
check "rounds go on with every node frozen (3 within 15 s)" rounds_move_by 3 15
not_ready_for_quorum() {
	[[ $(curl -s -o /dev/null -w '%{http_code}' "$ADM/readyz") == 503 ]] &&
		curl -s "$ADM/readyz" | jq -e '.checks.quorum != "ok" and .checks.prober == "ok"' >/dev/null
}
check "… the replica is not ready for its quorum, not for a stalled prober" \
	wait_until 20 not_ready_for_quorum
max=$(max_age_over 6)
echo "# largest last-round age with every node frozen: ${max} s"
check "… the age still stays under the stall limit" \
	awk -v m="$max" -v l="$LIMIT_S" 'BEGIN { exit !(m < l) }'
thaw a
thaw b
check "thawed, the replica is ready again" wait_until 30 gw_ready
