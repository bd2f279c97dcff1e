#!/usr/bin/env bash
# The quorum is a majority of the configured own nodes, and readiness means "this replica can
# serve". With A, B and C configured, B and C are frozen (kill -STOP): A alone is no quorum of
# three, so the gateway runs degraded — the X-Xmrgate-Degraded header on answers,
# xmrgate_gateway_quorum_degraded at 1, one quorum_degraded log line — yet it keeps answering
# from A and /readyz stays 200, saying "degraded" in its body (a balancer must not pull every
# replica at once). Thawed, the quorum comes back: quorum_restored, no header, readiness no
# longer degraded.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"
# shellcheck source=tests/integration/ops_lib.sh
. "$(dirname "$0")/ops_lib.sh"

check "the nodes agree on one chain" wait_until 120 nodes_agree
check "the nodes table holds A (primary), B and C (standby)" \
	nodes_table "a:primary b:standby c:standby"
check_here "a tenant is granted" grant_tenant --bare sovereign 1
check_here "a gateway starts and is ready" gateway_start quorum --base nodes

quorum() { curl -s -H "Authorization: Bearer $XG_TEST_ADMIN_TOKEN" "$GW_ADMIN/v1/quorum"; }
agreed() { quorum | jq -e '.known and (.degraded | not) and .agreeing == 3' >/dev/null; }
check "the three own nodes agree" wait_until 20 agreed
assert_json "the quorum counts three configured voters" "$(quorum)" '.voters == 3'
assert_json "readiness: ready, not degraded, quorum ok" "$(curl -s "$GW_ADMIN/readyz")" \
	'.status == "ready" and .degraded == false and .checks.quorum == "ok"'
assert_eq "metric: own nodes configured" 3 "$(metric "$GW_ADMIN" xmrgate_gateway_quorum_voters)"
info='{"jsonrpc":"2.0","id":1,"method":"get_info"}'
check "an answer without the degraded header" \
	bash -c "! grep -qi '^x-xmrgate-degraded:' <<<\"\$1\"" _ "$(gw_headers /json_rpc "$info")"

GW_MARK=$(now_ms)
freeze b
freeze c
degraded() { metric_is "$GW_ADMIN" xmrgate_gateway_quorum_degraded 1; }
check "one node of three answering: the quorum is degraded (metric)" wait_until 20 degraded
ready_code=$(curl -s -o /dev/null -w '%{http_code}' "$GW_ADMIN/readyz")
assert_eq "readiness stays 200 while degraded" 200 "$ready_code"
ready_body=$(curl -s "$GW_ADMIN/readyz")
assert_json "readiness says degraded in its body" "$ready_body" \
	'.status == "ready" and .degraded == true and (.checks.quorum | startswith("degraded"))'
assert_json "the admin API says degraded, one of three voters answering" "$(quorum)" \
	'.degraded and .voters == 3 and .agreeing == 0'
# grep, not jq: the log may hold a line that is not JSON (a library's own message).
check "a quorum_degraded line is logged" wait_until 10 gw_logged quorum_degraded
assert_eq "exactly one quorum_degraded line" 1 "$(grep -c '"event":"quorum_degraded"' "$GW_LOG")"
# B and C may still be up by hysteresis for a round; ask until A alone answers.
serves_degraded() {
	local h
	h=$(curl -sS --max-time 10 -D - -o /dev/null -H 'Content-Type: application/json' \
		--data-binary "$info" "$GW_URL/v1/$TOKEN/json_rpc" | tr -d '\r')
	grep -q '^HTTP/1.1 200' <<<"$h" && grep -qi '^x-xmrgate-degraded: no-quorum' <<<"$h"
}
check "answers are served from A with X-Xmrgate-Degraded: no-quorum" wait_until 20 serves_degraded
height=$(gw_rpc get_info | jq -r '.height')
check "the degraded answer is A's chain (height $height)" test "${height:-0}" -gt 0

thaw b
thaw c
restored() { agreed && metric_is "$GW_ADMIN" xmrgate_gateway_quorum_degraded 0; }
check "thawed, the three agree again" wait_until 40 restored
check "a quorum_restored line is logged" gw_logged quorum_restored
assert_json "readiness is no longer degraded" "$(curl -s "$GW_ADMIN/readyz")" \
	'.status == "ready" and .degraded == false and .checks.quorum == "ok"'
check "answers lose the degraded header" \
	bash -c "! grep -qi '^x-xmrgate-degraded:' <<<\"\$1\"" _ "$(gw_headers /json_rpc "$info")"
