# shellcheck shell=bash
# Helpers for the operations tests (test_ops_*.sh), sourced after lib.sh.
#
#   ops_admin_token                 prints the stack gateway's admin token
#   metric URL SERIES               the value of one series in URL's /metrics
#                                   (SERIES as exposed, e.g. 'x_total{a="b"}'); 0 if absent
#   metric_sum URL NAME [LABEL_RE]  the sum of NAME's series whose labels match LABEL_RE
#   metric_at_least URL SERIES MIN  the series is >= MIN (for wait_until)
#   metric_is URL SERIES VALUE      the series is exactly VALUE (for wait_until)
#   admin_call URL METHOD PATH [BODY]   the admin API with the token; prints "STATUS BODY"
#   gw_status_of URL PATH           the HTTP status of a GET through a gateway
#   burst_refusals                  requests the stack's gateway refused over a burst
#                                   bucket (429)
#   burst_delays                    requests it held for their burst token

ops_admin_token() { sed -n 's/^token *= *//p' "$XG_VAR/etc/gateway.ini"; }

metric() {
	curl -sf --max-time 10 "$1/metrics" |
		awk -v s="$2" 'index($0, s " ") == 1 { v = $2 } END { print (v == "" ? 0 : v) }'
}

metric_sum() {
	curl -sf --max-time 10 "$1/metrics" |
		awk -v n="$2" -v re="${3:-.*}" '
			substr($0, 1, 1) != "#" {
				name = $1; labels = ""
				i = index(name, "{")
				if (i) { labels = substr(name, i); name = substr(name, 1, i - 1) }
				if (name == n && labels ~ re) s += $2
			}
			END { printf "%.0f\n", s }'
}

metric_at_least() { awk -v v="$(metric "$1" "$2")" -v m="$3" 'BEGIN { exit !(v + 0 >= m + 0) }'; }
metric_is() { [[ $(metric "$1" "$2") == "$3" ]]; }

admin_call() {
	local url=$1 method=$2 path=$3 body=${4:-} out
	local args=(-s --max-time 30 -X "$method" -w '\n%{http_code}'
		-H "Authorization: Bearer ${OPS_TOKEN:-$(ops_admin_token)}")
	[[ -z $body ]] || args+=(-H 'Content-Type: application/json' --data-binary "$body")
	out=$(curl "${args[@]}" "$url$path")
	echo "${out##*$'\n'} ${out%$'\n'*}"
}

gw_status_of() { curl -s -o /dev/null --max-time 10 -w '%{http_code}' "$1$2"; }

burst_refusals() { metric "$GATEWAY_ADMIN_URL" 'xmrgate_gateway_rate_limited_total{limit="burst"}'; }
burst_delays() { metric "$GATEWAY_ADMIN_URL" xmrgate_gateway_burst_delay_seconds_count; }
