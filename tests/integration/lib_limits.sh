# shellcheck shell=bash
# Helpers of the tenant-limit tests (test_limits_*.sh), sourced after lib.sh: tiers and
# tenants made with psql, and the load the tests put on their gateways.
#
#   lim_setup                      nodes table = the stack's nodes (idempotent)
#   lim_tier ID BURST_RPS QUOTA [BURST_SIZE]  creates or updates a tier (no BURST_SIZE:
#                                  the schema's default, greatest(2 × rate, 30))
#   lim_tenant TIER [DAYS]         creates a tenant; sets LIM_ID, LIM_TOKEN, LIM_HANDLE
#   gateway_start NAME --base bare [...]   lib.sh's: a gateway of the test's own (several
#                                  share the stack's PostgreSQL, as replicas do); gw_url NAME
#   lim_used TENANT_ID             usage_daily.used today (0 when no row)
#   lim_status URL PATH [CURL_ARGS…] prints the HTTP status of a GET (body discarded)
#   lim_load N PARALLEL BODY URL…    N POSTs of BODY over the URLs; one status a line
#   lim_get_load N PARALLEL URL      N GETs of URL, PARALLEL at once; one status a line
#   lim_during_flush NAME            the most requests gateway NAME served during a flush

LIM_DIR=${LIM_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/xg-limits.XXXXXX")}

lim_setup() {
	psql_q "INSERT INTO nodes (name, url, priority) VALUES
		('a', '$NODE_A_URL', 'primary'), ('b', '$NODE_B_URL', 'primary')
		ON CONFLICT (name) DO NOTHING" >/dev/null
}

lim_tier() {
	local size=${4:-NULL}
	psql_q "INSERT INTO tiers (id, name, burst_rps, daily_quota, price_currency, price_minor,
			confirmations, public, burst_size)
		VALUES ('$1', 'test $1', $2, $3, 'USD', 100, 1, false, $size)
		ON CONFLICT (id) DO UPDATE SET burst_rps = EXCLUDED.burst_rps,
			daily_quota = EXCLUDED.daily_quota,
			burst_size = coalesce($size, greatest(2 * EXCLUDED.burst_rps, 30))" >/dev/null
}

# A token is "xg_" + 43 base64url characters; its row holds SHA-256 of that text.
lim_tenant() {
	local tier=$1 days=${2:-30} raw
	raw=$(head -c 32 /dev/urandom | basenc --base64url | tr -d '=\n')
	LIM_TOKEN="xg_$raw"
	LIM_HANDLE="t_$(head -c 2000 /dev/urandom | tr -dc 'a-z2-7' | head -c 12)"
	LIM_ID=$(psql_q "INSERT INTO tenants (handle, token_hash, digest_ha1, tier_id, valid_until)
		VALUES ('$LIM_HANDLE', sha256('$LIM_TOKEN'::bytea), '\\x$(printf '00%.0s' {1..45})',
			'$tier', now() + interval '$days days') RETURNING id")
}

lim_used() {
	psql_q "SELECT coalesce((SELECT used FROM usage_daily
		WHERE tenant_id = $1 AND day = (now() AT TIME ZONE 'UTC')::date), 0)"
}

lim_status() {
	local url=$1 path=$2
	shift 2
	curl -s -o /dev/null -w '%{http_code}' "$@" "$url$path"
}

# lim_load N PARALLEL BODY URL… — N POSTs of BODY spread round-robin over the URLs, at
# most PARALLEL at once (one curl process); prints one HTTP status per line.
lim_load() {
	local n=$1 par=$2 body=$3 i cfg
	shift 3
	local urls=("$@")
	cfg=$(mktemp "$LIM_DIR/load.XXXXXX")
	for ((i = 0; i < n; i++)); do
		printf 'url = "%s"\noutput = "/dev/null"\n' "${urls[i % ${#urls[@]}]}"
	done >"$cfg"
	curl -s -Z --parallel-max "$par" -H 'Content-Type: application/json' \
		--data-binary "$body" -w '%{http_code}\n' -K "$cfg" 2>/dev/null
	rm -f "$cfg"
}

# lim_get_load N PARALLEL URL — N GETs, at most PARALLEL at once: a server's pooled
# connections are then all in use, not only the one a lone request gets back each time.
lim_get_load() {
	local n=$1 par=$2 url=$3 i cfg
	cfg=$(mktemp "$LIM_DIR/get.XXXXXX")
	for ((i = 0; i < n; i++)); do
		printf 'url = "%s"\noutput = "/dev/null"\n' "$url"
	done >"$cfg"
	curl -s -Z --parallel-max "$par" -w '%{http_code}\n' -K "$cfg" 2>/dev/null
	rm -f "$cfg"
}

LIM_RPC_BODY='{"jsonrpc":"2.0","id":1,"method":"get_block_count"}'

# lim_during_flush NAME — after gateway_stop: the most requests that gateway served while
# one of its usage flushes ran (from its usage_flush_summary log line).
lim_during_flush() {
	grep -h '"usage_flush_summary"' "$(gw_log "$1")" | tail -n 1 |
		jq -r '.msg | capture("during one flush (?<n>[0-9]+)").n'
}
