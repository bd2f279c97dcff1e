# xmrgate-gateway on Debian 12. Build from the repository root:
#   podman build -f docker/gateway.Dockerfile -t xmrgate-gateway .
# The configuration is mounted at /etc/xmrgate/gateway.ini (see docker/config/).

FROM docker.io/library/debian:12 AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential pkg-config ca-certificates \
      libmicrohttpd-dev libcurl4-openssl-dev libjansson-dev libpq-dev libssl-dev \
      libinih-dev liburcu-dev libqrencode-dev libcmocka-dev libzmq3-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile ./
COPY common common
COPY gateway gateway
COPY billing billing
COPY sql sql
COPY tools tools
RUN make -j2 bin/xmrgate-gateway

FROM docker.io/library/debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd12 libcurl4 libjansson4 libpq5 libssl3 libinih1 liburcu8 libzmq5 \
      ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --no-create-home --shell /usr/sbin/nologin xmrgate
COPY --from=build /src/bin/xmrgate-gateway /usr/local/bin/xmrgate-gateway
USER xmrgate
# 18089: tenants. 18090: the admin listener (health, readiness, metrics, admin API); bind
# it to the container's address only behind a private network.
EXPOSE 18089 18090
HEALTHCHECK --interval=10s --timeout=3s CMD curl -sf http://127.0.0.1:18090/healthz || exit 1
# SIGTERM drains in-flight requests (up to 10 s) and flushes usage counts: give it time.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/xmrgate-gateway", "--config", "/etc/xmrgate/gateway.ini"]
