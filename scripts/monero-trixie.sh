#!/usr/bin/env bash
# monero 0.18.4 for the regtest stack and its tests. Wallets and nodes in the field run
# 0.18.4 or newer; Debian 12 ships 0.18.0, Debian 13 (trixie) ships 0.18.4. This builds
# a Debian 13 root holding the `monero` package (mmdebstrap, well under a minute from
# the package mirror), keeps it in a cache, and runs its binaries on this machine: same
# kernel, same network (they serve and reach 127.0.0.1), host pids.
#
#   scripts/monero-trixie.sh root
#       builds the root when it is missing and prints its path. Callers that race
#       take turns (flock): one builds, into a temporary directory renamed into
#       place once its monerod answers --version, the others wait and reuse it.
#   scripts/monero-trixie.sh exec DIR PROGRAM [ARG...]
#       runs PROGRAM (monerod, monero-wallet-rpc, ...) from the root, with DIR
#       bind-mounted at its own path inside, so that absolute paths under DIR in the
#       ARGs (data dir, logs, wallets) mean the same inside and out. It execs all the
#       way down: PROGRAM runs under the caller's pid with ARGs as its command line,
#       so kill, kill -STOP and the stack's pidfiles (lib-stack.sh) work on it. The
#       mounts live in a mount namespace of PROGRAM's own and go with it.
#
# Environment:
#   XG_MONERO_TRIXIE_ROOT  the root (default /var/cache/xmrgate/trixie-monero); its
#                          lock is beside it, ROOT.lock
#
# Needs root (mount, chroot) and mmdebstrap (scripts/deps.sh). The build pins
# --mode=root, which mmdebstrap's auto mode picks for root anyway: it works on a Debian
# 12 host and inside a chroot of a fresh Debian 12 root (where the project is also
# tested, and where user namespaces, hence the unshare mode without root, are refused).
set -euo pipefail

ROOT=${XG_MONERO_TRIXIE_ROOT:-/var/cache/xmrgate/trixie-monero}
STAMP=etc/xmrgate-monero-version # inside the root: monerod --version, at build time
MIN_VERSION=0.18.4

log() { printf 'monero-trixie: %s\n' "$*" >&2; }
die() {
	printf 'monero-trixie: error: %s\n' "$*" >&2
	exit 1
}

# version_at_least VERSION MIN: true when dotted VERSION >= MIN.
version_at_least() {
	[[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1) == "$2" ]]
}

root_ready() { [[ -s $1/$STAMP ]]; }

# remove_tree DIR: deletes a (partial) root. mmdebstrap killed mid-build can leave
# /proc, /sys or /dev mounted inside: unmount those first, and never cross into
# another file system.
remove_tree() {
	local dir=$1 mnt
	[[ -e $dir ]] || return 0
	awk -v d="$dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r mnt; do umount -l "$mnt" || true; done
	rm -rf --one-file-system "$dir"
}

# check_built DIR: monerod in DIR runs and is MIN_VERSION or newer; writes the stamp.
check_built() {
	local dir=$1 line version
	line=$(chroot "$dir" monerod --version) || die "monerod does not run in the new root"
	version=$(sed -n 's/.*(v\([0-9][0-9.]*\).*/\1/p' <<<"$line")
	[[ -n $version ]] || die "unexpected monerod --version: $line"
	version_at_least "$version" "$MIN_VERSION" ||
		die "Debian 13 ships monero $version, older than $MIN_VERSION"
	printf '%s\n' "$line" >"$dir/$STAMP"
}

build_root() {
	local tmp started=$SECONDS
	tmp=$(mktemp -d "$ROOT.tmp.XXXXXX")
	# shellcheck disable=SC2064 # expand now: the trap must remove this build's dir
	trap "remove_tree '$tmp'" EXIT
	log "building a Debian 13 root with monero into $ROOT (once)"
	mmdebstrap --mode=root --variant=apt --include=ca-certificates,monero trixie "$tmp" \
		>"$tmp.log" 2>&1 || die "mmdebstrap failed: $(tail -n 3 "$tmp.log")"
	check_built "$tmp"
	mv -T "$tmp" "$ROOT"
	trap - EXIT
	rm -f "$tmp.log"
	log "built in $((SECONDS - started))s: $(cat "$ROOT/$STAMP")"
}

cmd_root() {
	local lock
	if root_ready "$ROOT"; then
		echo "$ROOT"
		return 0
	fi
	((EUID == 0)) || die "building the root needs root (mmdebstrap --mode=root)"
	command -v mmdebstrap >/dev/null || die "mmdebstrap is missing: run scripts/deps.sh"
	mkdir -p "$(dirname "$ROOT")"
	exec {lock}>"$ROOT.lock"
	flock -w 900 "$lock" || die "another build of $ROOT did not finish within 15 min"
	if ! root_ready "$ROOT"; then
		# A directory that is not ours is never removed: ROOT may be a caller's choice.
		[[ ! -e $ROOT ]] || die "$ROOT exists but holds no monero root: remove it or pick another"
		# What an interrupted build left behind (only a build holds the lock).
		local stale
		for stale in "$ROOT".tmp.*; do
			if [[ $stale == *.log ]]; then rm -f "$stale"; else remove_tree "$stale"; fi
		done
		build_root
	fi
	exec {lock}>&-
	echo "$ROOT"
}

cmd_exec() {
	(($# >= 2)) || die "usage: $0 exec DIR PROGRAM [ARG...]"
	local dir=$1
	root_ready "$ROOT" || die "no monero root at $ROOT: run '$0 root' first"
	((EUID == 0)) || die "running from the root needs root (mount, chroot)"
	[[ -d $dir ]] || die "no directory $dir"
	dir=$(cd "$dir" && pwd)
	shift
	# A new mount namespace whose mounts are private, so that nothing reaches the
	# host's; unshare execs, so the pid stays. In a chroot, / is not a mount point and
	# cannot be made private: there the mounts keep the propagation of the namespace
	# the chroot runs in (private in the fresh-Debian check's own namespace).
	local propagation=private
	mountpoint -q / || propagation=unchanged
	exec unshare --mount --propagation "$propagation" -- \
		"$BASH" "${BASH_SOURCE[0]}" _inside "$dir" "$@"
}

# In the new mount namespace: /proc and DIR into the root, then chroot and exec.
cmd_inside() {
	local dir=$1
	shift
	mkdir -p "$ROOT$dir"
	mount --bind /proc "$ROOT/proc"
	mount --bind "$dir" "$ROOT$dir"
	exec chroot "$ROOT" "$@"
}

main() {
	local cmd=${1:-}
	shift || true
	case $cmd in
	root) cmd_root ;;
	exec) cmd_exec "$@" ;;
	_inside) cmd_inside "$@" ;;
	*)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		[[ $cmd == -h || $cmd == --help || $cmd == help ]]
		;;
	esac
}

main "$@"
