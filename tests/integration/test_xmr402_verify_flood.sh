#!/usr/bin/env bash
# One address floods billing's POST /api/xmr402/verify (issue #30's measure): 60 proofs at
# once with made-up 64-hex txids and well-formed OutProofV2 texts, then one a second. Each
# such proof waits for its transaction ([xmr402] unseen_hold) as a suspended connection,
# not on one of the API's worker threads, and holds no database connection; the global
# verify token is taken before the wait, and waiting proofs are bounded per client
# ([xmr402] max_held_per_client) and over all. Meanwhile another address's GET /api/tiers
# and POST /api/invoices are each answered within 1 s (p99 over 20 calls each, no
# failure), and an agent written to the XMR402 draft pays through the gateway, sends its
# proof right after broadcast, is served at once and ends provisioned. Real stack: the
# stack's billing (4 API threads), gateway, monerod, wallets and PostgreSQL.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/xmr402_lib.sh
. "$(dirname "$0")/xmr402_lib.sh"

TIER=agent
CONFIRMATIONS=2
CAP=100000000000
FLOOD_S=${XG_FLOOD_S:-25} # the one-a-second tail after the burst
BURST_N=60
ATTACKER=127.0.77.2
VICTIM=127.0.77.3
HOLD_S=8 # [xmr402] unseen_hold's default
PER_CLIENT=4 # [xmr402] max_held_per_client's default

check_here "the agent tier confirms after $CONFIRMATIONS blocks" x4_setup "$TIER" "$CONFIRMATIONS" ||
	exit 1
check "billing asks a node ([wallet] daemon_url)" \
	grep -q '^daemon_url = http' "$XG_VAR/etc/billing.ini"
# the victim buys 20 invoices in the run: room for them in its per-address bucket
check_here "billing restarted with invoices.create_burst = 100 (defaults otherwise)" \
	stack_billing_restart invoices.create_burst=100
defer stack_billing_restart

W=$(mktemp -d)
defer rm -rf "$W"
PROOF="OutProofV2$(head -c 300 /dev/urandom | base64 -w0 | tr -dc '1-9A-HJ-NP-Za-km-z' | head -c 180)"

# verify N: one made-up proof from the attacker; status and seconds into $W/flood.N
verify() {
	curl -s -o "$W/flood.$1.body" -w '%{http_code} %{time_total}\n' --max-time 30 \
		--interface "$ATTACKER" -H 'Content-Type: application/json' \
		--data "{\"txid\":\"$(openssl rand -hex 32)\",\"proof\":\"$PROOF\"}" \
		"$BILLING_URL/api/xmr402/verify" >"$W/flood.$1"
}
flood() {
	local i pids=()
	for ((i = 0; i < BURST_N; i++)); do
		verify "$i" &
		pids+=($!)
	done
	for ((i = 0; i < FLOOD_S; i++)); do
		sleep 1 # the attacker's pace, one a second
		verify "t$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
}

# timed NAME KIND: one call of the victim; "status seconds" appended to $W/NAME
timed() {
	local args=(-s -o /dev/null -w '%{http_code} %{time_total}\n' --max-time 10 --interface "$VICTIM")
	case $2 in
	tiers) curl "${args[@]}" "$BILLING_URL/api/tiers" >>"$W/$1" ;;
	invoice)
		curl "${args[@]}" -H 'Content-Type: application/json' \
			--data "{\"tier\":\"$TIER\",\"months\":1}" "$BILLING_URL/api/invoices" >>"$W/$1"
		;;
	esac
}
# figures FILE OK_STATUS: "n=… fail=… p50=… p99=… max=…" (nearest rank)
figures() {
	sort -g -k2,2 "$1" | awk -v ok="$2" '{ n++; if ($1 != ok) f++; t[n] = $2 }
		END { printf "n=%d fail=%d p50=%.3fs p99=%.3fs max=%.3fs\n", n, f,
			t[int((n * 50 + 99) / 100)], t[int((n * 99 + 99) / 100)], t[n] }'
}
# p99_under FILE SECONDS
p99_under() {
	sort -g -k2,2 "$1" | awk -v lim="$2" '{ t[++n] = $2 }
		END { exit !(n > 0 && t[int((n * 99 + 99) / 100)] < lim) }'
}

flood &
FLOOD_PID=$!
defer kill "$FLOOD_PID" 2>/dev/null || true
sleep 0.5 # the burst is in
for ((i = 0; i < 20; i++)); do
	timed tiers tiers
	timed invoices invoice
	sleep 0.3
done
echo "# GET /api/tiers under the flood: $(figures "$W/tiers" 200)"
echo "# POST /api/invoices under the flood: $(figures "$W/invoices" 201)"
assert_eq "another address's GET /api/tiers: 20 answers, none failed" 0 \
	"$(awk '$1 != 200' "$W/tiers" | wc -l)"
check "… p99 under 1 s" p99_under "$W/tiers" 1.0
assert_eq "another address's POST /api/invoices: 20 created, none failed" 0 \
	"$(awk '$1 != 201' "$W/invoices" | wc -l)"
check "… p99 under 1 s" p99_under "$W/invoices" 1.0

# ---- a real payment's proof, sent right after broadcast, under the same flood --------------
x4_from_fresh
OUT=$(python3 "$(dirname "$0")/xmr402_draft_client.py" --source "$X4_FROM" \
	--max-piconero "$CAP" "$GATEWAY_URL/v1/json_rpc?tier=$TIER" "$PAYER_WALLET_URL")
assert_eq "the draft client pays and is served in one go, under the flood" 0 "$?" || echo "# $OUT"
assert_json "its proof, sent at once, got 200 with the served RPC answer" "$OUT" \
	'.status == 200 and .answer.result.status == "OK"'
echo "# the agent was answered $(jq -r '.answered_at - .paid_at | . * 1000 | floor' <<<"$OUT") ms after paying"
INV=$(jq -r '.headers["x-xmr402-invoice"]' <<<"$OUT")
AUTH=$(jq -r .authorization <<<"$OUT")
mine "$CONFIRMATIONS" >/dev/null
provisioned() { [[ $(psql_q "SELECT state FROM invoices WHERE id = '$INV'") == provisioned ]]; }
check "… and after $CONFIRMATIONS blocks the invoice ends provisioned" wait_until 60 provisioned
x4_call "$AUTH" "/v1/json_rpc?tier=$TIER" get_block_count
assert_eq "the same credential is served as the tenant" 200 "$X4_STATUS"

wait "$FLOOD_PID"
for ((i = 0; i < BURST_N; i++)); do cat "$W/flood.$i"; done >"$W/burst"
for ((i = 0; i < FLOOD_S; i++)); do cat "$W/flood.t$i"; done >"$W/tail"
summary() { awk '{ print $1 }' "$1" | sort | uniq -c | awk '{ printf "%sx%d ", $2, $1 }'; }
echo "# the attacker's burst of $BURST_N: $(summary "$W/burst")$(figures "$W/burst" 402)"
echo "# the attacker's one-a-second tail: $(summary "$W/tail")$(figures "$W/tail" 402)"
assert_eq "every one of the attacker's proofs was answered" "$((BURST_N + FLOOD_S))" \
	"$(awk '$1 != "000"' "$W/burst" "$W/tail" | wc -l)"
assert_eq "… with txid_unknown (402), rate_limited (429) or verify_busy (503), nothing else" 0 \
	"$(awk '$1 != 402 && $1 != 429 && $1 != 503' "$W/burst" "$W/tail" | wc -l)"
held=$(awk '$2 >= 2' "$W/burst" | wc -l)
check "at most $PER_CLIENT of the burst waited ($held): the per-client bound" \
	test "$held" -ge 1 -a "$held" -le "$PER_CLIENT"
check "a waiting proof was answered within unseen_hold + 2 s" \
	awk -v lim=$((HOLD_S + 2)) '$2 > lim { exit 1 }' "$W/burst" "$W/tail"
body=$(grep -l '"txid_unknown"' "$W"/flood.*.body | head -n 1)
assert_json "a held made-up txid ends txid_unknown, from the node" "$(cat "$body")" \
	'.error.code == "txid_unknown" and (.error.message | test("node"))'
body=$(grep -l '"rate_limited"' "$W"/flood.*.body | head -n 1)
assert_json "the rest is refused at once, rate_limited with a retry_after" "$(cat "$body")" \
	'.error.code == "rate_limited" and .retry_after >= 1'
