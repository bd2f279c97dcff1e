#!/usr/bin/env bash
# Decoys and fees are served only when own nodes agree (gateway/rpc/agree.h).
#
# In front of node B sits tests/tools/liar_node, configured as an own node: it multiplies
# every fee estimate by 10, changes one output key in 1 % of /get_outs and /get_outs.bin
# answers, and changes the first value of every output distribution. With A, the liar and
# C as the own nodes:
#   1. a stock wallet-rpc sends a transfer through the gateway;
#   2. 1,000 wallet-shaped calls (fee estimate, outs as JSON and .bin, the distribution as
#      JSON-RPC and .bin), with a block mined every 100 (and the gateway's quorum on it), come
#      back unaltered: each equals a direct honest node's answer (masked as agree.h masks);
#   3. the liar is marked misbehaving at [nodes] mismatch_limit (3) mismatches, each
#      counted once the quorum tip it was seen at has held, and the metrics say so;
# and with fewer nodes:
#   4. A and the liar alone: a disagreement with no majority is refused 503, blaming
#      neither;
#   5. A alone: served marked X-Xmrgate-Unverified (never cached), or, with
#      serve_unverified = false, refused 503 unverified_answer.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/nodes_lib.sh
. "$(dirname "$0")/nodes_lib.sh"

TOOL=$XG_REPO/build/release/tests/tools/liar_node
[[ -x $TOOL ]] || make -C "$XG_REPO" -s "build/release/tests/tools/liar_node" >/dev/null
work=$(mktemp -d "$XG_VAR/honest.XXXXXX")
defer rm -rf "$work"
port=$((XG_PORT_BASE + 98))
"$TOOL" "$port" "$NODE_B_URL" --outs-every 100 --dist 2>"$work/liar.err" &
defer kill $!
LIAR_URL=http://127.0.0.1:$port
check "the liar answers get_info as B" \
	wait_until 10 bash -c "curl -sf -d '{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"get_info\"}' $LIAR_URL/json_rpc >/dev/null"
fee_of() { curl -s -d '{"jsonrpc":"2.0","id":0,"method":"get_fee_estimate"}' "$1/json_rpc" | jq .result.fee; }
assert_eq "the liar says the fee is 10 times B's" "$(($(fee_of "$NODE_B_URL") * 10))" "$(fee_of "$LIAR_URL")"

set_nodes() { # "(name, url, priority, pruned), ..."
	psql_q "BEGIN; DELETE FROM nodes; INSERT INTO nodes (name, url, priority, pruned) VALUES $1;
		COMMIT;" >/dev/null
}
up_count() { gw_status | jq -e --argjson n "$1" '[.nodes[] | select(.up)] | length == $n' >/dev/null; }
nodes_migrate || true
check_here "a tenant is granted" grant_tenant --bare sovereign 1

set_nodes "('a', '$NODE_A_URL', 'primary', false), ('liar', '$LIAR_URL', 'primary', false),
	('c', '$NODE_C_URL', 'standby', true)"
check_here "a gateway over A, the liar and C starts" gateway_start honest --base nodes
check "all three nodes are up" wait_until 30 up_count 3

# 1. A stock wallet sends through the gateway while the liar is in the set.
W_PORT=$((XG_PORT_BASE + 97))
check_here "wallet-rpc through the gateway starts" \
	wallet_rpc_start honest "$W_PORT" "${GW_URL#http://}" "$HANDLE:$TOKEN"
W=http://127.0.0.1:$W_PORT
check "create a wallet through the gateway" rpc "$W" create_wallet '{"filename":"honest","language":"English"}'
address=$(rpc "$W" get_address '{"account_index":0}' | jq -r .address)
# A transaction of the payer's left unrelayed in a pool (do_not_relay: never mined) holds
# outputs its wallet counts unspent; the daemon then refuses the payment as a double spend.
# run-integration.sh flushes those before each test; a refusal here flushes them again.
IFS=, read -ra node_urls <<<"$NODE_URLS"
for _ in 1 2 3; do
	paid=$(rpc "$PAYER_WALLET_URL" transfer \
		"$(jq -cn --arg a "$address" '{destinations:[{amount:2000000000000,address:$a}]}')")
	jq -e '.tx_hash | length == 64' <<<"$paid" >/dev/null 2>&1 && break
	echo "# the payer's payment failed ($paid): unrelayed transactions flushed, then again"
	xg_flush_unrelayed "${node_urls[@]}" | sed 's/^/# /'
	rpc "$PAYER_WALLET_URL" refresh '{}' >/dev/null
done
assert_json "the payer pays the wallet" "$paid" '.tx_hash | length == 64'
check "mine 12 blocks" mine 12
unlocked() { rpc "$W" refresh '{}' >/dev/null && rpc "$W" get_balance '{}' | jq -e '.unlocked_balance > 0' >/dev/null; }
check "the wallet sees its funds unlocked" wait_until 90 unlocked
sent=$(rpc "$W" transfer "$(jq -cn --arg a "$PAYER_ADDRESS" '{destinations:[{amount:500000000000,address:$a}]}')")
assert_json "a transfer is sent through the gateway with the liar in the set" "$sent" '.tx_hash | length == 64'
fee=$(jq -r .fee <<<"$sent")
echo "# the transfer paid a fee of $fee piconero"
check "the transaction reached node A's pool" \
	wait_until 20 in_pool_listing "$NODE_A_URL" "$(jq -r .tx_hash <<<"$sent")"
check "mine a block for it" mine 1

# 2. 1,000 wallet-shaped calls, each compared with the honest nodes' own answers.
outputs=$(curl -s "$NODE_A_URL/json_rpc" -d '{"jsonrpc":"2.0","id":0,"method":"get_output_distribution","params":{"amounts":[0],"cumulative":true,"binary":false}}' |
	jq -r '.result.distributions[0].distribution[-1]')
check "node A counts its RingCT outputs ($outputs)" test "${outputs:-0}" -gt 10
XG_REPO=$XG_REPO XG_TEST_ADMIN_TOKEN=$XG_TEST_ADMIN_TOKEN python3 - "$GW_URL/v1/$TOKEN" \
	"$NODE_A_URL" "$NODE_B_URL" "$outputs" "$GW_ADMIN" >"$work/calls.out" 2>"$work/calls.err" <<'PY'
import json, os, random, struct, subprocess, sys, time, urllib.request
gw, a, b, outputs, admin = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
repo, admin_token = os.environ["XG_REPO"], os.environ["XG_TEST_ADMIN_TOKEN"]
H = b"\x01\x11\x01\x01\x01\x01\x02\x01\x01"
def u64(n): return struct.pack("<Q", n)
def outs_bin(i):
    return H + b"\x04\x07outputs\x8c\x04\x08\x06amount\x05" + u64(0) + b"\x05index\x05" + u64(i)
DIST_BIN = H + b"\x0c\x07amounts\x85\x04" + u64(0) + b"\x0acumulative\x0b\x01\x06binary\x0b\x01"
def post(url, body, ctype="application/json"):
    req = urllib.request.Request(url, data=body, headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
def masked(body, rpc):
    v = json.loads(body)
    o = v.get("result", v) if rpc else v
    for k in ("credits", "top_hash", "untrusted"):
        o.pop(k, None)
    return o
def quorum():
    req = urllib.request.Request(admin + "/v1/quorum",
                                 headers={"Authorization": "Bearer " + admin_token})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())
def rpc_body(method, params=None):
    return json.dumps({"jsonrpc": "2.0", "id": "0", "method": method,
                       "params": params or {}}).encode()
random.seed(7)
kinds = ["fee", "outs", "outs.bin", "dist", "dist.bin"]
altered = {k: 0 for k in kinds}
failed = {k: 0 for k in kinds}
for n in range(1000):
    if n and n % 100 == 0:
        # A block, and the gateway's quorum on it: a tip answer is the quorum tip's, which
        # follows the nodes within one probe interval.
        subprocess.run(["bash", "-c", ". %s/tests/integration/lib.sh && mine 1; rc=$?; "
                        "trap - EXIT; exit $rc" % repo], check=True, capture_output=True)
        height = json.loads(post(a + "/get_height", b"{}")[1])["height"]
        deadline = time.monotonic() + 30
        while quorum()["height"] != height and time.monotonic() < deadline:
            time.sleep(0.05)
    k = kinds[n % 5]
    if k == "fee":
        path, body, rpc, binary = "/json_rpc", rpc_body("get_fee_estimate"), True, False
    elif k == "dist":
        path, body, rpc, binary = "/json_rpc", rpc_body(
            "get_output_distribution", {"amounts": [0], "cumulative": True, "binary": False}), True, False
    elif k == "outs":
        idx = random.sample(range(outputs), 2)
        path, rpc, binary = "/get_outs", False, False
        body = json.dumps({"outputs": [{"amount": 0, "index": i} for i in idx]}).encode()
    elif k == "outs.bin":
        path, body, rpc, binary = "/get_outs.bin", outs_bin(random.randrange(outputs)), False, True
    else:
        path, body, rpc, binary = "/get_output_distribution.bin", DIST_BIN, False, True
    ctype = "application/octet-stream" if binary else "application/json"
    st, got = post(gw + path, body, ctype)
    if st != 200:
        failed[k] += 1
        print("failed %s: %d %s" % (k, st, got[:200]), file=sys.stderr)
        continue
    honest = [post(u + path, body, ctype)[1] for u in (a, b)]
    if binary:
        ok = got in honest
    else:
        ok = any(masked(got, rpc) == masked(h, rpc) for h in honest)
    if not ok:
        altered[k] += 1
        if binary:
            why = "%d bytes against %s" % (len(got), [len(h) for h in honest])
        else:
            g, h0 = masked(got, rpc), masked(honest[0], rpc)
            why = {key: (str(g.get(key))[:120], str(h0.get(key))[:120])
                   for key in set(g) | set(h0) if g.get(key) != h0.get(key)}
        print("altered %s: %s" % (k, why), file=sys.stderr)
print(json.dumps({"altered": altered, "failed": failed}))
PY
result=$(cat "$work/calls.out")
echo "# $result"
tail -n 5 "$work/calls.err" | sed 's/^/# /'
assert_json "1,000 calls: none altered" "$result" '[.altered[]] | add == 0'
assert_json "1,000 calls: none failed" "$result" '[.failed[]] | add == 0'
lies=$(grep -c '^liar:' "$work/liar.err")
echo "# the liar told $lies lies: $(sed -n 's/^liar: \([a-z_.]*\) .*/\1/p' "$work/liar.err" | sort | uniq -c | tr -s ' \n' ' ')"
check "the liar lied (about fees at least)" grep -q '^liar: get_fee_estimate' "$work/liar.err"

# 3. Marked misbehaving within the limit, and shown.
# A mismatch counts once the quorum tip it was seen at has held (honesty.h: probe interval
# + timeout + 5 s, 8.5 s here); the blocks mined every 100 calls excused the earlier ones.
# On one tip now, distributions the cache cannot answer (each from another height) until
# the liar's mismatches have settled.
marked() { gw_node_status liar | jq -e '.answers.times_marked >= 1' >/dev/null; }
drive_until_marked() {
	local i
	for ((i = 1; i <= 300; i++)); do
		marked && return 0
		curl -s -o /dev/null -d "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"get_output_distribution\",
			\"params\":{\"amounts\":[0],\"from_height\":$i,\"cumulative\":false}}" \
			"$GW_URL/v1/$TOKEN/json_rpc"
		sleep 0.2
	done
	marked
}
check "the liar is marked misbehaving once its mismatches have settled" drive_until_marked
liar=$(gw_node_status liar)
echo "# the liar's answers: $(jq -c .answers <<<"$liar")"
assert_json "… at its third counted mismatch" "$liar" '.answers.mismatched >= 3'
check "marked at its third mismatch (the log says so)" \
	grep -q 'node liar: 3 answers differed' "$(gw_log honest)"
assert_json "A was never marked" "$(gw_node_status a)" '.answers.times_marked == 0 and .answers.agreed > 0'
metrics=$(curl -s "$GW_ADMIN/metrics")
check "the metrics count the liar's mismatches" \
	grep -Eq '^xmrgate_gateway_node_checked_answers_total\{node="liar",answer="mismatched"\} [1-9]' <<<"$metrics"
check "the metrics count reads a majority decided" \
	grep -Eq '^xmrgate_gateway_checked_reads_total\{outcome="majority"\} [1-9]' <<<"$metrics"
gateway_stop honest

# 4. Two nodes that disagree, and no third: refused, neither blamed.
set_nodes "('a', '$NODE_A_URL', 'primary', false), ('liar', '$LIAR_URL', 'primary', false)"
check_here "a gateway over A and the liar starts" gateway_start pair --base nodes
check "both nodes are up" wait_until 30 up_count 2
fee_answer=$(curl -s -D "$work/h4" -d '{"jsonrpc":"2.0","id":0,"method":"get_fee_estimate"}' "$GW_URL/v1/$TOKEN/json_rpc")
assert_eq "the fee estimate is refused 503" 503 "$(sed -n 's/^HTTP[^ ]* \([0-9]*\).*/\1/p' "$work/h4" | tail -n 1)"
echo "# $fee_answer"
assert_json "… with answers_disagree" "$fee_answer" '.error.message | test("disagree")'
assert_json "neither node is marked" "$(gw_status)" '[.nodes[].answers.times_marked] | add == 0'
gateway_stop pair

# 5. One node: served marked unverified, never cached; or refused.
set_nodes "('a', '$NODE_A_URL', 'primary', false)"
check_here "a gateway over A alone starts" gateway_start single --base nodes
check "A is up" wait_until 30 up_count 1
gw_headers /json_rpc '{"jsonrpc":"2.0","id":0,"method":"get_fee_estimate"}' >"$work/h5"
check "served marked X-Xmrgate-Unverified" grep -qi '^X-Xmrgate-Unverified: true' "$work/h5"
gw_headers /json_rpc '{"jsonrpc":"2.0","id":0,"method":"get_fee_estimate"}' >"$work/h5b"
check "asked again: not from the cache" bash -c "! grep -qi '^X-Xmrgate-Cache: hit' '$work/h5b'"
gateway_stop single
check_here "a gateway over A alone, refusing unverified answers, starts" \
	gateway_start strict --base nodes nodes.serve_unverified=false
check "A is up" wait_until 30 up_count 1
strict=$(curl -s -D "$work/h6" -d '{"jsonrpc":"2.0","id":0,"method":"get_fee_estimate"}' "$GW_URL/v1/$TOKEN/json_rpc")
assert_eq "refused 503" 503 "$(sed -n 's/^HTTP[^ ]* \([0-9]*\).*/\1/p' "$work/h6" | tail -n 1)"
assert_json "… with unverified_answer" "$strict" '.error.message | test("only one node could answer")'
gateway_stop strict
