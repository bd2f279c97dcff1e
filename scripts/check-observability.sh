#!/usr/bin/env bash
# Checks the monitoring files against the daemons:
#   - deploy/prometheus/prometheus.yml passes `promtool check config`;
#   - deploy/prometheus/alerts.yml passes `promtool check rules`, and its unit tests
#     (alerts_test.yml) pass `promtool test rules`;
#   - deploy/grafana/xmrgate-dashboard.json is valid JSON, and every panel query is valid
#     PromQL (promtool checks them as recording rules written to a temporary file);
#   - every xmrgate_* metric named by a query or an alert (histogram suffixes _bucket, _sum
#     and _count included) is one the daemons register.
#
#   scripts/check-observability.sh [METRIC_NAMES_TOOL]
#
# The tool (make build/release/tools/metric-names) prints each registered family; with
# XG_METRICS_URLS="http://…/metrics …" the names are taken from live scrapes instead.
# Prints `ok - …` / `not ok - …` lines; exits 1 when anything failed.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RULES=$REPO/deploy/prometheus/alerts.yml
DASHBOARD=$REPO/deploy/grafana/xmrgate-dashboard.json
TOOL=${1:-$REPO/build/release/tools/metric-names}
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok - $1"; }
not_ok() {
	echo "not ok - $1"
	# shellcheck disable=SC2001 # every line of a multi-line text
	[[ -z ${2:-} ]] || sed 's/^/#   /' <<<"$2"
	failed=1
}

command -v promtool >/dev/null || { not_ok "promtool is installed (Debian package prometheus)"; exit 1; }

if out=$(promtool check config "$(dirname "$RULES")/prometheus.yml" 2>&1); then
	ok "promtool check config prometheus.yml (the scrape configuration shipped beside the rules)"
else
	not_ok "promtool check config prometheus.yml" "$out"
fi

if out=$(promtool check rules "$RULES" 2>&1); then
	ok "promtool check rules $(basename "$RULES")"
else
	not_ok "promtool check rules $(basename "$RULES")" "$out"
fi

if out=$(cd "$(dirname "$RULES")" && promtool test rules alerts_test.yml 2>&1); then
	ok "promtool test rules alerts_test.yml (the alerts fire when they should)"
else
	not_ok "promtool test rules alerts_test.yml" "$out"
fi

if ! jq -e '.panels | length > 0' "$DASHBOARD" >/dev/null 2>&1; then
	not_ok "the dashboard is valid JSON with panels"
	exit 1
fi
ok "the dashboard is valid JSON with $(jq '[.panels[] | select(.type != "row")] | length' "$DASHBOARD") panels"

# Dashboard variables become regex matchers PromQL accepts.
# shellcheck disable=SC2016 # the dollars are Grafana's, not the shell's
jq -r '.panels[] | .targets[]?.expr' "$DASHBOARD" |
	sed -e 's/\$instance/.*/g' -e 's/\${[a-z_]*}/x/g' >"$tmp/exprs"
{
	echo "groups:"
	echo "  - name: dashboard"
	echo "    rules:"
	n=0
	while IFS= read -r expr; do
		n=$((n + 1))
		printf '      - record: dashboard:query_%d\n        expr: %s\n' "$n" "$(jq -Rn --arg e "$expr" '$e')"
	done <"$tmp/exprs"
} >"$tmp/dashboard-rules.yml"
if out=$(promtool check rules "$tmp/dashboard-rules.yml" 2>&1); then
	ok "every dashboard query ($(wc -l <"$tmp/exprs")) is valid PromQL"
else
	not_ok "every dashboard query is valid PromQL" "$out"
fi

# The names the daemons export.
if [[ -n ${XG_METRICS_URLS:-} ]]; then
	for url in $XG_METRICS_URLS; do
		curl -sf --max-time 10 "$url" | sed -n 's/^# TYPE \([a-zA-Z_:][a-zA-Z0-9_:]*\) .*/\1/p'
	done | sort -u >"$tmp/exported"
else
	[[ -x $TOOL ]] || { not_ok "the metric-names tool exists ($TOOL: make $TOOL)"; exit 1; }
	"$TOOL" | awk '{ print $2 }' | sort -u >"$tmp/exported"
fi
if [[ ! -s $tmp/exported ]]; then
	not_ok "the daemons export metrics"
	exit 1
fi
ok "the daemons export $(wc -l <"$tmp/exported") metric families"

# Every xmrgate_* name used, with histogram series mapped to their family.
{
	cat "$tmp/exprs"
	grep -E '^\s+expr:' "$RULES"
	sed -n '/expr: |/,/^\s*labels:/p' "$RULES"
} | grep -oE 'xmrgate_[a-z0-9_]+' | sort -u >"$tmp/used"
missing=()
while IFS= read -r name; do
	family=$name
	for suffix in _bucket _sum _count; do
		base=${name%"$suffix"}
		if [[ $base != "$name" ]] && grep -qxF -- "$base" "$tmp/exported"; then
			family=$base
		fi
	done
	grep -qxF -- "$family" "$tmp/exported" || missing+=("$name")
done <"$tmp/used"
if ((${#missing[@]} == 0)); then
	ok "every metric the dashboard and the alerts name ($(wc -l <"$tmp/used")) is exported"
else
	not_ok "every metric the dashboard and the alerts name is exported" \
		"not exported: ${missing[*]}"
fi
exit "$failed"
