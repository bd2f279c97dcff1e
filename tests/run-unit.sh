#!/usr/bin/env bash
# Runs cmocka unit-test binaries from the repository root, prints each one's output, and
# ends with "N passed, N failed" counting test cases. A binary that crashes, is killed,
# or exits non-zero without cmocka reporting a failure (a sanitizer report at exit, say)
# counts as one more failure. Exits non-zero when anything failed.
#
#   tests/run-unit.sh build/release/tests/test_config build/release/tests/test_http ...
set -u

root="$(cd "$(dirname "$0")/.." && pwd)"
if [ $# -eq 0 ]; then
    echo "usage: $0 TEST_BINARY..." >&2
    exit 2
fi

passed=0
failed=0
broken=()
out="$(mktemp)"
trap 'rm -f "$out"' EXIT

for bin in "$@"; do
    case "$bin" in
    /*) path="$bin" ;;
    *) path="$PWD/$bin" ;;
    esac
    name="$(basename "$bin")"
    echo "=== $name"
    if [ ! -x "$path" ]; then
        echo "$name: not found or not executable: $bin"
        failed=$((failed + 1))
        broken+=("$name (missing)")
        continue
    fi
    (cd "$root" && "$path") >"$out" 2>&1
    rc=$?
    cat "$out"

    p="$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test(s)\..*/\1/p' "$out" | tail -n 1)"
    f="$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test(s).*/\1/p' "$out" | tail -n 1)"
    p="${p:-0}"
    f="${f:-0}"
    passed=$((passed + p))
    failed=$((failed + f))

    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        # cmocka exits with the number of failed tests; anything else is a crash or a
        # sanitizer/leak report after the tests ran
        if [ "$rc" -gt 128 ]; then
            why="killed by signal $((rc - 128))"
        else
            why="exit status $rc"
        fi
        echo "$name: $why without a cmocka failure: counted as failed"
        failed=$((failed + 1))
        broken+=("$name ($why)")
    elif [ "$f" -gt 0 ]; then
        broken+=("$name ($f failed)")
    elif [ "$p" -eq 0 ]; then
        echo "$name: ran no tests: counted as failed"
        failed=$((failed + 1))
        broken+=("$name (no tests)")
    fi
done

echo
if [ ${#broken[@]} -gt 0 ]; then
    echo "failing: ${broken[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
