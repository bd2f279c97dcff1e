#!/usr/bin/env bash
# New blocks: how long after a block is mined on a node get_block_count through the
# gateway shows it, with the nodes' ZMQ publications ([nodes] zmq) and with probes only.
#
#   tests/bench/blocks.sh [BLOCKS]     (default 200)
#
# Runs against the stack in $XG_VAR (started with scripts/stack.sh; started here with
# XG_VAR=var/bench, XG_PORT_BASE=29100 when none is running). Uses ports XG_PORT_BASE+80…83.
# Two gateways run side by side over the stack's three nodes (all primary) with the
# default probe interval (2 s): one subscribed to the nodes' ZMQ publishers, one probing
# only. BLOCKS blocks are mined on node A one by one (generateblocks), at a random 0.2–0.7 s
# after both gateways showed the one before; after each, one client polls both gateways'
# get_block_count over keep-alive connections (taking turns, ~1 ms a poll) until each
# shows the new count, and nodes B and C directly until one of them has it (with A, the
# majority the quorum tip needs: no gateway can show the block sooner); the delay is from
# generateblocks' answer. Prints Markdown for docs/BENCHMARKS.md ("## New blocks").
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BLOCKS=${1:-200}
export XG_VAR=${XG_VAR:-$REPO/var/bench} XG_PORT_BASE=${XG_PORT_BASE:-29100}
# shellcheck source=tests/bench/lib.sh
. "$REPO/tests/bench/lib.sh"
bench_begin
BENCH_DB=${DATABASE_URL%/*}/xmrgate_blocks_bench
psql -X -q "${DATABASE_URL%/*}/postgres" -c "DROP DATABASE IF EXISTS xmrgate_blocks_bench WITH (FORCE)" \
	-c "CREATE DATABASE xmrgate_blocks_bench"
HA1_KEY=$(printf '%064d' 0)
XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_GATEWAY_HA1_KEY=$HA1_KEY \
	"$REPO/bin/xmrgate-billing" migrate >/dev/null 2>&1 || true
creds=$(XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_GATEWAY_HA1_KEY=$HA1_KEY \
	"$REPO/bin/xmrgate-billing" grant --tier sovereign --days 1 2>/dev/null)
TOKEN=$(sed -n 's/^TOKEN=//p' <<<"$creds")
psql -X -q "$BENCH_DB" -c "BEGIN; DELETE FROM nodes;
	INSERT INTO nodes (name, url, priority, pruned) VALUES ('a', '$NODE_A_URL', 'primary', false),
	('b', '$NODE_B_URL', 'primary', false), ('c', '$NODE_C_URL', 'primary', true); COMMIT;"

P=$((XG_PORT_BASE + 80))
gateway() { # PORT ADMIN ZMQ
	XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_AUTH_HA1_KEY=$HA1_KEY XMRGATE_SERVER_PORT=$1 \
		XMRGATE_ADMIN_PORT=$2 XMRGATE_LIMITS_ENABLED=false XMRGATE_LOG_LEVEL=warn \
		XMRGATE_NODES_ZMQ=$3 "$REPO/bin/xmrgate-gateway" 2>>"$work/gateway.log" &
	pids+=($!)
	for _ in $(seq 300); do
		curl -sf -o /dev/null "http://127.0.0.1:$2/readyz" && return 0
		sleep 0.1
	done
	echo "gateway on $1 not ready" >&2
	exit 1
}
gateway "$P" $((P + 1)) "a=$NODE_A_ZMQ,b=$NODE_B_ZMQ,c=$NODE_C_ZMQ"
gateway $((P + 2)) $((P + 3)) ""
sleep 2

python3 - "$BLOCKS" "$NODE_A_URL" "$MINER_ADDRESS" "http://127.0.0.1:$P/v1/$TOKEN" \
	"http://127.0.0.1:$((P + 2))/v1/$TOKEN" "$NODE_B_URL" "$NODE_C_URL" <<'PY'
import http.client, json, random, sys, time, urllib.parse

blocks, node, miner, gw_zmq, gw_probe, node_b, node_c = int(sys.argv[1]), *sys.argv[2:8]

class Client:
    def __init__(self, base):
        u = urllib.parse.urlsplit(base)
        self.path = u.path
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    def call(self, method, params=None):
        body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": method, "params": params or {}})
        self.conn.request("POST", self.path + "/json_rpc", body,
                          {"Content-Type": "application/json"})
        return json.loads(self.conn.getresponse().read())["result"]

n, zmq, probe = Client(node), Client(gw_zmq), Client(gw_probe)
gws = {"zmq": zmq, "probe": probe}
# The quorum needs two of the three nodes: A has the block when generateblocks answers,
# so the first of B and C to show it bounds what any gateway can do.
peers = {"b": Client(node_b), "c": Client(node_c)}
delays = {"zmq": [], "probe": [], "majority": []}
def counts():
    return {k: c.call("get_block_count")["count"] for k, c in gws.items()}
# Both gateways agree with node A first.
deadline = time.monotonic() + 30
while set(counts().values()) != {n.call("get_block_count")["count"]} and time.monotonic() < deadline:
    time.sleep(0.1)
for i in range(blocks):
    want = n.call("generateblocks", {"amount_of_blocks": 1, "wallet_address": miner})["height"] + 1
    t0 = time.monotonic()
    left = set(gws) | {"majority"}
    while left and time.monotonic() - t0 < 30:
        for k in sorted(left):
            if k == "majority":
                shown = any(c.call("get_block_count")["count"] >= want for c in peers.values())
            else:
                shown = gws[k].call("get_block_count")["count"] >= want
            if shown:
                delays[k].append((time.monotonic() - t0) * 1000)
                left.discard(k)
    time.sleep(random.uniform(0.2, 0.7))

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")
print("| gateway | blocks | p50 | p99 | max |")
print("| --- | --- | --- | --- | --- |")
for k, label in (("majority", "(a second node has the block: the quorum's floor)"),
                 ("zmq", "with `[nodes] zmq`"), ("probe", "probes only (2 s)")):
    d = delays[k]
    print(f"| {label} | {len(d)} | {pct(d, 50):.0f} ms | {pct(d, 99):.0f} ms | {max(d):.0f} ms |")
z, p = pct(delays["zmq"], 50), pct(delays["probe"], 50)
print(f"\np50 probes only / p50 with ZMQ: {p / z:.0f}x; p99: {pct(delays['probe'], 99) / pct(delays['zmq'], 99):.0f}x")
PY
