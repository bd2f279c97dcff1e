#!/usr/bin/env bash
# Installs the Debian 12 packages xmrgate needs to build, run its local stack and
# run every test. Idempotent: when all are installed it only says so (no apt, no
# root needed). Otherwise, as root: one `apt-get update`, then one install of the
# missing packages only.
#
# Package installs never leave a system service running: the PostgreSQL, nginx,
# haproxy and etcd packages would start theirs, and the stack runs its own instances on
# other ports. A policy-rc.d that refuses service starts is in place during the
# install, and any packaged service that still came up is stopped afterwards.
set -euo pipefail

# One list for every package; add new ones to the group they belong to.
XG_PACKAGES=(
	# toolchain, formatting and linters (make lint, shell scripts); clang's static analyzer
	# (scan-build-14: make scan) and hardening-check (devscripts: make hardening-check)
	build-essential pkg-config clang-format cppcheck shellcheck clang-tools-14 devscripts
	# libFuzzer drivers (make fuzz, tests/fuzz): clang, and its sanitizer and fuzzer
	# runtimes, which clang only recommends
	clang libclang-rt-14-dev
	# the C libraries the daemons and the unit tests link
	libmicrohttpd-dev libgnutls28-dev libcurl4-openssl-dev libjansson-dev libpq-dev libssl-dev
	libcmocka-dev libinih-dev liburcu-dev libqrencode-dev
	# the gateway's subscription to the nodes' new-block publications (monerod --zmq-pub)
	libzmq3-dev
	# the real services the local stack and the integration tests run; mmdebstrap builds
	# the Debian 13 root that holds monero 0.18.4 (scripts/monero-trixie.sh) and the fresh
	# Debian 12 root the packages are installed in (make deb-test); pgBackRest takes and
	# restores the backups (the drill, tests/integration/test_ops_backup.sh)
	monero postgresql mmdebstrap pgbackrest
	# the Debian packages (make deb: dpkg-buildpackage with debhelper)
	debhelper
	# PostgreSQL under an HA manager (tests/integration/test_db_patroni.sh): Patroni and
	# etcd, its store; the drills run their own instances in network namespaces
	patroni etcd-server etcd-client
	# test, benchmark and proxy tools
	jq curl wrk haproxy nginx-light zbar-tools bc python3-requests
	# the client matrix (tests/integration/test_clients_*.sh): Node with the npm "request"
	# library as Debian packages it (nothing is fetched from npm), and pexpect, which types
	# into monero-wallet-cli on a pseudo-terminal
	nodejs node-request python3-pexpect
	# AES-GCM in Python: the HA1 rotation test unwraps a stored HA1 independently of ours
	python3-cryptography
	# the browser tests (tests/e2e): Debian's python3-selenium drives Debian's chromium
	# through its chromedriver (chromium-driver); zbarimg decodes the invoice QR codes
	chromium chromium-driver python3-selenium
	# promtool (checks the alert rules and the metrics exposition)
	prometheus
	# process and socket tools the scripts use (pgrep, ss); openssl makes the stack's keys
	procps iproute2 openssl
)

missing_packages() {
	local installed p
	# One dpkg-query for all: it lists the known ones and fails on unknown ones.
	installed=$( (dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${XG_PACKAGES[@]}" \
		2>/dev/null || true) | awk '$2 == "ii" { print $1 }')
	for p in "${XG_PACKAGES[@]}"; do
		grep -qxF -- "$p" <<<"$installed" || echo "$p"
	done
}

POLICY_RC=/usr/sbin/policy-rc.d
OUR_POLICY=0

deny_service_starts() {
	[[ -e $POLICY_RC ]] && return 0 # the machine already has a policy: keep it
	printf '#!/bin/sh\n# held by xmrgate scripts/deps.sh during an install\nexit 101\n' >"$POLICY_RC"
	chmod 755 "$POLICY_RC"
	OUR_POLICY=1
}

restore_policy() {
	if ((OUR_POLICY)); then rm -f "$POLICY_RC"; fi
	return 0
}

# stop_packaged_services PACKAGE...: stops the system service of any package just
# installed that came up anyway (only the packaged instance, never another one).
stop_packaged_services() {
	local p cluster
	for p in "$@"; do
		case $p in
		postgresql)
			if command -v pg_lsclusters >/dev/null; then
				pg_lsclusters -h 2>/dev/null | awk '$4 == "online" { print $1, $2 }' |
					while read -r cluster; do
						echo "deps: stopping the packaged PostgreSQL cluster $cluster"
						# shellcheck disable=SC2086 # "version name"
						pg_ctlcluster $cluster stop || true
					done
			fi
			;;
		nginx-light | haproxy | prometheus | etcd-server | patroni)
			local svc=${p%-light}
			svc=${svc%-server}
			if [[ -x /etc/init.d/$svc ]] && service "$svc" status >/dev/null 2>&1; then
				echo "deps: stopping the packaged $svc service"
				service "$svc" stop || true
			fi
			;;
		esac
	done
}

main() {
	local missing
	mapfile -t missing < <(missing_packages)
	if ((${#missing[@]} == 0)); then
		echo "deps: all ${#XG_PACKAGES[@]} packages are installed"
		return 0
	fi
	echo "deps: missing: ${missing[*]}"
	if ((EUID != 0)); then
		echo "deps: run as root to install them" >&2
		return 1
	fi
	trap restore_policy EXIT
	deny_service_starts
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
	restore_policy
	stop_packaged_services "${missing[@]}"
	mapfile -t missing < <(missing_packages)
	if ((${#missing[@]} > 0)); then
		echo "deps: still missing after the install: ${missing[*]}" >&2
		return 1
	fi
	echo "deps: all ${#XG_PACKAGES[@]} packages are installed"
}

main "$@"
