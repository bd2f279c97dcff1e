# xmrgate-billing on Debian 12. Build from the repository root:
#   podman build -f docker/billing.Dockerfile -t xmrgate-billing .
# The configuration is mounted at /etc/xmrgate/billing.ini (see docker/config/). The
# image carries the migrations (`migrate` applies them) and the web pages.

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
RUN make -j2 bin/xmrgate-billing

FROM docker.io/library/debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd12 libcurl4 libjansson4 libpq5 libssl3 libinih1 libqrencode4 \
      ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --no-create-home --shell /usr/sbin/nologin xmrgate
COPY --from=build /src/bin/xmrgate-billing /usr/local/bin/xmrgate-billing
COPY migrations /usr/share/xmrgate/migrations
COPY web /usr/share/xmrgate/web
USER xmrgate
# 18085: the public API and web pages. 18086: the admin listener.
EXPOSE 18085 18086
HEALTHCHECK --interval=10s --timeout=3s CMD curl -sf http://127.0.0.1:18086/healthz || exit 1
ENTRYPOINT ["/usr/local/bin/xmrgate-billing", "--config", "/etc/xmrgate/billing.ini"]
CMD ["serve"]
