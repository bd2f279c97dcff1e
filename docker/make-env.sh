#!/usr/bin/env bash
# Writes docker/.env with fresh secrets (kept if it exists). The merchant's address and
# view key must be given: MERCHANT_ADDRESS=4… MERCHANT_VIEW_KEY=… docker/make-env.sh
set -euo pipefail
cd "$(dirname "$0")"
[[ -e .env ]] && { echo "docker/.env exists: left as it is"; exit 0; }
: "${MERCHANT_ADDRESS:?set MERCHANT_ADDRESS}" "${MERCHANT_VIEW_KEY:?set MERCHANT_VIEW_KEY}"
umask 077
cat >.env <<EOT
POSTGRES_PASSWORD=$(openssl rand -hex 16)
HA1_KEY=$(openssl rand -hex 32)
TOKEN_KEY=$(openssl rand -hex 32)
NONCE_SECRET=$(openssl rand -hex 32)
GATEWAY_ADMIN_TOKEN=$(openssl rand -hex 24)
BILLING_ADMIN_TOKEN=$(openssl rand -hex 24)
MERCHANT_ADDRESS=$MERCHANT_ADDRESS
MERCHANT_VIEW_KEY=$MERCHANT_VIEW_KEY
EOT
echo "wrote docker/.env"
