#!/bin/sh
# Run every test of one build folder: unit, device and property binaries
# (cmocka), shell tests, the conformance traces, and a short fuzz run.
# Prints one line per test group and ends with "N passed, N failed".
#   usage: tests/run.sh BUILD CONFORMANCE_DIR
set -u
build=$1
conf=$2
passed=0
failed=0
add() { passed=$((passed + $1)); failed=$((failed + $2)); }

# cmocka binaries: count "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s)"
for bin in "$build"/tests/unit/* "$build"/tests/device/* "$build"/tests/property/*; do
    [ -x "$bin" ] || continue
    case "$bin" in *.d|*.o) continue ;; esac
    out=$("$bin" 2>&1); rc=$?
    p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
    f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
    p=${p:-0}; f=${f:-0}
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed or exited early
    add "$p" "$f"
    echo "$(basename "$(dirname "$bin")")/$(basename "$bin"): $p passed, $f failed"
    [ "$f" -ne 0 ] && printf '%s\n' "$out" | grep -E 'FAIL|ERROR|error|Assert|Sanitizer|runtime error' | head -20
done

# fuzz seeds and fixed reproducers replayed without libFuzzer: one check per
# target (tests/fuzz/replay.c)
for bin in "$build"/tests/fuzz/replay_*; do
    [ -x "$bin" ] || continue
    case "$bin" in *.d|*.o) continue ;; esac
    name=${bin##*/replay_}
    [ -d "tests/fuzz/seeds/$name" ] || continue
    out=$("$bin" "tests/fuzz/seeds/$name" 2>&1); rc=$?
    n=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) passed.*/\1/p' | tail -1)
    if [ "$rc" -eq 0 ]; then
        add 1 0; echo "fuzz/replay_$name: ${n:-0} seeds replayed, passed"
    else
        add 0 1; echo "fuzz/replay_$name: FAILED after ${n:-0} seeds"
        printf '%s\n' "$out" | grep -E 'ERROR|error|Sanitizer|#[0-9]+ ' | head -20
    fi
done

# shell tests print their own "N passed, N failed"
for t in tests/unit/*.sh tests/traces/*.sh tests/teflon/*.sh tests/cli/*.sh; do
    [ -f "$t" ] || continue
    out=$(DLASIM="$build/dlasim" CONFORMANCE="$conf" sh "$t" 2>&1); rc=$?
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
    p=$(echo "$line" | sed 's/ passed.*//'); f=$(echo "$line" | sed 's/.*passed, \([0-9]*\) failed.*/\1/')
    p=${p:-0}; f=${f:-0}
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    add "$p" "$f"
    echo "$t: $p passed, $f failed"
    [ "$f" -ne 0 ] && printf '%s\n' "$out" | grep -E 'FAIL' | head -20
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
