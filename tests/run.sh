#!/bin/sh
# Run every test of one build folder: unit, device and property binaries
# (cmocka), the fuzz seeds replayed, and the shell tests (conformance
# traces, models, CLI).  Prints one line per test group, in a fixed order,
# and ends with "N passed, N failed".
#   usage: tests/run.sh BUILD CONFORMANCE_DIR
#
# The groups run TEST_JOBS at a time (default: one per core; each is its own
# process with its own temporary files and fixed inputs, so the outcome does
# not depend on the order or the overlap); each group's lines are printed as
# soon as it and every group before it have finished.
set -u

# One group: $1 kind (cmocka, replay, shell), $2 its path, $3 BUILD, $4
# CONFORMANCE_DIR, $5 the file for its lines; "P F" goes to $5.count last.
run_one() {
    kind=$1; t=$2; build=$3; conf=$4; res=$5
    p=0; f=0
    case $kind in
    cmocka) # count "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s)"
        out=$("$t" 2>&1); rc=$?
        p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
        f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
        p=${p:-0}; f=${f:-0}
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed or exited early
        {
            echo "$(basename "$(dirname "$t")")/$(basename "$t"): $p passed, $f failed"
            [ "$f" -ne 0 ] && printf '%s\n' "$out" |
                grep -E 'FAIL|ERROR|error|Assert|Sanitizer|runtime error' | head -20
        } > "$res"
        ;;
    replay) # fuzz seeds and fixed reproducers without libFuzzer (tests/fuzz/replay.c)
        name=${t##*/replay_}
        out=$("$t" "tests/fuzz/seeds/$name" 2>&1); rc=$?
        n=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) passed.*/\1/p' | tail -1)
        if [ "$rc" -eq 0 ]; then
            p=1; echo "fuzz/replay_$name: ${n:-0} seeds replayed, passed" > "$res"
        else
            f=1
            { echo "fuzz/replay_$name: FAILED after ${n:-0} seeds"
              printf '%s\n' "$out" | grep -E 'ERROR|error|Sanitizer|#[0-9]+ ' | head -20; } > "$res"
        fi
        ;;
    shell) # shell tests print their own "N passed, N failed"
        out=$(DLASIM="$build/dlasim" CONFORMANCE="$conf" sh "$t" 2>&1); rc=$?
        line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
        p=$(echo "$line" | sed 's/ passed.*//')
        f=$(echo "$line" | sed 's/.*passed, \([0-9]*\) failed.*/\1/')
        p=${p:-0}; f=${f:-0}
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
        { echo "$t: $p passed, $f failed"
          [ "$f" -ne 0 ] && printf '%s\n' "$out" | grep -E 'FAIL' | head -20; } > "$res"
        ;;
    esac
    echo "$p $f" > "$res.part" && mv "$res.part" "$res.count" # whole when seen
}

if [ "${1:-}" = --one ]; then
    shift
    run_one "$@"
    exit 0
fi

build=$1
conf=$2
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The groups, in the order their lines are printed: "KIND PATH" per line.
for bin in "$build"/tests/unit/* "$build"/tests/device/* "$build"/tests/property/*; do
    [ -x "$bin" ] || continue
    case "$bin" in *.d|*.o) continue ;; esac
    echo "cmocka $bin"
done > "$work/list"
for bin in "$build"/tests/fuzz/replay_*; do
    [ -x "$bin" ] || continue
    case "$bin" in *.d|*.o) continue ;; esac
    [ -d "tests/fuzz/seeds/${bin##*/replay_}" ] && echo "replay $bin"
done >> "$work/list"
for t in tests/unit/*.sh tests/traces/*.sh tests/teflon/*.sh tests/cli/*.sh; do
    [ -f "$t" ] && echo "shell $t"
done >> "$work/list"

# xargs runs `run.sh --one KIND PATH BUILD CONF RESULT` for each line (its
# quotes keep paths with spaces whole); group N's lines go to $work/N.
awk -v b="$build" -v c="$conf" -v w="$work" \
    '{ printf "\"%s\" \"%s\" \"%s\" \"%s\" \"%s/%d\"\n", $1, substr($0, length($1) + 2), b, c, w, NR }' \
    "$work/list" | xargs -P "$jobs" -L 1 sh tests/run.sh --one > /dev/null 2>&1 &
xpid=$!

passed=0
failed=0
n=$(wc -l < "$work/list")
i=1
while [ "$i" -le "$n" ]; do
    # wait for group i (a group whose process died leaves no count: failed)
    while [ ! -f "$work/$i.count" ] && kill -0 "$xpid" 2> /dev/null; do
        sleep 0.2
    done
    if [ -f "$work/$i.count" ]; then
        cat "$work/$i"
        read -r p f < "$work/$i.count"
    else
        echo "$(sed -n "${i}p" "$work/list" | cut -d' ' -f2-): FAILED, no result"
        p=0; f=1
    fi
    passed=$((passed + p)); failed=$((failed + f))
    i=$((i + 1))
done
wait "$xpid"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
