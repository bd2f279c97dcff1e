# monerod and monero-wallet-rpc from Debian 12's `monero` package (0.18), plus curl and jq
# for the wallet set-up script. Used by the compose file for the three nodes, the
# view-only wallet-rpc and its one-shot set-up.
FROM docker.io/library/debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      monero curl jq ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /var/lib/monero --shell /usr/sbin/nologin monero \
 && install -d -o monero -g monero /var/lib/monero/data /var/lib/monero/wallets
COPY docker/wallet-init.sh /usr/local/bin/xmrgate-wallet-init
USER monero
WORKDIR /var/lib/monero
