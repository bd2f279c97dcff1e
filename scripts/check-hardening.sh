#!/usr/bin/env bash
# Checks that every ELF program in a bin directory (the release build: `make
# hardening-check`) was built with the Makefile's hardening: a position-independent
# executable, stack canaries, glibc's checked functions (_FORTIFY_SOURCE), read-only
# relocations and immediate binding (full RELRO). It runs Debian's hardening-check
# (devscripts) on each and fails when one misses a protection. The shell tools in the
# directory (xmrgate-admin, xmr402-agent) are not ELF and are named as skipped. Both
# daemons must be there: a check of nothing is no check.
#
#   scripts/check-hardening.sh bin
#
# One protection is not required: control-flow enforcement (IBT/SHSTK, -fcf-protection).
# The linker marks a program with it only when every object linked in is marked, and
# Debian 12's C start files (Scrt1.o, crti.o from libc6-dev) are not, so no program
# linked on Debian 12 can carry the mark whatever it is compiled with (Debian's own
# /usr/bin/ls reports the same). Everything else hardening-check tests is required.
#
# hardening-check decides "Fortify Source functions" from the symbols a program imports:
# "yes" when it calls at least one checked (__*_chk) function, "unknown" when it imports
# no function glibc can check, and a failure ("no, only unprotected functions found!")
# when it imports such functions but no checked one, which is what a build without
# _FORTIFY_SOURCE looks like. That failure is not waived here. "Stack clash protection"
# is only ever reported, never failed: hardening-check recognises the probe loop, not
# the unrolled probes gcc emits for frames under a few pages.
set -euo pipefail

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "usage: $0 BIN_DIR" >&2
    exit 2
fi
bin=$1
if ! command -v hardening-check >/dev/null; then
    echo "check-hardening: hardening-check is missing (Debian package devscripts: make deps)" >&2
    exit 1
fi

is_elf() {
    [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = "177ELF" ]
}

failed=0
checked=0
for daemon in xmrgate-gateway xmrgate-billing; do
    if [ ! -x "$bin/$daemon" ] || ! is_elf "$bin/$daemon"; then
        echo "check-hardening: $bin/$daemon is missing or not a program" >&2
        failed=1
    fi
done
for f in "$bin"/*; do
    [ -f "$f" ] || continue
    if ! is_elf "$f"; then
        echo "$f: not ELF (a script), skipped"
        continue
    fi
    checked=$((checked + 1))
    if ! hardening-check --nocfprotection "$f"; then
        failed=1
    fi
done
if [ "$failed" -ne 0 ]; then
    echo "check-hardening: a program misses a protection (above)" >&2
    exit 1
fi
echo "check-hardening: $checked programs hardened"
