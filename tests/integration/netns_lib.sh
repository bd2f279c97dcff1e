# shellcheck shell=bash
# Machines for the multi-machine drills (test_db_patroni.sh, tests/drills/): each is a
# network namespace of this test with one veth into a bridge of its own, on a /24 derived
# from XG_PORT_BASE (10.<base/1000>.<base/100 % 10>.0/24: 28100 → 10.28.1.0/24), so runs
# on other port bases never meet. The host side of the bridge is .1; the processes of the
# host namespace (the daemons, etcd, the clients) reach a machine at its address, and a
# machine reaches the host at .1 (it has no other route). Needs root.
#
#   ns_net_up                   the bridge; removed with every machine at exit (deferred)
#   ns_add NAME N               machine NAME at address .N (lo up, default route via .1)
#   ns_addr N                   prints the address .N
#   ns_exec NAME CMD...         runs CMD inside NAME
#   ns_cut NAME / ns_mend NAME  its link down / up on the host side: the machine vanishes
#                               from the network without a reset (a power loss, a partition)
#   ns_kill NAME                SIGKILL to every process inside NAME
#   ns_net6_up                  the bridge's IPv6 side: a ULA /64 of its own (fd78:6700:
#                               <base in hex>:1::/64), the host at ::1
#   ns_addr6 N                  prints the address ::N of that /64 (N written in hex)
#   ns_add6 NAME FIRST COUNT    COUNT addresses of the /64 on NAME, from ::FIRST on
# (Delay between machines: tests/integration/delay_proxy.py; this kernel has no netem.)

NS_TAG=xg$XG_PORT_BASE
NS_BRIDGE=xgb$XG_PORT_BASE
NS_PREFIX=10.$((XG_PORT_BASE / 1000 % 256)).$((XG_PORT_BASE / 100 % 10))
NS_PREFIX6=fd78:6700:$(printf '%x' "$XG_PORT_BASE"):1
NS_NAMES=()

ns_addr() { echo "$NS_PREFIX.$1"; }
ns_veth() { echo "$NS_TAG${1:0:5}"; } # host side; 15 characters at most

ns_net_up() {
	ns_net_down
	ip link add "$NS_BRIDGE" type bridge || return 1
	ip addr add "$NS_PREFIX.1/24" dev "$NS_BRIDGE" || return 1
	ip link set "$NS_BRIDGE" up || return 1
	defer ns_net_down
}

ns_net_down() {
	local n
	for n in $(ip netns list 2>/dev/null | awk -v t="$NS_TAG-" 'index($1, t) == 1 {print $1}'); do
		ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$n" 2>/dev/null
	done
	for n in $(ip -o link show 2>/dev/null | awk -F': ' -v t="$NS_TAG" 'index($2, t) == 1 {sub(/@.*/, "", $2); print $2}'); do
		ip link del "$n" 2>/dev/null
	done
	ip link del "$NS_BRIDGE" 2>/dev/null
	return 0
}

ns_add() {
	local name=$1 n=$2 ns=$NS_TAG-$1 veth
	veth=$(ns_veth "$name")
	ip netns add "$ns" || return 1
	ip link add "$veth" type veth peer name eth0 netns "$ns" || return 1
	ip link set "$veth" master "$NS_BRIDGE" up || return 1
	ns_enter "$ns" sh -ec "ip addr add $NS_PREFIX.$n/24 dev eth0; ip link set eth0 up
		ip link set lo up; ip route add default via $NS_PREFIX.1" || return 1
	NS_NAMES+=("$name")
}

# `ip netns exec` also remounts /sys for the namespace, which fails where / is no mount
# point (a chroot): the machines need only the network namespace, which nsenter enters.
ns_enter() {
	local ns=$1
	shift
	nsenter --net="/run/netns/$ns" "$@"
}

ns_exec() {
	local name=$1
	shift
	ns_enter "$NS_TAG-$name" "$@"
}

ns_addr6() { printf '%s::%x\n' "$NS_PREFIX6" "$1"; }

ns_net6_up() { ip -6 addr add "$NS_PREFIX6::1/64" dev "$NS_BRIDGE" nodad; }

ns_add6() {
	local name=$1 first=$2 count=$3 i
	for ((i = first; i < first + count; i++)); do
		printf 'addr add %s/64 dev eth0 nodad\n' "$(ns_addr6 "$i")"
	done | ns_exec "$name" ip -6 -batch -
}

ns_cut() { ip link set "$(ns_veth "$1")" down; }
ns_mend() { ip link set "$(ns_veth "$1")" up; }

ns_kill() { ip netns pids "$NS_TAG-$1" 2>/dev/null | xargs -r kill -9 2>/dev/null || true; }
