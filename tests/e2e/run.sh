#!/usr/bin/env bash
# Browser tests of the web pages (tests/e2e/e2e.py): Selenium (Debian's python3-selenium)
# driving Debian's /usr/bin/chromium through Debian's /usr/bin/chromedriver, all from
# scripts/deps.sh; nothing is downloaded (Selenium Manager never runs).
#
# Runs against a local stack: the one named by XG_VAR when it is running (it is left
# running), else its own (XG_E2E_VAR, default var/e2e; XG_PORT_BASE=XG_E2E_PORT_BASE,
# default 29500), started with a local exchange-rate source, a 1 s wallet poll and generous
# invoice limits, and stopped after. Screenshots go to tests/artifacts/screenshots/. The
# last line is "N passed, N failed"; the exit status is non-zero on any failure.
set -euo pipefail
set +m

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
die() {
	echo "e2e: $*" >&2
	exit 2
}

# Debian's python3, with Debian's selenium (not a python of pyenv, venv or PATH).
PYTHON=/usr/bin/python3
[[ -x /usr/bin/chromium ]] || die "/usr/bin/chromium is missing: run scripts/deps.sh"
[[ -x /usr/bin/chromedriver ]] || die "/usr/bin/chromedriver is missing (chromium-driver): run scripts/deps.sh"
command -v zbarimg >/dev/null || die "zbarimg is missing (zbar-tools): run scripts/deps.sh"
[[ -x $PYTHON ]] || die "$PYTHON is missing: run scripts/deps.sh"
"$PYTHON" -c 'import selenium.webdriver' 2>/dev/null ||
	die "$PYTHON cannot import selenium (python3-selenium): run scripts/deps.sh"

OWN_STACK=0
RATE_PID=
cleanup() {
	local rc=$?
	if ((OWN_STACK)); then
		"$REPO/scripts/stack.sh" stop >/dev/null 2>&1 || echo "e2e: stopping the stack failed" >&2
	fi
	if [[ -n $RATE_PID ]]; then
		kill "$RATE_PID" 2>/dev/null || true
		wait "$RATE_PID" 2>/dev/null || true
	fi
	exit "$rc"
}
trap cleanup EXIT

if [[ -n ${XG_VAR:-} && -s $XG_VAR/stack.env ]] && XG_VAR=$XG_VAR "$REPO/scripts/stack.sh" status >/dev/null 2>&1; then
	echo "e2e: using the running stack in $XG_VAR"
else
	export XG_VAR=${XG_E2E_VAR:-$REPO/var/e2e} XG_PORT_BASE=${XG_E2E_PORT_BASE:-29500}
	make -s -C "$REPO" build/release/tests/tools/rate_server >/dev/null
	mkdir -p "$XG_VAR"
	echo '{"monero":{"usd":162.40}}' >"$XG_VAR/rate.json"
	rate_port=$((XG_PORT_BASE + 98))
	"$REPO/build/release/tests/tools/rate_server" "$rate_port" "$XG_VAR/rate.json" >"$XG_VAR/rate.log" 2>&1 &
	RATE_PID=$!
	# Billing reads XMRGATE_<SECTION>_<KEY> over its file; the gateway ignores these.
	export XMRGATE_PRICING_RATE_URL=http://127.0.0.1:$rate_port/
	export XMRGATE_WALLET_POLL_INTERVAL=1s
	export XMRGATE_INVOICES_CREATE_BURST=1000 XMRGATE_INVOICES_FREE_BURST=1000
	# e2e.py mines each confirmation it photographs: no blocks of the stack's own
	export XG_BLOCK_INTERVAL=0
	OWN_STACK=1
	echo "e2e: starting a stack in $XG_VAR (ports $XG_PORT_BASE+)"
	"$REPO/scripts/stack.sh" start >"$XG_VAR/e2e-stack.log" 2>&1 ||
		{ tail -20 "$XG_VAR/e2e-stack.log" >&2; die "the stack did not start"; }
	# the first quote needs the first rate fetch
	for _ in $(seq 50); do
		curl -sf "$(sed -n 's/^BILLING_URL=//p' "$XG_VAR/stack.env")/api/tiers" |
			grep -q '"quote_per_month":{' && break
		sleep 0.2
	done
fi

set -a
# shellcheck source=/dev/null
. "$XG_VAR/stack.env"
set +a
"$PYTHON" "$HERE/e2e.py"
