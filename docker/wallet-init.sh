#!/usr/bin/env bash
# One-shot set-up of billing's view-only wallet on a monero-wallet-rpc (compose service
# wallet-init), as scripts/stack.sh does for the local stack: opens the wallet `billing`
# when it exists, else creates it from the merchant's address and private view key
# (generate_from_keys; no spend key ever reaches this machine).
#
#   WALLET_RPC=http://wallet-rpc:18083 MERCHANT_ADDRESS=4… MERCHANT_VIEW_KEY=… \
#   RESTORE_HEIGHT=0 xmrgate-wallet-init
set -euo pipefail
: "${WALLET_RPC:?}" "${MERCHANT_ADDRESS:?}" "${MERCHANT_VIEW_KEY:?}"

rpc() {
	curl -sS --max-time 120 -H 'Content-Type: application/json' \
		--data-binary "$(jq -cn --arg m "$1" --argjson p "${2:-{\}}" \
			'{jsonrpc: "2.0", id: 0, method: $m, params: $p}')" "$WALLET_RPC/json_rpc"
}

for _ in $(seq 60); do
	rpc get_version >/dev/null 2>&1 && break
	sleep 1
done
if rpc open_wallet '{"filename":"billing","password":""}' | jq -e 'has("result")' >/dev/null; then
	echo "wallet-init: opened the existing view-only wallet"
else
	rpc generate_from_keys "$(jq -cn --arg a "$MERCHANT_ADDRESS" --arg v "$MERCHANT_VIEW_KEY" \
		--argjson h "${RESTORE_HEIGHT:-0}" '{filename: "billing", password: "", address: $a,
		viewkey: $v, restore_height: $h, autosave_current: true}')" |
		jq -e 'has("result")' >/dev/null || { echo "wallet-init: generate_from_keys failed" >&2; exit 1; }
	echo "wallet-init: created the view-only wallet"
fi
addr=$(rpc get_address '{"account_index":0}' | jq -r '.result.address')
[[ $addr == "$MERCHANT_ADDRESS" ]] || { echo "wallet-init: the wallet has another address" >&2; exit 1; }
