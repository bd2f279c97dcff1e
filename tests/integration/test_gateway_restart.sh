#!/usr/bin/env bash
# A gateway opens its client port only once it knows its tenants and has probed its nodes.
# From the first connection it accepts, a known tenant is served by a node that passed its
# probe: no 401 for a tenant not loaded yet, no 502 and no answer in table order from nodes
# not probed yet. A client polling through a cold start and through a restart sees only
# refused connections while the gateway is down, then answers that are all 200.
. "$(dirname "$0")/lib.sh"

check_here "grant a tenant" grant_tenant wallet 1
# Its file, and so its ports, before it starts: the client polls before the port opens.
gateway_config restart
url=$(gw_url restart)/v1/$TOKEN/get_height
log=$(gw_log restart)

# poll FILE: one line per attempt ("refused", or the status and any X-Xmrgate-Degraded
# value) until 20 requests were answered or 3,000 attempts were made.
poll() {
	local answered=0 line i
	: >"$1"
	for ((i = 0; i < 3000 && answered < 20; i++)); do
		line=$(curl -s -o /dev/null -D - --max-time 5 "$url" | tr -d '\r' |
			awk 'NR == 1 { s = $2 } tolower($1) == "x-xmrgate-degraded:" { d = " degraded " $2 }
			     END { print (s ? s d : "refused") }')
		[[ $line == refused ]] || answered=$((answered + 1))
		echo "$line" >>"$1"
		sleep 0.005
	done
}

# judge WHEN FILE
judge() {
	sed 's/^/#   /' <(uniq -c "$2")
	check "$1: the client was refused, then answered (never anything else)" \
		bash -c "! grep -vqE '^(refused|200)$' '$2'"
	check "$1: 20 answers, all 200" test "$(grep -c '^200$' "$2")" -eq 20
}

poll "$XG_VAR/restart-cold.txt" &
poller=$!
sleep 0.3
gateway_start restart --wait none
wait "$poller"
judge "cold start" "$XG_VAR/restart-cold.txt"
check "the log shows the node probed up before the port opened" \
	awk '/"event":"node_up"/ { up = 1 } /"event":"started"/ { exit !up }' "$log"

gateway_stop restart
poll "$XG_VAR/restart-warm.txt" &
poller=$!
sleep 0.3
gateway_restart restart --wait none
wait "$poller"
judge "restart" "$XG_VAR/restart-warm.txt"
