#!/usr/bin/env bash
# Runs the libFuzzer drivers (tests/fuzz/README.md) from the repository root.
#
#   tests/fuzz/run.sh smoke 0 build/fuzz/drivers/fuzz_hreq ...   # make fuzz-smoke
#   tests/fuzz/run.sh run 10000000 build/fuzz/drivers/fuzz_hreq  # make fuzz-run
#
# smoke: each driver replays its regression inputs (tests/fuzz/regress/<name>/) and its
# corpus (tests/fuzz/corpus/<name>/), then fuzzes for FUZZ_SMOKE_SECONDS (default 6).
# run: each driver runs RUNS executions from its corpus. Either way new inputs go to
# build/fuzz/corpus/<name>/ (never into the tree), crashes to build/fuzz/artifacts/<name>/,
# the log to build/fuzz/logs/<name>.log; a table of executions, time and coverage ends
# the output. Exits non-zero when a driver crashed (or a regression input fails).
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root" || exit 2
if [ $# -lt 3 ] || { [ "$1" != smoke ] && [ "$1" != run ]; }; then
    echo "usage: $0 smoke|run RUNS DRIVER..." >&2
    exit 2
fi
mode=$1
runs=$2
shift 2
smoke_seconds=${FUZZ_SMOKE_SECONDS:-6}
work=build/fuzz

export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$root/tests/ubsan.supp"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"

failed=()
table=()
start_all=$SECONDS
for bin in "$@"; do
    name=$(basename "$bin")
    name=${name#fuzz_}
    corpus=tests/fuzz/corpus/$name
    regress=tests/fuzz/regress/$name
    mkdir -p "$work/corpus/$name" "$work/artifacts/$name" "$work/logs"
    log=$work/logs/$name.log
    common=(-artifact_prefix="$work/artifacts/$name/" -timeout=10 -rss_limit_mb=2048
        -print_final_stats=1)
    start=$SECONDS
    : >"$log"
    rc=0
    if [ -d "$regress" ] && [ -n "$(ls -A "$regress")" ]; then
        "$bin" "${common[@]}" -runs=0 "$regress" >>"$log" 2>&1 || rc=$?
        if [ $rc -ne 0 ]; then
            echo "$name: a regression input fails (see $log)"
            failed+=("$name (regression)")
            table+=("| $name | regression inputs | $((SECONDS - start)) s | | | 1 |")
            continue
        fi
    fi
    if [ "$mode" = smoke ]; then
        limit=(-max_total_time="$smoke_seconds")
    else
        limit=(-runs="$runs")
    fi
    seeds=()
    [ -d "$corpus" ] && seeds=("$corpus")
    "$bin" "${common[@]}" "${limit[@]}" "$work/corpus/$name" "${seeds[@]}" >>"$log" 2>&1 || rc=$?
    secs=$((SECONDS - start))
    stats=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -n 1)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$stats")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$stats")
    crashes=0
    if [ $rc -ne 0 ]; then
        crashes=1
        failed+=("$name")
        echo "$name: crashed (exit $rc); input in $work/artifacts/$name/, log $log"
    fi
    table+=("| $name | ${execs:-?} | ${secs} s | ${cov:-?} | ${ft:-?} | $crashes |")
done

echo
echo "| driver | executions | wall time | cov | ft | crashes |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
printf '%s\n' "${table[@]}"
echo "total wall time: $((SECONDS - start_all)) s"
if [ ${#failed[@]} -gt 0 ]; then
    echo "failing: ${failed[*]}"
    exit 1
fi
