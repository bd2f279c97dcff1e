#!/usr/bin/env bash
# Runs every benchmark in tests/bench/ one after the other (make bench), each printing its
# Markdown table for docs/BENCHMARKS.md. Speed is measured here, never asserted in tests.
#
#   tests/bench/run.sh [NAME...]   (default: all; NAME is a script's name without .sh)
#
# Each script starts (or reuses) its own bench stack and stops what it started; they take
# minutes each, so pick names to run a few.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
names=("$@")
if ((${#names[@]} == 0)); then
	for f in "$here"/*.sh; do
		n=${f##*/}
		[[ $n == run.sh ]] || names+=("${n%.sh}")
	done
fi
failed=0
for n in "${names[@]}"; do
	if [[ ! -x $here/$n.sh ]]; then
		echo "no benchmark named $n (see tests/bench/)" >&2
		failed=1
		continue
	fi
	echo "## $n"
	"$here/$n.sh" || {
		echo "$n failed (exit $?)" >&2
		failed=1
	}
	echo
done
exit "$failed"
