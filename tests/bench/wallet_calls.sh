#!/usr/bin/env bash
# What a stock monero-wallet-rpc costs the daemon it uses: calls and their burst shape per
# operation (sync from scratch, refresh at the tip, refresh after a block, send, sweep),
# measured through a logging relay (tests/tools/call_log) in front of the gateway, with a
# tenant whose tier never limits it. The numbers size the tiers' burst_size (docs/LIMITS.md).
#
#   tests/bench/wallet_calls.sh [host|trixie]...     (default: both)
#
# host: this machine's wallet-rpc (Debian 12: 0.18.0); trixie: Debian 13's 0.18.4 from
# scripts/monero-trixie.sh. Needs a running stack (scripts/stack.sh start; XG_VAR /
# XG_PORT_BASE select it) and `make test-tools`; uses ports XG_PORT_BASE+88..+89 and adds
# a non-public tier `bench_unlimited` (kept). Mines blocks on the stack's chain.
# Prints one Markdown table; the raw call logs stay in $WALLET_CALLS_KEEP when set.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
XG_VAR=${XG_VAR:-$REPO/var}
set -a
# shellcheck source=/dev/null
. "$XG_VAR/stack.env"
set +a
RELAY=$REPO/build/release/tests/tools/call_log
[[ -x $RELAY ]] || { echo "wallet_calls: make test-tools first" >&2; exit 1; }
relay_port=$((XG_PORT_BASE + 88)) wallet_port=$((XG_PORT_BASE + 89))
work=$(mktemp -d "$XG_VAR/wallet-calls.XXXXXX") # under XG_VAR: the 0.18.4 root binds it
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	[[ -z ${WALLET_CALLS_KEEP:-} ]] || { mkdir -p "$WALLET_CALLS_KEEP" && cp "$work"/*.jsonl "$WALLET_CALLS_KEEP"/; }
	rm -rf "$work"
}
trap cleanup EXIT

q() { psql -X -q -At -v ON_ERROR_STOP=1 "$DATABASE_URL" -c "$1"; }
rpc() { # URL METHOD [PARAMS]
	curl -sf --max-time 300 "$1/json_rpc" -H 'Content-Type: application/json' \
		-d "{\"jsonrpc\":\"2.0\",\"id\":\"0\",\"method\":\"$2\",\"params\":${3:-{\}}}" | jq -c '.result // .error'
}
wait_for() { local i; for ((i = 0; i < ${1}0; i++)); do "${@:2}" && return 0; sleep 0.1; done; return 1; }
mine() { "$REPO/scripts/stack.sh" mine "$1" >/dev/null; }

q "INSERT INTO tiers (id, name, burst_rps, daily_quota, price_currency, price_minor, confirmations, public)
	VALUES ('bench_unlimited', 'bench', 1000000, 1000000000, 'USD', 100, 1, false)
	ON CONFLICT (id) DO NOTHING" >/dev/null
grant=$("$REPO/bin/xmrgate-billing" --config "$XG_VAR/etc/billing.ini" grant --tier bench_unlimited --days 1 2>/dev/null)
login="$(sed -n 's/^HANDLE=//p' <<<"$grant"):$(sed -n 's/^TOKEN=//p' <<<"$grant")"

# shape FILE FROM_LINE: the calls logged after line FROM_LINE as one JSON summary.
shape() {
	tail -n +"$(($2 + 1))" "$1" | jq -sc '
		map(select(.status != 401)) as $c | ($c | map(.t_ms)) as $t |
		def most(w): [range(0; $t | length) as $i | [$t[] | select(. >= $t[$i] and . < $t[$i] + w)] | length] | max // 0;
		{calls: ($c | length), auth401: (length - ($c | length)),
		 max_1s: most(1000), max_100ms: most(100),
		 span_ms: (if ($t | length) > 0 then ($t | max) - ($t | min) else 0 end),
		 methods: ($c | group_by(.rpc // .path) | map("\(.[0].rpc // .[0].path)×\(length)") | join(" "))}'
}

# measure KIND: one wallet-rpc of that kind through the relay; prints table rows.
measure() {
	local kind=$1 log=$work/$1.jsonl run=() extra=() W mark seed addr v out
	: >"$log"
	"$RELAY" "$relay_port" "$GATEWAY_URL" "$log" &
	pids+=("$!")
	if [[ $kind == trixie ]]; then
		run=("$REPO/scripts/monero-trixie.sh" exec "$XG_VAR")
		extra=(--allow-mismatched-daemon-version --shared-ringdb-dir "$work/$kind/ringdb")
	fi
	mkdir -p "$work/$kind"
	"${run[@]}" monero-wallet-rpc --daemon-address "127.0.0.1:$relay_port" --daemon-login "$login" \
		--rpc-bind-ip 127.0.0.1 --rpc-bind-port "$wallet_port" --disable-rpc-login \
		--wallet-dir "$work/$kind" --log-file "$work/$kind.log" --non-interactive "${extra[@]}" \
		>"$work/$kind.out" 2>&1 &
	pids+=("$!")
	W=http://127.0.0.1:$wallet_port
	wait_for 60 rpc "$W" get_version >/dev/null
	v=$(sed -n "s/^Monero '.*' (v\([0-9.]*\).*/\1/p" "$work/$kind.out" | head -n 1)

	row() { printf '| %s | %s | %s |\n' "$v" "$1" "$(jq -r '"\(.calls) | \(.max_1s) | \(.max_100ms) | \(.span_ms) | \(.auth401) | \(.methods)"' <<<"$2")"; }
	op() { # NAME METHOD PARAMS
		mark=$(wc -l <"$log")
		out=$(rpc "$W" "$2" "$3")
		sleep 0.5
		row "$1" "$(shape "$log" "$mark")"
		[[ $out != *'"code"'* ]] || echo "# $v $1: $out" >&2
	}

	# A wallet with five outputs, then the same wallet restored from its seed: the
	# restore's first refresh is the sync from scratch.
	op "first call (create_wallet: connects)" create_wallet '{"filename":"a","language":"English"}'
	rpc "$W" auto_refresh '{"enable":false}' >/dev/null
	seed=$(rpc "$W" query_key '{"key_type":"mnemonic"}' | jq -r .key)
	addr=$(rpc "$W" get_address '{"account_index":0}' | jq -r .address)
	rpc "$PAYER_WALLET_URL" transfer "$(jq -cn --arg a "$addr" \
		'{destinations:[range(5) | {amount:1000000000000,address:$a}]}')" >/dev/null
	mine 12
	rpc "$W" close_wallet >/dev/null
	sleep 1
	op "restore from seed" restore_deterministic_wallet "$(jq -cn --arg s "$seed" \
		'{filename:"b",seed:$s,restore_height:0,password:"",language:"English",autosave_current:false}')"
	rpc "$W" auto_refresh '{"enable":false}' >/dev/null
	op "sync from scratch ($(curl -sf "$NODE_A_URL/get_height" | jq .height) blocks)" refresh '{}'
	op "refresh at the tip" refresh '{}'
	mine 1
	op "refresh after 1 block" refresh '{}'
	op "send (transfer, 1 destination)" transfer "$(jq -cn --arg a "$PAYER_ADDRESS" '{destinations:[{amount:100000000000,address:$a}]}')"
	mine 11
	rpc "$W" refresh '{}' >/dev/null
	op "sweep (sweep_all)" sweep_all "$(jq -cn --arg a "$PAYER_ADDRESS" '{address:$a}')"
	kill "${pids[@]}" 2>/dev/null || true
	wait "${pids[@]}" 2>/dev/null || true
	pids=()
}

echo "| wallet | operation | calls | max in 1 s | max in 100 ms | span ms | 401s | calls by method |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"
for kind in "${@:-host trixie}"; do
	for k in $kind; do measure "$k"; done
done
