#!/usr/bin/env bash
# [xmr402] legacy_receipt_key lists a retired receipt key whose seed every gateway host can
# derive (from ha1_key), so such a host can sign receipts, backdated too (issue #30's low).
# It now needs a cut-off, [xmr402] legacy_receipt_until (a date at most 366 days ahead):
# billing refuses to start without one or with one further ahead, lists the retired key
# with retired_until_unix until the day ends, and lists none after it (warning at start).
# Billings of the test's own on the real PostgreSQL and wallet.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/billing_lib.sh
. "$(dirname "$0")/billing_lib.sh"

bt_setup
refused() { # NAME WANT_TEXT [KEY=VALUE...]: billing NAME exits non-zero, saying WANT_TEXT
	local name=$1 want=$2 out rc=0
	shift 2
	out=$(billing_exit "$name" "$@") || rc=$?
	if ((rc == 0 || rc == 124)) || ! grep -q "$want" <<<"$out"; then
		echo "exit $rc: $out"
		return 1
	fi
}
check "legacy_receipt_key without legacy_receipt_until is refused at start" \
	refused nountil "needs legacy_receipt_until" xmr402.legacy_receipt_key=true
check "… and with a cut-off more than 366 days ahead" \
	refused far "at most 366 days ahead" xmr402.legacy_receipt_key=true \
	xmr402.legacy_receipt_until="$(date -u -d '+400 days' +%F)"
check "… and with no date" refused baddate "expected a date" xmr402.legacy_receipt_key=true \
	xmr402.legacy_receipt_until=soon
check "legacy_receipt_until alone is refused" refused alone "without legacy_receipt_key" \
	xmr402.legacy_receipt_until="$(date -u -d '+1 day' +%F)"

TOMORROW=$(date -u -d '+1 day' +%F)
check_here "billing starts with a cut-off tomorrow ($TOMORROW)" billing_start on \
	xmr402.legacy_receipt_key=true xmr402.legacy_receipt_until="$TOMORROW"
listed=$(curl -s "$BL_URL/api/xmr402/receipt-key")
assert_json "the retired key is listed, with its cut-off (the end of $TOMORROW)" "$listed" \
	"(.retired_public_keys | length) == 1 and .retired_public_keys[0] != .public_key and
	 .retired_until_unix == $(date -u -d "$TOMORROW + 1 day" +%s)"

YESTERDAY=$(date -u -d '-1 day' +%F)
check_here "billing starts with a cut-off past ($YESTERDAY)" billing_start past \
	xmr402.legacy_receipt_key=true xmr402.legacy_receipt_until="$YESTERDAY"
assert_json "no retired key is listed after the cut-off" "$(curl -s "$BL_URL/api/xmr402/receipt-key")" \
	'(.retired_public_keys | length) == 0 and (has("retired_until_unix") | not)'
check "the start log says so" grep -q legacy_receipt_past "$BL_LOG"
check_here "billing starts without legacy_receipt_key" billing_start off
assert_json "none is listed" "$(curl -s "$BL_URL/api/xmr402/receipt-key")" \
	'(.retired_public_keys | length) == 0'
