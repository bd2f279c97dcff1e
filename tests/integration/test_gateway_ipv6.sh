#!/usr/bin/env bash
# Both daemons listen on IPv6 where [server] bind names an IPv6 address: the gateway on its
# own front end and on libmicrohttpd's, billing on its API. One family per listener: an
# IPv6 address, :: as well, takes IPv6 alone (IPv4 clients are refused at connect, not
# served as ::ffff:a.b.c.d, which every per-client rule would have to unmap). A bind that is
# no address literal stops the start with one line naming it.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

check_here "a tenant is granted" grant_tenant --bare sovereign 1
height() { curl -sf -g --max-time 5 "$1/v1/$TOKEN/get_height" | jq -e '.status == "OK" and .height > 0' >/dev/null; }
refused_v4() { ! curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$1/"; }

for front in native libmicrohttpd; do
	for bind in ::1 ::; do
		name=v6-$front-${bind//:/x}
		check_here "a gateway ($front) bound to $bind starts" \
			gateway_start "$name" "server.bind=$bind" "server.front_end=$front" || continue
		port=$(gw_port "$name")
		check "… serves a tenant at [::1]:$port" height "http://[::1]:$port"
		check "… and takes no IPv4 connection at 127.0.0.1:$port" refused_v4 "$port"
		gateway_stop "$name"
	done
done

for bind in ::1 ::; do
	name=v6-${bind//:/x}
	check_here "a billing bound to $bind starts" billing_start "$name" --base stack "server.bind=$bind" ||
		continue
	check "… answers its API at $(billing_url "$name")" \
		bash -c "curl -sf -g --max-time 5 '$(billing_url "$name")/api/tiers' | jq -e 'length > 0' >/dev/null"
	check "… and takes no IPv4 connection" refused_v4 "$(billing_port "$name")"
	billing_stop "$name"
done

out=$(gateway_exit badbind server.bind=localhost)
check "a bind that is no address stops the start, naming it" \
	grep -qF "[server] bind: not an IPv4 or IPv6 address: localhost" <<<"$out"
