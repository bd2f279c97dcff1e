#!/usr/bin/env bash
# A client behind the balancer that pads X-Forwarded-For past billing's 4 KiB buffer is
# still counted as the address the balancer appended (issue #30's low): before, a list too
# long to hold was read as none, so the client counted as the balancer, dodging its own
# limits and spending the balancer's, which every client behind it shares. A billing of the
# test's own trusts 127.0.0.1 as its balancer and lets a client create one paid invoice an
# hour ([invoices] create_burst = 1); each request carries 6 KiB of padding in front of the
# address the balancer saw.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"

bt_setup
check_here "billing xff starts, trusting 127.0.0.1 as its balancer" billing_start xff \
	server.trusted_proxies=127.0.0.1 invoices.create_burst=1 invoices.create_per_hour=1
PAD=$(printf '6.6.6.6, %.0s' $(seq 1 700)) # 6,300 bytes of addresses the client made up

# buy [XFF]: one paid invoice from 127.0.0.1 (the balancer), with X-Forwarded-For XFF
buy() {
	local args=(-s -o "$BT_DIR/xff.body" -w '%{http_code}' --interface 127.0.0.1
		-H 'Content-Type: application/json' --data '{"tier":"agent","months":1}')
	[[ -z ${1:-} ]] || args+=(-H "X-Forwarded-For: $1")
	curl "${args[@]}" "$BL_URL/api/invoices"
}
check "the padding is past the 4 KiB buffer (${#PAD} bytes)" test "${#PAD}" -gt 4096
assert_eq "a padded client, 203.0.113.9, buys (201)" 201 "$(buy "${PAD}203.0.113.9")"
assert_eq "another padded client, 198.51.100.9, buys too: not counted as the balancer" 201 \
	"$(buy "${PAD}198.51.100.9")" || sed 's/^/# /' "$BT_DIR/xff.body"
assert_eq "203.0.113.9 again is over its own limit (429)" 429 "$(buy "${PAD}203.0.113.9")"
assert_eq "… and with its padding in a header of its own before the balancer's" 429 \
	"$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.1 \
		-H 'Content-Type: application/json' -H "X-Forwarded-For: $PAD" \
		-H 'X-Forwarded-For: 203.0.113.9' --data '{"tier":"agent","months":1}' \
		"$BL_URL/api/invoices")"
assert_eq "the balancer's own allowance was never spent (201)" 201 "$(buy)"
