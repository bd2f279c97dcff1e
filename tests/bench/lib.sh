# shellcheck shell=bash
# lib.sh — what every bench does first, sourced by tests/bench/*.sh once REPO, XG_VAR and
# XG_PORT_BASE are set: the stack it runs against (started here when none is running, and
# then stopped again at exit), a scratch directory ($work, removed at exit unless
# XG_BENCH_KEEP=1) and the processes it starts (appended to pids: killed at exit).
#
#   bench_begin       sets the exit trap, starts the stack if needed, loads its stack.env
#   bench_exit_hook   a command run first at exit (e.g. to thaw a node a bench froze)
STACK=$REPO/scripts/stack.sh
work=$(mktemp -d)
chmod 755 "$work" # wallet-rpc and nginx read files in it
pids=()
bench_client_pids=() # bench_clients' while they run
bench_exit_hook=

bench_cleanup() {
	[[ -z $bench_exit_hook ]] || eval "$bench_exit_hook" || true
	for p in "${bench_client_pids[@]}" "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [[ ${XG_BENCH_KEEP:-0} == 1 ]]; then
		echo "# kept $work" >&2
	else
		rm -rf "$work"
	fi
	if [[ ${bench_started_stack:-0} == 1 ]]; then
		"$STACK" stop >/dev/null 2>&1 || true
	fi
}

bench_begin() {
	trap bench_cleanup EXIT
	if ! "$STACK" status >/dev/null 2>&1; then
		# a still chain: the benches mine what they measure
		XG_BLOCK_INTERVAL=0 "$STACK" start >/dev/null
		bench_started_stack=1
	fi
	set -a
	# shellcheck source=/dev/null
	. "$XG_VAR/stack.env"
	set +a
}

# The gateway benches over nodes A, B and C (hedge.sh, freeze_two.sh):
#
#   bench_gateway_db NAME     a scratch database NAME (dropped and made anew) with the
#                             schema, a sovereign tenant and nodes A, B and C; sets
#                             BENCH_DB, HA1_KEY and TOKEN
#   bench_gateway_start PORT ADMIN [XMRGATE_VAR=VALUE...]
#                             a gateway on PORT (admin ADMIN) over BENCH_DB, limits off,
#                             the rest default unless set by the variables given; waits
#                             until it is ready; sets gw (its pid, also in pids) and
#                             GW_ADMIN. $XG_BENCH_GATEWAY: another build to run (default
#                             bin/xmrgate-gateway)
#   bench_metric_sum NAME [FILTER]
#                             the sum of the gateway's NAME samples whose line holds FILTER
#   bench_node_counts         "a N b N c N": the client requests sent to each node so far
#   bench_busiest [EXCEPT]    the node (a, b or c; not EXCEPT) the gateway has sent most
#                             client requests to, or most since BENCH_SINCE (an earlier
#                             bench_node_counts) when that is set
#   bench_clients N SECS TIMEOUT URL TAG
#                             N clients (curl, TIMEOUT s each, one request at a time) read
#                             for SECS what the cache cannot hold, in turn
#                             /get_transaction_pool_hashes, /is_key_image_spent of a fresh
#                             key image and /get_transactions of a transaction that does
#                             not exist (a fresh random txid: a "not found" the gateway
#                             confirms on a second node); one line per request,
#                             "ok|fail MS KIND [HTTP_CODE]" (KIND pool, image or missing;
#                             code 000: no answer in TIMEOUT) in $work/TAG-N
#   bench_summary TAG [KIND]  "requests failed p50 p99 max" (ms) of $work/TAG-*'s lines,
#                             or of KIND's only
bench_gateway_db() {
	local base=${DATABASE_URL%/*}
	BENCH_DB=$base/$1
	HA1_KEY=$(printf '%064d' 0)
	psql -X -q "$base/postgres" -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1"
	XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_GATEWAY_HA1_KEY=$HA1_KEY \
		"$REPO/bin/xmrgate-billing" migrate >/dev/null 2>&1 || true
	local grant
	grant=$(XMRGATE_DATABASE_URL=$BENCH_DB XMRGATE_GATEWAY_HA1_KEY=$HA1_KEY \
		"$REPO/bin/xmrgate-billing" grant --tier sovereign --days 1 2>/dev/null)
	# shellcheck disable=SC2034 # the sourcing bench's
	TOKEN=$(sed -n 's/^TOKEN=//p' <<<"$grant") HANDLE=$(sed -n 's/^HANDLE=//p' <<<"$grant")
	psql -X -q "$BENCH_DB" -c "BEGIN; DELETE FROM nodes;
		INSERT INTO nodes (name, url) VALUES ('a', '$NODE_A_URL'), ('b', '$NODE_B_URL'), ('c', '$NODE_C_URL');
		COMMIT;"
}

bench_gateway_start() {
	local port=$1
	GW_ADMIN=$2
	shift 2
	env XMRGATE_DATABASE_URL="$BENCH_DB" XMRGATE_AUTH_HA1_KEY="$HA1_KEY" XMRGATE_SERVER_PORT="$port" \
		XMRGATE_ADMIN_PORT="$GW_ADMIN" XMRGATE_LIMITS_ENABLED=false XMRGATE_LOG_LEVEL=warn "$@" \
		"${XG_BENCH_GATEWAY:-$REPO/bin/xmrgate-gateway}" 2>>"$work/gateway.log" &
	gw=$!
	pids+=("$gw")
	for _ in $(seq 300); do
		curl -s "http://127.0.0.1:$GW_ADMIN/readyz" | jq -e '.status == "ready"' >/dev/null 2>&1 && return
		sleep 0.1
	done
	echo "the gateway did not get ready" >&2
	exit 1
}

bench_metric_sum() { curl -s "http://127.0.0.1:$GW_ADMIN/metrics" | awk -v m="$1" -v f="${2:-}" \
	'index($0, m) == 1 && index($0, f) { s += $NF } END { printf "%d", s }'; }

bench_node_counts() {
	local n
	for n in a b c; do
		printf '%s %s ' "$n" "$(bench_metric_sum xmrgate_gateway_node_requests_total "node=\"$n\"")"
	done
}

bench_busiest() {
	local now
	now=$(bench_node_counts)
	awk -v now="$now" -v since="${BENCH_SINCE:-}" -v except="${1:-}" 'BEGIN {
		n = split(now, a, " "); split(since, b, " ")
		for (i = 1; i < n; i += 2) {
			d = a[i + 1] - (b[i + 1] + 0)
			if (a[i] != except && (best == "" || d > most)) { most = d; best = a[i] }
		}
		print best }'
}

bench_clients() {
	local nclients=$1 secs=$2 timeout=$3 url=$4 tag=$5 c cpids=()
	for ((c = 0; c < nclients; c++)); do
		(
			end=$((EPOCHSECONDS + secs)) i=0
			while ((EPOCHSECONDS < end)); do
				i=$((i + 1))
				case $((i % 3)) in
				1) kind=pool path=/get_transaction_pool_hashes body='{}' check='.status == "OK"' ;;
				2)
					kind=image path=/is_key_image_spent
					body=$(printf '{"key_images":["%048x%08x%08x"]}' "$SRANDOM" "$c" "$i")
					check='.status == "OK" and (.spent_status | length) == 1'
					;;
				0)
					kind=missing path=/get_transactions
					body=$(printf '{"txs_hashes":["%08x%08x%08x%08x%08x%08x%08x%08x"]}' "$SRANDOM" \
						"$SRANDOM" "$SRANDOM" "$SRANDOM" "$SRANDOM" "$SRANDOM" "$SRANDOM" "$SRANDOM")
					check='.status == "OK" and (.missed_tx | length) == 1'
					;;
				esac
				out=$(curl -s --max-time "$timeout" -o "$work/body-$tag-$c" -w '%{http_code} %{time_total}' \
					-H 'Content-Type: application/json' --data-binary "$body" "$url$path" 2>/dev/null) || true
				ms=$(awk -v s="${out##* }" 'BEGIN { printf "%d", s * 1000 }')
				if [[ ${out%% *} == 200 ]] && jq -e "$check" "$work/body-$tag-$c" >/dev/null 2>&1; then
					echo "ok $ms $kind"
				else
					echo "fail $ms $kind ${out%% *}"
				fi
			done >"$work/$tag-$c"
		) &
		cpids+=($!)
	done
	bench_client_pids=("${cpids[@]}")
	wait "${cpids[@]}" # not the gateway's pid
	bench_client_pids=()
}

bench_summary() {
	local all total failed sorted
	all=$(cat "$work/$1"-*)
	[[ -z ${2:-} ]] || all=$(awk -v k="$2" '$3 == k' <<<"$all")
	total=$(grep -c . <<<"$all" || true)
	failed=$(grep -c '^fail' <<<"$all" || true)
	sorted=$(awk '{ print $2 }' <<<"$all" | sort -n)
	pct() { awk -v p="$1" -v n="$total" 'NR == int((n - 1) * p / 100) + 1 { print; exit }' <<<"$sorted"; }
	echo "$total $failed $(pct 50) $(pct 99) $(tail -1 <<<"$sorted")"
}
